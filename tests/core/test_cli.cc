// The strict parser: every malformed input is one zt::Error, every good one lands in its target.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/check.h"
#include "core/cli.h"

namespace {
struct Args {
  std::vector<std::string> words;
  std::vector<char*> ptrs;
  explicit Args(std::vector<std::string> w) : words(std::move(w)) {
    for (auto& s : words) ptrs.push_back(s.data());
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
};

struct Parsed {
  int64_t steps = 10;
  double lr = 0.5;
  std::string mode = "a";
  bool verbose = false;
};

Parsed parse(std::vector<std::string> words) {
  words.insert(words.begin(), "prog");
  Args a(words);
  Parsed p;
  zt::ArgParser parser("prog", "test");
  parser.add_int("steps", &p.steps, "steps", 0, 1000);
  parser.add_double("lr", &p.lr, "learning rate", 0.0, 10.0);
  parser.add_choice("mode", &p.mode, {"a", "b"}, "mode");
  parser.add_flag("verbose", &p.verbose, "talk");
  parser.parse(a.argc(), a.argv());
  return p;
}
}  // namespace

TEST_CASE("cli accepts both flag forms", "[ch1][cli]") {
  Parsed p = parse({"--steps", "7", "--lr=1e-3", "--mode", "b", "--verbose"});
  CHECK(p.steps == 7);
  CHECK(p.lr == 1e-3);
  CHECK(p.mode == "b");
  CHECK(p.verbose);
  CHECK(parse({}).steps == 10);
}

TEST_CASE("cli rejects malformed input with zt::Error", "[ch1][cli]") {
  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{{"--bogus", "1"},
                                                                            {"--steps", "7x"},
                                                                            {"--steps", ""},
                                                                            {"--steps", "1.5"},
                                                                            {"--steps", "-1"},
                                                                            {"--steps", "99999999999999999999"},
                                                                            {"--lr", "nan"},
                                                                            {"--lr", "inf"},
                                                                            {"--lr", "0x"},
                                                                            {"--mode", "c"},
                                                                            {"--steps"},
                                                                            {"--verbose=1"},
                                                                            {"--steps", "1", "--steps", "2"},
                                                                            {"positional"}}) {
    INFO(bad.front());
    CHECK_THROWS_AS(parse(bad), zt::Error);
  }
}

TEST_CASE("strict number parsing", "[ch1][cli]") {
  CHECK(zt::parse_int_strict("+12", "x") == 12);
  CHECK(zt::parse_int_strict("-3", "x") == -3);
  CHECK_THROWS_AS(zt::parse_int_strict(" 3", "x"), zt::Error);
  CHECK(zt::parse_double_strict("2.5e-1", "x") == 0.25);
  CHECK_THROWS_AS(zt::parse_double_strict("1e999", "x"), zt::Error);
}

