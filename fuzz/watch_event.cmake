# The API server's bytes: watch frames (DecodeWatchFrame) handed on as the reflector does, into
# the store and the API pod source, typed decodes of the watched kinds, and Status decoding of
# error answers (see watch_event_fuzzer.cc). Built from the API pod source and PodConfig alone
# rather than the whole kubelet core, which it does not need. Each event is decoded as five kinds;
# the CTest session is 10000 runs to stay near the others.
kubelet_add_fuzzer(watch_event
                   LIBS kubelet_apiclient kubelet_api kubelet_common
                   RUNS 10000
                   SOURCES ${CMAKE_SOURCE_DIR}/src/kubelet/podsource/api_source.cc
                           ${CMAKE_SOURCE_DIR}/src/kubelet/podsource/pod_config.cc)
