// Protocol steps 4-6 (step_device/step_ops.h) give the host loops' bits: the same slices,
// gradients and optimizer states go through step/owned_slice.h's loops on host memory (the
// independent reference), through StepOps on the host runtime (device/host_runtime.h: the CPU
// path's) and through StepOps on the emulated device's memory, and the parameters, the
// masters, the optimizer states, the norm block sums, the non-finite answers and the counts of
// 16-bit values that kept their bits are compared bit for bit — for float, fp16 and bf16, Adam
// (AdamW) and SGD (Nesterov), with and without master weights, clipped and not, FP32 and
// compute-type gradients, counts that are no multiple of the item block or the norm block, and
// slices that hold an inf or a NaN. Also: the device ops' launches name the gradient they read,
// so the race checker refuses a gradient written on another stream without an event.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "device/emulated_runtime.h"
#include "device/host_runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "fp/random_bits.h"
#include "step/owned_slice.h"
#include "step_device/step_ops.h"

using zt::bf16;
using zt::fp16;
using zt::device::CopyKind;
using zt::device::EmulatedRuntime;
using zt::device::Stream;
using zt::step::ElementOptimizer;
using zt::step::GradSpan;
using zt::step::OwnedSlice;
using zt::step::StepOps;

namespace {

// One case of the matrix.
struct Case {
  bool adam = true;
  bool master = true;     // 16-bit T only: an FP32 master (else --no-master-weights)
  bool clipped = false;   // the step's clipping decision
  bool fp32_grad = true;  // gradient in FP32 (else in the compute type)
  int special = 0;        // 0: all finite; 1: an inf; 2: a NaN
  std::size_t count = 0;  // elements of the slice
  std::string name() const {
    return std::string(adam ? "adam" : "sgd") + (master ? " master" : " no-master") + (clipped ? " clipped" : "") +
           (fp32_grad ? " fp32-grad" : " compute-grad") +
           (special == 1   ? " inf"
            : special == 2 ? " nan"
                           : "") +
           " n=" + std::to_string(count);
  }
};

// Deterministic pseudo-random numbers.
struct Rng {
  uint64_t state;
  uint64_t next() { return zt::splitmix64_mix(state++); }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
  float signed_unit() { return 2.0f * uniform() - 1.0f; }
};

// Everything a slice's update touches, in host memory.
template <typename T>
struct Data {
  std::vector<T> params;
  std::vector<float> master;
  std::vector<float> grad32;
  std::vector<T> grad16;
  std::vector<float> state;  // adam: m[n] then v[n]; sgd: momentum[n]
};

constexpr std::size_t kStateOffset = 5;  // the slice starts at element 5 of the state arrays
constexpr std::size_t kStatePad = 9;     // and the arrays hold 9 elements more than the slice
constexpr float kScale = 8.0f;           // the loss scale S (a power of two)

template <typename T>
uint32_t bits_of(const T& v) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
  } else {
    return v.bits;
  }
}

// The index of the first element whose bits differ, or -1.
template <typename T>
long first_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (bits_of(a[i]) != bits_of(b[i])) return static_cast<long>(i);
  return -1;
}

// The 16-bit value next to v, away from zero (the sign-magnitude neighbour).
template <typename T>
float neighbour(T v) {
  return static_cast<float>(T::from_bits(static_cast<uint16_t>(v.bits + 1)));
}

template <typename T>
Data<T> make_data(const Case& c, bool adam, uint64_t seed) {
  Rng rng{seed};
  const std::size_t n = c.count;
  Data<T> d;
  d.params.resize(n);
  if (c.master && !std::is_same_v<T, float>) d.master.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = 2.0f * rng.signed_unit();
    if constexpr (std::is_same_v<T, float>) {
      d.params[i] = x;
    } else {
      const T p(x);
      d.params[i] = p;
      // every third master sits on the midpoint between p and its neighbour (the rounding
      // boundary of the refresh), the others a little off p
      if (!d.master.empty()) d.master[i] = i % 3 == 0 ? 0.5f * (static_cast<float>(p) + neighbour(p)) : x;
    }
  }
  // gradients of widely spread magnitudes (2^-10 .. 2^6, times S), so sums depend on their order
  std::vector<float> g(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int e = static_cast<int>(rng.next() % 17) - 10;
    g[i] = kScale * std::ldexp(rng.signed_unit(), e);
  }
  if (c.special == 1) g[n / 2] = std::numeric_limits<float>::infinity();
  if (c.special == 2) g[n / 3] = std::numeric_limits<float>::quiet_NaN();
  if (c.fp32_grad) {
    d.grad32 = g;
  } else {
    d.grad16.resize(n);
    for (std::size_t i = 0; i < n; ++i) d.grad16[i] = T(g[i]);
  }
  const std::size_t m = n + kStatePad;
  d.state.assign(adam ? 2 * m : m, 0.0f);
  for (std::size_t i = 0; i < d.state.size(); ++i)
    d.state[i] = adam && i >= m ? 1e-4f * rng.uniform() : 1e-2f * rng.signed_unit();  // v >= 0
  return d;
}

