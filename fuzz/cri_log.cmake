# The CRI log format reader behind /containerLogs (src/kubelet/logs/log_reader.cc): the line
# parser and ReadLogs over a scratch file, with the output checked against the parsed records.
# Each run writes and reads a file, so the CTest session is 5000 runs (as http_request's).
kubelet_add_fuzzer(cri_log LIBS kubelet_logs RUNS 5000)
