// Held-out evaluation in the ZeRO engine: rounds split over ranks, every evaluation bitwise the
// single-rank reference's when the weights are, the training trajectory untouched by it, and
// zero-train printing the evaluations of a distributed run as it does for one rank. A selection
// of the axes is an explicit table whose rows each run in a Catch2 section named after the row.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/dataset.h"
#include "support/run_program.h"
#include "train/heldout.h"
#include "zero/heldout_eval.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

namespace {

bool same_comm(const CommStats& a, const CommStats& b) {
  for (std::size_t k = 0; k < kCollKinds; ++k)
    if (a.by_kind[k].calls != b.by_kind[k].calls || a.by_kind[k].bytes_sent != b.by_kind[k].bytes_sent ||
        a.by_kind[k].bytes_received != b.by_kind[k].bytes_received)
      return false;
  return true;
}

/// The lines zero-train prints for held-out evaluations, without a launcher's "[rank R] " prefix.
std::vector<std::string> heldout_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("[rank ", 0) == 0) line = line.substr(line.find("] ") + 2);
    if (line.find("held-out loss") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("held-out split: rank q runs rounds q, q+N, ... and every round exactly once", "[ch6]") {
  for (std::size_t rounds : {1, 2, 22, 32})
    for (std::size_t world : {1, 2, 3, 5}) {
      const zero::HeldoutSplit split{rounds, world};
      std::vector<int> seen(rounds, 0);
      for (std::size_t q = 0; q < world; ++q)
        for (std::size_t j = 0; j < split.passes(); ++j)
          if (split.round(q, j) < rounds) ++seen[split.round(q, j)];
      INFO("R=" << rounds << " N=" << world);
      CHECK(split.passes() * world >= rounds);
      CHECK((split.passes() - 1) * world < rounds);  // no pass is empty on every rank
      for (int s : seen) CHECK(s == 1);
    }
  CHECK(train::heldout_rounds(2) == 32);
  CHECK(train::heldout_rounds(3) == 22);  // 66 sequences: rounded up to whole micro-batches
}

TEST_CASE("held-out evaluation, stages 0-3, N = 1-3: bitwise the reference's", "[ch6]") {
  // One micro-batch per rank, so the weights are bitwise the reference's at every step.
  // B = 2: R = 32 rounds (N = 3 does not divide it); B = 3: R = 22; B = 32: R = 2 < N = 3, so
  // rank 2 has no round at all and, in stage 3, walks the forward's gathers without computing.
  // Stage 3 also with persistent units, whose forward acquires take no gather.
  struct Case {
    int stage, world, B;
    const char* precision;
    int prefetch;
    bool persist;
  };
  const Case cases[] = {{0, 1, 2, "fp32", 0, false},  {0, 1, 3, "bf16", 1, false},  {0, 2, 2, "fp16", 2, false},
                        {0, 2, 3, "fp32", 0, false},  {0, 3, 2, "bf16", 1, false},  {0, 3, 3, "fp16", 2, false},
                        {0, 3, 32, "fp32", 0, false}, {1, 1, 2, "bf16", 1, false},  {1, 1, 3, "fp16", 2, false},
                        {1, 2, 2, "fp32", 0, false},  {1, 2, 3, "bf16", 1, false},  {1, 3, 2, "fp16", 2, false},
                        {1, 3, 3, "fp32", 0, false},  {1, 3, 32, "bf16", 1, false}, {2, 1, 2, "fp16", 2, false},
                        {2, 1, 3, "fp32", 0, false},  {2, 2, 2, "bf16", 1, false},  {2, 2, 3, "fp16", 2, false},
                        {2, 3, 2, "fp32", 0, false},  {2, 3, 3, "bf16", 1, false},  {2, 3, 32, "fp16", 2, false},
                        {3, 1, 2, "fp32", 0, true},   {3, 1, 3, "bf16", 1, false},  {3, 2, 2, "fp16", 2, true},
                        {3, 2, 3, "fp32", 0, false},  {3, 3, 2, "bf16", 1, true},   {3, 3, 3, "fp16", 2, false},
                        {3, 3, 32, "fp32", 0, true}};
  for (const Case& cs : cases)
    DYNAMIC_SECTION("stage " << cs.stage << ", N " << cs.world << ", B " << cs.B << ", " << cs.precision
                             << ", prefetch " << cs.prefetch << (cs.persist ? ", persistent units" : "")) {
      auto c = zero_config(cs.stage, cs.world, 1, cs.precision);
      c.micro_batch = cs.B;
      c.global_batch = static_cast<int64_t>(cs.world) * cs.B;
      c.eval_every = 2;  // steps 2 and 3 (the last)
      c.prefetch = cs.prefetch;
      if (cs.persist) c.persist_below_mb = persist_all_but_largest(c);
      const train::RunResult ref = run(reference_of(c));
      const ZeroRun z = run_zero(c);
      INFO("persist-below-mb " << c.persist_below_mb);
      REQUIRE(z.errors == "");
      REQUIRE(ref.evals.size() == 2);
      CHECK(ref.evals[0].step == 2);
      CHECK(ref.evals[1].step == 3);
      CHECK(ref.evals[1].problems > 0);
      CHECK(std::isfinite(ref.evals[1].loss));
      for (const auto& r : z.ranks) {
        CHECK(compare_steps(r.value->run.steps, ref.steps) == "");  // same weights, so same evals
        CHECK(compare_evals(r.value->run.evals, ref.evals) == "");
      }
    }
}

TEST_CASE("held-out evaluation with --steps 0: the initial weights, as in the reference", "[ch6]") {
  for (int stage : {0, 3}) {
    auto c = zero_config(stage, 3, 1, "bf16");
    c.steps = 0;
    c.dump_params = c.dump_grads = "";
    const train::RunResult ref = run(reference_of(c));
    const ZeroRun z = run_zero(c);
    INFO("stage " << stage);
    REQUIRE(z.errors == "");
    REQUIRE(ref.evals.size() == 1);
    CHECK(ref.evals[0].step == 0);
    for (const auto& r : z.ranks) CHECK(compare_evals(r.value->run.evals, ref.evals) == "");
  }
}

TEST_CASE("held-out evaluation leaves the training trajectory bitwise unchanged", "[ch6]") {
  // Evaluating after every step (the most interleaving) against only after the last: the same
  // per-step records, the same final master weights, the same training communication.
  struct Case {
    int stage;
    const char* precision;
  };
  const Case cases[] = {{0, "fp16"}, {1, "bf16"}, {2, "fp16"}, {3, "bf16"}};
  for (const Case& cs : cases) DYNAMIC_SECTION("stage " << cs.stage << ", N 3, " << cs.precision) {
      const int stage = cs.stage;
      auto every = zero_config(stage, 3, 2, cs.precision);
      every.steps = 4;
      every.eval_every = 1;
      auto last = every;
      last.eval_every = 0;
      const ZeroRun a = run_zero(every), b = run_zero(last);
      INFO("stage " << stage);
      REQUIRE(a.errors == "");
      REQUIRE(b.errors == "");
      CHECK(compare_steps(a.ranks[0].value->run.steps, b.ranks[0].value->run.steps) == "");
      CHECK(compare_params(a.artifacts.final_params, b.artifacts.final_params) == "");
      for (std::size_t r = 0; r < 3; ++r) {
        const auto& x = *a.ranks[r].value;
        const auto& y = *b.ranks[r].value;
        CHECK(x.run.evals.size() == 4);
        CHECK(y.run.evals.size() == 1);
        CHECK(compare_evals({x.run.evals.back()}, y.run.evals) == "");
        CHECK(same_comm(x.comm_total, y.comm_total));  // evaluation collectives are not training's
        CHECK(same_comm(x.comm_per_step, y.comm_per_step));
        CHECK(x.run.memory.front().by_category == y.run.memory.front().by_category);
      }
    }
}

TEST_CASE("held-out evaluation: a text file has no held-out split, as in the reference", "[ch6]") {
  const std::string path = "/tmp/zt_heldout_text_" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream f(path);
    for (int i = 0; i < 200; ++i) f << "the quick brown fox jumps over the lazy dog " << i << "\n";
  }
  auto c = zero_config(3, 2, 1, "fp32");
  c.eval_every = 1;
  auto data = make_dataset(path, static_cast<std::size_t>(c.context));
  std::remove(path.c_str());
  const train::RunResult ref = reference::train_single_rank(reference_of(c), *data, {}, nullptr);
  ThreadGroup group = thread_group(2);
  auto out = run_thread_ranks(2, [&](int r) {
    GlooCollective coll(group.for_rank(r));
    return predict::train_zero(c, *data, coll, {}, nullptr);
  });
  CHECK(ref.evals.empty());
  for (const auto& o : out) {
    REQUIRE(o.ok());
    CHECK(o.value->run.steps.size() == 3);
    CHECK(o.value->run.evals.empty());
  }
}

