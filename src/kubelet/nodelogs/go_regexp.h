// Go's regexp syntax check, as the node log query validates its `pattern` parameter (upstream
// v1.28 kubelet_server_journal.go: regexp/syntax.Parse(pattern, syntax.Perl)). The pattern is
// only checked here; journalctl --grep does the matching (PCRE2).
//
// Contract:
// - GoRegexpSyntaxError returns "" for a pattern Go's parser (Go 1.20, Perl flags: Perl classes
//   and escapes, \A \z \b \B \Q..\E, (?flags), (?P<name>...), non-greedy repeats, Unicode
//   classes) accepts, else Go's error text "error parsing regexp: <code>: `<expr>`" with Go's
//   codes and the same offending expression: missing closing ) / ], unexpected ), invalid
//   escape sequence, invalid character class (range), invalid nested repetition operator,
//   missing argument to repetition operator, invalid repeat count (also for nested repeats
//   whose product exceeds 1000), invalid or unsupported Perl syntax, invalid named capture,
//   trailing backslash, invalid UTF-8, expression nests too deeply.
// - Not reproduced: Go's "expression too large" size limit. Unicode class names are Go 1.20's
//   general categories and scripts (Unicode 13).
// Pure function; thread-safe; never throws.
#ifndef KUBELET_KUBELET_NODELOGS_GO_REGEXP_H_
#define KUBELET_KUBELET_NODELOGS_GO_REGEXP_H_

#include <string>
#include <string_view>

namespace kubelet::nodelogs {

std::string GoRegexpSyntaxError(std::string_view pattern);

}  // namespace kubelet::nodelogs

#endif  // KUBELET_KUBELET_NODELOGS_GO_REGEXP_H_
