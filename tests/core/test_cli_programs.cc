// The parser as every program shows it: each program's --help fits in 100 columns, zero-train's
// lists its flags by topic in the order of its groups, each with an example that is a valid run,
// and a misspelt flag's error names the flag meant in every program (they share the parser).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "support/run_program.h"

namespace {

using zt::test::run_program;

// The lines of a program's output.
std::vector<std::string> output_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("every program's --help is at most 100 columns wide", "[ch1][cli]") {
  const std::vector<std::pair<std::string, std::string>> helps = {
      {"zero-train", "--help"},        {"zero-plan", "--help"},
      {"zero-launch", "--help"},       {"zero-collbench", "--help"},
      {"zero-memreplay", "--help"},    {"zero-ckpt", "--help"},
      {"zero-ckpt", "inspect --help"}, {"zero-ckpt", "consolidate --help"},
      {"zero-ckpt", "export --help"},  {"chapter-01", "--help"},
      {"chapter-02", "--help"},        {"chapter-03", "--help"},
      {"chapter-04", "--help"}};
  for (const auto& [program, args] : helps) {
    INFO(program << " " << args);
    const auto r = run_program(program, args);
    REQUIRE(r.status == 0);
    REQUIRE(r.out.find("  --help ") != std::string::npos);
    for (const auto& line : output_lines(r.out)) {
      INFO(line);
      CHECK(line.size() <= 100);
    }
  }
}

TEST_CASE("zero-train --help lists its flags by topic, each group with an example that is a valid run", "[ch1][cli]") {
  const auto help = run_program("zero-train", "--help");
  REQUIRE(help.status == 0);
  const auto lines = output_lines(help.out);
  std::vector<std::string> groups, examples;
  std::size_t flags = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {  // after the usage line
    const std::string& line = lines[i];
    if (line.rfind("  --", 0) == 0 && line.rfind("  --help ", 0) != 0) ++flags;
    if (line.empty() || line[0] == ' ' || line.back() != ':' || lines[i - 1].size() > 0) continue;
    groups.push_back(line.substr(0, line.size() - 1));  // a heading: a blank line, then "title:"
    REQUIRE(i + 1 < lines.size());
    INFO(groups.back());
    REQUIRE(lines[i + 1].rfind("  example: zero-train ", 0) == 0);
    examples.push_back(lines[i + 1].substr(std::string("  example: zero-train ").size()));
  }
  CHECK(groups == std::vector<std::string>{"model", "data", "precision", "ZeRO", "ZeRO-R", "layout", "offload",
                                           "checkpoints", "output", "diagnostics"});
  // every flag is in one group: as many entries as --help-markdown's rows (less --help's)
  const auto markdown = run_program("zero-train", "--help-markdown");
  REQUIRE(markdown.status == 0);
  std::size_t rows = 0;
  for (const auto& line : output_lines(markdown.out)) rows += line.rfind("| `--", 0) == 0 ? 1 : 0;
  CHECK(flags + 1 == rows);
  CHECK(flags > 70);
  for (const auto& example : examples) {  // each example is a run zero-train accepts: zero-plan
    INFO(example);                        // validates it as zero-train does, without training
    const auto r = run_program("zero-plan", example);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
  }
}

TEST_CASE("every program's error for a misspelt flag names the flag meant, and none for a far one", "[ch1][cli]") {
  struct Case {
    std::string program, args, error;
  };
  const std::vector<Case> cases = {
      {"zero-train", "--global-bach 8",
       "zero-train: error: unknown flag --global-bach; did you mean --global-batch? (see --help)\n"},
      {"zero-train", "--stgae=2", "zero-train: error: unknown flag --stgae; did you mean --stage? (see --help)\n"},
      {"zero-train", "--no-such-setting 1", "zero-train: error: unknown flag --no-such-setting (see --help)\n"},
      {"zero-plan", "--world-sise 4",
       "zero-plan: error: unknown flag --world-sise; did you mean --world-size? (see --help)\n"},
      // the planner's own flags are suggested too, not only the zero-train flags it passes on
      {"zero-plan", "--max-modle",
       "zero-plan: error: unknown flag --max-modle; did you mean --max-model? (see --help)\n"},
      {"zero-plan", "--beta-gb 25",
       "zero-plan: error: unknown flag --beta-gb; did you mean --beta-gbs? (see --help)\n"},
      {"zero-launch", "--nprocs 2", "zero-launch: error: unknown flag --nprocs; did you mean --nproc? (see --help)\n"},
      {"chapter-04", "--rank 2", "chapter-04: error: unknown flag --rank; did you mean --ranks? (see --help)\n"},
  };
  for (const auto& c : cases) {
    INFO(c.program << " " << c.args);
    const auto r = run_program(c.program, c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == c.error);
  }
}