TEST_CASE("held-out evaluation: ranks with different --eval-every fail at start-up, clearly", "[ch6]") {
  // evaluations issue collectives, so ranks evaluating at different steps would wait on each other
  auto c0 = zero_config(3, 2, 1, "fp32");
  auto c1 = c0;
  c1.eval_every = 1;
  for (const std::string& error : run_two_configs(c0, c1)) {
    INFO(error);
    CHECK(error.find("configuration mismatch") != std::string::npos);  // non-empty: the rank failed
  }
}

TEST_CASE("zero-train: a distributed run prints the single-rank run's held-out lines", "[ch6]") {
  // 2 ranks x 2 micro-batches of 2 (the schedule conditions hold): the same weights, so the very
  // same lines; processes prefix theirs with "[rank 0] ", which is stripped before comparing.
  const std::string tiny =
      "--layers 1 --heads 2 --width 16 --context 16 --steps 3 --global-batch 8 "
      "--micro-batch 2 --eval-every 2 --warmup-steps 0 --norm-block 32 --precision bf16 ";
  const std::string single_json = "/tmp/zt_heldout_single_" + std::to_string(::getpid()) + ".json";
  const auto single = run_program("zero-train", tiny + "--summary-json " + single_json);
  REQUIRE(single.status == 0);
  std::ifstream sf(single_json);
  const auto single_evals = nlohmann::json::parse(sf)["evals"];
  std::remove(single_json.c_str());
  const auto expected = heldout_lines(single.out);
  REQUIRE(expected.size() == 2);  // step 2 (every 2) and step 3 (the last)
  CHECK(expected[0].rfind("step 2: ", 0) == 0);
  CHECK(expected[1].rfind("step 3: ", 0) == 0);
  for (const char* how : {"", "--ranks-as threads "})
    for (int stage : {1, 3}) {
      const std::string json = "/tmp/zt_heldout_cli_" + std::to_string(::getpid()) + ".json";
      const auto out = run_program("zero-train", tiny + how + "--world-size 2 --stage " + std::to_string(stage) +
                                                     " --verify --summary-json " + json);
      INFO(how << "stage " << stage << "\n" << out.out << out.err);
      REQUIRE(out.status == 0);
      CHECK(heldout_lines(out.out) == expected);
      CHECK(out.out.find("every held-out evaluation are bitwise equal") != std::string::npos);  // --verify
      CHECK(out.out.find("  held-out: loss") != std::string::npos);                             // the summary's line
      std::ifstream f(json);
      const auto j = nlohmann::json::parse(f);
      std::remove(json.c_str());
      CHECK(j["evals"] == single_evals);  // step, exact loss, accuracy, problems
      REQUIRE(j["evals"].size() == 2);
      CHECK(j["evals"][1]["problems"].get<int>() > 0);
    }
}
