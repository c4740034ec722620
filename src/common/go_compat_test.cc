#include "common/go_compat.h"

#include <cerrno>

#include "gtest/gtest.h"

namespace kubelet {
namespace {

TEST(GoCleanPath, MatchesGosPathClean) {
  EXPECT_EQ(GoCleanPath(""), ".");
  EXPECT_EQ(GoCleanPath("/"), "/");
  EXPECT_EQ(GoCleanPath("a/b/../c/./d//"), "a/c/d");
  EXPECT_EQ(GoCleanPath("/../x"), "/x");
  EXPECT_EQ(GoCleanPath("../../x"), "../../x");
  EXPECT_EQ(GoCleanPath("a/.."), ".");
  EXPECT_EQ(GoCleanPath("//var///log/"), "/var/log");
}

TEST(GoErrnoText, LowerCaseAsGosErrnoStrings) {
  EXPECT_EQ(GoErrnoText(ENOENT), "no such file or directory");
  EXPECT_EQ(GoErrnoText(EACCES), "permission denied");
}

}  // namespace
}  // namespace kubelet