namespace {
// The message of the zt::Error that parsing `words` throws ("" when it parses).
std::string parse_error(std::vector<std::string> words) {
  try {
    parse(std::move(words));
  } catch (const zt::Error& e) {
    return e.what();
  }
  return "";
}

// A parser whose flags are named like zero-train's, for the suggestion.
struct Near {
  int64_t global_batch = 32, micro_batch = 8, warmup = 0;
  double beta1 = 0.9, beta2 = 0.95;
  zt::ArgParser parser{"prog", "test"};
  Near() {
    parser.add_int("global-batch", &global_batch, "sequences per step");
    parser.add_int("micro-batch", &micro_batch, "sequences per micro-batch");
    parser.add_int("warmup-steps", &warmup, "warm-up steps");
    parser.add_double("beta1", &beta1, "Adam beta1");
    parser.add_double("beta2", &beta2, "Adam beta2");
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}
}  // namespace

TEST_CASE("edit distance counts insertions, deletions, substitutions and swaps", "[ch1][cli]") {
  CHECK(zt::edit_distance("global-bach", "global-batch") == 1);
  CHECK(zt::edit_distance("gloabl-batch", "global-batch") == 1);  // two neighbours swapped: one edit
  CHECK(zt::edit_distance("kitten", "sitting") == 3);
  CHECK(zt::edit_distance("", "abc") == 3);
  CHECK(zt::edit_distance("stage", "stage") == 0);
  CHECK(zt::closest_names("lrr", {"lr", "eps"}) == std::vector<std::string>{"lr"});
  CHECK(zt::closest_names("beta", {"beta1", "beta2", "eps"}) == std::vector<std::string>{"beta1", "beta2"});
  CHECK(zt::closest_names("ab", {"xy"}).empty());              // 2 edits make any short word another
  CHECK(zt::closest_names("bogus", {"steps", "lr"}).empty());  // nothing within 2 edits
}

TEST_CASE("an unknown flag's error names the flag it most likely meant, and none when nothing is close", "[ch1][cli]") {
  // close: one line naming the declared flag
  CHECK(parse_error({"--stesp", "7"}) == "unknown flag --stesp; did you mean --steps? (see --help)");
  CHECK(parse_error({"--mdoe=b"}) == "unknown flag --mdoe; did you mean --mode? (see --help)");
  CHECK(parse_error({"--hlep"}) == "unknown flag --hlep; did you mean --help? (see --help)");
  // far: the error as it was, with no guess
  CHECK(parse_error({"--bogus", "1"}) == "unknown flag --bogus (see --help)");
  CHECK(parse_error({"--x"}) == "unknown flag --x (see --help)");

  Near near;
  CHECK(near.parser.suggestion("global-bach") == "--global-batch");
  CHECK(near.parser.suggestion("Global-Batch") == "--global-batch");  // 2 substitutions
  CHECK(near.parser.suggestion("beta") == "--beta1 or --beta2");      // a tie names both
  CHECK(near.parser.suggestion("warmup") == "--warmup-steps");        // the one flag it begins
  CHECK(near.parser.suggestion("batch").empty());                     // begins none, near none
  CHECK(near.parser.suggestion("learning-rate").empty());
  std::vector<std::string> words{"prog", "--global-bach", "8"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  try {
    near.parser.parse(static_cast<int>(argv.size()), argv.data());
    FAIL("--global-bach parsed");
  } catch (const zt::Error& e) {
    CHECK(std::string(e.what()) == "unknown flag --global-bach; did you mean --global-batch? (see --help)");
  }
}

TEST_CASE("cli usage lists flags by group with an example each, wrapped to 100 columns", "[ch1][cli]") {
  int64_t a = 1, b = 2, c = 3, d = 4;
  zt::ArgParser p("prog", "test");
  p.add_int("first", &a, "declared before any group");
  p.group("alpha", "prog --second 5");
  p.add_int("second", &b,
            "a description long enough to wrap: it goes on and on about what the flag does, mentions "
            "--first and --third in passing, and ends only after more than one line of text has passed");
  p.group("beta", "prog --third 6");
  p.add_int("third", &c, "in beta");
  p.group("alpha");  // reopened: the next flag joins alpha without moving its declaration
  p.add_int("fourth", &d, "in alpha, declared last");
  CHECK_THROWS_AS(p.group("beta", "prog --another example"), zt::Error);

  const std::string help = p.usage();
  const auto at = [&](const std::string& s) { return help.find(s); };
  REQUIRE(at("\nflags:\n  --first INT") != std::string::npos);
  REQUIRE(at("\nalpha:\n  example: prog --second 5\n  --second INT") != std::string::npos);
  REQUIRE(at("\nbeta:\n  example: prog --third 6\n  --third INT") != std::string::npos);
  CHECK(at("flags:") < at("alpha:"));
  CHECK(at("alpha:") < at("--fourth INT"));
  CHECK(at("--fourth INT") < at("beta:"));
  CHECK(at("--third INT") < at("  --help "));
  std::size_t flag_lines = 0;
  for (const auto& line : lines_of(help)) {
    INFO(line);
    CHECK(line.size() <= zt::kHelpColumns);
    // only a flag's own line starts with "  --": a wrapped line never begins with a flag's name
    const std::size_t text = line.find_first_not_of(' ');
    if (text != std::string::npos && line.compare(text, 2, "--") == 0) {
      CHECK(text == 2);
      ++flag_lines;
    }
  }
  CHECK(flag_lines == 5);                                               // the four flags and --help
  CHECK(at("mentions --first") != std::string::npos);                   // "--first" kept beside the word before it
  CHECK(at("\n                               ") != std::string::npos);  // the hanging indent
  CHECK(at("(default: 2)") != std::string::npos);

  // the printed settings keep declaration order, whatever the groups
  b = 7;
  d = 8;
  CHECK(p.as_flags() == "--second 7 --fourth 8");

  const std::string md = p.markdown_usage();
  CHECK(md.find("### alpha\n\nExample: `prog --second 5`\n\n| flag |") != std::string::npos);
  CHECK(md.find("### alpha") < md.find("### beta"));
  CHECK(md.find("| `--first`") < md.find("### alpha"));
  CHECK(md.find("| `--fourth`") < md.find("### beta"));
  CHECK(md.find("| `--help`") > md.find("| `--third`"));
}