// Step k's optimizer over state arrays at `state` (in host or device memory).
ElementOptimizer optimizer(bool adam, int64_t step, float* state, std::size_t n) {
  zt::step::OptimizerSettings s;
  s.adam = adam;
  s.adam_config.weight_decay = 0.01;  // AdamW
  s.sgd_config.momentum = 0.9;
  s.sgd_config.weight_decay = 1e-4;
  s.sgd_config.nesterov = true;
  return zt::step::element_optimizer(s, adam ? 4e-4 : 2e-3, step, state, n);
}

// What one run of the steps answers.
struct Answers {
  bool nonfinite = false;
  std::vector<float> sums;
  std::vector<std::size_t> unchanged;
};

// The steps as a loop runs them, through the seam: the non-finite check, the block sums of the
// slice cut in two units (the second starting at a block boundary), two updates.
template <typename T, typename Ops>
Answers run_steps(Ops& ops, Data<T>& d, const Case& c, T* params, float* master, const float* g32, const T* g16,
                  float* state, std::size_t block) {
  const std::size_t n = c.count, m = n + kStatePad;
  const GradSpan<T> g{g32, g32 ? nullptr : g16};
  const float inv_scale = 1.0f / kScale;
  Answers a;
  a.nonfinite = ops.any_nonfinite(g, n);
  const std::size_t cut = n > 2 * block ? 2 * block : 0;
  ops.append_norm_block_sums(g, cut, block, inv_scale, a.sums);
  ops.append_norm_block_sums(g.after(cut), n - cut, block, inv_scale, a.sums);
  zt::ClipDecision clip;
  if (c.clipped) {
    clip.norm = 3.25f;
    clip.clipped = true;
    clip.coefficient = 0.3076923f;
  }
  const OwnedSlice<T> s{params, master, kStateOffset, g, n};
  for (int64_t step = 1; step <= 2; ++step)
    a.unchanged.push_back(ops.apply_update(s, inv_scale, clip, optimizer(c.adam, step, state, m)));
  (void)d;
  return a;
}

// A device copy of a host vector (nullptr for an empty one), uploaded through pinned memory.
template <typename U>
U* upload(EmulatedRuntime& rt, const std::vector<U>& v, Stream stream, const char* name) {
  if (v.empty()) return nullptr;
  const std::size_t bytes = v.size() * sizeof(U);
  auto* dev = reinterpret_cast<U*>(rt.allocate(bytes, name));
  std::byte* staging = rt.allocate_pinned(bytes, name);
  std::memcpy(staging, v.data(), bytes);
  rt.copy_async(dev, staging, bytes, CopyKind::host_to_device, stream);
  rt.synchronize(stream);
  rt.release_pinned(staging);
  return dev;
}

// Download a device copy into v and free it.
template <typename U>
void download(EmulatedRuntime& rt, U* dev, std::vector<U>& v, Stream stream) {
  if (!dev) return;
  const std::size_t bytes = v.size() * sizeof(U);
  std::byte* staging = rt.allocate_pinned(bytes, "download");
  rt.copy_async(staging, dev, bytes, CopyKind::device_to_host, stream);
  rt.synchronize(stream);
  std::memcpy(v.data(), staging, bytes);
  rt.release_pinned(staging);
  rt.release(reinterpret_cast<std::byte*>(dev));
}

