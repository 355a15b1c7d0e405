// support/kernel_cases/host_env.h — the host environment of the shared kernel cases (env.h):
// plain vectors, the item ops run one after another by the host launch layer and the block ops
// phase by phase (device/block_launch.h), Catch2 checks.
// The item ops always run serially, on no pool (core/cpu_pool.h), so a test that installs a pool
// around a case splits only the CPU kernel the case calls and compares it with the serial items.
// HostRuntimeEnv runs each op as the host runtime does instead (its host form where it has one).
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/cpu_pool.h"
#include "device/block_launch.h"
#include "device/item_grid.h"
#include "ops/op_launch.h"
#include "support/kernel_cases/env.h"

namespace zt::test {

/// The kernel cases' host environment (see the file comment).
struct HostEnv {
  /// The buffer type of the cases' inputs and outputs.
  template <typename T>
  using vec = std::vector<T>;
  /// Run an op with no pool installed: every item in index order, or every block's phases.
  /// @param op the item op or block op (kBlockOp tells them apart).
  template <typename Op>
  void run(const Op& op) const {
    UseCpuPool serial(nullptr);
    if constexpr (kBlockOp<Op>)
      device::run_blocks_on_host(op);
    else
      device::run_items_on_host(op);
  }
  /// A Catch2 check naming the first differing element. @param same the comparison.
  /// @param what the case and shape.
  void check(bool same, const std::string& what) const {
    INFO(what << (same ? "" : ": first difference at " + last_difference()));
    CHECK(same);
  }
};

/// The host runtime's environment: each op run as device/host_runtime.h runs it, the launch's
/// pool_body (ops/op_launch.h: the op's host() form, its host ranges, or its items or blocks split
/// over the pool), on a pool of three threads. So every host form is held to the CPU kernel's bits
/// by the same cases as the items and blocks.
struct HostRuntimeEnv : HostEnv {
  /// Present: the host forms run, so a case expects the CPU kernels' errors where they have them.
  static constexpr bool kHostForms = true;
  /// Run an op as the host runtime does. @param op the item op or block op.
  template <typename Op>
  void run(const Op& op) const {
    CpuPool pool(3);
    UseCpuPool use(&pool);
    ops::op_kernel("kernel case", op, {}, {}).pool_body();
  }
};

}  // namespace zt::test
