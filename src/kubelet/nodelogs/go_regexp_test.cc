#include "kubelet/nodelogs/go_regexp.h"

#include <string>

#include "gtest/gtest.h"

namespace kubelet::nodelogs {
namespace {

TEST(GoRegexp, AcceptsWhatGoAccepts) {
  for (const char* p : {"",
                        "abc",
                        "a.*b",
                        "(?i)error",
                        "(?i:x)y",
                        "(?-i)a",
                        "(?is-mU:x)",
                        "\\d+\\s\\w\\D\\S\\W",
                        "[a-z0-9_-]+",
                        "[]a]",
                        "[^]a]",
                        "[a-]",
                        "(?P<name>x)",
                        "a{2,3}",
                        "a{2,}",
                        "a{,3}",
                        "x{",
                        "a{2}?",
                        "a*?",
                        "a+?b??",
                        "\\Qa.b*\\E",
                        "\\Qunterminated",
                        "[[:alpha:][:^digit:]]",
                        "\\p{Greek}\\pL\\P{^Han}\\p{Any}",
                        "[\\p{Lu}\\d]",
                        "\\x41\\x{1F600}\\101\\0",
                        "\\.\\_\\-",
                        "^$",
                        "\\A\\z\\b\\B",
                        "a|b|",
                        "()",
                        "(a)*",
                        "(?:)",
                        "\xc3\xa9+",
                        "a{1000}",
                        "(a{10}){100}",
                        "(a{0}){1000}"}) {
    EXPECT_EQ(GoRegexpSyntaxError(p), "") << p;
  }
}

TEST(GoRegexp, ErrorsAsGoWordsThem) {
  struct Case {
    std::string pattern, error;
  };
  const Case cases[] = {
      {"(abc", "missing closing ): `(abc`"},
      {"a(b|c", "missing closing ): `a(b|c`"},
      {"abc)", "unexpected ): `abc)`"},
      {"[abc", "missing closing ]: `[abc`"},
      {"x[]", "missing closing ]: `[]`"},
      {"[[:alpha:]", "missing closing ]: `[[:alpha:]`"},
      {"a**", "invalid nested repetition operator: `**`"},
      {"a*?*", "invalid nested repetition operator: `*?*`"},
      {"a{2}{3}", "invalid nested repetition operator: `{2}{3}`"},
      {"*a", "missing argument to repetition operator: `*`"},
      {"a|+", "missing argument to repetition operator: `+`"},
      {"(?i)*", "missing argument to repetition operator: `*`"},
      {"({2})", "missing argument to repetition operator: `{2}`"},
      {"\\q", "invalid escape sequence: `\\q`"},
      {"\\8", "invalid escape sequence: `\\8`"},
      {"\\1", "invalid escape sequence: `\\1`"},
      {"\\C", "invalid escape sequence: `\\C`"},
      {"\\xZZ", "invalid escape sequence: `\\xZZ`"},
      {"\\x{}", "invalid escape sequence: `\\x{}`"},
      {"[\\b]", "invalid escape sequence: `\\b`"},
      {"a\\", "trailing backslash at end of expression: ``"},
      {"[z-a]", "invalid character class range: `z-a`"},
      {"[[:foo:]]", "invalid character class range: `[:foo:]`"},
      {"\\p{Foo}", "invalid character class range: `\\p{Foo}`"},
      {"\\pX", "invalid character class range: `\\pX`"},
      {"\\p{Greek", "invalid character class range: `\\p{Greek`"},
      {"(?<n>x)", "invalid or unsupported Perl syntax: `(?<`"},
      {"(?P=n)", "invalid or unsupported Perl syntax: `(?P`"},
      {"(?i", "invalid or unsupported Perl syntax: `(?i`"},
      {"(?-)", "invalid or unsupported Perl syntax: `(?-)`"},
      {"(?P<>x)", "invalid named capture: `(?P<>`"},
      {"(?P<a-b>x)", "invalid named capture: `(?P<a-b>`"},
      {"(?P<name", "invalid named capture: `(?P<name`"},
      {"a{1001}", "invalid repeat count: `{1001}`"},
      {"a{2,1}", "invalid repeat count: `{2,1}`"},
      {"a{123456789}", "invalid repeat count: `{123456789}`"},
      {"((a{100}){100})", "invalid repeat count: `{100}`"},
      {"(a{2}){501}", "invalid repeat count: `{501}`"},
      {"a\xff", "invalid UTF-8: `\xff`"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GoRegexpSyntaxError(c.pattern), "error parsing regexp: " + c.error) << c.pattern;
  }
}

TEST(GoRegexp, DeepNestingIsRefusedNotRecursedInto) {
  const std::string deep = std::string(5000, '(') + "a" + std::string(5000, ')');
  EXPECT_EQ(GoRegexpSyntaxError(deep),
            "error parsing regexp: expression nests too deeply: `" + deep + "`");
  const std::string ok = std::string(100, '(') + "a" + std::string(100, ')');
  EXPECT_EQ(GoRegexpSyntaxError(ok), "");
}

}  // namespace
}  // namespace kubelet::nodelogs
