# A pod's required node affinity (label selectors on the node's labels) as admission matches it
# (src/kubelet/admission.cc). Built from admission.cc alone rather than the whole kubelet core,
# which it does not need.
kubelet_add_fuzzer(label_selector
                   LIBS kubelet_api kubelet_common
                   SOURCES ${CMAKE_SOURCE_DIR}/src/kubelet/admission.cc)
