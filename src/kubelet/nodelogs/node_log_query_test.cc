#include "kubelet/nodelogs/node_log_query.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kubelet/nodelogs/secure_join.h"

namespace kubelet::nodelogs {
namespace {

using ::testing::ElementsAre;

std::string Errors(const api::FieldErrorList& errs) { return api::AggregateErrors(errs); }

class NodeLogQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TZ", "UTC", 1);
    ::tzset();
    char templ[] = "/tmp/kubelet-nodelogs-XXXXXX";
    dir_ = ::mkdtemp(templ);
    std::ofstream(dir_ + "/syslog") << "line\n";
    std::filesystem::create_directory(dir_ + "/pods");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ParsedQuery Parse(std::vector<std::pair<std::string, std::string>> kv) {
    QueryParams p;
    for (auto& e : kv) p.emplace(e.first, e.second);
    return ParseNodeLogQuery(p);
  }
  // Parses (expecting no parse errors) and validates.
  std::string Validate(std::vector<std::pair<std::string, std::string>> kv) {
    ParsedQuery q = Parse(std::move(kv));
    EXPECT_TRUE(q.errors.empty()) << Errors(q.errors);
    if (!q.query) return "<no query>";
    return Errors(ValidateNodeLogQuery(*q.query, dir_ + "/"));
  }
  std::string dir_;
};

TEST_F(NodeLogQueryTest, NoQueryParametersIsNotAQuery) {
  ParsedQuery q = Parse({});
  EXPECT_FALSE(q.query);
  EXPECT_TRUE(q.errors.empty());
  q = Parse({{"foo", "bar"}, {"pattern", ""}, {"tailLines", ""}});
  EXPECT_FALSE(q.query);
  EXPECT_TRUE(q.errors.empty());
}

TEST_F(NodeLogQueryTest, ServicesAndFiles) {
  ParsedQuery q = Parse({{"query", "kubelet"},
                         {"query", "/syslog"},
                         {"query", "a\\b"},
                         {"query", "  "},
                         {"query", "kube-proxy"}});
  ASSERT_TRUE(q.query);
  EXPECT_THAT(q.query->services, ElementsAre("kubelet", "kube-proxy"));
  EXPECT_THAT(q.query->files, ElementsAre("/syslog", "a\\b"));
  q = Parse({{"query", "kubelet"},
             {"sinceTime", "2023-01-02T03:04:05Z"},
             {"untilTime", "2023-01-03T03:04:05.25+02:00"},
             {"tailLines", "5"},
             {"tailLines", "7"},  // only the first value counts
             {"boot", "-1"},
             {"pattern", "err(or)?"}});
  ASSERT_TRUE(q.query);
  EXPECT_EQ(*q.query->options.tail_lines, 5);
  EXPECT_EQ(*q.query->options.boot, -1);
  EXPECT_EQ(q.query->options.pattern, "err(or)?");
  EXPECT_EQ(GoTimeString(*q.query->options.since_time), "2023-01-02 03:04:05 +0000 UTC");
  EXPECT_EQ(GoTimeString(*q.query->options.until_time), "2023-01-03 03:04:05.25 +0200 +0200");
}

TEST_F(NodeLogQueryTest, ParseErrors) {
  EXPECT_EQ(Errors(Parse({{"query", "  "}}).errors),
            "query: Invalid value: []string{\"  \"}: query cannot be empty");
  EXPECT_EQ(Errors(Parse({{"query", ""}, {"query", " "}}).errors),
            "query: Invalid value: []string{\"\", \" \"}: query cannot be empty");
  EXPECT_EQ(Errors(Parse({{"sinceTime", "yesterday"}}).errors),
            "sinceTime: Invalid value: \"yesterday\": invalid time format");
  EXPECT_EQ(Errors(Parse({{"untilTime", "2023-02-30T00:00:00Z"}}).errors),
            "untilTime: Invalid value: \"2023-02-30T00:00:00Z\": invalid time format");
  EXPECT_EQ(Errors(Parse({{"tailLines", "x"}}).errors),
            "tailLines: Invalid value: \"x\": strconv.Atoi: parsing \"x\": invalid syntax");
  EXPECT_EQ(Errors(Parse({{"boot", "99999999999999999999"}}).errors),
            "boot: Invalid value: \"99999999999999999999\": strconv.Atoi: parsing "
            "\"99999999999999999999\": value out of range");
  ParsedQuery q = Parse({{"query", " "}, {"tailLines", "x"}});
  EXPECT_FALSE(q.query);
  EXPECT_EQ(Errors(q.errors),
            "[query: Invalid value: []string{\" \"}: query cannot be empty, tailLines: Invalid "
            "value: \"x\": strconv.Atoi: parsing \"x\": invalid syntax]");
}

TEST_F(NodeLogQueryTest, ValidationMessages) {
  EXPECT_EQ(Validate({{"query", "kubelet"}}), "");
  EXPECT_EQ(Validate({{"query", "/syslog"}}), "");
  EXPECT_EQ(Validate({{"query", "pods/"}}), "");
  EXPECT_EQ(Validate({{"query", "kube.let"}}),
            "query: Invalid value: \"kube.let\": input contains unsupported characters");
  EXPECT_EQ(Validate({{"query", "a b"}}),
            "query: Invalid value: \"a b\": input contains unsupported characters");
  EXPECT_EQ(
      Validate({{"query", std::string(257, 'a')}}),
      "query: Invalid value: \"" + std::string(257, 'a') + "\": length must be less than 100");
  EXPECT_EQ(
      Validate({{"query", "a"}, {"query", "b"}, {"query", "c"}, {"query", "d"}, {"query", "e"}}),
      "query: Too many: 5: must have at most 4 items");
  EXPECT_EQ(Validate({{"tailLines", "5"}}), "query: Required value: cannot be empty with options");
  EXPECT_EQ(Validate({{"query", "/a"}, {"query", "b"}}),
            "query: Invalid value: \"[/a], [b]\": cannot specify a file and service");
  EXPECT_EQ(Validate({{"query", "/a"}, {"query", "/b"}}),
            "query: Invalid value: []string{\"/a\", \"/b\"}: cannot specify more than one file");
  EXPECT_EQ(Validate({{"query", "/syslog"}, {"tailLines", "3"}}),
            "query: Invalid value: []string{\"/syslog\"}: cannot specify file with options");
  EXPECT_EQ(Validate({{"query", "/nope"}}), "query: Invalid value: []string{\"/nope\"}: stat " +
                                                dir_ + "/nope: no such file or directory");
  EXPECT_EQ(Validate({{"query", "kubelet"},
                      {"sinceTime", "2023-01-02T00:00:00Z"},
                      {"untilTime", "2023-01-01T00:00:00Z"}}),
            "untilTime: Invalid value: 2023-01-01 00:00:00 +0000 UTC: must be after `sinceTime`");
  EXPECT_EQ(Validate({{"query", "kubelet"}, {"boot", "1"}}),
            "boot: Invalid value: 1: must be less than 1");
  EXPECT_EQ(Validate({{"query", "kubelet"}, {"tailLines", "100001"}}),
            "tailLines: Invalid value: 100001: must be between 0 and 100000, inclusive");
  EXPECT_EQ(Validate({{"query", "kubelet"}, {"tailLines", "-1"}}),
            "tailLines: Invalid value: -1: must be between 0 and 100000, inclusive");
  EXPECT_EQ(Validate({{"query", "kubelet"}, {"pattern", "(err"}}),
            "pattern: Invalid value: \"(err\": error parsing regexp: missing closing ): `(err`");
  EXPECT_EQ(Validate({{"query", "a.b"}, {"boot", "2"}}),
            "[query: Invalid value: \"a.b\": input contains unsupported characters, boot: "
            "Invalid value: 2: must be less than 1]");
}

TEST_F(NodeLogQueryTest, FileQueriesStayInsideTheLogDirectory) {
  std::filesystem::create_symlink("/etc", dir_ + "/etc-link");
  std::filesystem::create_symlink("../../../../syslog", dir_ + "/pods/up");
  // An absolute link is resolved inside the directory: <dir>/etc does not exist.
  EXPECT_EQ(Validate({{"query", "/etc-link/passwd"}}),
            "query: Invalid value: []string{\"/etc-link/passwd\"}: stat " + dir_ +
                "/etc/passwd: no such file or directory");
  EXPECT_EQ(Validate({{"query", "../../etc/passwd"}}),
            "query: Invalid value: []string{\"../../etc/passwd\"}: stat " + dir_ +
                "/etc/passwd: no such file or directory");
  // A relative link climbing out stops at the directory.
  EXPECT_EQ(Validate({{"query", "pods/up"}}), "");
  EXPECT_EQ(*SecureJoin(dir_ + "/", "pods/up"), dir_ + "/syslog");
  EXPECT_EQ(*SecureJoin(dir_ + "/", "../x/../../syslog"), dir_ + "/syslog");
  std::filesystem::create_symlink("loop", dir_ + "/loop");
  absl::StatusOr<std::string> loop = SecureJoin(dir_ + "/", "loop");
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.status().message(),
            "SecureJoin " + dir_ + "//loop: too many levels of symbolic links");
}

