// ZeRO-Offload and the file tier (chapter 10): with --offload-optimizer host or file:DIR the FP32
// master, the optimizer state and the update move to the host tier (or a file streamed through
// it), and the run stays bitwise the run without offload; the accelerator tier's ledger holds no
// master and no optimizer state; the copies between the tiers and the file's reads and writes are
// their closed forms; the file tier holds only its ring of buffers in RAM and leaves no file
// behind, after a run or an error. Ranks are threads (zero_fixtures.h); comparisons are bit for bit.
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
#include "support/run_program.h"
#include "zero/config_check.h"
#include "zero/zero_comm.h"
#include "zero/zero_fixtures.h"
#include "zero/zero_memory.h"

using namespace zt;
using namespace zt::test;
namespace fs = std::filesystem;

namespace {

/// A fresh empty directory, removed with everything in it at the end of the test.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    static std::atomic<int> n{0};
    path = fs::temp_directory_path() / ("zt_offload_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::string file_target() const { return "file:" + path.string(); }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {})); }
};

/// The same run with its optimizer offloaded to `target`.
train::TrainConfig offloaded(train::TrainConfig c, const std::string& target) {
  c.offload_optimizer = train::parse_offload_target(target, "--offload-optimizer", true);
  return c;
}

/// Every rank of `z` took the same steps as `base`'s and ended with the same master weights and
/// step-1 gradient, bit for bit.
void check_bitwise(const ZeroRun& z, const ZeroRun& base) {
  REQUIRE(z.errors == "");
  for (std::size_t r = 0; r < z.ranks.size(); ++r)
    CHECK(compare_steps(z.ranks[r].value->run.steps, base.ranks[r].value->run.steps) == "");
  CHECK(compare_params(z.artifacts.final_params, base.artifacts.final_params) == "");
  CHECK(compare_params(z.artifacts.step1_grad, base.artifacts.step1_grad) == "");
}

/// Steps that applied an update (a skipped step moves nothing between the tiers).
uint64_t applied_steps(const zero::ZeroRunResult& r) {
  return static_cast<uint64_t>(
      std::count_if(r.run.steps.begin(), r.run.steps.end(), [](auto& s) { return !s.skipped; }));
}

/// The memory and traffic checks of an offloaded run: the accelerator tier holds no master and no
/// optimizer state, both ledgers are their predictions, the copies and the file I/O their closed
/// forms in the last step and over the run, and over all ranks the copies are s_g ψ down and t ψ
/// up per step (N times that in stage 0, where every rank updates every element).
void check_offload_accounting(const ZeroRun& z, const train::TrainConfig& c) {
  const bool file = c.offload_optimizer.kind != train::OffloadKind::host;
  const std::size_t t = c.precision == model::Precision::fp32 ? 4 : 2;
  const std::size_t s_g =
      c.reduce_dtype == train::ReduceDtype::compute && c.micro_batches_per_rank() == 1 && t == 2 ? 2 : 4;
  uint64_t down = 0, up = 0;
  for (const auto& rank : z.ranks) {
    const zero::ZeroRunResult& r = *rank.value;
    const auto& m = r.run.memory.front();
    CHECK(m.by_category.count("master") == 0);
    CHECK(m.by_category.count("optimizer") == 0);
    CHECK(m.by_category == m.by_category_predicted);
    CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);
    CHECK(m.host_by_category.contains("master") == !file);
    CHECK(m.host_by_category.contains("optimizer") == !file);
    CHECK(m.host_by_category.contains("offload_buffers") == file);
    const auto& p = r.transfers_predicted_per_step;
    REQUIRE(!r.run.steps.back().skipped);  // the last step's counters are an applied step's
    CHECK(r.transfers_per_step.to_host_bytes == p.to_host_bytes);
    CHECK(r.transfers_per_step.to_device_bytes == p.to_device_bytes);
    CHECK(r.transfers_per_step.to_host_calls == p.to_host_calls);
    CHECK(r.transfers_per_step.to_device_calls == p.to_device_calls);
    const uint64_t applied = applied_steps(r);
    CHECK(r.transfers_total.to_host_bytes == applied * p.to_host_bytes);  // every applied step, not only the last
    CHECK(r.transfers_total.to_device_bytes == applied * p.to_device_bytes);
    const auto& io = r.file_io_predicted_per_step;
    CHECK(r.file_io_per_step.read_bytes == io.read_bytes);
    CHECK(r.file_io_per_step.write_bytes == io.write_bytes);
    CHECK(r.file_io_per_step.read_calls == io.read_calls);
    CHECK(r.file_io_total.read_bytes == applied * io.read_bytes);
    CHECK(r.file_io_total.write_bytes == applied * io.write_bytes);
    CHECK((io.read_bytes > 0) == file);
    down += p.to_host_bytes;
    up += p.to_device_bytes;
  }
  const auto psi = static_cast<uint64_t>(z.ranks[0].value->run.param_count);
  const uint64_t copies = c.stage == 0 ? static_cast<uint64_t>(c.world_size) : 1;
  CHECK(down == copies * s_g * psi);
  CHECK(up == copies * t * psi);
}

}  // namespace

