#include "api/go_json.h"

#include <charconv>
#include <cmath>

namespace kubelet::api {
namespace {

void AppendHexEscape(std::string* out, unsigned c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->append("\\u");
  for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(c >> shift) & 0xF]);
}

// Length of the valid UTF-8 sequence starting at s[i] (Go's utf8.DecodeRuneInString rules),
// 0 when the bytes there are not one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  }
  if (len == 0 || i + len > s.size()) return 0;
  const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
  if (c1 < lo || c1 > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    const unsigned char ck = static_cast<unsigned char>(s[i + k]);
    if (ck < 0x80 || ck > 0xBF) return 0;
  }
  return len;
}

}  // namespace

void AppendGoString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out->append("\\\"");
          break;
        case '\\':
          out->append("\\\\");
          break;
        case '\n':
          out->append("\\n");
          break;
        case '\r':
          out->append("\\r");
          break;
        case '\t':
          out->append("\\t");
          break;
        case '<':
        case '>':
        case '&':
          AppendHexEscape(out, c);
          break;
        default:
          if (c < 0x20) {
            AppendHexEscape(out, c);
          } else {
            out->push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out->append("\\ufffd");
      ++i;
    } else if (len == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
      AppendHexEscape(out, 0x2028 + (static_cast<unsigned char>(s[i + 2]) - 0xA8));
      i += len;
    } else {
      out->append(s.substr(i, len));
      i += len;
    }
  }
  out->push_back('"');
}

void AppendGoFloat(std::string* out, double f) {
  if (!std::isfinite(f)) {  // Go refuses to encode these; null keeps the document valid
    out->append("null");
    return;
  }
  char buf[128];
  const double a = std::fabs(f);
  const bool exp = a != 0 && (a < 1e-6 || a >= 1e21);
  auto r = std::to_chars(buf, buf + sizeof(buf), f,
                         exp ? std::chars_format::scientific : std::chars_format::fixed);
  std::string s(buf, r.ptr);
  const size_t n = s.size();
  if (exp && n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
  out->append(s);
}

}  // namespace kubelet::api
