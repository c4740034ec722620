#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "server/file_server.h"
#include "server/kubelet_server.h"
#include "server/raw_http_test_util.h"

namespace kubelet::server {
namespace {

using testing::HasStatus;
using testing::RawExchange;

// The body of a response, its chunked encoding undone.
std::string Body(const std::string& response) {
  std::string body = testing::Body(response);
  if (response.substr(0, response.find("\r\n\r\n")).find("Transfer-Encoding: chunked") ==
      std::string::npos) {
    return body;
  }
  std::string out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t eol = body.find("\r\n", pos);
    if (eol == std::string::npos) break;
    size_t n = std::stoul(body.substr(pos, eol - pos), nullptr, 16);
    if (n == 0) break;
    out += body.substr(eol + 2, n);
    pos = eol + 2 + n + 2;
  }
  return out;
}

std::string Header(const std::string& response, const std::string& name) {
  const std::string head = response.substr(0, response.find("\r\n\r\n"));
  size_t at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "<none>";
  at += name.size() + 4;
  return head.substr(at, head.find("\r\n", at) - at);
}

std::string Gunzip(const std::string& data) {
  z_stream z{};
  inflateInit2(&z, 15 + 16);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[4096];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END ? out : "<bad gzip>";
}

class FakeRunner : public nodelogs::CommandRunner {
 public:
  nodelogs::CommandResult Run(const std::vector<std::string>& argv, absl::Time,
                              const nodelogs::OutputSink& out) override {
    calls.push_back(absl::StrJoin(argv, " "));
    if (argv.size() == 3 && argv[1] == "--field") {
      out("kubelet.service\n");
    } else {
      out("Jan 01 00:00:00.000000 node kubelet[1]: started\n");
    }
    return {};
  }
  std::vector<std::string> calls;
};

class LogsHandlerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/kubelet-logs-XXXXXX";
    dir_ = ::mkdtemp(templ);
    Write("syslog", "line one\nline two\n");
    Write("b.log", "bbb");
    Write("pods/ns_pod_uid/c/0.log", "container log\n");
    Write("my file:1", "x");
    Write("we<i>&'rd\".txt", "y");
    Write("binary", std::string("\x01\x02\x03", 3));
    runner_ = std::make_shared<FakeRunner>();
  }
  void TearDown() override {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  void Write(const std::string& name, const std::string& body) {
    std::filesystem::create_directories(std::filesystem::path(dir_ + "/" + name).parent_path());
    std::ofstream(dir_ + "/" + name) << body;
  }
  void Start(bool query, bool handler = true) {
    server_ = std::make_unique<HttpServer>(HttpServerOptions{.name = "logs", .port = 0});
    NodeLogsOptions o;
    o.enable_system_log_handler = handler;
    o.enable_query = query;
    o.log_dir = dir_ + "/";
    o.runner = runner_;
    InstallLogsHandler(*server_, o);
    ASSERT_TRUE(server_->Start().ok());
  }
  std::string Get(const std::string& target, const std::string& extra_headers = "") {
    return RawExchange(server_->port(), "GET " + target + " HTTP/1.1\r\nHost: x\r\n" +
                                            extra_headers + "Connection: close\r\n\r\n");
  }
  std::string dir_;
  std::shared_ptr<FakeRunner> runner_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(LogsHandlerTest, DirectoryListingAsGoWritesIt) {
  Start(/*query=*/false);
  std::string r = Get("/logs/");
  ASSERT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Header(r, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(Header(r, "Last-Modified"), "<none>");
  EXPECT_EQ(Body(r),
            "<pre>\n"
            "<a href=\"b.log\">b.log</a>\n"
            "<a href=\"binary\">binary</a>\n"
            "<a href=\"./my%20file:1\">my file:1</a>\n"
            "<a href=\"pods/\">pods/</a>\n"
            "<a href=\"syslog\">syslog</a>\n"
            "<a href=\"we%3Ci%3E&%27rd%22.txt\">we&lt;i&gt;&amp;&#39;rd&#34;.txt</a>\n"
            "</pre>\n");
  r = Get("/logs/pods/ns_pod_uid/");
  EXPECT_EQ(Body(r), "<pre>\n<a href=\"c/\">c/</a>\n</pre>\n");
}

TEST_F(LogsHandlerTest, FilesRedirectsAndErrors) {
  Start(/*query=*/false);
  std::string r = Get("/logs/syslog");
  ASSERT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Body(r), "line one\nline two\n");
  EXPECT_EQ(Header(r, "Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(Header(r, "Accept-Ranges"), "bytes");
  EXPECT_EQ(Header(Get("/logs/binary"), "Content-Type"), "application/octet-stream");
  EXPECT_EQ(Body(Get("/logs/pods/ns_pod_uid/c/0.log")), "container log\n");

  r = Get("/logs/pods?x=1");
  EXPECT_TRUE(HasStatus(r, 301)) << r;
  EXPECT_EQ(Header(r, "Location"), "pods/?x=1");
  r = Get("/logs/syslog/");
  EXPECT_TRUE(HasStatus(r, 301)) << r;
  EXPECT_EQ(Header(r, "Location"), "../syslog");
  r = Get("/logs/pods/index.html");
  EXPECT_TRUE(HasStatus(r, 301)) << r;
  EXPECT_EQ(Header(r, "Location"), "./");

  r = Get("/logs/missing.log");
  EXPECT_TRUE(HasStatus(r, 404)) << r;
  EXPECT_EQ(Body(r), "404 page not found\n");
  EXPECT_TRUE(HasStatus(Get("/logs/syslog/x"), 404));  // a file as a directory
  // ".." never reaches the file server: the server redirects to the cleaned path.
  r = Get("/logs/../etc/passwd");
  EXPECT_TRUE(HasStatus(r, 301)) << r;
  EXPECT_EQ(Header(r, "Location"), "/etc/passwd");
  EXPECT_TRUE(HasStatus(Get("/logs/a%00b"), 500));
  // Only GET, as upstream's route.
  EXPECT_TRUE(HasStatus(RawExchange(server_->port(),
                                    "POST /logs/syslog HTTP/1.1\r\nHost: x\r\nContent-Length: "
                                    "0\r\nConnection: close\r\n\r\n"),
                        405));
}

TEST_F(LogsHandlerTest, SymlinksAreFollowedAsGoDoes) {
  char templ[] = "/tmp/kubelet-logs-outside-XXXXXX";
  std::string outside = ::mkdtemp(templ);
  std::ofstream(outside + "/other.log") << "outside\n";
  std::filesystem::create_symlink(outside + "/other.log", dir_ + "/link.log");
  std::filesystem::create_symlink(outside, dir_ + "/linkdir");
  std::filesystem::create_symlink("nowhere", dir_ + "/dangling");
  Start(/*query=*/false);
  EXPECT_EQ(Body(Get("/logs/link.log")), "outside\n");
  EXPECT_EQ(Body(Get("/logs/linkdir/")), "<pre>\n<a href=\"other.log\">other.log</a>\n</pre>\n");
  EXPECT_TRUE(HasStatus(Get("/logs/dangling"), 404));
  // The listing shows a symlink as it is (not as a directory).
  EXPECT_NE(Body(Get("/logs/")).find("<a href=\"linkdir\">linkdir</a>"), std::string::npos);
  std::filesystem::remove_all(outside);
}

TEST_F(LogsHandlerTest, RangesAndConditionalRequests) {
  Start(/*query=*/false);
  std::string r = Get("/logs/syslog", "Range: bytes=5-7\r\n");
  ASSERT_TRUE(HasStatus(r, 206)) << r;
  EXPECT_EQ(Header(r, "Content-Range"), "bytes 5-7/18");
  EXPECT_EQ(Body(r), "one");
  r = Get("/logs/syslog", "Range: bytes=-4\r\n");
  EXPECT_EQ(Body(r), "two\n");
  r = Get("/logs/syslog", "Range: bytes=100-\r\n");
  ASSERT_TRUE(HasStatus(r, 416)) << r;
  EXPECT_EQ(Header(r, "Content-Range"), "bytes */18");
  EXPECT_EQ(Body(r), "invalid range: failed to overlap\n");
  EXPECT_TRUE(HasStatus(Get("/logs/syslog", "Range: items=1-2\r\n"), 416));
  r = Get("/logs/syslog", "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n");
  EXPECT_TRUE(HasStatus(r, 304)) << r;
  r = Get("/logs/syslog", "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n");
  EXPECT_TRUE(HasStatus(r, 200)) << r;
}

TEST_F(LogsHandlerTest, QueryIgnoredWhenTheGateIsOff) {
  Start(/*query=*/false);
  std::string r = Get("/logs/?query=kubelet&tailLines=5");
  ASSERT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Body(r).rfind("<pre>\n", 0), 0u) << r;
  EXPECT_TRUE(runner_->calls.empty());
  // Bad parameters are not even looked at.
  EXPECT_TRUE(HasStatus(Get("/logs/?tailLines=x"), 200));
}

TEST_F(LogsHandlerTest, QueryServesJournalAndFiles) {
  Start(/*query=*/true);
  std::string r = Get("/logs/?query=kubelet&tailLines=5");
  ASSERT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Header(r, "Content-Type"), "text/plain;charset=UTF-8");
  EXPECT_EQ(Body(r), "Jan 01 00:00:00.000000 node kubelet[1]: started\n");
  ASSERT_EQ(runner_->calls.size(), 2u);
  EXPECT_EQ(runner_->calls[1],
            "journalctl --utc --no-pager --output=short-precise --pager-end --lines=5 "
            "--unit=kubelet");
  // A service journald does not know is read from its file.
  EXPECT_EQ(Body(Get("/logs/?query=b")), "bbb");
  // A file query is served by the file server.
  r = Get("/logs/?query=/syslog");
  ASSERT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Body(r), "line one\nline two\n");
  // Without query parameters: the file server.
  EXPECT_EQ(Body(Get("/logs/syslog")), "line one\nline two\n");
}

