#include "server/file_server.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/go_compat.h"
#include "common/log.h"
#include "common/strings.h"

namespace kubelet::server {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

constexpr char kHttpTimeFormat[] = "%a, %d %b %Y %H:%M:%S GMT";

// Go's path.Base.
std::string BaseName(std::string_view p) {
  if (p.empty()) return ".";
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  if (p == "/") return "/";
  size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

// filepath.Ext.
std::string_view Ext(std::string_view name) {
  for (size_t i = name.size(); i > 0; --i) {
    if (name[i - 1] == '/') break;
    if (name[i - 1] == '.') return name.substr(i - 1);
  }
  return {};
}

std::string HttpTime(int64_t unix_seconds) {
  return absl::FormatTime(kHttpTimeFormat, absl::FromUnixSeconds(unix_seconds),
                          absl::UTCTimeZone());
}

// http.ParseTime: TimeFormat or RFC 850 (ANSI C dates are not taken).
std::optional<int64_t> ParseHttpTime(const std::string& s) {
  absl::Time t;
  std::string err;
  for (const char* f : {kHttpTimeFormat, "%A, %d-%b-%y %H:%M:%S GMT"}) {
    if (absl::ParseTime(f, AV(s), absl::UTCTimeZone(), &t, &err)) return absl::ToUnixSeconds(t);
  }
  return std::nullopt;
}

// toHTTPError for an open/stat errno (with mapOpenError's ENOTDIR -> not found).
void FailForErrno(ResponseStream& out, int err) {
  if (err == ENOENT || err == ENOTDIR) return out.Fail(404, "404 page not found");
  if (err == EACCES || err == EPERM) return out.Fail(403, "403 Forbidden");
  out.Fail(500, "500 Internal Server Error");
}

std::string RawQuery(const HttpRequest& req) {
  size_t q = req.target.find('?');
  return q == std::string::npos ? "" : req.target.substr(q + 1);
}

// html.EscapeString's replacements, as http's htmlReplacer.
std::string HtmlEscape(std::string_view in) {
  std::string out;
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// ---- MIME types (Go's mime package) ---------------------------------------------------------

struct MimeTable {
  std::map<std::string, std::string> exact;
  std::map<std::string, std::string> lower;

  // setExtensionType: a text type gets "; charset=utf-8" unless it names a charset.
  void Set(const std::string& ext, std::string type) {
    std::string l = absl::AsciiStrToLower(type);
    if (absl::StartsWith(l, "text/") && l.find("charset=") == std::string::npos) {
      type = absl::StrCat(l.substr(0, l.find(';')), "; charset=utf-8");
    }
    exact[ext] = type;
    lower[absl::AsciiStrToLower(ext)] = std::move(type);
  }

  // mime/type_unix.go loadMimeGlobsFile: "weight:type:*.ext" lines, the first of an extension
  // wins (the built-in ones too).
  bool LoadGlobs(const char* path) {
    std::ifstream f(path);
    if (!f) return false;
    std::string line;
    while (std::getline(f, line)) {
      std::vector<std::string> fields = absl::StrSplit(line, ':');
      if (fields.size() < 3 || fields[0].empty() || fields[2].size() < 3) continue;
      if (fields[0][0] == '#' || fields[2][0] != '*' || fields[2][1] != '.') continue;
      std::string ext = fields[2].substr(1);
      if (ext.find_first_of("?*[") != std::string::npos) continue;
      if (exact.count(ext)) continue;
      Set(ext, fields[1]);
    }
    return true;
  }

  // loadMimeFile: "type ext ext..." lines; later entries replace earlier ones.
  void LoadTypes(const char* path) {
    std::ifstream f(path);
    std::string line;
    while (f && std::getline(f, line)) {
      std::vector<std::string> fields =
          absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
      if (fields.size() <= 1 || fields[0][0] == '#') continue;
      for (size_t i = 1; i < fields.size(); ++i) {
        if (fields[i][0] == '#') break;
        Set("." + fields[i], fields[0]);
      }
    }
  }

  static const MimeTable& Get() {
    static const MimeTable* table = [] {
      auto* t = new MimeTable;
      for (const auto& [ext, type] : std::initializer_list<std::pair<const char*, const char*>>{
               {".avif", "image/avif"},
               {".css", "text/css; charset=utf-8"},
               {".gif", "image/gif"},
               {".htm", "text/html; charset=utf-8"},
               {".html", "text/html; charset=utf-8"},
               {".jpeg", "image/jpeg"},
               {".jpg", "image/jpeg"},
               {".js", "text/javascript; charset=utf-8"},
               {".json", "application/json"},
               {".mjs", "text/javascript; charset=utf-8"},
               {".pdf", "application/pdf"},
               {".png", "image/png"},
               {".svg", "image/svg+xml"},
               {".wasm", "application/wasm"},
               {".webp", "image/webp"},
               {".xml", "text/xml; charset=utf-8"}}) {
        t->exact[ext] = type;
        t->lower[ext] = type;
      }
      bool globs = false;
      for (const char* p : {"/usr/local/share/mime/globs2", "/usr/share/mime/globs2"}) {
        if (t->LoadGlobs(p)) {
          globs = true;
          break;
        }
      }
      if (!globs) {
        for (const char* p : {"/etc/mime.types", "/etc/apache2/mime.types",
                              "/etc/apache/mime.types", "/etc/httpd/conf/mime.types"}) {
          t->LoadTypes(p);
        }
      }
      return t;
    }();
    return *table;
  }
};

// ---- Content sniffing (net/http sniff.go) ---------------------------------------------------

bool IsWs(unsigned char c) {
  return c == '\t' || c == '\n' || c == '\x0c' || c == '\r' || c == ' ';
}

bool IsTagTerminating(unsigned char c) { return c == ' ' || c == '>'; }

}  // namespace

std::string MimeTypeByExtension(std::string_view ext) {
  const MimeTable& t = MimeTable::Get();
  auto it = t.exact.find(std::string(ext));
  if (it != t.exact.end()) return it->second;
  auto lit = t.lower.find(absl::AsciiStrToLower(AV(ext)));
  return lit == t.lower.end() ? "" : lit->second;
}

std::string DetectContentType(std::string_view data) {
  if (data.size() > 512) data = data.substr(0, 512);
  size_t ws = 0;
  while (ws < data.size() && IsWs(static_cast<unsigned char>(data[ws]))) ++ws;
  const std::string_view trimmed = data.substr(ws);
  static constexpr std::string_view kHtml[] = {"<!DOCTYPE HTML",
                                               "<HTML",
                                               "<HEAD",
                                               "<SCRIPT",
                                               "<IFRAME",
                                               "<H1",
                                               "<DIV",
                                               "<FONT",
                                               "<TABLE",
                                               "<A",
                                               "<STYLE",
                                               "<TITLE",
                                               "<B",
                                               "<BODY",
                                               "<BR",
                                               "<P",
                                               "<!--"};
  for (std::string_view sig : kHtml) {
    if (trimmed.size() < sig.size() + 1) continue;
    if (!absl::EqualsIgnoreCase(AV(trimmed.substr(0, sig.size())), AV(sig))) continue;
    if (IsTagTerminating(static_cast<unsigned char>(trimmed[sig.size()]))) {
      return "text/html; charset=utf-8";
    }
  }
  if (absl::StartsWith(AV(trimmed), "<?xml")) return "text/xml; charset=utf-8";
  struct Exact {
    std::string_view prefix, type;
  };
  static constexpr Exact kExact[] = {
      {"%PDF-", "application/pdf"},
      {"%!PS-Adobe-", "application/postscript"},
      {"\xFE\xFF", "text/plain; charset=utf-16be"},
      {"\xFF\xFE", "text/plain; charset=utf-16le"},
      {"\xEF\xBB\xBF", "text/plain; charset=utf-8"},
      {std::string_view("\x00\x00\x01\x00", 4), "image/x-icon"},
      {std::string_view("\x00\x00\x02\x00", 4), "image/x-icon"},
      {"BM", "image/bmp"},
      {"GIF87a", "image/gif"},
      {"GIF89a", "image/gif"},
      {"\x89PNG\x0D\x0A\x1A\x0A", "image/png"},
      {"\xFF\xD8\xFF", "image/jpeg"},
      {"ID3", "audio/mpeg"},
      {std::string_view("OggS\x00", 5), "application/ogg"},
      {std::string_view("MThd\x00\x00\x00\x06", 8), "audio/midi"},
      {"\x1A\x45\xDF\xA3", "video/webm"},
      {std::string_view("\x00\x01\x00\x00", 4), "font/ttf"},
      {"OTTO", "font/otf"},
      {"ttcf", "font/collection"},
      {"wOFF", "font/woff"},
      {"wOF2", "font/woff2"},
      {"\x1F\x8B\x08", "application/x-gzip"},
      {"PK\x03\x04", "application/zip"},
      {std::string_view("Rar!\x1A\x07\x00", 7), "application/x-rar-compressed"},
      {std::string_view("Rar!\x1A\x07\x01\x00", 8), "application/x-rar-compressed"},
      {std::string_view("\x00\x61\x73\x6D", 4), "application/wasm"},
  };
  for (const Exact& e : kExact) {
    if (absl::StartsWith(AV(data), AV(e.prefix))) return std::string(e.type);
  }
  if (data.size() >= 14 && data.substr(0, 4) == "RIFF") {
    std::string_view kind = data.substr(8, 4);
    if (data.substr(8, 6) == "WEBPVP") return "image/webp";
    if (kind == "AVI ") return "video/avi";
    if (kind == "WAVE") return "audio/wave";
  }
  for (size_t i = ws; i < data.size(); ++i) {
    const auto b = static_cast<unsigned char>(data[i]);
    if (b <= 0x08 || b == 0x0B || (b >= 0x0E && b <= 0x1A) || (b >= 0x1C && b <= 0x1F)) {
      return "application/octet-stream";
    }
  }
  return "text/plain; charset=utf-8";
}

std::string GoRelativeUrl(std::string_view name) {
  std::string escaped;
  for (char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    const bool keep = absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
                      c == '$' || c == '&' || c == '+' || c == ',' || c == '/' || c == ':' ||
                      c == ';' || c == '=' || c == '@';
    if (keep) {
      escaped.push_back(ch);
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      escaped.push_back('%');
      escaped.push_back(kHex[c >> 4]);
      escaped.push_back(kHex[c & 15]);
    }
  }
  // A first segment with a colon would read as a scheme.
  std::string_view first = std::string_view(escaped).substr(0, escaped.find('/'));
  if (first.find(':') != std::string_view::npos) return "./" + escaped;
  return escaped;
}

namespace {

// http's parseRange; errors are Go's texts ("invalid range", errNoOverlap's).
struct Range {
  int64_t start = 0;
  int64_t length = 0;
};
constexpr char kNoOverlap[] = "invalid range: failed to overlap";

bool ParseInt64(absl::string_view s, int64_t* out) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(absl::ascii_isdigit(static_cast<unsigned char>(s[i])) ||
          (i == 0 && (s[i] == '+' || s[i] == '-')))) {
      return false;
    }
  }
  return absl::SimpleAtoi(s, out);
}

