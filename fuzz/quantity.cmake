# resource.Quantity parsing (src/api/quantity.cc), with the canonical form's round trip checked.
kubelet_add_fuzzer(quantity LIBS kubelet_api)
