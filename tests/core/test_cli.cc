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
