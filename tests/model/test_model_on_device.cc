// The model's ops on two runtimes (model/model_ops.h): one Gpt<T> forward and backward run on the
// host runtime (the default: host memory, each op at once, the CPU kernels where an op has a host
// form) and on the emulated device (the same ModelOps over an EmulatedRuntime: device memory the host cannot touch, a
// thread per stream, the race checker) give the same loss sum, per-token losses, predictions and every gradient
// element, bit for bit, for fp32, fp16 and bf16, with and without activation checkpointing, on a small shape and on odd
// ones, and with the split Linears of tensor parallelism in 2 and 4 blocks. Parameters, gradients, the Workspace and
// the checkpoints are device allocations (filled with NaN bytes, so a read of anything the device did not write shows),
// and the model reaches them only through its ops: a host dereference would kill the process. Two micro-batches run
// back to back on one model with no synchronisation between a backward and the next forward, so the second forward
// stages its token ids while the first backward's work (and the copy of its gradients) may still be queued.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/check.h"
#include "device/emulated_runtime.h"
#include "fp/hd.h"
#include "kernels/blas.h"
#include "model/gpt_harness.h"
#include "model/model_ops.h"

using zt::device::CopyKind;
using zt::device::EmulatedRuntime;
using zt::model::GptConfig;
using zt::model::ModelOptions;
using zt_test::gpt_init;
using zt_test::Harness;
using zt_test::random_batch;

