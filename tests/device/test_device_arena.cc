// The arena over a device slab (memory/arena.h's second constructor): the same first-fit
// allocator and the same ledger manage memory the host cannot touch. The emulated device makes
// "cannot touch" literal (device/protected_memory.h), so these cases pass only if the arena never
// reads or writes the bytes it hands out: its free list and its ledger live on the host.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/check.h"
#include "device/emulated_runtime.h"
#include "memory/arena.h"

namespace {
using zt::device::CopyKind;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const zt::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("device arena: a device slab carved by the host's allocator, under the same ledger", "[ch13]") {
  zt::device::EmulatedRuntime rt;
  const std::size_t capacity = 1 << 20;
  std::byte* slab = rt.allocate(capacity, "rank 0 device memory");
  std::vector<std::byte*> released;
  {
    zt::Arena arena(slab, capacity, "rank 0 (device)", [&](std::byte* p) {
      released.push_back(p);
      rt.release(p);
    });
    zt::ArenaAllocation params = arena.allocate(1000, "params");
    zt::ArenaAllocation grads = arena.allocate(3000, "grads");
    zt::ArenaAllocation more = arena.allocate(24, "params");
    // first fit from the slab's start, every block on the 256-byte granule
    CHECK(params.data() == slab);
    CHECK(grads.offset() == 1024);
    CHECK(more.offset() == 1024 + 3072);
    // the ledger counts requested bytes, as on the host
    CHECK(arena.ledger().usage("params").current_bytes == 1024);
    CHECK(arena.ledger().usage("grads").current_bytes == 3000);
    CHECK(arena.reserved_bytes() == 1024 + 3072 + 256);
    // the bytes are device memory: they move by the runtime's copies, and arrive intact
    std::vector<int32_t> in(750), out(750, -1);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<int32_t>(7 * i + 3);
    const zt::device::Stream s = rt.create_stream("copies");
    rt.copy_async(grads.data(), in.data(), 3000, CopyKind::host_to_device, s);
    rt.copy_async(params.data(), grads.data(), 1000, CopyKind::device_to_device, s);
    rt.copy_async(out.data(), params.data(), 1000, CopyKind::device_to_host, s);
    rt.copy_async(out.data() + 250, grads.data() + 1000, 2000, CopyKind::device_to_host, s);
    rt.synchronize(s);
    CHECK(out == in);
    // out of memory names the arena, as on the host
    CHECK(error_of([&] { (void)arena.allocate(capacity, "activations"); }).find("rank 0 (device)") !=
          std::string::npos);
  }
  CHECK(released == std::vector<std::byte*>{slab});  // the arena gives the slab back exactly once
}

TEST_CASE("device arena: a slab off the 256-byte granule is refused", "[ch13]") {
  alignas(256) static std::byte host[1024];
  CHECK(error_of([] { zt::Arena a(host + 8, 512, "odd", [](std::byte*) {}); }) ==
        "arena 'odd': the slab must start at a multiple of 256 bytes");
}
