#include "apiclient/testing/fake_rest_client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "apiclient/request_info.h"
#include "common/cancellation.h"
#include "common/strings.h"

namespace kubelet::apiclient::testing {
namespace {

using Json = nlohmann::json;

// A parsed request path.
struct Target {
  std::string collection;  // "/api/v1/pods"
  std::string ns;          // from the path; "" for all namespaces / cluster-scoped
  std::string name;
  std::string subresource;
  std::map<std::string, std::string> query;
};

std::optional<Target> ParseTarget(const std::string& full) {
  std::optional<RequestInfo> info = ParseRequestPath(full);
  if (!info) return std::nullopt;
  return Target{.collection = info->Collection(),
                .ns = std::move(info->namespace_),
                .name = std::move(info->name),
                .subresource = std::move(info->subresource),
                .query = std::move(info->query)};
}

std::string Param(const Target& t, const std::string& key) {
  auto it = t.query.find(key);
  return it == t.query.end() ? "" : it->second;
}

std::string Meta(const Json& o, const char* field) {
  if (!o.is_object() || !o.contains("metadata") || !o["metadata"].is_object()) return "";
  const Json& md = o["metadata"];
  auto it = md.find(field);
  return it != md.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string KeyOf(const std::string& ns, const std::string& name) {
  return absl::StrCat(AV(ns), "/", AV(name));
}

// The value at a dotted path as a string ("" when absent), for field selectors.
std::string FieldValue(const Json& o, std::string_view path) {
  const Json* cur = &o;
  for (absl::string_view apart : absl::StrSplit(AV(path), '.')) {
    std::string_view part = SV(apart);
    if (!cur->is_object()) return "";
    auto it = cur->find(std::string(part));
    if (it == cur->end()) return "";
    cur = &*it;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_null()) return "";
  return cur->dump();
}

bool MatchesFields(const Json& o, const std::string& selector) {
  for (absl::string_view aterm : absl::StrSplit(AV(selector), ',', absl::SkipEmpty())) {
    std::string_view term = SV(aterm);
    bool negate = false;
    size_t op = term.find("!=");
    size_t len = 2;
    if (op != std::string_view::npos) {
      negate = true;
    } else if ((op = term.find("==")) == std::string_view::npos) {
      op = term.find('=');
      len = 1;
    }
    if (op == std::string_view::npos) return false;
    bool eq = FieldValue(o, term.substr(0, op)) == term.substr(op + len);
    if (eq == negate) return false;
  }
  return true;
}

bool MatchesLabels(const Json& o, const std::string& selector) {
  Json labels = Json::object();
  if (o.contains("metadata") && o["metadata"].is_object() && o["metadata"].contains("labels") &&
      o["metadata"]["labels"].is_object()) {
    labels = o["metadata"]["labels"];
  }
  for (absl::string_view aterm : absl::StrSplit(AV(selector), ',', absl::SkipEmpty())) {
    std::string_view term = SV(aterm);
    size_t op = term.find("!=");
    size_t len = 2;
    bool negate = op != std::string_view::npos;
    if (!negate && (op = term.find("==")) == std::string_view::npos) {
      op = term.find('=');
      len = 1;
    }
    if (op == std::string_view::npos) {  // existence
      bool absent = !term.empty() && term[0] == '!';
      std::string key(absent ? term.substr(1) : term);
      if (labels.contains(key) == absent) return false;
      continue;
    }
    std::string key(term.substr(0, op));
    std::string want(term.substr(op + len));
    bool eq = labels.contains(key) && labels[key].is_string() && labels[key] == want;
    if (eq == negate) return false;
  }
  return true;
}

bool Matches(const Target& t, const Json& o) {
  if (!t.ns.empty() && Meta(o, "namespace") != t.ns) return false;
  std::string fs = Param(t, "fieldSelector");
  if (!fs.empty() && !MatchesFields(o, fs)) return false;
  std::string ls = Param(t, "labelSelector");
  return ls.empty() || MatchesLabels(o, ls);
}

Response StatusResponse(int code, const std::string& reason, const std::string& message) {
  Response r;
  r.code = code;
  r.headers.emplace("content-type", "application/json");
  r.body = Json{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
                {"status", "Failure"}, {"message", message}, {"reason", reason},
                {"code", code}}
               .dump();
  return r;
}

Response ObjectResponse(int code, const Json& o) {
  Response r;
  r.code = code;
  r.headers.emplace("content-type", "application/json");
  r.body = o.dump();
  return r;
}

std::string ResourceName(const Target& t) {
  return t.collection.substr(t.collection.rfind('/') + 1);
}

}  // namespace

void FakeRestClient::InjectFault(Fault fault) {
  absl::MutexLock lock(&mu_);
  faults_.push_back(std::move(fault));
}

std::optional<Response> FakeRestClient::TakeFault(const std::string& method,
                                                  const std::string& path, absl::Status* error) {
  absl::MutexLock lock(&mu_);
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (!it->method.empty() && it->method != method) continue;
    if (!it->path_contains.empty() && path.find(it->path_contains) == std::string::npos) continue;
    Fault f = *it;
    if (--it->times <= 0) faults_.erase(it);
    if (f.code > 0) {
      ApiError e = DecodeApiError(Json::object(), f.code);
      return StatusResponse(f.code, f.reason.empty() ? e.reason : f.reason, "injected fault");
    }
    *error = f.error;
    return Response{};
  }
  return std::nullopt;
}

Json FakeRestClient::StampLocked(Json o) {
  o["metadata"]["resourceVersion"] = std::to_string(++rv_);
  return o;
}

void FakeRestClient::RecordLocked(const std::string& collection, const std::string& type,
                                  const Json& object, const Json& old) {
  history_.push_back(Event{collection, type, object, old, rv_});
}

Json FakeRestClient::Upsert(const std::string& collection, Json object) {
  absl::MutexLock lock(&mu_);
  std::string key = KeyOf(Meta(object, "namespace"), Meta(object, "name"));
  Objects& objs = collections_[collection];
  auto it = objs.find(key);
  Json old = it == objs.end() ? Json() : it->second;
  if (Meta(object, "uid").empty()) {
    object["metadata"]["uid"] = it != objs.end() && !Meta(old, "uid").empty()
                                    ? Meta(old, "uid")
                                    : absl::StrCat("uid-", ++uid_);
  }
  object = StampLocked(std::move(object));
  objs[key] = object;
  RecordLocked(collection, old.is_null() ? "ADDED" : "MODIFIED", object, old);
  return object;
}

bool FakeRestClient::Remove(const std::string& collection, const std::string& ns,
                            const std::string& name) {
  absl::MutexLock lock(&mu_);
  Objects& objs = collections_[collection];
  auto it = objs.find(KeyOf(ns, name));
  if (it == objs.end()) return false;
  Json o = StampLocked(it->second);
  objs.erase(it);
  RecordLocked(collection, "DELETED", o, Json());
  return true;
}

std::optional<Json> FakeRestClient::Get(const std::string& collection, const std::string& ns,
                                        const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto c = collections_.find(collection);
  if (c == collections_.end()) return std::nullopt;
  auto it = c->second.find(KeyOf(ns, name));
  if (it == c->second.end()) return std::nullopt;
  return it->second;
}

int64_t FakeRestClient::CurrentResourceVersion() const {
  absl::MutexLock lock(&mu_);
  return rv_;
}

void FakeRestClient::CompactHistory() {
  absl::MutexLock lock(&mu_);
  history_.clear();
  compacted_rv_ = rv_;
}

void FakeRestClient::DropWatches() {
  absl::MutexLock lock(&mu_);
  ++drop_gen_;
}

void FakeRestClient::SendBookmarks() {
  absl::MutexLock lock(&mu_);
  ++bookmark_gen_;
}

bool FakeRestClient::WaitForWatches(int n, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto ready = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return open_watches_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
}

int FakeRestClient::open_watches() const {
  absl::MutexLock lock(&mu_);
  return open_watches_;
}

std::vector<FakeRestClient::RecordedRequest> FakeRestClient::requests() const {
  absl::MutexLock lock(&mu_);
  return requests_;
}

void FakeRestClient::ClearRequests() {
  absl::MutexLock lock(&mu_);
  requests_.clear();
}

absl::StatusOr<Response> FakeRestClient::Do(const Request& request) {
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back({request.method, request.path, request.body});
  }
  absl::Status fault_error;
  if (std::optional<Response> f = TakeFault(request.method, request.path, &fault_error)) {
    if (!fault_error.ok()) return fault_error;
    return *f;
  }
  std::optional<Target> t = ParseTarget(request.path);
  if (!t)
    return StatusResponse(404, "NotFound", "the server could not find the requested resource");
  const std::string kind = ResourceName(*t);