absl::StatusOr<std::vector<Range>> ParseRange(absl::string_view s, int64_t size) {
  const absl::Status invalid = absl::InvalidArgumentError("invalid range");
  if (!absl::ConsumePrefix(&s, "bytes=")) return invalid;
  std::vector<Range> ranges;
  bool no_overlap = false;
  for (absl::string_view ra : absl::StrSplit(s, ',')) {
    ra = absl::StripAsciiWhitespace(ra);
    if (ra.empty()) continue;
    size_t dash = ra.find('-');
    if (dash == absl::string_view::npos) return invalid;
    absl::string_view start = absl::StripAsciiWhitespace(ra.substr(0, dash));
    absl::string_view end = absl::StripAsciiWhitespace(ra.substr(dash + 1));
    Range r;
    int64_t i = 0;
    if (start.empty()) {
      // A suffix: the last `end` bytes.
      if (end.empty() || end[0] == '-' || !ParseInt64(end, &i) || i < 0) return invalid;
      if (i > size) i = size;
      r.start = size - i;
      r.length = size - r.start;
    } else {
      if (!ParseInt64(start, &i) || i < 0) return invalid;
      if (i >= size) {
        no_overlap = true;
        continue;
      }
      r.start = i;
      if (end.empty()) {
        r.length = size - r.start;
      } else {
        if (!ParseInt64(end, &i) || r.start > i) return invalid;
        if (i >= size) i = size - 1;
        r.length = i - r.start + 1;
      }
    }
    ranges.push_back(r);
  }
  if (no_overlap && ranges.empty()) return absl::OutOfRangeError(kNoOverlap);
  return ranges;
}

