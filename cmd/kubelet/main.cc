// The kubelet binary: command line -> configuration -> Run. Nothing else lives here.
// Invoked as `hyperkube kubelet ...` (a multi-call name, as OpenShift's units do) it runs as the
// kubelet with the arguments after `kubelet`. `kubelet hollow ...` runs hollow nodes
// (app/hollow.h).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "app/hollow.h"
#include "app/options.h"
#include "app/server.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const std::string self = argc > 0 ? argv[0] : "";
  const std::string base = self.substr(self.find_last_of('/') + 1);
  if (base == "hyperkube") {
    if (args.empty() || args[0] != "kubelet") {
      std::fprintf(stderr, "Error: hyperkube: this binary provides only the \"kubelet\" command\n");
      return 1;
    }
    args.erase(args.begin());
  }
  kubelet::app::Settings settings;
  kubelet::app::ParseResult result;
  const bool hollow = !args.empty() && args[0] == "hollow";
  kubelet::app::HollowOptions hollow_options;
  kubelet::app::SubCommand hollow_command;
  if (hollow) {
    args.erase(args.begin());
    hollow_command = kubelet::app::HollowCommand(&hollow_options);
  }
  absl::Status st = kubelet::app::ParseCommandLine(args, &settings, std::cout, &result,
                                                   hollow ? &hollow_command : nullptr);
  if (!st.ok()) {
    // Logging is not set up yet when the command line is bad: print as cobra does.
    std::fprintf(stderr, "Error: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  if (result == kubelet::app::ParseResult::kExit) return 0;
  if (hollow) return kubelet::app::RunHollow(settings, hollow_options);
  return kubelet::app::Run(settings);
}
