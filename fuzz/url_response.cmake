# The static pod URL source's response handling (src/kubelet/podsource/http_fetch.cc) and the
# decode of a 200 body.
kubelet_add_fuzzer(url_response LIBS kubelet_kubelet)
