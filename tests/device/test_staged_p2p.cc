// Point-to-point transfers of device buffers through host staging (collective/staged_collective.h)
// on the emulated device: two thread ranks, each with its own emulated device, exchange in one
// batch a device buffer and a host buffer each way. The bytes arrive exact, a device send costs
// one copy down and a device receive one copy up (nothing for the host buffers), and the wrapped
// group counts the payload as point_to_point.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "collective/staged_collective.h"
#include "collective/thread_ranks.h"
#include "device/emulated_runtime.h"

using namespace zt;
using device::CopyKind;

TEST_CASE("a batch of device and host buffers crosses between two staged ranks", "[ch13][device][p2p]") {
  constexpr std::size_t kDev = 301, kHost = 77;
  auto group = thread_group(2);
  struct Out {
    std::vector<float> from_device, from_host;
    device::CopyStats copies;
    CollCounters p2p;
  };
  auto out = run_thread_ranks(2, [&](int r) {
    device::EmulatedRuntime rt;
    const device::Stream stream = rt.create_stream("compute");
    GlooCollective host_group(group.for_rank(r));
    StagedCollective coll(host_group, rt, stream);
    const int peer = 1 - r;
    std::vector<float> mine(kDev), host_send(kHost), host_recv(kHost, -1.0f), back(kDev, -1.0f);
    for (std::size_t i = 0; i < kDev; ++i) mine[i] = static_cast<float>(r * 10000 + static_cast<int>(i));
    for (std::size_t i = 0; i < kHost; ++i) host_send[i] = static_cast<float>(r * 10000 + 5000 + static_cast<int>(i));
    std::byte* send_dev = rt.allocate(kDev * sizeof(float), "send");
    std::byte* recv_dev = rt.allocate(kDev * sizeof(float), "recv");
    rt.copy_async(send_dev, mine.data(), kDev * sizeof(float), CopyKind::host_to_device, stream);
    rt.synchronize(stream);
    const device::CopyStats before = rt.stats();
    coll.p2p_async({P2pOp::send(send_dev, kDev, DType::fp32, peer), P2pOp::recv(recv_dev, kDev, DType::fp32, peer),
                    P2pOp::send(host_send.data(), kHost, DType::fp32, peer),
                    P2pOp::recv(host_recv.data(), kHost, DType::fp32, peer)})
        .wait();
    const device::CopyStats during = rt.stats() - before;
    rt.copy_async(back.data(), recv_dev, kDev * sizeof(float), CopyKind::device_to_host, stream);
    rt.synchronize(stream);
    rt.release(send_dev);
    rt.release(recv_dev);
    return Out{back, host_recv, during, host_group.stats()[CollKind::point_to_point]};
  });
  for (int r = 0; r < 2; ++r) {
    INFO("rank " << r << ": " << out[r].error);
    REQUIRE(out[r].ok());
    const Out& o = *out[r].value;
    const int peer = 1 - r;
    for (std::size_t i = 0; i < kDev; ++i)
      CHECK(o.from_device[i] == static_cast<float>(peer * 10000 + static_cast<int>(i)));
    for (std::size_t i = 0; i < kHost; ++i)
      CHECK(o.from_host[i] == static_cast<float>(peer * 10000 + 5000 + static_cast<int>(i)));
    CHECK(o.copies.copies_of(CopyKind::device_to_host) == 1);
    CHECK(o.copies.bytes_of(CopyKind::device_to_host) == kDev * sizeof(float));
    CHECK(o.copies.copies_of(CopyKind::host_to_device) == 1);
    CHECK(o.copies.bytes_of(CopyKind::host_to_device) == kDev * sizeof(float));
    CHECK(o.p2p.calls == 1);
    CHECK(o.p2p.bytes_sent == (kDev + kHost) * sizeof(float));
    CHECK(o.p2p.bytes_received == (kDev + kHost) * sizeof(float));
  }
}