  Json body;
  if (!request.body.empty()) {
    body = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded()) return StatusResponse(400, "BadRequest", "body is not JSON");
  }

  absl::MutexLock lock(&mu_);
  Objects& objs = collections_[t->collection];
  const std::string method = request.method;
  if (method == "GET" && t->name.empty()) {
    if (Param(*t, "watch") == "true" || Param(*t, "watch") == "1") {
      return StatusResponse(400, "BadRequest", "watch requests go through Watch()");
    }
    int64_t limit = 0;
    if (!absl::SimpleAtoi(AV(Param(*t, "limit")), &limit)) limit = 0;
    const std::string cont = Param(*t, "continue");
    Json items = Json::array();
    std::string next;
    for (auto it = cont.empty() ? objs.begin() : objs.upper_bound(cont); it != objs.end(); ++it) {
      if (!Matches(*t, it->second)) continue;
      if (limit > 0 && static_cast<int64_t>(items.size()) == limit) {
        next = std::prev(it)->first;
        break;
      }
      items.push_back(it->second);
    }
    Json md = {{"resourceVersion", std::to_string(rv_)}};
    if (!next.empty()) md["continue"] = next;
    return ObjectResponse(
        200,
        Json{
            {"kind", "List"}, {"apiVersion", "v1"}, {"metadata", md}, {"items", std::move(items)}});
  }
  if (method == "POST") {
    if (!t->name.empty() || !body.is_object()) {
      return StatusResponse(400, "BadRequest", "POST needs a collection path and an object");
    }
    if (!t->ns.empty()) body["metadata"]["namespace"] = t->ns;
    std::string name = Meta(body, "name");
    if (name.empty() && !Meta(body, "generateName").empty()) {
      name = absl::StrCat(AV(Meta(body, "generateName")), "x", ++uid_);
      body["metadata"]["name"] = name;
    }
    if (name.empty()) return StatusResponse(422, "Invalid", "metadata.name: Required value");
    std::string key = KeyOf(Meta(body, "namespace"), name);
    if (objs.count(key)) {
      return StatusResponse(409, "AlreadyExists",
                            absl::StrCat(AV(kind), " \"", AV(name), "\" already exists"));
    }
    body["metadata"]["uid"] = absl::StrCat("uid-", ++uid_);
    body = StampLocked(std::move(body));
    objs[key] = body;
    RecordLocked(t->collection, "ADDED", body, Json());
    return ObjectResponse(201, body);
  }
  if (t->name.empty()) return StatusResponse(405, "MethodNotAllowed", "method not allowed");
  const std::string key = KeyOf(t->ns, t->name);
  auto it = objs.find(key);
  if (it == objs.end()) {
    return StatusResponse(404, "NotFound",
                          absl::StrCat(AV(kind), " \"", AV(t->name), "\" not found"));
  }
  const Json old = it->second;
  auto conflict = [&] {
    return StatusResponse(
        409, "Conflict",
        absl::StrCat("Operation cannot be fulfilled on ", AV(kind), " \"", AV(t->name),
                     "\": the object has been modified; please apply your changes to the latest "
                     "version and try again"));
  };
  if (method == "GET") return ObjectResponse(200, old);
  if (method == "DELETE") {
    if (body.is_object() && body.contains("preconditions") && body["preconditions"].is_object()) {
      const Json& p = body["preconditions"];
      if (p.contains("resourceVersion") && p["resourceVersion"] != Meta(old, "resourceVersion")) {
        return conflict();
      }
      if (p.contains("uid") && p["uid"] != Meta(old, "uid")) return conflict();
    }
    Json gone = StampLocked(old);
    objs.erase(it);
    RecordLocked(t->collection, "DELETED", gone, Json());
    return ObjectResponse(200, gone);
  }
  Json updated;
  if (method == "PUT") {
    if (!body.is_object()) return StatusResponse(400, "BadRequest", "PUT needs an object");
    std::string rv = Meta(body, "resourceVersion");
    if (!rv.empty() && rv != Meta(old, "resourceVersion")) return conflict();
    if (t->subresource == "status") {
      updated = old;
      updated["status"] = body.contains("status") ? body["status"] : Json();
    } else {
      updated = body;
    }
  } else if (method == "PATCH") {
    const std::string& ct = request.content_type;
    Json patched = old;
    try {
      if (ct == kMergePatchType || ct == kStrategicMergePatchType) {
        if (!body.is_object()) return StatusResponse(400, "BadRequest", "patch is not an object");
        std::string rv = Meta(body, "resourceVersion");
        if (!rv.empty() && rv != Meta(old, "resourceVersion")) return conflict();
        patched.merge_patch(body);
      } else if (ct == kJsonPatchType) {
        patched = old.patch(body);
      } else {
        return StatusResponse(
            415, "UnsupportedMediaType",
            absl::StrCat("the body of the request was in an unknown format - "
                         "accepted media types include: ",
                         kJsonPatchType, ", ", kMergePatchType, ", ", kStrategicMergePatchType));
      }
    } catch (const nlohmann::json::exception& e) {
      return StatusResponse(422, "Invalid", e.what());
    }
    if (t->subresource == "status") {
      updated = old;
      updated["status"] = patched.contains("status") ? patched["status"] : Json();
    } else {
      updated = std::move(patched);
    }
  } else {
    return StatusResponse(405, "MethodNotAllowed", "method not allowed");
  }
  // As for resources with a status subresource: writes to the main resource keep the status.
  if (t->subresource.empty()) {
    if (old.contains("status")) {
      updated["status"] = old["status"];
    } else {
      updated.erase("status");
    }
  }
  // Identity stays with the stored object.
  updated["metadata"]["name"] = t->name;
  if (!t->ns.empty()) updated["metadata"]["namespace"] = t->ns;
  updated["metadata"]["uid"] = Meta(old, "uid");
  updated = StampLocked(std::move(updated));
  it->second = updated;
  RecordLocked(t->collection, "MODIFIED", updated, old);
  return ObjectResponse(200, updated);
}

