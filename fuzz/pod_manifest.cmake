# Static pod manifest decoding (src/api/pod_codec.cc, static_pod.cc) as the pod sources use it.
kubelet_add_fuzzer(pod_manifest LIBS kubelet_api kubelet_common)
