// The file tier (chapter 14, offload/file_tier.h): RAM holds only its ring of B records and the
// bits do not depend on B or on read-ahead; one file per rank while training, removed after the run,
// after an error, after Ctrl-C or a launcher's SIGTERM; a stale file is taken over, a live one
// refused; and, below the engine, FileTier's streaming and OptimizerTier's updates against the
// engine's own arrays.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/atomic_file.h"
#include "fp/bf16.h"
#include "offload/file_tier.h"
#include "offload/optimizer_tier.h"
#include "predict/zero_comm.h"
#include "predict/zero_memory.h"
#include "support/run_program.h"
#include "zero/config_check.h"
#include "zero/offload_fixtures.h"
#include "zero/zero_fixtures.h"

using namespace zt;
using namespace zt::test;

TEST_CASE(
    "file tier: RAM holds only its ring of B records, B = 1, 2, 3, 4 and more than the units, read-ahead "
    "on and off give the same bits",
    "[ch14]") {
  train::TrainConfig c = zero_config(1, 2, 1, "bf16");
  c.layers = 3;  // 5 units: wte+wpe, 3 blocks, ln_f
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  const zero::ZeroPlan plan = plan_of(c);
  const std::size_t units = plan.layout.units.size();
  REQUIRE(units == 5);
  std::size_t largest = 0;  // the largest record: e_u (S_o: the shard) x K = 12 bytes
  for (const auto& u : plan.layout.units) largest = std::max(largest, u.shard);
  for (int64_t buffers : {1, 2, 3, 4, 64})
    for (const bool read_ahead : {true, false})
      DYNAMIC_SECTION("B " << buffers << ", read-ahead " << (read_ahead ? "on" : "off")) {
        const ScratchDir dir;
        train::TrainConfig o = offloaded(c, dir.file_target());
        o.offload_buffers = buffers;
        o.offload_read_ahead = read_ahead;
        const ZeroRun z = run_zero(o);
        check_bitwise(z, base);
        check_offload_accounting(z, o);
        for (int r = 0; r < 2; ++r) {
          const auto& host = z.ranks[static_cast<std::size_t>(r)].value->run.memory.front().host_by_category;
          const std::size_t ring = std::min<std::size_t>(static_cast<std::size_t>(buffers), units) * largest * 12;
          CHECK(host.at("offload_buffers") == ring);
          // nothing else of the optimizer is in RAM: one unit's gradient and 16-bit values staged
          std::size_t owned = 0;  // the largest unit's real elements in the rank's shard
          for (std::size_t u = 0; u < units; ++u) owned = std::max(owned, plan_of(c, r).owned_real(u));
          CHECK(host == std::map<std::string, std::size_t>{
                            {"offload_buffers", ring}, {"offload_grads", owned * 4}, {"offload_params", owned * 2}});
        }
        CHECK(dir.entries() == 0);
      }
}

TEST_CASE("file tier: one file per rank while training, removed after the run and after an error mid-run", "[ch14]") {
  const train::TrainConfig c = zero_config(3, 2, 1, "fp16");
  const ScratchDir dir;
  const train::TrainConfig o = offloaded(c, dir.file_target());
  // each rank's file, seen from its own thread after step 1 (asserted afterwards, in this thread)
  std::atomic<int> files_seen{0}, bytes_right{0};
  const std::uintmax_t bytes = plan_of(c).layout.shard_total * 12;  // e_u x K, every unit
  const ZeroRun z = run_zero(o, [&](const train::StepRecord& s, const train::RunResult&) {
    if (s.step != 1) return;
    for (int r = 0; r < 2; ++r) {
      const fs::path f = offload::file_tier_path(dir.path.string(), r);
      files_seen += fs::exists(f);
      bytes_right += fs::exists(f) && fs::file_size(f) == bytes;
    }
  });
  REQUIRE(z.errors == "");
  CHECK(files_seen == 4);  // both files, seen by both ranks
  CHECK(bytes_right == 4);
  CHECK(dir.entries() == 0);
  // an error in the middle of the run: every rank's callback throws after step 2; the exception
  // unwinds the engine, whose file tier removes its file
  const ZeroRun failed = run_zero(o, [&](const train::StepRecord& s, const train::RunResult&) {
    if (s.step == 2) throw std::runtime_error("induced failure at step 2");
  });
  CHECK(failed.errors.find("induced failure at step 2") != std::string::npos);
  CHECK(!failed.ranks[0].ok());
  CHECK(!failed.ranks[1].ok());
  CHECK(dir.entries() == 0);
}