// The host loops of step/owned_slice.h, called as StepOps is: the reference.
template <typename T>
struct HostLoops {
  bool any_nonfinite(GradSpan<T> g, std::size_t count) { return zt::step::any_nonfinite(g, count); }
  void append_norm_block_sums(GradSpan<T> g, std::size_t real, std::size_t block, float inv_scale,
                              std::vector<float>& sums) {
    zt::step::append_norm_block_sums(g, real, block, inv_scale, sums);
  }
  std::size_t apply_update(const OwnedSlice<T>& s, float inv_scale, const zt::ClipDecision& clip,
                           const ElementOptimizer& opt) {
    return zt::step::apply_update(s, inv_scale, clip, opt);
  }
};

// One case through the host loops, StepOps on the host runtime and StepOps on the device;
// compares every answer and every byte.
template <typename T>
void check_case(EmulatedRuntime& rt, Stream stream, StepOps<T>& device_ops, StepOps<T>& runtime_ops, const Case& c,
                uint64_t seed, std::size_t block, std::size_t& unchanged_total, std::size_t& updated_total) {
  INFO(c.name() << " block " << block);
  Data<T> host = make_data<T>(c, c.adam, seed);
  Data<T> dev = host, on_runtime = host;

  HostLoops<T> host_ops;
  const Answers r =
      run_steps<T>(runtime_ops, on_runtime, c, on_runtime.params.data(),
                   on_runtime.master.empty() ? nullptr : on_runtime.master.data(),
                   on_runtime.grad32.empty() ? nullptr : on_runtime.grad32.data(),
                   on_runtime.grad16.empty() ? nullptr : on_runtime.grad16.data(), on_runtime.state.data(), block);
  const Answers h =
      run_steps<T>(host_ops, host, c, host.params.data(), host.master.empty() ? nullptr : host.master.data(),
                   host.grad32.empty() ? nullptr : host.grad32.data(),
                   host.grad16.empty() ? nullptr : host.grad16.data(), host.state.data(), block);

  T* params = upload(rt, dev.params, stream, "params");
  float* master = upload(rt, dev.master, stream, "master");
  float* g32 = upload(rt, dev.grad32, stream, "grad32");
  T* g16 = upload(rt, dev.grad16, stream, "grad16");
  float* state = upload(rt, dev.state, stream, "state");
  const Answers d = run_steps<T>(device_ops, dev, c, params, master, g32, g16, state, block);
  download(rt, params, dev.params, stream);
  download(rt, master, dev.master, stream);
  download(rt, state, dev.state, stream);
  std::vector<float> unused32(dev.grad32.size());
  std::vector<T> unused16(dev.grad16.size());
  download(rt, g32, unused32, stream);
  download(rt, g16, unused16, stream);

  CHECK(h.nonfinite == (c.special != 0));
  CHECK(d.nonfinite == h.nonfinite);
  CHECK(r.nonfinite == h.nonfinite);  // the host runtime: the CPU path's StepOps
  CHECK(first_difference(r.sums, h.sums) == -1);
  CHECK(r.unchanged == h.unchanged);
  CHECK(first_difference(on_runtime.params, host.params) == -1);
  CHECK(first_difference(on_runtime.master, host.master) == -1);
  CHECK(first_difference(on_runtime.state, host.state) == -1);
  CHECK(h.sums.size() == zt::norm_block_count(c.count > 2 * block ? 2 * block : 0, block) +
                             zt::norm_block_count(c.count - (c.count > 2 * block ? 2 * block : 0), block));
  CHECK(first_difference(d.sums, h.sums) == -1);
  CHECK(d.unchanged == h.unchanged);
  CHECK(first_difference(dev.params, host.params) == -1);
  CHECK(first_difference(dev.master, host.master) == -1);
  CHECK(first_difference(dev.state, host.state) == -1);
  CHECK(first_difference(unused32, host.grad32) == -1);  // the gradient is read, never written
  CHECK(first_difference(unused16, host.grad16) == -1);
  if (c.special == 0)
    for (std::size_t u : h.unchanged) {
      unchanged_total += u;
      updated_total += c.count;
    }
}