TEST_CASE("ZeRO-Offload: host and file tiers are bitwise the run without offload, stages 0-3, N = 1, 2, 4", "[ch10]") {
  const char* precisions[] = {"fp32", "fp16", "bf16"};
  int row = 0;
  for (int stage = 0; stage <= 3; ++stage)
    for (int world : {1, 2, 4})
      for (const char* precision : precisions) {
        // the other axes rotate over the rows: optimizer (2 or 1 moments), micro-batches per rank
        const char* optimizer = row % 2 ? "sgd" : "adamw";
        const int per_rank = row % 3 == 2 ? 2 : 1;
        ++row;
        DYNAMIC_SECTION("stage " << stage << ", N " << world << ", " << precision << ", " << optimizer << ", A "
                                 << per_rank) {
          train::TrainConfig c = zero_config(stage, world, per_rank, precision);
          c.optimizer = word<train::Optimizer>(optimizer);
          const ZeroRun base = run_zero(c);
          REQUIRE(base.errors == "");
          const ScratchDir dir;
          for (const std::string& target : {std::string("host"), dir.file_target()}) {
            INFO(target);
            const train::TrainConfig o = offloaded(c, target);
            const ZeroRun z = run_zero(o);
            check_bitwise(z, base);
            check_offload_accounting(z, o);
            CHECK(dir.entries() == 0);  // the file tier's files are gone
          }
        }
      }
}

TEST_CASE("ZeRO-Offload with 16-bit gradients (--reduce-dtype compute): 2 bytes down per element, the paper's 2psi",
          "[ch10]") {
  for (int stage : {1, 3})
    for (const char* precision : {"fp16", "bf16"}) DYNAMIC_SECTION("stage " << stage << ", " << precision) {
        train::TrainConfig c = zero_config(stage, 2, 1, precision);
        c.reduce_dtype = train::ReduceDtype::compute;
        const ZeroRun base = run_zero(c);
        REQUIRE(base.errors == "");
        const ScratchDir dir;
        for (const std::string& target : {std::string("host"), dir.file_target()}) {
          const train::TrainConfig o = offloaded(c, target);
          const ZeroRun z = run_zero(o);
          check_bitwise(z, base);
          check_offload_accounting(z, o);  // s_g = 2: Σ_r bytes down == 2ψ == bytes up
          CHECK(z.ranks[0].value->transfers_per_step.to_host_bytes ==
                z.ranks[0].value->transfers_per_step.to_device_bytes);
        }
      }
}

