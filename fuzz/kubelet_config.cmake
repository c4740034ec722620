# The --config file: KubeletConfiguration decoding, defaulting, validation and the /configz
# encoding (src/config), with the encode/decode round trip checked (see kubelet_config_fuzzer.cc).
# Each run decodes several times; the CTest session is 10000 runs to stay near the others.
kubelet_add_fuzzer(kubelet_config LIBS kubelet_config kubelet_api kubelet_common RUNS 10000)
