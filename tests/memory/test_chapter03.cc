// chapter-03 prints what the formula module computes: run it and compare a few printed rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>

#include "memory/model_states.h"
#include "support/run_program.h"

namespace {
// stdout and stderr together, in order, as the checks below read them.
std::string run(const std::string& args, int* status) {
  zt::test::RunOptions o;
  o.merge_stderr = true;
  const auto r = zt::test::run_program(ZT_CHAPTER03_BIN, args, o);
  *status = r.status;
  return r.out;
}
}  // namespace

TEST_CASE("chapter-03 prints the stage table from the formula module", "[ch3][memory]") {
  int status = 0;
  const std::string out = run("--params 1.5e9 --world-sizes 1,3,64 --optimizer sgd", &status);
  REQUIRE(status == 0);
  std::istringstream lines(out);
  std::string line;
  bool in_table = false;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("Per-rank model states", 0) == 0) {
      in_table = true;
      std::getline(lines, line);  // column header
      continue;
    }
    if (!in_table) continue;
    if (line.empty()) break;
    std::istringstream row(line);
    std::size_t n = 0;
    row >> n;
    for (int stage = 0; stage <= 3; ++stage) {
      double printed = 0;
      row >> printed;
      const double gb = zt::paper_model_states(1.5e9, 8, zt::shard_spec_for_stage(stage, n)).total / 1e9;
      INFO("N = " << n << ", stage " << stage);
      // printed with %.6g: within half a unit of the 6th significant digit
      CHECK(std::fabs(printed - gb) <= 0.5 * std::pow(10.0, std::floor(std::log10(gb)) - 5));
    }
    ++rows;
  }
  CHECK(rows == 3);
  CHECK(out.find("model states, total    12 psi") != std::string::npos);  // SGD: 2 + 2 + 8
}

TEST_CASE("chapter-03 rejects bad flags with one line and a non-zero status", "[ch3][memory]") {
  int status = 0;
  const std::string out = run("--world-sizes 4,0", &status);
  CHECK(status != 0);
  CHECK(out.find("error: --world-sizes") != std::string::npos);
  run("--optimizer lamb", &status);
  CHECK(status != 0);
}
