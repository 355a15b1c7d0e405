// core/cli.cc — implementation of the strict argument parser (see cli.h): declaring, parsing,
// printing and hashing flags. Besides `--help`, parse() answers `--help-markdown`: the same flags
// as Markdown tables, which scripts/cli_doc.py collects from every program into docs/cli.md. What
// the parser prints about its flags (--help, --help-markdown, the suggestion for an unknown flag)
// is in cli_help.cc.
#include "core/cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <type_traits>

#include "core/check.h"
#include "core/error_report.h"

namespace zt {

int64_t parse_int_strict(const std::string& text, const std::string& what) {
  int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, value);
  ZT_CHECK(!text.empty() && ec != std::errc::invalid_argument && ptr == last, what, ": '", text, "' is not an integer");
  ZT_CHECK(ec != std::errc::result_out_of_range, what, ": '", text, "' is out of range");
  return value;
}

double parse_double_strict(const std::string& text, const std::string& what) {
  double value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, value, std::chars_format::general);
  ZT_CHECK(!text.empty() && ec != std::errc::invalid_argument && ptr == last, what, ": '", text, "' is not a number");
  ZT_CHECK(ec != std::errc::result_out_of_range && std::isfinite(value), what, ": '", text, "' is out of range");
  return value;
}

namespace {

// The shortest %g text that reads back as the same double, exponent without padding
// (3e-3 prints as 0.003, 1e-4 as 1e-4, 7.5e9 as 7.5e9): --help's defaults.
std::string shortest(double v) {
  std::string t = shortest_decimal(v);
  if (auto e = t.find('e'); e != std::string::npos) {
    std::string mantissa = t.substr(0, e), exponent = t.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent.erase(0, exponent.find_first_not_of("+-0"));
    t = mantissa + "e" + (negative ? "-" : "") + (exponent.empty() ? "0" : exponent);
  }
  return t;
}

// A flag that parses with `set` and prints with `show`; its other attributes keep their defaults
// (hashed, a setting, a value required).
ArgParser::Flag new_flag(const std::string& name, const std::string& help, const std::string& kind,
                         const std::string& default_text, std::function<void(const std::string&)> set,
                         std::function<std::string()> show) {
  ArgParser::Flag f;
  f.name = name;
  f.help = help;
  f.kind = kind;
  f.default_text = default_text;
  f.set = std::move(set);
  f.show = std::move(show);
  return f;
}

// A number flag's value: parsed strictly and checked against [min, max]; an integer names itself
// in the range error, a decimal number the text as given.
int64_t number_in_range(const std::string& v, const std::string& name, int64_t min, int64_t max) {
  const int64_t x = parse_int_strict(v, "--" + name);
  ZT_CHECK(x >= min && x <= max, "--", name, ": ", x, " is outside [", min, ", ", max, "]");
  return x;
}
double number_in_range(const std::string& v, const std::string& name, double min, double max) {
  const double x = parse_double_strict(v, "--" + name);
  ZT_CHECK(x >= min && x <= max, "--", name, ": ", v, " is outside [", min, ", ", max, "]");
  return x;
}

// A number as flag text (an unset optional as "").
std::string number_text(int64_t v) { return std::to_string(v); }
std::string number_text(double v) { return shortest_decimal(v); }
template <typename T>
std::string number_text(const std::optional<T>& v) {
  return v ? number_text(*v) : std::string();
}

// A number flag whose target is a T, or a std::optional<T> left empty until the flag is given.
template <typename T, typename Target>
ArgParser::Flag number_flag(const std::string& name, const std::string& help, const std::string& default_text,
                            Target* out, T min, T max) {
  ArgParser::Flag f = new_flag(
      name, help, std::is_integral_v<T> ? "INT" : "NUM", default_text,
      [=](const std::string& v) { *out = number_in_range(v, name, min, max); }, [out] { return number_text(*out); });
  f.samples = {number_text(min), number_text(max)};
  return f;
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : "|") + w;
  return text;
}

}  // namespace

std::string shortest_decimal(double value) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

ArgParser::Declared ArgParser::add(Flag flag) {
  ZT_CHECK(find(flag.name) == nullptr, "flag --", flag.name, " declared twice");
  flag.default_value = flag.show();
  flag.group = current_group_;
  options_.push_back(std::move(flag));
  return Declared(*this, options_.size() - 1);
}