namespace {

// One micro-batch's results, as the host sees them.
template <typename T>
struct Step {
  float loss = 0;
  std::vector<float> token_losses;
  std::vector<int32_t> predictions;
  std::vector<T> grads;  // the storage manifest's dense layout
};

// The seed gradient: a loss scale over the tokens, large enough that fp16 gradients stay normal.
float grad_scale(const GptConfig& cfg, int64_t B) { return 256.0f / static_cast<float>(B * cfg.context); }

template <typename T>
std::vector<Step<T>> run_on_host(const GptConfig& cfg, int64_t B, const ModelOptions& o,
                                 const std::vector<std::vector<int32_t>>& batches) {
  Harness<T> h(cfg, B, gpt_init(cfg, 7), 0, o);
  const int64_t N = B * cfg.context;
  std::vector<Step<T>> steps;
  for (const auto& batch : batches) {
    Step<T> s;
    s.loss = h.forward(batch);
    const float* per = h.model.token_losses(h.ws);
    s.token_losses.assign(per, per + N);
    s.predictions.resize(static_cast<std::size_t>(N));
    h.model.predictions(h.ws, s.predictions.data());
    h.backward(batch, grad_scale(cfg, B));
    s.grads = h.grads;
    steps.push_back(std::move(s));
  }
  return steps;
}

// A device allocation freed with its runtime's release.
struct DeviceBuffer {
  zt::device::Runtime& rt;
  std::byte* ptr;
  std::size_t bytes;
  DeviceBuffer(zt::device::Runtime& r, std::size_t n, const std::string& name)
      : rt(r), ptr(n ? r.allocate(n, name) : nullptr), bytes(n) {}
  ~DeviceBuffer() {
    if (ptr) rt.release(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename U>
  U* as() const {
    return reinterpret_cast<U*>(ptr);
  }
};

// The same micro-batches on the emulated device: parameters uploaded once, the model on a compute
// stream of its own, each step's results copied back on that stream and read after the last.
template <typename T>
std::vector<Step<T>> run_on_device(const GptConfig& cfg, int64_t B, const ModelOptions& o,
                                   const std::vector<std::vector<int32_t>>& batches) {
  using namespace zt::model;
  EmulatedRuntime rt;
  const zt::device::Stream compute = rt.create_stream("compute");
  ModelOps<T> ops(rt, compute);
  Gpt<T> model(cfg, B, o);
  model.set_ops(&ops);
  const Precision p = precision_of<T>();
  const auto count = static_cast<std::size_t>(model.manifest().param_count);
  DeviceBuffer params(rt, count * sizeof(T), "params"), grads(rt, count * sizeof(T), "grads");
  DeviceBuffer acts(rt, activation_bytes(cfg, B, p, o), "activations");
  DeviceBuffer scratch(rt, scratch_bytes(cfg, B, p, o), "scratch");
  DeviceBuffer checkpoints(rt, checkpoint_bytes(cfg, B, p, o), "checkpoints");
  {  // the compute copy, as the host harness makes it
    const std::vector<float> master = gpt_init(cfg, 7);
    std::vector<float> stored(count);
    from_canonical(model.manifest(), master.data(), stored.data());
    std::vector<T> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = zt::kernels::from_f<T>(stored[i]);
    rt.copy_async(params.ptr, host.data(), count * sizeof(T), CopyKind::host_to_device, compute);
    rt.synchronize(compute);
  }
  DenseParamProvider<T> provider(model.manifest(), params.as<T>(), grads.as<T>());
  const Workspace ws{acts.ptr, acts.bytes, scratch.ptr, scratch.bytes, checkpoints.ptr, checkpoints.bytes};
  const int64_t N = B * cfg.context;
  std::vector<Step<T>> steps;
  for (const auto& batch : batches) {
    Step<T> s;
    const auto in = batch_inputs(batch.data(), B, cfg.context), tg = batch_targets(batch.data(), B, cfg.context);
    s.loss = model.forward(provider, in, tg, ws);
    s.token_losses.resize(static_cast<std::size_t>(N));
    rt.copy_async(s.token_losses.data(), model.token_losses(ws), static_cast<std::size_t>(N) * sizeof(float),
                  CopyKind::device_to_host, compute);
    s.predictions.resize(static_cast<std::size_t>(N));
    model.predictions(ws, s.predictions.data());  // synchronises: the losses are here too
    model.backward(provider, in, tg, grad_scale(cfg, B), ws);
    s.grads.resize(count);  // copied in stream order, before the next backward overwrites them
    rt.copy_async(s.grads.data(), grads.ptr, count * sizeof(T), CopyKind::device_to_host, compute);
    steps.push_back(std::move(s));  // moving a Step keeps its vectors' storage where the copies go
  }
  rt.synchronize(compute);
  return steps;
}

// The first index where two arrays differ in their bits, or -1.
template <typename U>
int64_t first_difference(const std::vector<U>& a, const std::vector<U>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(U)) != 0) return static_cast<int64_t>(i);
  return -1;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The parameter that holds stored element e, for a failure's message.
std::string param_at(const zt::model::Manifest& m, int64_t e) {
  for (const auto& p : m.params) {
    const int64_t at = m.units[static_cast<std::size_t>(p.unit)].offset + p.offset_in_unit;
    if (e >= at && e < at + p.numel) return p.name + "[" + std::to_string(e - at) + "]";
  }
  return "?";
}

template <typename T>
void check_host_equals_device(const GptConfig& cfg, int64_t B, bool checkpointing) {
  const ModelOptions o{{}, checkpointing};
  const std::vector<std::vector<int32_t>> batches = {random_batch(B, cfg.context, cfg.vocab, 11),
                                                     random_batch(B, cfg.context, cfg.vocab, 12)};
  const auto host = run_on_host<T>(cfg, B, o, batches);
  const auto dev = run_on_device<T>(cfg, B, o, batches);
  const auto manifest = zt::model::make_storage_manifest(cfg, o.mp);
  for (std::size_t k = 0; k < batches.size(); ++k) {
    INFO("V " << cfg.vocab << " T " << cfg.context << " L " << cfg.layers << " H " << cfg.heads << " C " << cfg.width
              << " B " << B << (checkpointing ? ", checkpointing" : "") << ", micro-batch " << k);
    CHECK(bits(host[k].loss) == bits(dev[k].loss));
    CHECK(first_difference(host[k].token_losses, dev[k].token_losses) == -1);
    CHECK(first_difference(host[k].predictions, dev[k].predictions) == -1);
    const int64_t g = first_difference(host[k].grads, dev[k].grads);
    INFO("first gradient that differs: " << (g < 0 ? std::string("none") : param_at(manifest, g)));
    CHECK(g == -1);
  }
}

const GptConfig kSmall{.vocab = 13, .context = 8, .layers = 2, .heads = 2, .width = 16};
// odd sizes everywhere: 3 heads of 4, a context of 7 (no power of two in any sum), 3 sequences
const GptConfig kOdd{.vocab = 11, .context = 7, .layers = 3, .heads = 3, .width = 12};
// one head of width 10, one block, one sequence of 5 over 17 classes
const GptConfig kNarrowest{.vocab = 17, .context = 5, .layers = 1, .heads = 1, .width = 10};

}  // namespace

TEMPLATE_TEST_CASE("model on the emulated device: loss, predictions and every gradient bit equal the host's", "[ch13]",
                   float, zt::fp16, zt::bf16) {
  REQUIRE(zt::kernels::gemm_backend() == zt::kernels::GemmBackend::canonical);  // the device's GEMM
  for (const bool checkpointing : {false, true}) {
    check_host_equals_device<TestType>(kSmall, 2, checkpointing);
    check_host_equals_device<TestType>(kOdd, 3, checkpointing);
    check_host_equals_device<TestType>(kNarrowest, 1, checkpointing);
  }
}

TEST_CASE("model on the emulated device: its kernels name what they read, so a missing event is caught", "[ch13]") {
  // parameters uploaded on one stream and read by the model on another with no event between: the
  // race checker refuses the first kernel that reads them, when it is enqueued
  using namespace zt::model;
  const GptConfig& cfg = kSmall;
  const int64_t B = 2;
  EmulatedRuntime rt;
  const zt::device::Stream upload = rt.create_stream("upload"), compute = rt.create_stream("compute");
  ModelOps<float> ops(rt, compute);
  Gpt<float> model(cfg, B);
  model.set_ops(&ops);
  const auto count = static_cast<std::size_t>(model.manifest().param_count);
  DeviceBuffer params(rt, count * sizeof(float), "params"), grads(rt, count * sizeof(float), "grads");
  DeviceBuffer acts(rt, activation_bytes(cfg, B, Precision::fp32), "activations");
  DeviceBuffer scratch(rt, scratch_bytes(cfg, B, Precision::fp32), "scratch");
  const std::vector<float> host = gpt_init(cfg, 7);
  rt.copy_async(params.ptr, host.data(), count * sizeof(float), CopyKind::host_to_device, upload);
  DenseParamProvider<float> provider(model.manifest(), params.as<float>(), grads.as<float>());
  const Workspace ws{acts.ptr, acts.bytes, scratch.ptr, scratch.bytes};
  const auto batch = random_batch(B, cfg.context, cfg.vocab, 3);
  try {
    model.forward(provider, batch_inputs(batch.data(), B, cfg.context), batch_targets(batch.data(), B, cfg.context),
                  ws);
    FAIL("the forward read the parameters with no event after their upload");
  } catch (const zt::Error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("kernel 'embedding_forward' on stream 'compute'") != std::string::npos);
    CHECK(what.find("of buffer 'params' written by copy host_to_device on stream 'upload'") != std::string::npos);
  }
  rt.synchronize();
}

