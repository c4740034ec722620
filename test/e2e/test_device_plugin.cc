// A device plugin of the tests' own (device plugin API v1beta1, the in-process fake of the
// device manager's unit tests as a process), for end-to-end cases upstream's sample plugin does
// not cover: NUMA topology, a preferred allocation, devices turning unhealthy, and registering
// again when the kubelet restarts (it watches its own socket, which a starting kubelet removes).
//
//   test_device_plugin <plugin dir> <socket name> <resource> <control file> [preferred ids]
//
// The control file lists the devices, one per line: "<id> <Healthy|Unhealthy> [numa]"; it is
// re-read every 200 ms and a change is streamed to the kubelet. Each device gets a directory
// /tmp/<id> (the host side of the mount its Allocate answer gives). Runs until SIGTERM.
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "kubelet/devicemanager/testing/fake_device_plugin.h"

namespace {

std::atomic<bool> g_stop{false};

std::vector<kubelet::devicemanager::testing::FakeDevice> ReadDevices(const std::string& path,
                                                                     std::string* text) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  std::vector<kubelet::devicemanager::testing::FakeDevice> out;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    kubelet::devicemanager::testing::FakeDevice d;
    std::string health;
    if (!(f >> d.id >> health)) continue;
    d.healthy = health == "Healthy";
    int64_t numa;
    while (f >> numa) d.numa.push_back(numa);
    out.push_back(d);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: test_device_plugin <dir> <socket name> <resource> <control file> "
                 "[preferred,ids]\n";
    return 2;
  }
  const std::string dir = argv[1], name = argv[2], resource = argv[3], control = argv[4];
  signal(SIGTERM, [](int) { g_stop = true; });
  signal(SIGINT, [](int) { g_stop = true; });
  kubelet::devicemanager::testing::FakePluginOptions o;
  o.resource = resource;
  if (argc > 5) {
    o.get_preferred_allocation_available = true;
    o.preferred = absl::StrSplit(argv[5], ',');
  }
  std::string text;
  o.devices = ReadDevices(control, &text);
  for (const auto& d : o.devices) std::filesystem::create_directories("/tmp/" + d.id);

  std::unique_ptr<kubelet::devicemanager::testing::FakeDevicePlugin> plugin;
  const std::string socket = dir + "/" + name;
  const std::string kubelet_socket = dir + "/kubelet.sock";
  while (!g_stop) {
    if (plugin == nullptr || !std::filesystem::exists(socket)) {
      // First start, or a (re)started kubelet removed our socket: serve and register again.
      plugin.reset();
      auto p = kubelet::devicemanager::testing::FakeDevicePlugin::Start(dir, name, o);
      if (!p.ok()) {
        std::cerr << "serve: " << p.status() << std::endl;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
      plugin = std::move(*p);
      absl::Status st = plugin->Register(kubelet_socket);
      std::cout << "register " << resource << ": " << (st.ok() ? "ok" : st.ToString()) << std::endl;
      if (!st.ok()) {
        plugin.reset();
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        continue;
      }
    }
    std::string now;
    std::vector<kubelet::devicemanager::testing::FakeDevice> devices = ReadDevices(control, &now);
    if (now != text) {
      text = now;
      o.devices = devices;
      plugin->SetDevices(devices);
      std::cout << "devices changed" << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  plugin.reset();
  return 0;
}
