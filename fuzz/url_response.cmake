# The static pod URL source's response handling (src/kubelet/podsource/http_fetch.cc) and the
# decode of a 200 body. Built from http_fetch.cc alone rather than the whole kubelet core, which
# it does not need.
kubelet_add_fuzzer(url_response
                   LIBS kubelet_api kubelet_apiclient kubelet_common OpenSSL::SSL OpenSSL::Crypto
                   SOURCES ${CMAKE_SOURCE_DIR}/src/kubelet/podsource/http_fetch.cc)