TEST_CASE("ZeRO-Offload with fp16 overflow: a skipped step moves nothing, the bits stay equal", "[ch10]") {
  train::TrainConfig c = zero_config(2, 2, 1, "fp16");
  c.loss_scale_init = 16777216;  // 2^24: step 1's scaled gradients overflow, it is skipped
  c.steps = 8;
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  REQUIRE(base.ranks[0].value->run.steps[0].skipped);
  const ScratchDir dir;
  for (const std::string& target : {std::string("host"), dir.file_target()}) {
    const train::TrainConfig o = offloaded(c, target);
    const ZeroRun z = run_zero(o);
    check_bitwise(z, base);
    check_offload_accounting(z, o);  // totals == applied steps x the closed form
    CHECK(applied_steps(*z.ranks[0].value) < static_cast<uint64_t>(c.steps));
  }
}

TEST_CASE(
    "file tier: RAM holds only its ring of B records, B = 1, 2, 3, 4 and more than the units, read-ahead "
    "on and off give the same bits",
    "[ch10]") {
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

TEST_CASE("file tier: one file per rank while training, removed after the run and after an error mid-run", "[ch10]") {
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

TEST_CASE("file tier: Ctrl-C or a launcher's SIGTERM ends the ranks, and their files go with them", "[ch10]") {
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

TEST_CASE("file tier: a stale file of a killed run is taken over, a live run's file is refused", "[ch10]") {
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

TEST_CASE("FileTier: records stream through the ring in unit order, read ahead, written behind, counted", "[ch10]") {
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
        const offload::FileIoStats s = tier.stats();
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
    "[ch10]") {
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
    const train::ElementOptimizer opt = train::element_optimizer(c, 1e-2, step, state.data(), total);
    for (std::size_t u = 0; u < 2; ++u)
      train::apply_update(train::OwnedSlice<bf16>{params_ref.data() + offsets[u],
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
      zero_r::CopyEngine copies;
      offload::OptimizerTier<bf16> tier({kind, dir.path.string(), 2, true, 0}, shape, host, copies);
      for (std::size_t u = 0; u < 2; ++u) tier.initialise(u, [&](float* m) { init(u, m); });
      for (int64_t step = 1; step <= 3; ++step) {
        const train::ElementOptimizer opt = train::element_optimizer(c, 1e-2, step, nullptr, 0);
        for (std::size_t u = 0; u < 2; ++u)
          tier.update(u,
                      train::OwnedSlice<bf16>{params.data() + offsets[u],
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

TEST_CASE("ZeRO-Offload beside P_a+cpu: one host tier, one copy engine, both closed forms added", "[ch10]") {
  train::TrainConfig c = zero_config(2, 2, 2, "bf16");
  c.checkpoint_activations = true;
  c.partition_activations = train::PartitionActivations::cpu;
  const ZeroRun base = run_zero(c);
  REQUIRE(base.errors == "");
  const ScratchDir dir;
  const ZeroRun z = run_zero(offloaded(c, dir.file_target()));
  check_bitwise(z, base);
  for (std::size_t r = 0; r < 2; ++r) {
    const auto& res = *z.ranks[r].value;
    const auto& m = res.run.memory.front();
    CHECK(m.by_category == m.by_category_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);
    CHECK(m.host_by_category.contains("activation_checkpoints"));
    CHECK(m.host_by_category.contains("offload_buffers"));
    const auto& alone = base.ranks[r].value->transfers_per_step;  // P_a+cpu's copies without offload
    CHECK(res.transfers_per_step.to_host_bytes == res.transfers_predicted_per_step.to_host_bytes);
    CHECK(res.transfers_per_step.to_device_bytes == res.transfers_predicted_per_step.to_device_bytes);
    const zero::ZeroPlan p = plan_of(c, static_cast<int>(r));
    std::size_t owned = 0;
    for (std::size_t u = 0; u < p.layout.units.size(); ++u) owned += p.owned_real(u);
    const std::size_t units = p.layout.units.size();
    CHECK(res.transfers_per_step.to_host_calls == alone.to_host_calls + units);  // + one per unit each way
    CHECK(res.transfers_per_step.to_device_calls == alone.to_device_calls + units);
    CHECK(res.transfers_per_step.to_host_bytes == alone.to_host_bytes + 4 * owned);      // FP32 gradients down
    CHECK(res.transfers_per_step.to_device_bytes == alone.to_device_bytes + 2 * owned);  // bf16 parameters up
  }
  CHECK(dir.entries() == 0);
}

TEST_CASE(
    "zero-train --offload-optimizer: bad input is one line, and the summary holds the transfers and the file I/O "
    "beside their closed forms",
    "[ch10]") {
  const std::string tiny =
      "--layers 1 --heads 2 --width 16 --context 16 --steps 2 --global-batch 8 --micro-batch 2 --eval-every 0 "
      "--warmup-steps 0 --norm-block 32 ";
  const ScratchDir dir;
  const std::string not_a_dir = (dir.path / "plain-file").string();
  std::ofstream(not_a_dir) << "x";
  const std::string bad[] = {"--offload-optimizer disk",
                             "--offload-optimizer file:",
                             "--offload-optimizer file:" + not_a_dir + "/zt-offload",
                             "--offload-optimizer file:" + not_a_dir,
                             "--offload-optimizer host --no-master-weights --precision bf16",
                             "--offload-buffers 2",
                             "--offload-read-ahead off --offload-optimizer host",
                             "--offload-optimizer " + dir.file_target() + " --offload-buffers 0",
                             "--offload-optimizer " + dir.file_target() + " --offload-read-ahead maybe",
                             "--offload-params file:/tmp",
                             "--offload-params file:" + not_a_dir + "/zt-params --stage 3",
                             "--offload-params host --stage 3"};
  for (const std::string& args : bad) {
    const auto out = run_program("zero-train", tiny + args);
    INFO(args << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(line_count(out.err) == 1);
    CHECK(out.err.rfind("zero-train: error: ", 0) == 0);
  }
  // a place that cannot be created names the flag and what is in the way (tests/train walks
  // every output flag; a missing directory is created, as --save-dir's is)
  CHECK(run_program("zero-train", tiny + "--offload-params file:" + not_a_dir + "/zt-params --stage 3")
            .err.find("--offload-params file: " + not_a_dir + "/zt-params: cannot create directory " + not_a_dir +
                      "/zt-params: " + not_a_dir + " is a file, in the way") != std::string::npos);
  if (::geteuid() != 0) {  // root writes anywhere: the check cannot fail for it
    fs::permissions(dir.path, fs::perms::owner_read | fs::perms::owner_exec);
    const auto out = run_program("zero-train", tiny + "--offload-optimizer " + dir.file_target());
    fs::permissions(dir.path, fs::perms::owner_all);
    CHECK(out.status == 2);
    CHECK(out.err.find("cannot write into") != std::string::npos);
  }
  fs::remove(not_a_dir);
  // a good run: processes, --verify, the summary's host_transfers and offload_file_io sections
  const std::string json = (dir.path / "s.json").string();
  const auto out =
      run_program("zero-train", tiny + "--stage 2 --world-size 2 --precision bf16 --verify --summary-json " + json +
                                    " --offload-optimizer " + dir.file_target());
  INFO(out.err);
  REQUIRE(out.status == 0);
  CHECK(out.out.find("bitwise equal to the single-rank reference") != std::string::npos);
  CHECK(out.out.find("file tier:") != std::string::npos);
  const auto j = nlohmann::json::parse(read_file(json));
  fs::remove(json);
  CHECK(j["config"]["offload_optimizer"] == dir.file_target());
  CHECK(j["config"]["offload_buffers"] == 3);
  CHECK(j["host_transfers"]["per_step"] == j["host_transfers"]["predicted_per_step"]);
  CHECK(j["offload_file_io"]["per_step"] == j["offload_file_io"]["predicted_per_step"]);
  for (const auto& m : j["memory"]["per_rank"]) {
    CHECK(m["host"]["by_category"] == m["host"]["by_category_predicted"]);
    CHECK(!m["by_category"].contains("master"));
    CHECK(!m["by_category"].contains("optimizer"));
  }
  CHECK(dir.entries() == 0);
}

TEST_CASE("ZeRO-Offload settings are in the config hash: ranks that disagree fail at start-up", "[ch10]") {
  const train::TrainConfig c0 = zero_config(1, 2, 1, "bf16");
  for (const auto change : {+[](train::TrainConfig& c) {
                              c.offload_optimizer = {train::OffloadKind::host, ""};
                            },
                            +[](train::TrainConfig& c) { c.offload_buffers = 5; },
                            +[](train::TrainConfig& c) { c.offload_read_ahead = false; }}) {
    train::TrainConfig c1 = c0;
    change(c1);
    CHECK(zero::config_hash(c1) != zero::config_hash(c0));
  }
  train::TrainConfig c1 = c0;
  c1.offload_optimizer = {train::OffloadKind::host, ""};  // rank 1 was started with the flag, rank 0 without
  for (const std::string& error : run_two_configs(c0, c1))
    CHECK(error.find("configuration mismatch") != std::string::npos);
}

// ---- --offload-params file:DIR: stage 3's parameter shards in a file per rank -------------------

namespace {

/// The parameter tier's checks: the accelerator ledger holds no `params` bytes of sharded units
/// (only persistent ones), its ring is R = max(B, prefetch + 1) buffers of the largest shard, every
/// ledger is its prediction, and the file I/O per step is its closed form: a shard read per gather
/// of the acquire order per micro-batch, and one read and one write per sharded unit (the update),
/// plus the optimizer file tier's records when there is one.
void check_param_tier_accounting(const ZeroRun& z, const train::TrainConfig& c) {
  const std::size_t t = c.precision == model::Precision::fp32 ? 4 : 2;
  for (std::size_t r = 0; r < z.ranks.size(); ++r) {
    const zero::ZeroRunResult& res = *z.ranks[r].value;
    const zero::ZeroPlan plan = plan_of(c, static_cast<int>(r));
    const auto& m = res.run.memory.front();
    CHECK(m.by_category == m.by_category_predicted);
    CHECK(m.model_states_bytes == m.model_states_bytes_predicted);
    CHECK(m.host_by_category == m.host_by_category_predicted);
    std::size_t persistent = 0, largest = 0, sharded_bytes = 0, gathered_bytes = 0;
    uint64_t sharded_units = 0, gathers = 0;
    for (std::size_t u = 0; u < plan.layout.units.size(); ++u) {
      if (!plan.params_sharded(u)) {
        persistent += plan.layout.units[u].full * t;
        continue;
      }
      largest = std::max(largest, plan.layout.units[u].shard);
      sharded_bytes += plan.layout.units[u].shard * t;
      ++sharded_units;
    }
    for (std::size_t u : plan.acquire_order)
      if (plan.params_sharded(u)) {
        gathered_bytes += plan.layout.units[u].shard * t;
        ++gathers;
      }
    CHECK(sharded_units > 0);
    CHECK((m.by_category.count("params") ? m.by_category.at("params") : 0) == persistent);  // no sharded unit's
    const auto R =
        std::max<std::size_t>(static_cast<std::size_t>(c.offload_buffers), static_cast<std::size_t>(c.prefetch) + 1);
    CHECK(m.by_category.at("offload_param_buffers") == R * largest * t);
    const auto A = static_cast<uint64_t>(c.micro_batches_per_rank());
    zero::ZeroPlan no_params = plan;  // the optimizer tier's share of the closed form
    no_params.offload_params = false;
    const offload::FileIoStats opt = zero::predict_file_io_per_step(no_params);
    const auto& io = res.file_io_per_step;
    REQUIRE(!res.run.steps.back().skipped);
    CHECK(io.read_bytes == opt.read_bytes + A * gathered_bytes + sharded_bytes);
    CHECK(io.read_calls == opt.read_calls + A * gathers + sharded_units);
    CHECK(io.write_bytes == opt.write_bytes + sharded_bytes);
    CHECK(io.write_calls == opt.write_calls + sharded_units);
    const auto& p = res.file_io_predicted_per_step;
    CHECK(io.read_bytes == p.read_bytes);
    CHECK(io.write_bytes == p.write_bytes);
    CHECK(io.read_calls == p.read_calls);
    CHECK(io.write_calls == p.write_calls);
    CHECK(res.file_io_total.read_bytes == applied_steps(res) * p.read_bytes);
    CHECK(res.file_io_total.write_bytes == applied_steps(res) * p.write_bytes);
  }
}

}  // namespace

TEST_CASE("offload-params file: stage 3 is bitwise the run without, N = 1, 2, 4, every precision, prefetch 0-2",
          "[ch10]") {
  int row = 0;
  for (int world : {1, 2, 4})
    for (const char* precision : {"fp32", "bf16", "fp16"})
      for (int prefetch : {0, 1, 2}) {
        // rotating axes: micro-batches per rank, persistent units, the ring's B
        const int per_rank = row % 3 == 1 ? 2 : 1;
        const bool persist = row % 4 == 3;
        const int64_t buffers = row % 2 ? 1 : 3;
        ++row;
        DYNAMIC_SECTION("N " << world << ", " << precision << ", prefetch " << prefetch << ", A " << per_rank << ", B "
                             << buffers << (persist ? ", persistent units" : "")) {
          train::TrainConfig c = zero_config(3, world, per_rank, precision);
          c.prefetch = prefetch;
          c.eval_every = 2;
          c.layers = 2;
          if (persist) c.persist_below_mb = persist_all_but_largest(c);
          const ZeroRun base = run_zero(c);
          REQUIRE(base.errors == "");
          const ScratchDir dir, opt_dir;
          for (bool optimizer_file : {false, true}) {
            INFO("optimizer file tier " << optimizer_file);
            train::TrainConfig o = c;
            o.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
            o.offload_buffers = buffers;
            if (optimizer_file)
              o.offload_optimizer = train::parse_offload_target(opt_dir.file_target(), "--offload-optimizer", true);
            const ZeroRun z = run_zero(o);
            check_bitwise(z, base);
            CHECK(compare_evals(z.ranks[0].value->run.evals, base.ranks[0].value->run.evals) == "");
            CHECK(!base.ranks[0].value->run.evals.empty());
            check_param_tier_accounting(z, o);
            CHECK(dir.entries() == 0);  // both tiers' files are gone
            CHECK(opt_dir.entries() == 0);
          }
        }
      }
}

TEST_CASE("offload-params file: one file per rank while training, removed after the run and after an error", "[ch10]") {
  const train::TrainConfig c = zero_config(3, 2, 1, "bf16");
  const ScratchDir dir;
  train::TrainConfig o = c;
  o.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
  const std::uintmax_t bytes = plan_of(c).layout.shard_total * 2;  // every unit's shard, 2 bytes each
  std::atomic<int> right{0};
  const ZeroRun z = run_zero(o, [&](const train::StepRecord& s, const train::RunResult&) {
    if (s.step != 1) return;
    for (int r = 0; r < 2; ++r) {
      const fs::path f = offload::file_tier_path(dir.path.string(), r, "params");
      right += fs::exists(f) && fs::file_size(f) == bytes;
    }
  });
  REQUIRE(z.errors == "");
  CHECK(right == 4);
  CHECK(dir.entries() == 0);
  const ZeroRun failed = run_zero(o, [&](const train::StepRecord& s, const train::RunResult&) {
    if (s.step == 2) throw std::runtime_error("induced failure at step 2");
  });
  CHECK(failed.errors.find("induced failure at step 2") != std::string::npos);
  CHECK(dir.entries() == 0);
  // a stage other than 3 is refused, as before
  train::TrainConfig bad = zero_config(2, 2, 1, "bf16");
  bad.offload_params = train::parse_offload_target(dir.file_target(), "--offload-params", false);
  CHECK_THROWS_WITH(train::validate(bad), Catch::Contains("it needs --stage 3"));
}
