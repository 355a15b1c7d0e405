// NCCL or Gloo between ranks (--collective, train/collective_choice.h), decided on a machine
// without a GPU: the rule's table (auto takes NCCL exactly where each rank has a GPU of its own in
// a plain data-parallel world of two or more ranks; nccl that cannot serve is one line naming the
// reason; gloo always serves); the routing of a two-library group by its buffers
// (collective/device_routed.h) on the emulated device, a staged Gloo group standing in for NCCL:
// device buffers reach the device group only, host values the host group only, a call that mixes
// sides is refused; and zero-train's one-line refusals.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "collective/device_routed.h"
#include "collective/staged_collective.h"
#include "collective/thread_ranks.h"
#include "core/check.h"
#include "device/emulated_runtime.h"
#include "support/run_program.h"
#include "train/collective_choice.h"

using namespace zt;
using train::CollectiveBackend;
using train::CollectiveFacts;

namespace {

CollectiveFacts gpus_per_rank(int64_t world, int64_t local, int gpus) {
  CollectiveFacts f;
  f.device = device::Device::cuda;
  f.world_size = world;
  f.local_ranks = local;
  f.gpus = gpus;
  f.nccl_built = true;
  return f;
}

std::string refusal(CollectiveBackend asked, const CollectiveFacts& f) {
  try {
    train::use_nccl(asked, f);
  } catch (const zt::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("collective choice: auto takes NCCL exactly where every rank has a GPU of its own", "[ch13]") {
  // the table: (world, local ranks, GPUs) -> auto's answer
  CHECK(train::use_nccl(CollectiveBackend::automatic, gpus_per_rank(2, 2, 2)));
  CHECK(train::use_nccl(CollectiveBackend::automatic, gpus_per_rank(8, 4, 4)));        // two machines of four
  CHECK(train::use_nccl(CollectiveBackend::automatic, gpus_per_rank(2, 1, 1)));        // one rank per machine
  CHECK_FALSE(train::use_nccl(CollectiveBackend::automatic, gpus_per_rank(2, 2, 1)));  // two ranks share a GPU
  CHECK_FALSE(train::use_nccl(CollectiveBackend::automatic, gpus_per_rank(1, 1, 1)));  // one rank: nothing to send
  CollectiveFacts grid = gpus_per_rank(4, 4, 4);
  grid.plain_data_parallel = false;
  CHECK_FALSE(train::use_nccl(CollectiveBackend::automatic, grid));
  CollectiveFacts no_nccl = gpus_per_rank(2, 2, 2);
  no_nccl.nccl_built = false;
  CHECK_FALSE(train::use_nccl(CollectiveBackend::automatic, no_nccl));
  CollectiveFacts emulated = gpus_per_rank(2, 2, 2);
  emulated.device = device::Device::emulated;
  CHECK_FALSE(train::use_nccl(CollectiveBackend::automatic, emulated));
  // gloo always serves; nccl serves one rank on one GPU (nothing to send, but the group is NCCL)
  CHECK_FALSE(train::use_nccl(CollectiveBackend::gloo, gpus_per_rank(2, 2, 2)));
  CHECK(train::use_nccl(CollectiveBackend::nccl, gpus_per_rank(1, 1, 1)));
  CHECK(train::use_nccl(CollectiveBackend::nccl, gpus_per_rank(2, 2, 2)));
  // the GPU of a rank: its own with NCCL, the first otherwise
  CHECK(train::gpu_of_rank(true, 3) == 3);
  CHECK(train::gpu_of_rank(false, 3) == 0);
}

TEST_CASE("collective choice: nccl where NCCL cannot serve: one line naming the reason", "[ch13]") {
  CHECK(refusal(CollectiveBackend::nccl, gpus_per_rank(2, 2, 1)).find("2 ranks on this machine and 1 GPU visible") !=
        std::string::npos);
  CollectiveFacts cpu = gpus_per_rank(2, 2, 2);
  cpu.device = device::Device::cpu;
  CHECK(refusal(CollectiveBackend::nccl, cpu).find("needs --device cuda (given: --device cpu)") != std::string::npos);
  CollectiveFacts unbuilt = gpus_per_rank(2, 2, 2);
  unbuilt.nccl_built = false;
  CHECK(refusal(CollectiveBackend::nccl, unbuilt).find("this build has no NCCL") != std::string::npos);
  CollectiveFacts grid = gpus_per_rank(4, 4, 4);
  grid.plain_data_parallel = false;
  CHECK(refusal(CollectiveBackend::nccl, grid).find("only a plain data-parallel world") != std::string::npos);
  for (const auto& f : {gpus_per_rank(2, 2, 1), cpu, unbuilt, grid})
    CHECK(refusal(CollectiveBackend::nccl, f).find('\n') == std::string::npos);
}

TEST_CASE("a two-library group routes each call by its buffers", "[ch13]") {
  constexpr std::size_t kN = 203;
  auto host_ranks = thread_group(2), device_ranks = thread_group(2);
  struct Out {
    std::vector<float> device_sum, host_sum;
    int64_t host_calls = 0, device_calls = 0;
    std::string mixed;
  };
  auto out = run_thread_ranks(2, [&](int r) {
    device::EmulatedRuntime rt;
    const device::Stream stream = rt.create_stream("compute");
    GlooCollective host_group(host_ranks.for_rank(r));
    // NCCL's place: a group that takes device buffers (Gloo behind pinned staging)
    auto device_group =
        std::make_unique<StagedCollective>(std::make_unique<GlooCollective>(device_ranks.for_rank(r)), rt, stream);
    DeviceRoutedCollective routed(host_group, std::move(device_group), rt);
    std::vector<float> values(kN), host(kN);
    for (std::size_t i = 0; i < kN; ++i) values[i] = host[i] = static_cast<float>(r + 1) * static_cast<float>(i);
    std::byte* dev = rt.allocate(kN * sizeof(float), "gradients");
    rt.copy_async(dev, values.data(), kN * sizeof(float), device::CopyKind::host_to_device, stream);
    routed.all_reduce_async(dev, kN, DType::fp32).wait();
    routed.all_reduce_async(host.data(), kN, DType::fp32).wait();
    std::vector<float> back(kN);
    rt.copy_async(back.data(), dev, kN * sizeof(float), device::CopyKind::device_to_host, stream);
    rt.synchronize(stream);
    Out o{back, host, host_group.stats()[CollKind::all_reduce].calls, 0, ""};
    o.device_calls = routed.stats()[CollKind::all_reduce].calls - o.host_calls;
    try {
      std::vector<float> shard(kN);
      routed.reduce_scatter_v_async(dev, shard.data(), {kN - kN / 2, kN / 2}, DType::fp32).wait();
    } catch (const zt::Error& e) {
      o.mixed = e.what();
    }
    rt.release(dev);
    return o;
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r << ": " << out[r].error);
    REQUIRE(out[r].ok());
    const Out& o = *out[r].value;
    for (std::size_t i = 0; i < kN; ++i) {
      CHECK(o.device_sum[i] == 3.0f * static_cast<float>(i));
      CHECK(o.host_sum[i] == 3.0f * static_cast<float>(i));
    }
    CHECK(o.host_calls == 1);
    CHECK(o.device_calls == 1);
    CHECK(o.mixed.find("different sides of the host-device line") != std::string::npos);
  }
}

TEST_CASE("zero-train --collective nccl where NCCL cannot serve: one line, exit 2", "[ch13]") {
  const std::string tiny = "--layers 1 --heads 2 --width 16 --context 16 --global-batch 4 --steps 1 ";
  for (const std::string& extra :
       {std::string("--device cpu"), std::string("--device emulated --world-size 2 --ranks-as threads"),
        std::string("--device cuda --world-size 2 --ranks-as threads --mp-size 2"), std::string("--collective-x")}) {
    const std::string flags = tiny + extra + (extra == "--collective-x" ? "" : " --collective nccl");
    const auto out = zt::test::run_program("zero-train", flags);
    INFO(flags << ": " << out.err);
    CHECK(out.status == 2);
    CHECK(zt::test::line_count(out.err) == 1);
    if (extra != "--collective-x") CHECK(out.err.find("--collective nccl: ") != std::string::npos);
  }
}