// serveContent for an open regular file (or anything that is not a directory).
void ServeContent(int fd, const struct stat& st, const std::string& name, const HttpRequest& req,
                  ResponseStream& out) {
  const int64_t mtime = st.st_mtim.tv_sec;
  Headers headers;
  if (mtime != 0) headers.emplace_back("Last-Modified", HttpTime(mtime));
  // checkIfModifiedSince (sub-second precision dropped, as Last-Modified has none).
  if (std::string ims = req.Header("if-modified-since"); !ims.empty() && mtime != 0) {
    std::optional<int64_t> t = ParseHttpTime(ims);
    if (t && mtime <= *t) {
      out.Respond(304, headers, "");
      return;
    }
  }
  std::string ctype = MimeTypeByExtension(Ext(name));
  if (ctype.empty()) {
    char buf[512];
    ssize_t n = ::pread(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno != EAGAIN) {
      out.Fail(500, "seeker can't seek");
      return;
    }
    ctype = DetectContentType(std::string_view(buf, n > 0 ? static_cast<size_t>(n) : 0));
  }
  const int64_t size = st.st_size;
  int64_t offset = 0, length = size;
  int code = 200;
  std::string range = req.Header("range");
  if (std::string if_range = req.Header("if-range"); !range.empty() && !if_range.empty()) {
    // checkIfRange: without an ETag only the modification time can match.
    std::optional<int64_t> t = ParseHttpTime(if_range);
    if (mtime == 0 || !t || *t != mtime) range.clear();
  }
  std::optional<Range> single;
  if (!range.empty()) {
    absl::StatusOr<std::vector<Range>> ranges = ParseRange(range, size);
    if (!ranges.ok()) {
      std::string text(ranges.status().message());
      Headers h = {{"Content-Type", "text/plain; charset=utf-8"},
                   {"X-Content-Type-Options", "nosniff"}};
      if (text == kNoOverlap) h.emplace_back("Content-Range", absl::StrCat("bytes */", size));
      out.Respond(416, std::move(h), text + "\n");
      return;
    }
    int64_t sum = 0;
    for (const Range& r : *ranges) sum += r.length;
    if (ranges->size() == 1 && sum <= size) single = ranges->front();
  }
  headers.emplace_back("Content-Type", ctype);
  headers.emplace_back("Accept-Ranges", "bytes");
  if (single) {
    code = 206;
    offset = single->start;
    length = single->length;
    headers.emplace_back("Content-Range",
                         absl::StrCat("bytes ", offset, "-", offset + length - 1, "/", size));
  }
  out.SetHead(code, std::move(headers));
  std::vector<char> buf(32 << 10);
  while (length > 0) {
    ssize_t n =
        ::pread(fd, buf.data(), static_cast<size_t>(std::min<int64_t>(length, buf.size())), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file (it shrank), a FIFO without data, or a read error
    if (!out.Write(std::string_view(buf.data(), static_cast<size_t>(n)))) break;
    offset += n;
    length -= n;
  }
}

// dirList.
void ListDirectory(int fd, const struct stat& st, ResponseStream& out) {
  int dup = ::dup(fd);
  DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
  if (d == nullptr) {
    if (dup >= 0) ::close(dup);
    KLOG_ERROR(absl::InternalError(std::strerror(errno)), "http: error reading directory");
    out.Fail(500, "Error reading directory");
    return;
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat child;
      is_dir = ::fstatat(::dirfd(d), e->d_name, &child, AT_SYMLINK_NOFOLLOW) == 0 &&
               S_ISDIR(child.st_mode);
    }
    if (is_dir) name.push_back('/');
    names.push_back(std::move(name));
    errno = 0;
  }
  const int err = errno;
  ::closedir(d);
  if (err != 0) {
    KLOG_ERROR(absl::InternalError(std::strerror(err)), "http: error reading directory");
    out.Fail(500, "Error reading directory");
    return;
  }
  // Sorted by name without the directory slash, as Go sorts its entries.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    std::string_view x = a, y = b;
    if (!x.empty() && x.back() == '/') x.remove_suffix(1);
    if (!y.empty() && y.back() == '/') y.remove_suffix(1);
    return x < y;
  });
  std::string body = "<pre>\n";
  for (const std::string& name : names) {
    absl::StrAppend(&body, "<a href=\"", GoRelativeUrl(name), "\">", HtmlEscape(name), "</a>\n");
  }
  body += "</pre>\n";
  Headers headers;
  if (st.st_mtim.tv_sec != 0) headers.emplace_back("Last-Modified", HttpTime(st.st_mtim.tv_sec));
  headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  out.Respond(200, std::move(headers), std::move(body));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

}  // namespace

