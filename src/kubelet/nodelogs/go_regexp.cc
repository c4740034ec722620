// A syntax checker that walks a pattern the way Go's regexp/syntax parser (Go 1.20, Perl flags)
// does and reports the first error Go would report. It keeps only what validity depends on: the
// open groups, the items of the current concatenation (a repetition needs one), the product of
// nested repeat counts and the depth of the tree.
#include "kubelet/nodelogs/go_regexp.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace kubelet::nodelogs {
namespace {

constexpr int kMaxRepeat = 1000;  // Go's repeat count limit
constexpr int kMaxHeight = 1000;  // Go's maxHeight

constexpr std::string_view kUnicodeNames[] = {
    // "Any" and unicode.Categories.
    "Any", "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn",
    "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm",
    "So", "Z", "Zl", "Zp", "Zs",
    // unicode.Scripts (Unicode 13.0.0, Go 1.20).
    "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum",
    "Bassa_Vah", "Batak", "Bengali", "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese",
    "Buhid", "Canadian_Aboriginal", "Carian", "Caucasian_Albanian", "Chakma", "Cham", "Cherokee",
    "Chorasmian", "Common", "Coptic", "Cuneiform", "Cypriot", "Cyrillic", "Deseret", "Devanagari",
    "Dives_Akuru", "Dogra", "Duployan", "Egyptian_Hieroglyphs", "Elbasan", "Elymaic", "Ethiopic",
    "Georgian", "Glagolitic", "Gothic", "Grantha", "Greek", "Gujarati", "Gunjala_Gondi", "Gurmukhi",
    "Han", "Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran", "Hebrew", "Hiragana",
    "Imperial_Aramaic", "Inherited", "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese",
    "Kaithi", "Kannada", "Katakana", "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khmer",
    "Khojki", "Khudawadi", "Lao", "Latin", "Lepcha", "Limbu", "Linear_A", "Linear_B", "Lisu",
    "Lycian", "Lydian", "Mahajani", "Makasar", "Malayalam", "Mandaic", "Manichaean", "Marchen",
    "Masaram_Gondi", "Medefaidrin", "Meetei_Mayek", "Mende_Kikakui", "Meroitic_Cursive",
    "Meroitic_Hieroglyphs", "Miao", "Modi", "Mongolian", "Mro", "Multani", "Myanmar", "Nabataean",
    "Nandinagari", "New_Tai_Lue", "Newa", "Nko", "Nushu", "Nyiakeng_Puachue_Hmong", "Ogham",
    "Ol_Chiki", "Old_Hungarian", "Old_Italic", "Old_North_Arabian", "Old_Permic", "Old_Persian",
    "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Oriya", "Osage", "Osmanya", "Pahawh_Hmong",
    "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician", "Psalter_Pahlavi", "Rejang", "Runic",
    "Samaritan", "Saurashtra", "Sharada", "Shavian", "Siddham", "SignWriting", "Sinhala", "Sogdian",
    "Sora_Sompeng", "Soyombo", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa",
    "Tai_Le", "Tai_Tham", "Tai_Viet", "Takri", "Tamil", "Tangut", "Telugu", "Thaana", "Thai",
    "Tibetan", "Tifinagh", "Tirhuta", "Ugaritic", "Vai", "Wancho", "Warang_Citi", "Yezidi", "Yi",
    "Zanabazar_Square"};

constexpr std::string_view kPosixClasses[] = {
    "[:alnum:]",  "[:alpha:]",  "[:ascii:]",  "[:blank:]",  "[:cntrl:]",  "[:digit:]",
    "[:graph:]",  "[:lower:]",  "[:print:]",  "[:punct:]",  "[:space:]",  "[:upper:]",
    "[:word:]",   "[:xdigit:]", "[:^alnum:]", "[:^alpha:]", "[:^ascii:]", "[:^blank:]",
    "[:^cntrl:]", "[:^digit:]", "[:^graph:]", "[:^lower:]", "[:^print:]", "[:^punct:]",
    "[:^space:]", "[:^upper:]", "[:^word:]",  "[:^xdigit:]"};

constexpr int32_t kRuneError = 0xFFFD;

// utf8.DecodeRuneInString: (RuneError, 1) for an invalid byte, (RuneError, 0) for "".
int32_t DecodeRune(std::string_view s, size_t* size) {
  if (s.empty()) {
    *size = 0;
    return kRuneError;
  }
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = b(0);
  *size = 1;
  if (b0 < 0x80) return b0;
  int n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  int32_t r = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
    r = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    r = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    r = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return kRuneError;
  }
  if (s.size() < static_cast<size_t>(n)) return kRuneError;
  for (int i = 1; i < n; ++i) {
    const unsigned char c = b(static_cast<size_t>(i));
    const unsigned char l = i == 1 ? lo : 0x80, h = i == 1 ? hi : 0xBF;
    if (c < l || c > h) return kRuneError;
    r = (r << 6) | (c & 0x3F);
  }
  *size = static_cast<size_t>(n);
  return r;
}

