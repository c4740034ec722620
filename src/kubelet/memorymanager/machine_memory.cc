#include "kubelet/memorymanager/machine_memory.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/quantity.h"
#include "common/files.h"

namespace kubelet::memorymanager {
namespace {

constexpr char kHugePagesPrefix[] = "hugepages-";

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("reading ", path, ": ", text.status().message()));
  }
  return text;
}

// "Node 0 MemTotal:       32768000 kB" -> bytes.
absl::StatusOr<uint64_t> ReadNodeMemTotal(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    const size_t at = line.find("MemTotal:");
    if (at == absl::string_view::npos) continue;
    absl::string_view value = absl::StripAsciiWhitespace(line.substr(at + 9));
    if (!absl::ConsumeSuffix(&value, "kB")) break;
    uint64_t kb = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(value), &kb)) break;
    return kb * 1024;
  }
  return absl::InvalidArgumentError(absl::StrCat(path, ": no \"MemTotal: <n> kB\" line"));
}

// The pools below `dir` (hugepages-<size>kB/nr_hugepages); none when `dir` does not exist.
absl::StatusOr<std::vector<HugePages>> ReadHugePages(const std::string& dir) {
  std::vector<HugePages> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return out;
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    absl::string_view size = name;
    if (!absl::ConsumePrefix(&size, kHugePagesPrefix) || !absl::ConsumeSuffix(&size, "kB")) {
      continue;
    }
    HugePages pool;
    if (!absl::SimpleAtoi(size, &pool.page_size_kb)) {
      return absl::InvalidArgumentError(absl::StrCat(dir, "/", name, ": bad page size"));
    }
    const std::string count_path = absl::StrCat(dir, "/", name, "/nr_hugepages");
    absl::StatusOr<std::string> count = ReadFile(count_path);
    if (!count.ok()) return count.status();
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*count), &pool.num_pages)) {
      return absl::InvalidArgumentError(absl::StrCat(count_path, ": not a number"));
    }
    out.push_back(pool);
  }
  std::sort(out.begin(), out.end(),
            [](const HugePages& a, const HugePages& b) { return a.page_size_kb < b.page_size_kb; });
  return out;
}

}  // namespace

absl::StatusOr<MachineMemory> DiscoverMachineMemory(const std::string& sysfs_root,
                                                    uint64_t mem_total_bytes) {
  const std::string node_root = sysfs_root + "/devices/system/node";
  std::vector<int> ids;
  std::error_code ec;
  std::filesystem::directory_iterator it(node_root, ec);
  if (!ec) {
    for (const auto& entry : it) {
      const std::string filename = entry.path().filename().string();
      absl::string_view name = filename;
      int id = 0;
      if (absl::ConsumePrefix(&name, "node") && !name.empty() &&
          std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
          absl::SimpleAtoi(name, &id)) {
        ids.push_back(id);
      }
    }
  }
  std::sort(ids.begin(), ids.end());

  MachineMemory machine;
  if (ids.empty()) {
    absl::StatusOr<std::vector<HugePages>> pools =
        ReadHugePages(sysfs_root + "/kernel/mm/hugepages");
    if (!pools.ok()) return pools.status();
    machine.nodes.push_back(NUMANodeMemory{0, mem_total_bytes, std::move(*pools)});
    return machine;
  }
  for (int id : ids) {
    const std::string dir = absl::StrCat(node_root, "/node", id);
    absl::StatusOr<uint64_t> total = ReadNodeMemTotal(dir + "/meminfo");
    if (!total.ok()) return total.status();
    absl::StatusOr<std::vector<HugePages>> pools = ReadHugePages(dir + "/hugepages");
    if (!pools.ok()) return pools.status();
    machine.nodes.push_back(NUMANodeMemory{id, *total, std::move(*pools)});
  }
  return machine;
}

std::string HugePageResourceName(uint64_t page_size_bytes) {
  return absl::StrCat(kHugePagesPrefix,
                      api::Quantity::FromValue(static_cast<int64_t>(page_size_bytes),
                                               api::Quantity::Format::kBinarySI)
                          .String());
}

bool IsHugePageResourceName(const std::string& name) {
  return absl::StartsWith(name, kHugePagesPrefix);
}

}  // namespace kubelet::memorymanager
