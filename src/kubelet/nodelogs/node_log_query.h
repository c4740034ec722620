// The node log query of the kubelet API's /logs/ endpoint (upstream v1.28
// pkg/kubelet/kubelet_server_journal.go and _linux.go, feature gate NodeLogQuery with
// enableSystemLogQuery): parsing and validating the query parameters, and building the
// journalctl command line.
//
// Contract:
// - ParseNodeLogQuery is upstream's newNodeLogQuery over the request's query parameters:
//   `query` (repeatable; a value containing '/' or '\' names a file below the log directory,
//   anything else that is not blank a service), `sinceTime` / `untilTime` (RFC3339), `boot` and
//   `tailLines` (integers), `pattern`; only each key's first value counts but for `query`. It
//   returns no query (nullopt) and no errors when none of those was given: the request is then
//   an ordinary file request. Errors are field errors with upstream's wording (answered 400):
//     query: Invalid value: []string{"  "}: query cannot be empty
//     sinceTime: Invalid value: "x": invalid time format
//     tailLines: Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax
// - ValidateNodeLogQuery is upstream's validate (answered 406): service names (at most 256
//   bytes of [a-zA-Z-_0-9@], at most 4 services), a query with options but no service or file,
//   files and services mixed, more than one file, a file with options, a file that does not
//   exist below the log directory (resolved as filepath-securejoin does: symlinks stay inside
//   the directory), untilTime before sinceTime, boot > 0, tailLines outside [0, 100000], a
//   pattern Go's regexp parser refuses.
// - JournalctlArgs is getLoggingCmd's argument list: --utc --no-pager --output=short-precise
//   [--since=<t>] [--until=<t>] [--pager-end --lines=<n>] --unit=<service>...
//   [--grep=<pattern>] [--boot <n>], times written as Go's "2006-1-2 15:4:5" in the zone they
//   were given in.
// Pure functions but for ValidateNodeLogQuery's look at the file system; thread-safe.
#ifndef KUBELET_KUBELET_NODELOGS_NODE_LOG_QUERY_H_
#define KUBELET_KUBELET_NODELOGS_NODE_LOG_QUERY_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/pod_validation.h"

namespace kubelet::nodelogs {

inline constexpr int kMaxTailLines = 100000;
inline constexpr size_t kMaxServiceLength = 256;
inline constexpr size_t kMaxServices = 4;
// Where the file requests and the services' log files are looked up (nodeLogDir).
inline constexpr char kNodeLogDir[] = "/var/log/";
inline constexpr char kJournalctl[] = "journalctl";

// A time.Time as time.Parse(time.RFC3339, ...) makes it: the instant and the zone it was
// written in.
struct GoTime {
  absl::Time time;
  int offset_seconds = 0;  // east of UTC
  // The zone's name: "UTC" for "Z", the local zone's abbreviation when the offset is the local
  // one at that instant (as Go's Local), else empty (printed as the offset).
  std::string zone;
  bool operator==(const GoTime&) const = default;
};

// time.Parse(time.RFC3339, s); the error is only that it failed.
std::optional<GoTime> ParseRFC3339(std::string_view s);
// time.Time.String(): "2023-01-02 03:04:05.5 +0000 UTC".
std::string GoTimeString(const GoTime& t);
// t.Format("2006-1-2 15:4:5") in the time's own zone.
std::string JournalTime(const GoTime& t);

struct QueryOptions {
  std::optional<GoTime> since_time;
  std::optional<GoTime> until_time;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> boot;
  std::string pattern;

  bool empty() const {
    return !since_time && !until_time && !tail_lines && !boot && pattern.empty();
  }
  bool operator==(const QueryOptions&) const = default;
};

struct NodeLogQuery {
  std::vector<std::string> services;
  std::vector<std::string> files;
  QueryOptions options;
  bool operator==(const NodeLogQuery&) const = default;
};

// Query parameters, decoded, in request order (HttpRequest::query).
using QueryParams = std::multimap<std::string, std::string>;

struct ParsedQuery {
  std::optional<NodeLogQuery> query;  // nullopt: not a query (or errors)
  api::FieldErrorList errors;
};

ParsedQuery ParseNodeLogQuery(const QueryParams& params);

// `log_dir` is where files are looked up (kNodeLogDir in production).
api::FieldErrorList ValidateNodeLogQuery(const NodeLogQuery& query, const std::string& log_dir);

// The arguments after "journalctl" for `services` (those of the query that log to journald).
std::vector<std::string> JournalctlArgs(const NodeLogQuery& query,
                                        const std::vector<std::string>& services);

// Go's %v of a []string: "[a b]".
std::string GoStringList(const std::vector<std::string>& v);

}  // namespace kubelet::nodelogs

#endif  // KUBELET_KUBELET_NODELOGS_NODE_LOG_QUERY_H_