bool IsAlnum(int32_t c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int Unhex(int32_t c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct Error {
  std::string_view code;
  std::string expr;
};

// An expression on the parse stack: the largest product of repeat counts on a path below it
// (Go's repeatIsValid) and its height in Go's tree.
struct Item {
  int64_t weight = 1;
  int height = 1;
};

struct Frame {
  bool capture = false;
  std::vector<Item> concat;  // the alternative being parsed
  int64_t alt_weight = 0;    // finished alternatives
  int alt_height = 0;
  int alts = 0;
};

class Checker {
 public:
  explicit Checker(std::string_view s) : whole_(s) { frames_.emplace_back(); }

  std::optional<Error> Run() {
    std::string_view t = whole_;
    std::string_view last_repeat;
    while (!t.empty()) {
      std::string_view repeat;
      std::optional<Error> err;
      switch (t[0]) {
        case '(':
          if (t.size() >= 2 && t[1] == '?') {
            err = PerlFlags(&t);
          } else {
            frames_.push_back(Frame{.capture = true});
            t.remove_prefix(1);
          }
          break;
        case '|':
          EndAlternative(frames_.back());
          t.remove_prefix(1);
          break;
        case ')':
          err = RightParen();
          t.remove_prefix(1);
          break;
        case '^':
        case '$':
        case '.':
          Push(Item{});
          t.remove_prefix(1);
          break;
        case '[':
          err = Class(&t);
          if (!err) Push(Item{});
          break;
        case '*':
        case '+':
        case '?': {
          std::string_view before = t;
          std::string_view after = t.substr(1);
          err = Repeat(-1, -1, before, &after, last_repeat);
          repeat = before;
          t = after;
          break;
        }
        case '{': {
          std::string_view before = t;
          int min = 0, max = 0;
          std::string_view after;
          if (!ParseRepeat(t, &min, &max, &after)) {
            Push(Item{});  // `{` as a literal
            t.remove_prefix(1);
            break;
          }
          if (min < 0 || min > kMaxRepeat || max > kMaxRepeat || (max >= 0 && min > max)) {
            return Error{"invalid repeat count", Span(before, after)};
          }
          err = Repeat(min, max, before, &after, last_repeat);
          repeat = before;
          t = after;
          break;
        }
        case '\\':
          err = Backslash(&t);
          break;
        default: {
          size_t size = 0;
          int32_t c = DecodeRune(t, &size);
          if (c == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(t)};
          Push(Item{});
          t.remove_prefix(size);
          break;
        }
      }
      if (err) return err;
      if (too_deep_) return Error{"expression nests too deeply", std::string(whole_)};
      last_repeat = repeat;
    }
    if (frames_.size() != 1) return Error{"missing closing )", std::string(whole_)};
    return std::nullopt;
  }

 private:
  static std::string Span(std::string_view from, std::string_view rest) {
    return std::string(from.substr(0, from.size() - rest.size()));
  }

  void Push(Item item) {
    if (item.height > kMaxHeight) too_deep_ = true;
    frames_.back().concat.push_back(item);
  }

  static Item Concat(const Frame& f) {
    if (f.concat.empty()) return Item{};
    if (f.concat.size() == 1) return f.concat[0];
    Item out{1, 0};
    for (const Item& i : f.concat) {
      out.weight = std::max(out.weight, i.weight);
      out.height = std::max(out.height, i.height);
    }
    ++out.height;
    return out;
  }

  static void EndAlternative(Frame& f) {
    Item c = Concat(f);
    f.alt_weight = std::max(f.alt_weight, c.weight);
    f.alt_height = std::max(f.alt_height, c.height);
    ++f.alts;
    f.concat.clear();
  }

  std::optional<Error> RightParen() {
    if (frames_.size() < 2) return Error{"unexpected )", std::string(whole_)};
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    EndAlternative(f);
    Item group{std::max<int64_t>(f.alt_weight, 1), f.alt_height + (f.alts > 1 ? 1 : 0)};
    if (f.capture) ++group.height;
    Push(group);
    return std::nullopt;
  }

  // p.repeat: `min` < 0 for * + ?.
  std::optional<Error> Repeat(int min, int max, std::string_view before, std::string_view* after,
                              std::string_view last_repeat) {
    if (!after->empty() && (*after)[0] == '?') after->remove_prefix(1);  // non-greedy
    if (!last_repeat.empty()) {
      return Error{"invalid nested repetition operator", Span(last_repeat, *after)};
    }
    std::vector<Item>& concat = frames_.back().concat;
    if (concat.empty()) {
      return Error{"missing argument to repetition operator", Span(before, *after)};
    }
    Item sub = concat.back();
    Item re{sub.weight, sub.height + 1};
    if (min >= 0) {
      if (max == 0) {
        re.weight = 1;
      } else {
        const int m = max < 0 ? min : max;
        if (m > 0) re.weight = std::min<int64_t>(sub.weight * m, int64_t{1} << 40);
      }
      if ((min >= 2 || max >= 2) && re.weight > kMaxRepeat) {
        return Error{"invalid repeat count", Span(before, *after)};
      }
    }
    concat.back() = re;
    if (re.height > kMaxHeight) too_deep_ = true;
    return std::nullopt;
  }

  // p.parseInt: digits without a leading zero; -1 when too big.
  static bool ParseInt(std::string_view* s, int* n) {
    if (s->empty() || (*s)[0] < '0' || (*s)[0] > '9') return false;
    if (s->size() >= 2 && (*s)[0] == '0' && (*s)[1] >= '0' && (*s)[1] <= '9') return false;
    size_t i = 0;
    while (i < s->size() && (*s)[i] >= '0' && (*s)[i] <= '9') ++i;
    *n = 0;
    for (size_t k = 0; k < i; ++k) {
      if (*n >= 100000000) {
        *n = -1;
        break;
      }
      *n = *n * 10 + ((*s)[k] - '0');
    }
    s->remove_prefix(i);
    return true;
  }

  // p.parseRepeat: {n}, {n,} or {n,m}.
  static bool ParseRepeat(std::string_view s, int* min, int* max, std::string_view* rest) {
    if (s.empty() || s[0] != '{') return false;
    s.remove_prefix(1);
    if (!ParseInt(&s, min) || s.empty()) return false;
    if (s[0] != ',') {
      *max = *min;
    } else {
      s.remove_prefix(1);
      if (s.empty()) return false;
      if (s[0] == '}') {
        *max = -1;
      } else if (!ParseInt(&s, max)) {
        return false;
      } else if (*max < 0) {
        *min = -1;
      }
    }
    if (s.empty() || s[0] != '}') return false;
    *rest = s.substr(1);
    return true;
  }

  // p.parsePerlFlags: (?P<name>, (?flags), (?flags:.
  std::optional<Error> PerlFlags(std::string_view* s) {
    std::string_view t = *s;
    if (t.size() > 4 && t[2] == 'P' && t[3] == '<') {
      size_t end = t.find('>');
      if (end == std::string_view::npos) {
        if (auto e = CheckUtf8(t)) return e;
        return Error{"invalid named capture", std::string(t)};
      }
      std::string_view name = t.substr(4, end - 4);
      if (auto e = CheckUtf8(name)) return e;
      bool valid = !name.empty();
      for (char c : name) {
        if (c != '_' && !IsAlnum(static_cast<unsigned char>(c))) valid = false;
      }
      if (!valid) return Error{"invalid named capture", std::string(t.substr(0, end + 1))};
      frames_.push_back(Frame{.capture = true});
      *s = t.substr(end + 1);
      return std::nullopt;
    }
    t.remove_prefix(2);
    int sign = 1;
    bool saw_flag = false;
    while (!t.empty()) {
      size_t size = 0;
      int32_t c = DecodeRune(t, &size);
      if (c == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(t)};
      t.remove_prefix(size);
      if (c == 'i' || c == 'm' || c == 's' || c == 'U') {
        saw_flag = true;
        continue;
      }
      if (c == '-') {
        if (sign < 0) break;
        sign = -1;
        saw_flag = false;
        continue;
      }
      if (c == ':' || c == ')') {
        if (sign < 0 && !saw_flag) break;
        if (c == ':') frames_.push_back(Frame{.capture = false});
        *s = t;
        return std::nullopt;
      }
      break;
    }
    return Error{"invalid or unsupported Perl syntax", Span(*s, t)};
  }

  static std::optional<Error> CheckUtf8(std::string_view s) {
    while (!s.empty()) {
      size_t size = 0;
      int32_t c = DecodeRune(s, &size);
      if (c == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(s)};
      s.remove_prefix(size);
    }
    return std::nullopt;
  }

  // p.parseUnicodeClass: \pN, \p{Name}, \PN, \P{^Name}. Sets *matched when `s` starts one.
  static std::optional<Error> UnicodeClass(std::string_view* s, bool* matched) {
    *matched = false;
    std::string_view in = *s;
    if (in.size() < 2 || in[0] != '\\' || (in[1] != 'p' && in[1] != 'P')) return std::nullopt;
    *matched = true;
    std::string_view t = in.substr(2);
    size_t size = 0;
    int32_t c = DecodeRune(t, &size);
    if (c == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(t)};
    t.remove_prefix(size);
    std::string_view seq, name;
    if (c != '{') {
      seq = in.substr(0, in.size() - t.size());
      name = seq.substr(2);
    } else {
      size_t end = in.find('}');
      if (end == std::string_view::npos) {
        if (auto e = CheckUtf8(in)) return e;
        return Error{"invalid character class range", std::string(in)};
      }
      seq = in.substr(0, end + 1);
      t = in.substr(end + 1);
      name = in.substr(3, end - 3);
      if (auto e = CheckUtf8(name)) return e;
    }
    if (!name.empty() && name[0] == '^') name.remove_prefix(1);
    if (std::find(std::begin(kUnicodeNames), std::end(kUnicodeNames), name) ==
        std::end(kUnicodeNames)) {
      return Error{"invalid character class range", std::string(seq)};
    }
    *s = t;
    return std::nullopt;
  }

  // p.parsePerlClassEscape: \d \D \s \S \w \W.
  static bool PerlClass(std::string_view* s) {
    if (s->size() < 2 || (*s)[0] != '\\') return false;
    switch ((*s)[1]) {
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W':
        s->remove_prefix(2);
        return true;
      default:
        return false;
    }
  }

  // p.parseEscape: one escaped character.
  static std::optional<Error> Escape(std::string_view* s, int32_t* out) {
    std::string_view in = *s;
    std::string_view t = in.substr(1);
    if (t.empty()) return Error{"trailing backslash at end of expression", ""};
    size_t size = 0;
    int32_t c = DecodeRune(t, &size);
    if (c == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(t)};
    t.remove_prefix(size);
    auto invalid = [&] { return Error{"invalid escape sequence", Span(in, t)}; };
    auto next = [&](int32_t* r) -> std::optional<Error> {
      size_t n = 0;
      *r = DecodeRune(t, &n);
      if (*r == kRuneError && n == 1) return Error{"invalid UTF-8", std::string(t)};
      t.remove_prefix(n);
      return std::nullopt;
    };
    switch (c) {
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
        // A single non-zero digit would be a backreference, which Go does not support.
        if (t.empty() || t[0] < '0' || t[0] > '7') return invalid();
        [[fallthrough]];
      case '0': {
        int32_t r = c - '0';
        for (int i = 1; i < 3; ++i) {
          if (t.empty() || t[0] < '0' || t[0] > '7') break;
          r = r * 8 + (t[0] - '0');
          t.remove_prefix(1);
        }
        *out = r;
        *s = t;
        return std::nullopt;
      }
      case 'x': {
        if (t.empty()) return invalid();
        int32_t d = 0;
        if (auto e = next(&d)) return e;
        if (d == '{') {
          int nhex = 0;
          int32_t r = 0;
          for (;;) {
            if (t.empty()) return invalid();
            if (auto e = next(&d)) return e;
            if (d == '}') break;
            const int v = Unhex(d);
            if (v < 0) return invalid();
            r = r * 16 + v;
            if (r > 0x10FFFF) return invalid();
            ++nhex;
          }
          if (nhex == 0) return invalid();
          *out = r;
          *s = t;
          return std::nullopt;
        }
        const int x = Unhex(d);
        if (auto e = next(&d)) return e;
        const int y = Unhex(d);
        if (x < 0 || y < 0) return invalid();
        *out = x * 16 + y;
        *s = t;
        return std::nullopt;
      }
      case 'a':
      case 'f':
      case 'n':
      case 'r':
      case 't':
      case 'v':
        *out = c;
        *s = t;
        return std::nullopt;
      default:
        // Escaped ASCII punctuation is always itself.
        if (c < 0x80 && !IsAlnum(c)) {
          *out = c;
          *s = t;
          return std::nullopt;
        }
        return invalid();
    }
  }

  // p.parseClassChar.
  static std::optional<Error> ClassChar(std::string_view* s, std::string_view whole_class,
                                        int32_t* out) {
    if (s->empty()) return Error{"missing closing ]", std::string(whole_class)};
    if ((*s)[0] == '\\') return Escape(s, out);
    size_t size = 0;
    *out = DecodeRune(*s, &size);
    if (*out == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(*s)};
    s->remove_prefix(size);
    return std::nullopt;
  }

  // p.parseClass: [...] in Perl mode ('-' anywhere).
  static std::optional<Error> Class(std::string_view* s) {
    const std::string_view whole_class = *s;
    std::string_view t = s->substr(1);
    if (!t.empty() && t[0] == '^') t.remove_prefix(1);
    bool first = true;
    while (t.empty() || t[0] != ']' || first) {
      first = false;
      if (t.size() > 2 && t[0] == '[' && t[1] == ':') {
        size_t i = t.substr(2).find(":]");
        if (i != std::string_view::npos) {
          std::string_view name = t.substr(0, i + 4);
          if (std::find(std::begin(kPosixClasses), std::end(kPosixClasses), name) ==
              std::end(kPosixClasses)) {
            return Error{"invalid character class range", std::string(name)};
          }
          t.remove_prefix(name.size());
          continue;
        }
      }
      bool matched = false;
      if (auto e = UnicodeClass(&t, &matched)) return e;
      if (matched) continue;
      if (PerlClass(&t)) continue;
      std::string_view rng = t;
      int32_t lo = 0, hi = 0;
      if (auto e = ClassChar(&t, whole_class, &lo)) return e;
      hi = lo;
      if (t.size() >= 2 && t[0] == '-' && t[1] != ']') {
        t.remove_prefix(1);
        if (auto e = ClassChar(&t, whole_class, &hi)) return e;
        if (hi < lo) return Error{"invalid character class range", Span(rng, t)};
      }
    }
    *s = t.substr(1);
    return std::nullopt;
  }

  std::optional<Error> Backslash(std::string_view* t) {
    if (t->size() >= 2) {
      switch ((*t)[1]) {
        case 'A':
        case 'b':
        case 'B':
        case 'z':
          Push(Item{});
          t->remove_prefix(2);
          return std::nullopt;
        case 'C':
          return Error{"invalid escape sequence", std::string(t->substr(0, 2))};
        case 'Q': {
          std::string_view rest = t->substr(2);
          size_t end = rest.find("\\E");
          std::string_view lit = rest.substr(0, end);
          *t = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
          while (!lit.empty()) {
            size_t size = 0;
            int32_t c = DecodeRune(lit, &size);
            if (c == kRuneError && size == 1) return Error{"invalid UTF-8", std::string(lit)};
            Push(Item{});
            lit.remove_prefix(size);
          }
          return std::nullopt;
        }
        default:
          break;
      }
    }
    if (t->size() >= 2 && ((*t)[1] == 'p' || (*t)[1] == 'P')) {
      bool matched = false;
      if (auto e = UnicodeClass(t, &matched)) return e;
      if (matched) {
        Push(Item{});
        return std::nullopt;
      }
    }
    if (PerlClass(t)) {
      Push(Item{});
      return std::nullopt;
    }
    int32_t c = 0;
    if (auto e = Escape(t, &c)) return e;
    Push(Item{});
    return std::nullopt;
  }

  std::string_view whole_;
  std::vector<Frame> frames_;
  bool too_deep_ = false;
};

}  // namespace

std::string GoRegexpSyntaxError(std::string_view pattern) {
  std::optional<Error> err = Checker(pattern).Run();
  if (!err) return "";
  return absl::StrCat("error parsing regexp: ", AV(err->code), ": `", err->expr, "`");
}

}  // namespace kubelet::nodelogs
