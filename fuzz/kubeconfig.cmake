# Kubeconfig parsing and RestConfig construction (src/apiclient/kubeconfig.cc).
kubelet_add_fuzzer(kubeconfig LIBS kubelet_apiclient)