TEST_F(NodeLogQueryTest, JournalctlArguments) {
  ParsedQuery q = Parse({{"query", "kubelet"},
                         {"query", "containerd"},
                         {"sinceTime", "2023-01-02T03:04:05+02:00"},
                         {"untilTime", "2023-11-12T13:14:15Z"},
                         {"tailLines", "10"},
                         {"boot", "-1"},
                         {"pattern", "(?i)error"}});
  ASSERT_TRUE(q.query);
  EXPECT_THAT(
      JournalctlArgs(*q.query, {"kubelet", "containerd"}),
      ElementsAre("--utc", "--no-pager", "--output=short-precise", "--since=2023-1-2 3:4:5",
                  "--until=2023-11-12 13:14:15", "--pager-end", "--lines=10", "--unit=kubelet",
                  "--unit=containerd", "--grep=(?i)error", "--boot", "-1"));
  q = Parse({{"query", "kubelet"}});
  EXPECT_THAT(JournalctlArgs(*q.query, {"kubelet"}),
              ElementsAre("--utc", "--no-pager", "--output=short-precise", "--unit=kubelet"));
}

TEST(GoTime, Rfc3339AsGoParsesIt) {
  EXPECT_TRUE(ParseRFC3339("2023-01-02T03:04:05Z"));
  EXPECT_TRUE(ParseRFC3339("2023-01-02T3:04:05Z"));  // Go's parser takes a one-digit hour
  EXPECT_TRUE(ParseRFC3339("2024-02-29T00:00:00.123456789-07:30"));
  EXPECT_FALSE(ParseRFC3339("2023-02-29T00:00:00Z"));
  EXPECT_FALSE(ParseRFC3339("2023-01-02 03:04:05Z"));
  EXPECT_FALSE(ParseRFC3339("2023-01-02T03:04:05"));
  EXPECT_FALSE(ParseRFC3339("2023-01-02T03:04:05+0200"));
  EXPECT_FALSE(ParseRFC3339("2023-01-02T24:00:00Z"));
  std::optional<GoTime> t = ParseRFC3339("2023-01-02T03:04:05-07:30");
  ASSERT_TRUE(t);
  EXPECT_EQ(absl::ToUnixSeconds(t->time),
            absl::ToUnixSeconds(
                absl::FromCivil(absl::CivilSecond(2023, 1, 2, 10, 34, 5), absl::UTCTimeZone())));
  EXPECT_EQ(JournalTime(*t), "2023-1-2 3:4:5");
}

}  // namespace
}  // namespace kubelet::nodelogs
