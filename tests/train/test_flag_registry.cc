// zero-train's flags walked from their one declaration (train/train_flags.h); nothing here names a
// flag. For every flag, values other than its default (its words or the ends of its range, and a
// few plain values): the settings --print-config prints parse back to the same line and the same
// config hash; a hashed flag changes the hash (a rank started with another value fails at
// start-up), an unhashed one leaves it alone. And a flag added to the registry shows in --help,
// in the printed settings and in the hash with no other edit.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/cli.h"
#include "train/train_config.h"
#include "train/train_flags.h"
#include "zero/config_check.h"

namespace {

using zt::ArgParser;
using zt::train::TrainConfig;

/// What zero-train's parse made of a command line: the settings, or why there are none (an
/// error, or --print-config / --help, which print instead of running).
struct Parsed {
  bool ok = false;
  TrainConfig config;
  std::string error;
};

Parsed parse(std::vector<std::string> words) {
  words.insert(words.begin(), "zero-train");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  Parsed out;
  try {
    out.ok = zt::train::parse_train_config(static_cast<int>(words.size()), argv.data(), out.config);
  } catch (const zt::Error& e) {
    out.error = e.what();
  }
  return out;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

/// The registry as declared on the defaults: names, samples and attributes of every flag.
const ArgParser& registry() {
  static TrainConfig defaults;
  static const ArgParser flags = [] {
    ArgParser p("zero-train", "");
    zt::train::declare_train_flags(p, defaults);
    return p;
  }();
  return flags;
}

/// What the hash sees of one flag in some settings (its resolved value where it hashes one).
std::string hashed_text(const TrainConfig& c, const std::string& name) {
  TrainConfig settings = c;
  ArgParser p("zero-train", "");
  zt::train::declare_train_flags(p, settings);
  const ArgParser::Flag* f = p.flag(name);
  return f->hash_text ? f->hash_text() : f->show();
}

/// Values to try: the flag's own samples (its words, the ends of its range) and plain values that
/// suit other kinds (a small integer, a fraction, a path).
std::vector<std::string> candidates(const ArgParser::Flag& f) {
  if (!f.takes_value) return {""};  // a switch: present
  std::vector<std::string> values = f.samples;
  for (const char* plain : {"1", "2", "3", "0.5", "x"}) values.emplace_back(plain);
  return values;
}

std::vector<std::string> command_line(const ArgParser::Flag& f, const std::string& value) {
  if (!f.takes_value) return {"--" + f.name};
  return {"--" + f.name, value};
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// The other flags a flag needs on the command line to parse with some value other than its
/// default (none for most; --offload-buffers needs --offload-optimizer file:DIR), found by trying
/// every other flag's values in turn. @return the companion words, or empty when none is needed.
std::vector<std::string> companions_of(const ArgParser::Flag& f, bool& found) {
  const auto works = [&](const std::vector<std::string>& base) {
    const Parsed without = parse(base);
    if (!without.ok) return false;
    for (const auto& v : candidates(f)) {
      const Parsed with = parse(joined(base, command_line(f, v)));
      if (with.ok && zt::train::config_as_flags(with.config) != zt::train::config_as_flags(without.config)) return true;
    }
    return false;
  };
  found = true;
  if (works({})) return {};
  for (const auto& g : registry().flags()) {
    if (g.name == f.name || g.input_only) continue;
    for (const auto& w : candidates(g))
      if (works(command_line(g, w))) return command_line(g, w);
  }
  found = false;
  return {};
}

}  // namespace

TEST_CASE("every flag: --print-config parses back to the same settings, and the hash sees exactly the hashed flags",
          "[ch6][config]") {
  REQUIRE(registry().flags().size() > 50);  // the walk found zero-train's flags at all
  for (const auto& f : registry().flags()) {
    if (f.input_only) continue;  // a file, a preset, "print and exit": printed and hashed as what they set
    if (f.samples.size() == 1 && f.samples[0] == f.default_value) continue;  // one word: no other value
    INFO("--" << f.name);
    bool found = false;
    const std::vector<std::string> base_words = companions_of(f, found);
    INFO("with " << (base_words.empty() ? "no other flag" : base_words[0] + " " + base_words.back()));
    REQUIRE(found);  // some value other than the default parses
    const Parsed base = parse(base_words);
    REQUIRE(base.ok);
    bool printed = false, hash_changed = false;
    for (const auto& v : candidates(f)) {
      const Parsed with = parse(joined(base_words, command_line(f, v)));
      if (!with.ok) continue;  // a value this flag refuses (or one it needs another flag for)
      INFO("value '" << v << "'");
      // --print-config's line of these settings parses to the same line and the same hash
      const std::string line = zt::train::config_as_flags(with.config);
      const Parsed again = parse(words_of(line));
      INFO("printed: " << line << (again.ok ? "" : " (" + again.error + ")"));
      REQUIRE(again.ok);
      CHECK(zt::train::config_as_flags(again.config) == line);
      CHECK(zt::train::config_hash(again.config) == zt::train::config_hash(with.config));
      printed = printed || line != zt::train::config_as_flags(base.config);
      // the hash changes exactly when the flag is hashed and what it hashes changed
      const bool differs = hashed_text(with.config, f.name) != hashed_text(base.config, f.name);
      const bool changes = zt::train::config_hash(with.config) != zt::train::config_hash(base.config);
      CHECK(changes == (f.hashed && differs));
      hash_changed = hash_changed || changes;
    }
    CHECK(printed);                     // a value other than the default is printed back
    if (f.hashed) CHECK(hash_changed);  // and, for a hashed flag, one of them changes the hash
  }
}

TEST_CASE("input-only flags (--config, --zero-config, --print-config) are neither printed nor hashed",
          "[ch6][config]") {
  std::size_t inputs = 0;
  for (const auto& f : registry().flags())
    if (f.input_only) {
      INFO("--" << f.name);
      CHECK(!f.hashed);
      ++inputs;
    }
  CHECK(inputs >= 3);
  // a preset is printed as the flags it sets, and parses back to the same settings
  const Parsed preset = parse({"--zero-config", "C5"});
  REQUIRE(preset.ok);
  const std::string line = zt::train::config_as_flags(preset.config);
  CHECK(line.find("--zero-config") == std::string::npos);
  const Parsed again = parse(words_of(line));
  REQUIRE(again.ok);
  CHECK(zt::train::config_as_flags(again.config) == line);
  CHECK(zt::train::config_hash(again.config) == zt::train::config_hash(preset.config));
}

TEST_CASE("a new flag is one declaration: --help, the printed settings and the hash see it", "[ch6][config]") {
  // config_as_flags and config_hash are as_flags and settings_hash of this same registry
  TrainConfig c;
  int64_t knob = 7;
  std::string place;
  ArgParser p("zero-train", "");
  zt::train::declare_train_flags(p, c);
  p.add_int("test-knob", &knob, "a setting only this test declares", 0, 100);  // the one declaration
  p.add_string("test-output", &place, "an output only this test declares").not_hashed();
  CHECK(p.usage().find("--test-knob INT") != std::string::npos);
  CHECK(p.usage().find("(default: 7)") != std::string::npos);
  CHECK(p.as_flags().empty());
  const uint64_t before = zt::train::settings_hash(p);

  std::vector<std::string> words{"zero-train", "--test-knob", "9", "--test-output", "/tmp/x", "--stage", "2"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  REQUIRE(p.parse(static_cast<int>(argv.size()), argv.data()));
  CHECK(knob == 9);
  CHECK(p.as_flags() == "--stage 2 --test-knob 9 --test-output /tmp/x");  // declaration order
  const uint64_t after = zt::train::settings_hash(p);
  CHECK(after != before);
  // the unhashed output leaves the hash alone; the hashed knob moves it
  place = "/elsewhere";
  CHECK(zt::train::settings_hash(p) == after);
  knob = 10;
  CHECK(zt::train::settings_hash(p) != after);
}
