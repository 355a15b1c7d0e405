// zero-train's closing table (report/run_summary.h) as a user reads it: the configuration, one
// rank's memory by the paper's categories beside the ledger, the prediction and the paper's
// formula, and a step's traffic as a multiple of ψ beside the closed form; then the same job's
// printed lines with ranks as threads and as processes, and one out-of-memory line per job.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/run_program.h"

using namespace zt::test;

namespace {

const std::string kPaperRun =  // the paper's configuration: 16-bit gradients, one micro-batch per rank
    "--world-size 4 --ranks-as threads --precision fp16 --reduce-dtype compute --optimizer adamw "
    "--global-batch 4 --micro-batch 1 --steps 1 --warmup-steps 0 --eval-every 0 ";

nlohmann::json summary_of(const std::string& args, std::string* printed = nullptr) {
  const std::string json = "/tmp/zt_run_summary_" + std::to_string(::getpid()) + ".json";
  const auto out = run_program("zero-train", args + " --summary-json " + json);
  INFO(out.out << out.err);
  REQUIRE(out.status == 0);
  if (printed) *printed = out.out;
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  std::remove(json.c_str());
  return j;
}

std::size_t sum_categories(const nlohmann::json& by_category, std::initializer_list<const char*> names) {
  std::size_t s = 0;
  for (const char* n : names)
    if (by_category.contains(n)) s += by_category[n].get<std::size_t>();
  return s;
}

}  // namespace

TEST_CASE("the closing table: the paper's formulas, the ledger's categories and a step's ψ multiples", "[ch8][zero]") {
  for (int stage = 0; stage <= 3; ++stage) {
    INFO("stage " << stage);
    std::string printed;
    const auto j = summary_of(kPaperRun + "--stage " + std::to_string(stage), &printed);
    const double psi = j["param_count"].get<double>();
    const double n = 4;
    const auto& s = j["summary"];
    const auto& ledger = j["memory"]["per_rank"][0];
    CHECK(s["layout"] == "ZeRO stage " + std::to_string(stage) + ", N_d × N_m × N_p = 4 × 1 × 1");
    CHECK(s["numerics"] == "fp16 compute, 16-bit gradients, adamw");
    // [ZeRO §5]: 2ψ of parameters, 2ψ of gradients and 12ψ of optimizer states, each over N
    // from the stage that shards it (stage 1: S_o; 2: S_o, S_g; 3: all)
    const double params = 2 * psi / (stage >= 3 ? n : 1), grads = 2 * psi / (stage >= 2 ? n : 1),
                 optimizer = 12 * psi / (stage >= 1 ? n : 1);
    const auto& rows = s["memory"];
    REQUIRE(rows.size() == 6);
    CHECK(rows[0]["formula_bytes"] == std::llround(params));
    CHECK(rows[1]["formula_bytes"] == std::llround(grads));
    CHECK(rows[2]["formula_bytes"] == std::llround(optimizer));
    CHECK(rows[3]["formula_bytes"] == std::llround(params + grads + optimizer));
    // the measured column is the ledger's, summed by paper category; the buffers are the rest
    const auto& cats = ledger["by_category"];
    CHECK(rows[0]["measured"] == sum_categories(cats, {"params"}));
    CHECK(rows[1]["measured"] == sum_categories(cats, {"grads"}));
    CHECK(rows[2]["measured"] == sum_categories(cats, {"master", "optimizer"}));
    CHECK(rows[3]["measured"] == ledger["model_states_bytes"]);
    CHECK(rows[4]["measured"] == sum_categories(cats, {"activations", "activation_checkpoints"}));
    std::size_t all = 0;
    for (const auto& [name, bytes] : cats.items()) all += bytes.get<std::size_t>();
    CHECK(rows[3]["measured"].get<std::size_t>() + rows[4]["measured"].get<std::size_t>() +
              rows[5]["measured"].get<std::size_t>() ==
          all);
    for (const auto& row : rows) CHECK(row["measured"] == row["predicted"]);
    // [ZeRO §7]: per rank a step, an all-reduce sends 2(N-1)/N ψ elements, a reduce-scatter and an
    // all-gather (N-1)/N ψ each; stage 3 gathers twice. Each row's multiple is its bytes over
    // element width · ψ exactly; it exceeds the closed form only by the layout's padding, the
    // step's few scalars (loss sums, norm block sums) and, at stage 3, the tied embeddings' third
    // gather (chapter 8): under 6% of ψ for this model.
    double moved = 0;
    for (const auto& t : s["traffic"]) {
      INFO(t.dump());
      CHECK(t["bytes_sent"] == t["predicted"]);
      if (!t.contains("psi_multiple")) continue;
      CHECK(t["psi_multiple"].get<double>() * t["element_bytes"].get<double>() * psi ==
            Approx(t["bytes_sent"].get<double>()).epsilon(1e-12));
      CHECK(t["element_bytes"] == 2);
      const double closed = t["closed_form_value"].get<double>();
      CHECK(closed ==
            (t["collective"] == "all_reduce" || (stage == 3 && t["collective"] == "all_gather") ? 1.5 : 0.75));
      CHECK(t["psi_multiple"].get<double>() >= closed);
      CHECK(t["psi_multiple"].get<double>() < closed + 0.06);
      moved += closed;
    }
    CHECK(moved == (stage == 3 ? 2.25 : 1.5));  // the paper's 2ψ and 3ψ, times (N-1)/N
    // the printed table: every line within 100 columns (ψ and × are one column each)
    std::istringstream lines(printed);
    for (std::string line; std::getline(lines, line);) {
      std::size_t columns = 0;
      for (const unsigned char ch : line) columns += (ch & 0xC0) != 0x80;
      INFO(line);
      if (line.rfind("verify:", 0) != 0) CHECK(columns <= 100);
    }
    CHECK(printed.find("  configuration: ZeRO stage " + std::to_string(stage)) != std::string::npos);
  }
}

TEST_CASE("a job speaks through rank 0 alike with ranks as threads or processes, and says out of memory once",
          "[ch5][zero][cli]") {
  const std::string args = "--stage 2 --world-size 2 --global-batch 4 --micro-batch 1 --steps 2 --eval-every 0 ";
  std::string printed[2];
  for (int k = 0; k < 2; ++k) {
    const auto out = run_program("zero-train", args + (k == 0 ? "--ranks-as threads" : "--ranks-as processes"));
    INFO(out.out << out.err);
    REQUIRE(out.status == 0);
    std::istringstream lines(out.out);
    for (std::string line; std::getline(lines, line);)
      if (line.find("tokens/s") == std::string::npos) printed[k] += line + "\n";  // a wall-clock figure
  }
  CHECK(printed[0] == printed[1]);
  CHECK(printed[1].find("[rank") == std::string::npos);

  // every rank runs out at the same allocation; the job says so once, naming the budget's flag
  const std::string oom = "out of memory in the --memory-budget-mb arena: category 'activations'";
  for (const char* how : {"threads", "processes"}) {
    const auto out = run_program("zero-train", args + "--memory-budget-mb 1 --ranks-as " + how);
    INFO(how << "\n" << out.err);
    CHECK(out.status == 2);
    std::istringstream lines(out.err);
    int said = 0;
    for (std::string line; std::getline(lines, line);)
      if (line.find(oom) != std::string::npos && line.find("job failed") == std::string::npos) ++said;
    CHECK(said == 1);
  }
}
