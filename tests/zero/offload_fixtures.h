// zero/offload_fixtures.h — what the ZeRO-Offload tests share (chapter 14): a scratch directory
// for the file tier, a run's offloaded twin, the bitwise comparison with the run without offload,
// and the memory and traffic checks of an offloaded run against their closed forms.
// Not a test itself; ranks are threads (zero_fixtures.h).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <string>

#include "train/offload_target.h"
#include "zero/zero_fixtures.h"

namespace zt::test {

namespace fs = std::filesystem;

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
inline train::TrainConfig offloaded(train::TrainConfig c, const std::string& target) {
  c.offload_optimizer = train::parse_offload_target(target, "--offload-optimizer", true);
  return c;
}

/// Every rank of `z` took the same steps as `base`'s and ended with the same master weights and
/// step-1 gradient, bit for bit.
inline void check_bitwise(const ZeroRun& z, const ZeroRun& base) {
  REQUIRE(z.errors == "");
  for (std::size_t r = 0; r < z.ranks.size(); ++r)
    CHECK(compare_steps(z.ranks[r].value->run.steps, base.ranks[r].value->run.steps) == "");
  CHECK(compare_params(z.artifacts.final_params, base.artifacts.final_params) == "");
  CHECK(compare_params(z.artifacts.step1_grad, base.artifacts.step1_grad) == "");
}

/// Steps that applied an update (a skipped step moves nothing between the tiers).
inline uint64_t applied_steps(const zero::ZeroRunResult& r) {
  return static_cast<uint64_t>(
      std::count_if(r.run.steps.begin(), r.run.steps.end(), [](auto& s) { return !s.skipped; }));
}

/// The memory and traffic checks of an offloaded run: the accelerator tier holds no master and no
/// optimizer state, both ledgers are their predictions, the copies and the file I/O their closed
/// forms in the last step and over the run, and over all ranks the copies are s_g ψ down and t ψ
/// up per step (N times that in stage 0, where every rank updates every element).
inline void check_offload_accounting(const ZeroRun& z, const train::TrainConfig& c) {
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

}  // namespace zt::test