ArgParser::Flag* ArgParser::find(const std::string& name) {
  return const_cast<Flag*>(static_cast<const ArgParser*>(this)->flag(name));  // flag() on a non-const parser
}

const ArgParser::Flag* ArgParser::flag(const std::string& name) const {
  for (const auto& o : options_)
    if (o.name == name) return &o;
  return nullptr;
}

ArgParser::Flag& ArgParser::declared(const std::string& name) {
  Flag* o = find(name);
  ZT_CHECK(o != nullptr, "no flag --", name, " is declared");
  return *o;
}

ArgParser::Declared& ArgParser::Declared::not_hashed() {
  parser_.options_[index_].hashed = false;
  return *this;
}

ArgParser::Declared& ArgParser::Declared::hash_as(std::function<std::string()> text) {
  parser_.options_[index_].hash_text = std::move(text);
  return *this;
}

ArgParser::Declared& ArgParser::Declared::input_only() {
  parser_.options_[index_].input_only = true;
  parser_.options_[index_].hashed = false;
  return *this;
}

ArgParser::Declared& ArgParser::Declared::given_marker(bool* marker) {
  Flag& o = parser_.options_[index_];
  o.set = [set = std::move(o.set), marker](const std::string& v) {
    set(v);
    *marker = true;
  };
  o.show = [show = std::move(o.show), marker] { return *marker ? show() : std::string(); };
  o.default_value = o.show();
  return *this;
}

ArgParser::Declared ArgParser::add_flag(const std::string& name, bool* out, const std::string& help) {
  Flag o = new_flag(
      name, help, "", *out ? "on" : "off", [out](const std::string&) { *out = true; },
      [out] { return std::string(*out ? "on" : "off"); });
  o.takes_value = false;
  return add(std::move(o));
}

ArgParser::Declared ArgParser::add_on_off(const std::string& name, bool* out, const std::string& help) {
  return add_words(
      name, {"on", "off"}, *out ? "on" : "off", help,
      [=](const std::string& v) {
        ZT_CHECK(v == "on" || v == "off", "--", name, ": '", v, "' is not one of on|off");
        *out = v == "on";
      },
      [out] { return std::string(*out ? "on" : "off"); });
}

ArgParser::Declared ArgParser::add_int(const std::string& name, int64_t* out, const std::string& help, int64_t min,
                                       int64_t max) {
  return add(number_flag(name, help, std::to_string(*out), out, min, max));
}

ArgParser::Declared ArgParser::add_int(const std::string& name, std::optional<int64_t>* out, const std::string& help,
                                       const std::string& default_text, int64_t min, int64_t max) {
  return add(number_flag(name, help, default_text, out, min, max));
}

ArgParser::Declared ArgParser::add_double(const std::string& name, double* out, const std::string& help, double min,
                                          double max) {
  return add(number_flag(name, help, shortest(*out), out, min, max));
}

ArgParser::Declared ArgParser::add_double(const std::string& name, std::optional<double>* out, const std::string& help,
                                          const std::string& default_text, double min, double max) {
  return add(number_flag(name, help, default_text, out, min, max));
}

ArgParser::Declared ArgParser::add_string(const std::string& name, std::string* out, const std::string& help) {
  return add(new_flag(
      name, help, "STR", out->empty() ? "none" : *out, [out](const std::string& v) { *out = v; },
      [out] { return *out; }));
}

ArgParser::Declared ArgParser::add_words(const std::string& name, std::vector<std::string> choices,
                                         const std::string& default_text, const std::string& help,
                                         std::function<void(const std::string&)> set,
                                         std::function<std::string()> show) {
  Flag o = new_flag(name, help, joined(choices), default_text, std::move(set), std::move(show));
  o.samples = std::move(choices);
  return add(std::move(o));
}

ArgParser::Declared ArgParser::add_choice(const std::string& name, std::string* out, std::vector<std::string> choices,
                                          const std::string& help) {
  const std::string kind = joined(choices);
  return add_words(
      name, choices, *out, help,
      [=](const std::string& v) {
        ZT_CHECK(std::find(choices.begin(), choices.end(), v) != choices.end(), "--", name, ": '", v,
                 "' is not one of ", kind);
        *out = v;
      },
      [out] { return *out; });
}