TEST_CASE("file tier: Ctrl-C or a launcher's SIGTERM ends the ranks, and their files go with them", "[ch14]") {
  const ScratchDir dir;
  const std::string run =
      "--layers 1 --heads 2 --width 16 --context 16 --global-batch 4 --warmup-steps 0 --steps 1000000 --eval-every 2 "
      "--stage 1 --offload-optimizer " +
      dir.file_target();
  struct Case {
    const char* name;
    const char* ranks;
    int signo;
  };
  // two ranks as processes: the launcher (zero-train itself) gets the signal and sends SIGTERM to
  // both; one process of thread ranks: the signal reaches it directly
  for (const Case& cs :
       {Case{"processes, SIGTERM", "--world-size 2", SIGTERM}, Case{"processes, SIGINT", "--world-size 2", SIGINT},
        Case{"threads, SIGINT", "--world-size 2 --ranks-as threads", SIGINT}})
    DYNAMIC_SECTION(cs.name) {
      RunOptions o;
      o.signo = cs.signo;
      bool both_files = false;  // seen when rank 0 printed its first held-out line: both tiers exist
      o.signal_when = [&](const std::string& out) {
        if (out.find("held-out loss") == std::string::npos) return false;
        both_files = fs::exists(offload::file_tier_path(dir.path.string(), 0)) &&
                     fs::exists(offload::file_tier_path(dir.path.string(), 1));
        return true;
      };
      const auto out = run_program("zero-train", run + " " + cs.ranks, o);
      INFO(out.out << out.err);
      CHECK(out.status != 0);
      CHECK(both_files);
      CHECK(dir.entries() == 0);
    }
}

TEST_CASE("file tier: a stale file of a killed run is taken over, a live run's file is refused", "[ch14]") {
  const train::TrainConfig c = zero_config(1, 1, 1, "bf16");
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  const ScratchDir dir;
  const train::TrainConfig o = offloaded(c, dir.file_target());
  const std::string path = offload::file_tier_path(dir.path.string(), 0);
  {  // what a SIGKILLed run leaves: a file of another size and contents, nobody holding its lock
    std::ofstream stale(path, std::ios::binary);
    stale << std::string(12345, 'x');
  }
  check_bitwise(run_zero(o), base);
  CHECK(dir.entries() == 0);
  // a file held by a live tier (the lock of another job using the same DIR)
  Arena host(1 << 20, "test host tier");
  {
    offload::FileTier live(dir.path.string(), 0, {64, 64}, 2, true, host);
    const ZeroRun z = run_zero(o);
    REQUIRE(!z.ranks[0].ok());
    CHECK(z.ranks[0].error.find("in use by another running job") != std::string::npos);
    CHECK(fs::exists(path));  // refused, not removed: it is the other job's
  }
  CHECK(dir.entries() == 0);
}

