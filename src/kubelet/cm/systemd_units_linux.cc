// Transient slices through systemd's D-Bus API (org.freedesktop.systemd1.Manager), as runc's
// systemd cgroup manager starts them for the kubelet's QoS and pod slices.
#include <systemd/sd-bus.h>

#include <cstring>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/cm/cgroup_manager.h"

namespace kubelet::cm {
namespace {

constexpr char kDest[] = "org.freedesktop.systemd1";
constexpr char kPath[] = "/org/freedesktop/systemd1";
constexpr char kIface[] = "org.freedesktop.systemd1.Manager";
constexpr uint64_t kCallTimeoutUs = 30 * 1000 * 1000;

absl::Status BusError(const std::string& what, int r, const sd_bus_error* err) {
  std::string msg = absl::StrCat(what, ": ");
  if (err != nullptr && sd_bus_error_is_set(err)) {
    absl::StrAppend(&msg, err->name, ": ", err->message ? err->message : "");
  } else {
    absl::StrAppend(&msg, std::strerror(-r));
  }
  return absl::UnavailableError(msg);
}

class DBusSystemdUnits final : public SystemdUnits {
 public:
  explicit DBusSystemdUnits(sd_bus* bus) : bus_(bus) {}
  ~DBusSystemdUnits() override { sd_bus_flush_close_unref(bus_); }

  absl::Status StartSlice(const std::string& unit, const std::string& parent) override {
    absl::MutexLock lock(&mu_);
    sd_bus_message* m = nullptr;
    sd_bus_message* reply = nullptr;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    int r = sd_bus_message_new_method_call(bus_, &m, kDest, kPath, kIface, "StartTransientUnit");
    if (r >= 0) r = sd_bus_message_append(m, "ss", unit.c_str(), "replace");
    if (r >= 0) r = sd_bus_message_open_container(m, 'a', "(sv)");
    const std::string desc = "libcontainer container " + unit;
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "Description", "s", desc.c_str());
    if (r >= 0 && parent != "-.slice") {
      r = sd_bus_message_append(m, "(sv)", "Wants", "as", 1, parent.c_str());
    }
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "DefaultDependencies", "b", 0);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "MemoryAccounting", "b", 1);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "CPUAccounting", "b", 1);
    if (r >= 0) r = sd_bus_message_append(m, "(sv)", "TasksAccounting", "b", 1);
    if (r >= 0) r = sd_bus_message_close_container(m);
    if (r >= 0) r = sd_bus_message_append(m, "a(sa(sv))", 0);
    absl::Status st;
    if (r < 0) {
      st = BusError("building StartTransientUnit for " + unit, r, nullptr);
    } else {
      r = sd_bus_call(bus_, m, kCallTimeoutUs, &err, &reply);
      if (r < 0 && !sd_bus_error_has_name(&err, "org.freedesktop.systemd1.UnitExists")) {
        st = BusError("StartTransientUnit " + unit, r, &err);
      }
    }
    sd_bus_error_free(&err);
    sd_bus_message_unref(reply);
    sd_bus_message_unref(m);
    return st;
  }

  absl::Status StopUnit(const std::string& unit) override {
    absl::MutexLock lock(&mu_);
    sd_bus_message* reply = nullptr;
    sd_bus_error err = SD_BUS_ERROR_NULL;
    int r = sd_bus_call_method(bus_, kDest, kPath, kIface, "StopUnit", &err, &reply, "ss",
                               unit.c_str(), "replace");
    absl::Status st;
    if (r < 0 && !sd_bus_error_has_name(&err, "org.freedesktop.systemd1.NoSuchUnit")) {
      st = BusError("StopUnit " + unit, r, &err);
    }
    sd_bus_error_free(&err);
    sd_bus_message_unref(reply);
    return st;
  }

 private:
  absl::Mutex mu_;  // an sd_bus connection is not thread-safe
  sd_bus* const bus_ ABSL_PT_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::unique_ptr<SystemdUnits>> NewDBusSystemdUnits() {
  sd_bus* bus = nullptr;
  int r = sd_bus_open_system(&bus);
  if (r < 0) return BusError("connecting to the systemd D-Bus", r, nullptr);
  return std::make_unique<DBusSystemdUnits>(bus);
}

}  // namespace kubelet::cm