absl::StatusOr<Response> FakeRestClient::Watch(const Request& request,
                                               const WatchEventFn& on_event) {
  {
    absl::MutexLock lock(&mu_);
    requests_.push_back({"WATCH", request.path, request.body});
  }
  absl::Status fault_error;
  if (std::optional<Response> f = TakeFault("WATCH", request.path, &fault_error)) {
    if (!fault_error.ok()) return fault_error;
    return *f;
  }
  std::optional<Target> t = ParseTarget(request.path);
  if (!t || !t->name.empty()) {
    return StatusResponse(404, "NotFound", "the server could not find the requested resource");
  }
  const bool bookmarks = Param(*t, "allowWatchBookmarks") == "true";
  absl::Time deadline = absl::InfiniteFuture();
  int64_t timeout_s = 0;
  if (absl::SimpleAtoi(AV(Param(*t, "timeoutSeconds")), &timeout_s) && timeout_s > 0) {
    deadline = absl::Now() + absl::Seconds(timeout_s);
  }
  if (request.timeout > absl::ZeroDuration()) {
    deadline = std::min(deadline, absl::Now() + request.timeout);
  }
  Response ok;
  ok.code = 200;
  ok.headers.emplace("content-type", "application/json");

  const std::string rv_param = Param(*t, "resourceVersion");
  std::vector<WatchEvent> pending;
  int64_t cursor = 0;
  uint64_t drop_gen = 0;
  uint64_t bookmark_gen = 0;
  bool cancelled = false;
  {
    absl::MutexLock lock(&mu_);
    drop_gen = drop_gen_;
    bookmark_gen = bookmark_gen_;
    if (rv_param.empty() || rv_param == "0") {
      for (const auto& [key, o] : collections_[t->collection]) {
        if (Matches(*t, o)) pending.push_back({"ADDED", o});
      }
      cursor = rv_;
    } else if (!absl::SimpleAtoi(AV(rv_param), &cursor)) {
      return StatusResponse(400, "BadRequest", "invalid resourceVersion");
    } else if (cursor < compacted_rv_) {
      ApiError e{410, "Expired",
                 absl::StrCat("too old resource version: ", cursor, " (", compacted_rv_, ")")};
      pending.push_back({"ERROR", Json{{"kind", "Status"},
                                       {"apiVersion", "v1"},
                                       {"metadata", Json::object()},
                                       {"status", "Failure"},
                                       {"message", e.message},
                                       {"reason", e.reason},
                                       {"code", e.code}}});
      cursor = -1;  // deliver the error, then end
    }
    ++open_watches_;
  }
  OnCancel on_cancel([this, &cancelled] {
    absl::MutexLock lock(&mu_);
    cancelled = true;
  });
  if (on_cancel.cancelled()) {  // cancelled before the callback was registered
    absl::MutexLock lock(&mu_);
    cancelled = true;
  }
  bool stop = false;
  bool send_bookmark = false;
  while (true) {
    for (WatchEvent& ev : pending) {
      if (!on_event(std::move(ev))) {
        stop = true;
        break;
      }
    }
    pending.clear();
    if (stop || cursor < 0) break;
    if (send_bookmark) {
      send_bookmark = false;
      if (!on_event(
              {"BOOKMARK", Json{{"kind", "Bookmark"},
                                {"metadata", {{"resourceVersion", std::to_string(cursor)}}}}})) {
        break;
      }
    }
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return cancelled || drop_gen != drop_gen_ || bookmark_gen != bookmark_gen_ ||
             (!history_.empty() && history_.back().rv > cursor);
    };
    mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
    if (cancelled || on_cancel.cancelled()) {
      --open_watches_;
      return absl::CancelledError("watch cancelled");
    }
    if (drop_gen != drop_gen_ || absl::Now() >= deadline) break;
    if (bookmark_gen != bookmark_gen_) {
      bookmark_gen = bookmark_gen_;
      send_bookmark = bookmarks;
    }
    auto first = std::upper_bound(history_.begin(), history_.end(), cursor,
                                  [](int64_t rv, const Event& e) { return rv < e.rv; });
    for (auto e = first; e != history_.end(); ++e) {
      cursor = e->rv;
      if (e->collection != t->collection) continue;
      bool now = Matches(*t, e->object);
      bool before = e->type == "MODIFIED" && Matches(*t, e->old);
      if (e->type == "MODIFIED") {
        if (now && before) pending.push_back({"MODIFIED", e->object});
        if (now && !before) pending.push_back({"ADDED", e->object});
        if (!now && before) pending.push_back({"DELETED", e->object});
      } else if (now) {
        pending.push_back({e->type, e->object});
      }
    }
  }
  absl::MutexLock lock(&mu_);
  --open_watches_;
  return ok;
}

}  // namespace kubelet::apiclient::testing