TEST_CASE("FileTier: records stream through the ring in unit order, read ahead, written behind, counted", "[ch14]") {
  const ScratchDir dir;
  Arena host(1 << 20, "test host tier");
  const std::vector<std::size_t> records{5, 3, 8, 1, 6};  // floats per unit
  std::size_t total = 0;
  for (std::size_t n : records) total += n;
  for (std::size_t buffers : {1, 2, 3, 5, 9})
    for (bool ahead : {true, false}) DYNAMIC_SECTION("B " << buffers << ", read-ahead " << ahead) {
        offload::FileTier tier(dir.path.string(), 7, records, buffers, ahead, host);
        CHECK(tier.path() == dir.path.string() + "/rank-00007.offload");
        CHECK(tier.buffers() == std::min<std::size_t>(buffers, records.size()));
        CHECK(host.ledger().usage("offload_buffers").current_bytes == tier.buffers() * 8 * sizeof(float));
        for (std::size_t u = 0; u < records.size(); ++u) {  // the initial records: unit u's k-th value 100u + k
          float* r = tier.begin(u, true);
          for (std::size_t k = 0; k < records[u]; ++k) r[k] = static_cast<float>(100 * u + k);
          tier.end(u);
        }
        // each pass adds the pass number to every value; between passes 3 and 4 unit 2's element 7
        // is set to -1 through with_record (unit 2 is read ahead in its buffer when B >= 3, else
        // it borrows the buffer of a unit read ahead, which is read again)
        const auto expected = [](std::size_t u, std::size_t k, int pass) {
          const float before = u == 2 && k == 7 && pass == 4 ? -1.0f : static_cast<float>(100 * u + k);
          return before + static_cast<float>((pass - 1) * pass / 2 - (u == 2 && k == 7 && pass == 4 ? 6 : 0));
        };
        for (int pass = 1; pass <= 4; ++pass) {
          if (pass == 4) {
            CHECK_THROWS_WITH(tier.begin(2), Catch::Contains("out of order"));
            tier.with_record(2, [&](float* r) {
              CHECK(r[7] == 207 + 6);
              r[7] = -1;
              return true;
            });
            tier.with_record(2, [&](float* r) {
              CHECK(r[7] == -1);
              return false;
            });
          }
          for (std::size_t u = 0; u < records.size(); ++u) {
            float* r = tier.begin(u);
            for (std::size_t k = 0; k < records[u]; ++k) {
              CHECK(r[k] == expected(u, k, pass));
              r[k] += static_cast<float>(pass);
            }
            tier.end(u);
            if (u == 1) CHECK_THROWS_WITH(tier.with_record(3, [](float*) { return false; }), Catch::Contains("pass"));
          }
        }
        // counted at submission: each pass reads and writes every record once (with read-ahead the
        // next pass's first B reads are queued as a pass ends, so the count per pass stays U);
        // with_record reads unit 2 unless it was read ahead, and then reads again the unit it evicted
        const offload::TransferStats s = tier.stats();
        const uint64_t bytes = total * sizeof(float), f = sizeof(float);
        CHECK(s.write_bytes == 5 * bytes + records[2] * f);  // initial + 4 passes + with_record
        CHECK(s.write_calls == 5 * records.size() + 1);
        const std::size_t B = tier.buffers(), primed = ahead ? B : 0;  // the 5th pass's, queued at the end
        uint64_t primed_bytes = 0;
        for (std::size_t u = 0; u < primed; ++u) primed_bytes += records[u] * f;
        uint64_t visits = 2 * records[2] * f, visit_calls = 2;  // not read ahead: unit 2 read each time
        if (ahead && 2 < B) visits = visit_calls = 0;           // read ahead: visited in place
        if (ahead && 2 >= B) {                                  // and the evicted unit read again
          visits += 2 * records[2 % B] * f;
          visit_calls += 2;
        }
        CHECK(s.read_calls == 4 * records.size() + primed + visit_calls);
        CHECK(s.read_bytes == 4 * bytes + primed_bytes + visits);
      }
  CHECK(dir.entries() == 0);
  CHECK(host.ledger().usage("offload_buffers").current_bytes == 0);
}