TEMPLATE_TEST_CASE(
    "model on the emulated device: the split Linears in B = 2 and 4 tensor-parallel blocks, every bit "
    "the host's",
    "[ch13]", float, zt::fp16, zt::bf16) {
  // every block on this one device (no model-parallel group): the gathers out of the interleaved
  // layout, the scatters back and the canonical sum over the blocks run as item ops
  for (const bool checkpointing : {false, true}) {
    check_host_equals_device<TestType>(
        {.vocab = 13, .context = 8, .layers = 2, .heads = 4, .width = 16, .mp_blocks = 2}, 2, checkpointing);
    // heads of width 3, a context of 7: no power of two in any sum but the block tree's
    check_host_equals_device<TestType>(
        {.vocab = 11, .context = 7, .layers = 2, .heads = 4, .width = 12, .mp_blocks = 4}, 3, checkpointing);
  }
}

TEST_CASE("model ops: the default is the host runtime's, and set_ops(nullptr) returns to them", "[ch13]") {
  using namespace zt::model;
  Harness<float> h(kSmall, 2, gpt_init(kSmall, 7));
  CHECK(&h.model.ops() == &host_model_ops<float>());
  const auto batch = random_batch(2, kSmall.context, kSmall.vocab, 5);
  const float before = h.forward(batch);
  EmulatedRuntime rt;
  ModelOps<float> ops(rt, zt::device::Stream{0});
  h.model.set_ops(&ops);
  CHECK(&h.model.ops() == &ops);
  h.model.set_ops(nullptr);
  CHECK(&h.model.ops() == &host_model_ops<float>());
  CHECK(bits(h.forward(batch)) == bits(before));
}

namespace {

// An op the project does not have, written as a new one would be: a struct with items() and a
// ZT_HD body, registered nowhere (a GPU build would add one line to ops/cuda/ops_cuda.cu).
struct AxpyElements {
  float* y = nullptr;
  const float* x = nullptr;
  float a = 0;
  int64_t n = 0;
  ZT_HD int64_t items() const { return n; }
  ZT_HD void operator()(int64_t i) const { y[i] = a * x[i] + y[i]; }
};

}  // namespace

TEST_CASE("model ops: a new op is its struct and a launch() call, and runs on the host runtime and the device",
          "[ch13]") {
  using namespace zt::model;
  const int64_t n = 3001;
  std::vector<float> x(static_cast<std::size_t>(n)), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.37f * static_cast<float>(i) - 11.0f;
    y[i] = 1.0f / static_cast<float>(i + 1);
  }
  std::vector<float> expected(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) expected[i] = 1.5f * x[i] + y[i];  // no FMA contraction in this build
  // the host runtime, the default: host memory, the items split over the calling thread's pool
  std::vector<float> on_host = y;
  ModelOps<float>& host = host_model_ops<float>();
  host.launch("axpy", AxpyElements{on_host.data(), x.data(), 1.5f, n}, {}, {});
  CHECK(first_difference(on_host, expected) == -1);
  // the emulated device: device memory, the race checker sees the spans the launch names
  EmulatedRuntime rt;
  const zt::device::Stream s = rt.create_stream("compute");
  ModelOps<float> device(rt, s);
  DeviceBuffer dx(rt, x.size() * sizeof(float), "x"), dy(rt, y.size() * sizeof(float), "y");
  rt.copy_async(dx.ptr, x.data(), dx.bytes, CopyKind::host_to_device, s);
  rt.copy_async(dy.ptr, y.data(), dy.bytes, CopyKind::host_to_device, s);
  device.launch("axpy", AxpyElements{dy.as<float>(), dx.as<float>(), 1.5f, n},
                {zt::device::span_of(dx.as<float>(), x.size()), zt::device::span_of(dy.as<float>(), y.size())},
                {zt::device::span_of(dy.as<float>(), y.size())});
  std::vector<float> on_device(y.size());
  rt.copy_async(on_device.data(), dy.ptr, dy.bytes, CopyKind::device_to_host, s);
  rt.synchronize(s);
  CHECK(first_difference(on_device, expected) == -1);
}
