# The kubelet API request path over a real loopback connection (see http_request_fuzzer.cc).
kubelet_add_fuzzer(http_request LIBS kubelet_server RUNS 5000)