TEST_CASE(
    "OptimizerTier: host and file tiers update like the engine's own arrays, and with_owned_state shows and "
    "changes master and moments in the engine's layout",
    "[ch14]") {
  // two units with padding (extent > count), Adam (two moments), bf16 compute copy, FP32 gradients
  const offload::TierShape shape{{64, 32}, {60, 32}, 2, false};
  const std::size_t total = 96, offsets[] = {0, 64};
  std::vector<float> grads(total);
  for (std::size_t i = 0; i < total; ++i) grads[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
  const auto init = [&](std::size_t u, float* m) {
    for (std::size_t k = 0; k < shape.extents[u]; ++k) m[k] = 0.5f + 0.001f * static_cast<float>(offsets[u] + k);
  };
  // the engine's own layout: master[Σ e_u], moments m[Σ e_u] then v[Σ e_u]
  std::vector<float> master(total), state(2 * total, 0.0f);
  std::vector<bf16> params(total), params_ref(total);
  for (std::size_t u = 0; u < 2; ++u) init(u, master.data() + offsets[u]);
  const train::TrainConfig c;
  const ClipDecision no_clip;
  for (int64_t step = 1; step <= 3; ++step) {
    const step::ElementOptimizer opt =
        step::element_optimizer(train::optimizer_settings(c), 1e-2, step, state.data(), total);
    for (std::size_t u = 0; u < 2; ++u)
      step::apply_update(step::OwnedSlice<bf16>{params_ref.data() + offsets[u],
                                                master.data() + offsets[u],
                                                offsets[u],
                                                {grads.data() + offsets[u], nullptr},
                                                shape.counts[u]},
                         1.0f, no_clip, opt);
  }
  const ScratchDir dir;
  for (const offload::TierKind kind : {offload::TierKind::host, offload::TierKind::file})
    DYNAMIC_SECTION((kind == offload::TierKind::host ? "host" : "file")) {
      Arena host(1 << 20, "test host tier");
      offload::TransferThread copies;
      offload::OptimizerTier<bf16> tier({kind, dir.path.string(), 2, true, 0}, shape, host, copies);
      for (std::size_t u = 0; u < 2; ++u) tier.initialise(u, [&](float* m) { init(u, m); });
      for (int64_t step = 1; step <= 3; ++step) {
        const step::ElementOptimizer opt =
            step::element_optimizer(train::optimizer_settings(c), 1e-2, step, nullptr, 0);
        for (std::size_t u = 0; u < 2; ++u)
          tier.update(u,
                      step::OwnedSlice<bf16>{params.data() + offsets[u],
                                             nullptr,
                                             offsets[u],
                                             {grads.data() + offsets[u], nullptr},
                                             shape.counts[u]},
                      1.0f, no_clip, opt);
      }
      for (std::size_t i = 0; i < total; ++i) REQUIRE(params[i].bits == params_ref[i].bits);  // copied up
      const auto st = copies.stats();
      CHECK(st.to_host_bytes == 3 * 92 * 4);    // every update: the owned gradient down, FP32
      CHECK(st.to_device_bytes == 3 * 92 * 2);  // and the refreshed bf16 values up
      for (std::size_t u = 0; u < 2; ++u)
        tier.with_owned_state(u, [&](const offload::StateView& v) {
          CHECK(v.extent == shape.extents[u]);
          for (std::size_t k = 0; k < v.extent; ++k) {
            CHECK(bits(v.master[k]) == bits(master[offsets[u] + k]));
            CHECK(bits(v.moment(0)[k]) == bits(state[offsets[u] + k]));          // Adam's m
            CHECK(bits(v.moment(1)[k]) == bits(state[total + offsets[u] + k]));  // Adam's v
          }
          v.master[3] = 42.0f;  // a resume writes the state back
          v.moment(1)[3] = 7.0f;
          return true;
        });
      tier.with_owned_state(1, [&](const offload::StateView& v) {
        CHECK(v.master[3] == 42.0f);
        CHECK(v.moment(1)[3] == 7.0f);
        return false;
      });
      CHECK(host.ledger().usage("master").current_bytes == (kind == offload::TierKind::host ? total * 4 : 0));
    }
  CHECK(dir.entries() == 0);
}