TEST_F(LogsHandlerTest, QueryErrors) {
  Start(/*query=*/true);
  std::string r = Get("/logs/?tailLines=x");
  ASSERT_TRUE(HasStatus(r, 400)) << r;
  EXPECT_EQ(Body(r),
            "tailLines: Invalid value: \"x\": strconv.Atoi: parsing \"x\": invalid syntax\n");
  EXPECT_EQ(Header(r, "X-Content-Type-Options"), "nosniff");
  r = Get("/logs/syslog?query=kubelet");
  ASSERT_TRUE(HasStatus(r, 406)) << r;
  EXPECT_EQ(Body(r), "path not allowed in query mode\n");
  r = Get("/logs/?query=kube.let");
  ASSERT_TRUE(HasStatus(r, 406)) << r;
  EXPECT_EQ(Body(r), "query: Invalid value: \"kube.let\": input contains unsupported characters\n");
  r = Get("/logs/?query=kubelet&boot=1&tailLines=-1");
  ASSERT_TRUE(HasStatus(r, 406)) << r;
  EXPECT_EQ(Body(r),
            "[boot: Invalid value: 1: must be less than 1, tailLines: Invalid value: -1: must be "
            "between 0 and 100000, inclusive]\n");
  r = Get("/logs/?query=/nope");
  ASSERT_TRUE(HasStatus(r, 406)) << r;
  EXPECT_EQ(Body(r), "query: Invalid value: []string{\"/nope\"}: stat " + dir_ +
                         "/nope: no such file or directory\n");
  EXPECT_TRUE(runner_->calls.empty());
}

