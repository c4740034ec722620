# kubelet_proto_library(<target> <proto>): a static library of the C++ and gRPC code generated
# from src/<proto> (e.g. kubelet/csi/proto/csi.proto), written below ${CMAKE_BINARY_DIR}/src so
# it is included as "kubelet/csi/proto/csi.grpc.pb.h". Google's well-known types resolve from
# protobuf's own include directory.
function(kubelet_proto_library target proto)
  get_filename_component(dir ${proto} DIRECTORY)
  get_filename_component(name ${proto} NAME_WE)
  set(out_root ${CMAKE_BINARY_DIR}/src)
  set(out_dir ${out_root}/${dir})
  set(generated ${out_dir}/${name}.pb.cc ${out_dir}/${name}.pb.h ${out_dir}/${name}.grpc.pb.cc
                ${out_dir}/${name}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${Protobuf_PROTOC_EXECUTABLE} --proto_path=${CMAKE_SOURCE_DIR}/src
            --proto_path=${Protobuf_INCLUDE_DIRS} --cpp_out=${out_root} --grpc_out=${out_root}
            --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin> ${proto}
    DEPENDS ${CMAKE_SOURCE_DIR}/src/${proto}
    COMMENT "Generating C++ and gRPC code for ${proto}"
    VERBATIM)
  add_library(${target} STATIC ${out_dir}/${name}.pb.cc ${out_dir}/${name}.grpc.pb.cc)
  target_include_directories(${target} PUBLIC ${out_root})
  target_link_libraries(${target} PUBLIC kubelet_grpc)
endfunction()
