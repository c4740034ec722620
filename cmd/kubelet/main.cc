// The kubelet binary: command line -> configuration -> Run. Nothing else lives here.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "app/options.h"
#include "app/server.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  kubelet::app::KubeletServer server;
  kubelet::app::ParseResult result;
  absl::Status st = kubelet::app::ParseCommandLine(args, &server, std::cout, &result);
  if (!st.ok()) {
    // Logging is not set up yet when the command line is bad: print as cobra does.
    std::fprintf(stderr, "Error: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  if (result == kubelet::app::ParseResult::kExit) return 0;
  return kubelet::app::Run(server);
}
