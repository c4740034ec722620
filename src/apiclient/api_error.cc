// Response helpers of rest_client.h that need no transport: Status decoding, watch frame
// decoding and escaping.
#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "apiclient/rest_client.h"
#include "common/json_nesting.h"
#include "common/strings.h"

namespace kubelet::apiclient {
namespace {

std::string ReasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

}  // namespace

nlohmann::json ParseBoundedJson(std::string_view text) {
  if (JsonNestingExceeds(text, kMaxJsonNesting)) return nlohmann::json::value_t::discarded;
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

std::string Response::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

ApiError DecodeApiError(const nlohmann::json& s, int fallback_code) {
  ApiError e;
  e.code = fallback_code;
  if (s.is_object()) {
    if (auto it = s.find("code"); it != s.end() && it->is_number_integer()) {
      e.code = it->get<int>();
    }
    if (auto it = s.find("reason"); it != s.end() && it->is_string()) {
      e.reason = it->get<std::string>();
    }
    if (auto it = s.find("message"); it != s.end() && it->is_string()) {
      e.message = it->get<std::string>();
    }
  }
  if (e.reason.empty()) e.reason = ReasonForCode(e.code);
  return e;
}

ApiError DecodeApiError(const Response& response) {
  nlohmann::json j = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  auto kind = j.is_object() ? j.find("kind") : j.end();
  const bool status_kind = kind != j.end() && kind->is_string() && *kind == "Status";
  if (j.is_object() && (status_kind || j.contains("reason"))) {
    return DecodeApiError(j, response.code);
  }
  ApiError e;
  e.code = response.code;
  e.reason = ReasonForCode(response.code);
  std::string_view body = SV(absl::StripAsciiWhitespace(AV(response.body)));
  if (body.size() > 1024) body = body.substr(0, 1024);
  e.message = std::string(body);
  return e;
}

absl::Status ResponseStatus(const Response& response) {
  if (response.ok()) return absl::OkStatus();
  ApiError e = DecodeApiError(response);
  std::string msg = absl::StrCat(response.code, " ", AV(e.reason), ": ", AV(e.message));
  switch (response.code) {
    case 400:
    case 422:
      return absl::InvalidArgumentError(msg);
    case 401:
      return absl::UnauthenticatedError(msg);
    case 403:
      return absl::PermissionDeniedError(msg);
    case 404:
      return absl::NotFoundError(msg);
    case 409:
      return e.reason == "AlreadyExists" ? absl::AlreadyExistsError(msg) : absl::AbortedError(msg);
    case 410:
    case 412:
      return absl::FailedPreconditionError(msg);
    case 429:
      return absl::ResourceExhaustedError(msg);
    case 504:
      return absl::DeadlineExceededError(msg);
    default:
      if (response.code >= 500) return absl::UnavailableError(msg);
      return absl::UnknownError(msg);
  }
}

absl::StatusOr<WatchEvent> DecodeWatchFrame(std::string_view line) {
  line = SV(absl::StripAsciiWhitespace(AV(line)));
  nlohmann::json j = ParseBoundedJson(line);
  auto type = j.is_object() ? j.find("type") : j.end();
  if (!j.is_object() || type == j.end() || !type->is_string()) {
    return absl::DataLossError(
        absl::StrCat("watch frame is not a watch event: ",
                     AV(line.substr(0, std::min<size_t>(line.size(), 200)))));
  }
  WatchEvent ev;
  ev.type = type->get<std::string>();
  if (auto it = j.find("object"); it != j.end()) ev.object = std::move(*it);
  return ev;
}

bool IsResourceExpired(const ApiError& error) {
  return error.code == 410 || error.reason == "Expired" || error.reason == "Gone";
}

std::string EscapeQuery(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace kubelet::apiclient