TEST_F(LogsHandlerTest, QueryAnswerGzippedWhenAsked) {
  Start(/*query=*/true);
  std::string r = Get("/logs/?query=kubelet", "Accept-Encoding: gzip\r\n");
  ASSERT_TRUE(HasStatus(r, 200)) << r;
  EXPECT_EQ(Header(r, "Content-Encoding"), "gzip");
  EXPECT_EQ(Gunzip(Body(r)), "Jan 01 00:00:00.000000 node kubelet[1]: started\n");
  // Only exactly "gzip", as upstream compares the header.
  r = Get("/logs/?query=kubelet", "Accept-Encoding: gzip, deflate\r\n");
  EXPECT_EQ(Header(r, "Content-Encoding"), "<none>");
}

TEST_F(LogsHandlerTest, DisabledHandler) {
  Start(/*query=*/true, /*handler=*/false);
  std::string r = Get("/logs/syslog");
  ASSERT_TRUE(HasStatus(r, 405)) << r;
  EXPECT_EQ(Body(r), "logs endpoint is disabled.\n");
}

TEST(FileServerHelpers, UrlEscapingAndSniffing) {
  EXPECT_EQ(GoRelativeUrl("a b?#%"), "a%20b%3F%23%25");
  EXPECT_EQ(GoRelativeUrl("x:y/"), "./x:y/");
  EXPECT_EQ(GoRelativeUrl("dir/x:y"), "dir/x:y");
  EXPECT_EQ(DetectContentType("  <html><body>"), "text/html; charset=utf-8");
  EXPECT_EQ(DetectContentType("<?xml version=\"1.0\"?>"), "text/xml; charset=utf-8");
  EXPECT_EQ(DetectContentType("\x1f\x8b\x08\x00"), "application/x-gzip");
  EXPECT_EQ(DetectContentType("plain text\n"), "text/plain; charset=utf-8");
  EXPECT_EQ(DetectContentType(""), "text/plain; charset=utf-8");
  EXPECT_EQ(MimeTypeByExtension(".json"), "application/json");
  EXPECT_EQ(MimeTypeByExtension(".HTML"), "text/html; charset=utf-8");
}

}  // namespace
}  // namespace kubelet::server