ArgParser::Declared ArgParser::add_value(const std::string& name, const std::string& kind, const std::string& help,
                                         std::function<void(const std::string&)> set, std::function<std::string()> show,
                                         std::vector<std::string> samples) {
  const std::string default_text = show();
  Flag o = new_flag(name, help, kind, default_text, std::move(set), std::move(show));
  o.samples = std::move(samples);
  return add(std::move(o));
}

void ArgParser::make_value_optional(const std::string& name, const std::string& implicit) {
  Flag& o = declared(name);
  o.kind = "[" + o.kind + "]";
  o.implicit = implicit;
  o.choices = o.samples;
}

void ArgParser::group(const std::string& title, const std::string& example) {
  ZT_CHECK(!title.empty(), "a group needs a title");
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].title != title) continue;
    ZT_CHECK(example.empty() || example == groups_[g].example, "group '", title, "' given a second example");
    current_group_ = g;
    return;
  }
  groups_.push_back(Group{title, example});
  current_group_ = groups_.size() - 1;
}

void ArgParser::set_default_text(const std::string& name, const std::string& text) {
  declared(name).default_text = text;
}

void ArgParser::assign(const std::string& name, const std::string& text) { declared(name).set(text); }

std::string ArgParser::value_text(const std::string& name) const {
  const Flag* o = flag(name);
  ZT_CHECK(o != nullptr, "no flag --", name, " is declared");
  return o->show();
}

std::string ArgParser::as_flags() const {
  std::string line;
  for (const auto& o : options_) {
    if (o.input_only) continue;
    const std::string value = o.show();
    if (value == o.default_value || (!o.takes_value && value != "on")) continue;
    line += (line.empty() ? "--" : " --") + o.name;
    if (o.takes_value) line += " " + value;  // a switch differs from its default only when on
  }
  return line;
}

std::string ArgParser::hashed_settings() const {
  std::string text;
  for (const auto& o : options_)
    if (o.hashed) text += o.name + "=" + (o.hash_text ? o.hash_text() : o.show()) + '\x1f';
  return text;
}

bool ArgParser::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      rest_.assign(argv + i + 1, argv + argc);
      break;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage().c_str(), stdout);
      return false;
    }
    if (arg == "--help-markdown") {
      std::fputs(markdown_usage().c_str(), stdout);
      return false;
    }
    ZT_CHECK(arg.size() > 2 && arg.compare(0, 2, "--") == 0, "unexpected argument '", arg,
             "' (flags start with --; see --help)");
    std::string name = arg.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    Flag* o = find(name);
    if (o == nullptr) {
      const std::string meant = suggestion(name);
      ZT_FAIL("unknown flag --", name, meant.empty() ? "" : "; did you mean " + meant + "?", " (see --help)");
    }
    ZT_CHECK(!o->seen, "flag --", name, " given twice");
    o->seen = true;
    if (!o->takes_value) {
      ZT_CHECK(!inline_value, "flag --", name, " takes no value");
      o->set("");
      continue;
    }
    if (!inline_value && !o->implicit.empty()) {  // the next word is its value only if it is a choice
      const bool next_is_choice =
          i + 1 < argc && std::find(o->choices.begin(), o->choices.end(), argv[i + 1]) != o->choices.end();
      value = next_is_choice ? argv[++i] : o->implicit;
    } else if (!inline_value) {
      ZT_CHECK(i + 1 < argc, "flag --", name, " needs a value (", o->kind, ")");
      value = argv[++i];
    }
    o->set(value);
  }
  return true;
}

bool ArgParser::given(const std::string& name) const {
  const Flag* o = flag(name);
  return o != nullptr && o->seen;
}

std::vector<std::string> ArgParser::given_flags() const {
  std::vector<std::string> names;
  for (const auto& o : options_)
    if (o.seen) names.push_back(o.name);
  return names;
}

int run_main(const std::string& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fflush(stdout);
    if (!already_announced(e)) std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    std::fflush(stderr);
    return exit_status_of(e);
  }
}

}  // namespace zt