template <typename T>
void check_matrix(const std::vector<std::size_t>& counts, std::size_t block) {
  EmulatedRuntime rt;
  const Stream stream = rt.create_stream("step");
  StepOps<T> device_ops(rt, stream);
  zt::device::HostRuntime host_rt;
  StepOps<T> runtime_ops(host_rt, host_rt.create_stream("step"));
  constexpr bool wide = std::is_same_v<T, float>;
  std::size_t unchanged = 0, updated = 0;
  uint64_t seed = 1;
  for (std::size_t count : counts)
    for (bool adam : {true, false})
      for (bool master : {true, false}) {
        if (wide && !master) continue;  // fp32 precision: the parameters are the master
        for (bool clipped : {false, true})
          for (bool fp32_grad : {true, false})
            for (int special : {0, 1, 2}) {
              Case c;
              c.adam = adam;
              c.master = master && !wide;
              c.clipped = clipped;
              c.fp32_grad = fp32_grad;
              c.special = special;
              c.count = count;
              check_case<T>(rt, stream, device_ops, runtime_ops, c, seed++, block, unchanged, updated);
            }
      }
  rt.synchronize();
  if (wide) {
    CHECK(unchanged == 0);
  } else {  // the matrix reaches both sides of the rounding boundary
    CHECK(unchanged > 0);
    CHECK(unchanged < updated);
  }
}

}  // namespace

TEMPLATE_TEST_CASE("step ops: the host runtime and the emulated device give the host loops' bits for steps 4-6",
                   "[ch13]", float, fp16, bf16) {
  // counts: one element; 1000 and 4099 (no multiple of the 128-thread block, of the norm block or
  // of the 1024-flag count group); norm blocks of 64 (several per slice) and 256 (the default)
  check_matrix<TestType>({1, 1000, 4099}, 64);
  check_matrix<TestType>({777}, zt::kDefaultNormBlock);
}

TEST_CASE("step ops: the device's block sums are block_sum_of_squares of the unscaled gradient", "[ch13]") {
  // an independent reference: optim/grad_norm.h's norm_block_sums over the unscaled values
  Rng rng{42};
  const std::size_t n = 3001, block = 128;
  std::vector<float> g(n), unscaled(n);
  for (std::size_t i = 0; i < n; ++i) {
    g[i] = kScale * std::ldexp(rng.signed_unit(), static_cast<int>(rng.next() % 31) - 15);
    unscaled[i] = g[i] * (1.0f / kScale);
  }
  std::vector<float> expected(zt::norm_block_count(n, block));
  zt::norm_block_sums(unscaled.data(), n, block, expected.data());

  EmulatedRuntime rt;
  const Stream stream = rt.create_stream("step");
  StepOps<float> ops(rt, stream);
  float* dev = upload(rt, g, stream, "grad");
  std::vector<float> sums{-1.0f};  // appended to, never replaced
  ops.append_norm_block_sums(GradSpan<float>{dev, nullptr}, n, block, 1.0f / kScale, sums);
  REQUIRE(sums.size() == expected.size() + 1);
  CHECK(bits_of(sums[0]) == bits_of(-1.0f));
  CHECK(first_difference(std::vector<float>(sums.begin() + 1, sums.end()), expected) == -1);
  std::vector<float> back(n);
  download(rt, dev, back, stream);
}

TEST_CASE("step ops: a gradient written on another stream without an event is refused", "[ch13]") {
  EmulatedRuntime rt;
  const Stream copy = rt.create_stream("h2d"), step = rt.create_stream("step");
  StepOps<fp16> ops(rt, step);
  const std::size_t n = 300;
  std::vector<float> g(n, 1.0f);
  auto* dev = reinterpret_cast<float*>(rt.allocate(n * sizeof(float), "grad"));
  std::byte* staging = rt.allocate_pinned(n * sizeof(float), "staging");
  std::memcpy(staging, g.data(), n * sizeof(float));
  rt.copy_async(dev, staging, n * sizeof(float), CopyKind::host_to_device, copy);
  // no event: the check kernel on `step` would read bytes `copy` may still be writing
  CHECK_THROWS_AS(ops.any_nonfinite(GradSpan<fp16>{dev, nullptr}, n), zt::Error);
  rt.synchronize();
  // ordered by an event, the same call runs
  rt.wait(step, rt.record(copy));
  CHECK_FALSE(ops.any_nonfinite(GradSpan<fp16>{dev, nullptr}, n));
  rt.release(reinterpret_cast<std::byte*>(dev));
  rt.release_pinned(staging);
}
