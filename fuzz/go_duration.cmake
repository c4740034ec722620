# Go duration parsing (src/common/duration.cc), with the formatted form's round trip checked.
kubelet_add_fuzzer(go_duration LIBS kubelet_common)