void ServeDirectoryFile(const std::string& root, const std::string& path, const HttpRequest& req,
                        ResponseStream& out) {
  const std::string upath = path.empty() || path[0] != '/' ? "/" + path : path;
  const std::string name = GoCleanPath(upath);
  const std::string query = RawQuery(req);
  auto redirect = [&](std::string location) {
    if (!query.empty()) absl::StrAppend(&location, "?", query);
    out.Respond(301, {{"Location", std::move(location)}}, "");
  };
  if (absl::EndsWith(upath, "/index.html")) return redirect("./");
  // http.Dir refuses a name with a NUL byte.
  if (name.find('\0') != std::string::npos) return out.Fail(500, "500 Internal Server Error");
  const std::string full = GoCleanPath(absl::StrCat(root, "/", name));
  Fd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return FailForErrno(out, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return FailForErrno(out, errno);
  bool dir = S_ISDIR(st.st_mode);
  if (dir && upath.back() != '/') return redirect(BaseName(upath) + "/");
  if (!dir && upath.back() == '/') return redirect("../" + BaseName(upath));
  std::string file_name = BaseName(full);
  if (dir) {
    // A directory's index.html is served in its place.
    const std::string index = GoCleanPath(absl::StrCat(full, "/index.html"));
    int ifd = ::open(index.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat ist;
    if (ifd >= 0 && ::fstat(ifd, &ist) == 0 && !S_ISDIR(ist.st_mode)) {
      fd.reset(ifd);
      st = ist;
      dir = false;
      file_name = "index.html";
    } else if (ifd >= 0) {
      ::close(ifd);
    }
  }
  if (dir) {
    if (std::string ims = req.Header("if-modified-since"); !ims.empty() && st.st_mtim.tv_sec != 0) {
      std::optional<int64_t> t = ParseHttpTime(ims);
      if (t && st.st_mtim.tv_sec <= *t) {
        out.Respond(304, {{"Last-Modified", HttpTime(st.st_mtim.tv_sec)}}, "");
        return;
      }
    }
    return ListDirectory(fd.get(), st, out);
  }
  ServeContent(fd.get(), st, file_name, req, out);
}

}  // namespace kubelet::server
