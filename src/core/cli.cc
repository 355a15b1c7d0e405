// core/cli.cc — implementation of the strict argument parser (see cli.h).
#include "core/cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>

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
// (3e-3 prints as 0.003, 1e-4 as 1e-4, 7.5e9 as 7.5e9).
std::string shortest(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string t = buf;
  if (auto e = t.find('e'); e != std::string::npos) {
    std::string mantissa = t.substr(0, e), exponent = t.substr(e + 1);
    const bool negative = exponent[0] == '-';
    exponent.erase(0, exponent.find_first_not_of("+-0"));
    t = mantissa + "e" + (negative ? "-" : "") + (exponent.empty() ? "0" : exponent);
  }
  return t;
}

}  // namespace

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void ArgParser::add(Option option) {
  ZT_CHECK(find(option.name) == nullptr, "flag --", option.name, " declared twice");
  options_.push_back(std::move(option));
}

ArgParser::Option* ArgParser::find(const std::string& name) {
  for (auto& o : options_)
    if (o.name == name) return &o;
  return nullptr;
}

void ArgParser::add_flag(const std::string& name, bool* out, const std::string& help) {
  add({name, help, "", *out ? "on" : "off", [out](const std::string&) { *out = true; }, false});
}

void ArgParser::add_int(const std::string& name, int64_t* out, const std::string& help, int64_t min, int64_t max) {
  add({name, help, "INT", std::to_string(*out), [=](const std::string& v) {
         int64_t x = parse_int_strict(v, "--" + name);
         ZT_CHECK(x >= min && x <= max, "--", name, ": ", x, " is outside [", min, ", ", max, "]");
         *out = x;
       }});
}

void ArgParser::add_int(const std::string& name, std::optional<int64_t>* out, const std::string& help,
                        const std::string& default_text, int64_t min, int64_t max) {
  add({name, help, "INT", default_text, [=](const std::string& v) {
         int64_t x = parse_int_strict(v, "--" + name);
         ZT_CHECK(x >= min && x <= max, "--", name, ": ", x, " is outside [", min, ", ", max, "]");
         *out = x;
       }});
}

void ArgParser::add_double(const std::string& name, double* out, const std::string& help, double min, double max) {
  add({name, help, "NUM", shortest(*out), [=](const std::string& v) {
         double x = parse_double_strict(v, "--" + name);
         ZT_CHECK(x >= min && x <= max, "--", name, ": ", v, " is outside [", min, ", ", max, "]");
         *out = x;
       }});
}

void ArgParser::add_double(const std::string& name, std::optional<double>* out, const std::string& help,
                           const std::string& default_text, double min, double max) {
  add({name, help, "NUM", default_text, [=](const std::string& v) {
         double x = parse_double_strict(v, "--" + name);
         ZT_CHECK(x >= min && x <= max, "--", name, ": ", v, " is outside [", min, ", ", max, "]");
         *out = x;
       }});
}

void ArgParser::add_string(const std::string& name, std::string* out, const std::string& help) {
  add({name, help, "STR", out->empty() ? "none" : *out, [out](const std::string& v) { *out = v; }});
}

void ArgParser::add_choice(const std::string& name, std::string* out, std::vector<std::string> choices,
                           const std::string& help) {
  std::string kind;
  for (const auto& c : choices) kind += (kind.empty() ? "" : "|") + c;
  add({name, help, kind, *out, [=](const std::string& v) {
         for (const auto& c : choices)
           if (c == v) {
             *out = v;
             return;
           }
         ZT_FAIL("--", name, ": '", v, "' is not one of ", kind);
       }});
}

void ArgParser::add_optional_choice(const std::string& name, std::string* out, std::vector<std::string> choices,
                                    const std::string& implicit, const std::string& help) {
  add_choice(name, out, choices, help);
  Option* o = find(name);
  o->kind = "[" + o->kind + "]";
  o->implicit = implicit;
  o->choices = std::move(choices);
}

void ArgParser::set_default_text(const std::string& name, const std::string& text) {
  Option* o = find(name);
  ZT_CHECK(o != nullptr, "set_default_text: no flag --", name);
  o->default_text = text;
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
    ZT_CHECK(arg.size() > 2 && arg.compare(0, 2, "--") == 0, "unexpected argument '", arg,
             "' (flags start with --; see --help)");
    std::string name = arg.substr(2), value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    Option* o = find(name);
    ZT_CHECK(o != nullptr, "unknown flag --", name, " (see --help)");
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
  for (const auto& o : options_)
    if (o.name == name) return o.seen;
  return false;
}

std::vector<std::string> ArgParser::given_flags() const {
  std::vector<std::string> names;
  for (const auto& o : options_)
    if (o.seen) names.push_back(o.name);
  return names;
}

std::string ArgParser::usage() const {
  std::string text = "usage: " + program_ + " [flags]\n" + summary_ + "\n\nflags:\n";
  for (const auto& o : options_) {
    std::string left = "  --" + o.name + (o.kind.empty() ? "" : " " + o.kind);
    // the description starts in column 32; a longer flag column puts it on the next line
    left = left.size() < 31 ? left + std::string(31 - left.size(), ' ') : left + "\n" + std::string(31, ' ');
    text += left + o.help + " (default: " + o.default_text + ")\n";
  }
  text += "  --help                       print this text and exit\n";
  return text;
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
