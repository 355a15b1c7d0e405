// model/model_ops.cc — ModelOps' element, row and column ops (embedding, LayerNorm, GELU,
// residual, cross-entropy, argmax), its crossings to the host (token ids in, loss sum and
// predictions out), its own buffers and the host's shared instance. The GEMM-based ops (linear
// layers, attention) are in model_ops_gemm.cc.
//
// Each op launches either a block op of ops/ (LayerNorm and the cross-entropy forward: a block per
// row or per tile of columns, the canonical sums formed by the block's threads together) or an
// item op of ops/*_items.h whose body the CPU kernel of the same name loops over
// (tests/kernels/test_host_launch.cc and tests/ops prove them bitwise), with the spans of every
// tensor it reads and writes. On the host runtime an op with a host form runs the CPU kernel. Where the CPU kernel
// makes one pass and a launch could not (column sums over rows other blocks are writing), the op is two launches in
// stream order.
#include "model/model_ops.h"

#include <cstring>
#include <type_traits>

#include "core/check.h"
#include "device/host_runtime.h"
#include "kernels/row_sum.h"
#include "model/launch.h"
#include "ops/argmax_items.h"
#include "ops/cross_entropy_blocks.h"
#include "ops/cross_entropy_items.h"
#include "ops/elementwise_items.h"
#include "ops/embedding_items.h"
#include "ops/gelu_items.h"
#include "ops/layernorm_blocks.h"

namespace zt::model {

using launch::launch_op;
using launch::span;

namespace {

// The ids a compact [rows, cols] view holds.
int64_t id_count(const kernels::TokenView& v) { return v.rows * v.cols; }

}  // namespace

template <typename T>
ModelOps<T>::ModelOps(device::Runtime& runtime, device::Stream stream) : rt_(runtime), stream_(stream) {}

template <typename T>
ModelOps<T>::~ModelOps() {
  for (device::Room* b :
       {&ids_[0], &ids_[1], &argmax_, &ids_pinned_[0], &ids_pinned_[1], &losses_pinned_, &argmax_pinned_})
    b->release(rt_);
}

template <typename T>
void ModelOps<T>::synchronize() {
  rt_.synchronize(stream_);
  ids_pending_[0] = ids_pending_[1] = false;  // every staging copy was on this stream
}

// For float both are the identity: widen hands back the tensor itself (the GEMM ops read float
// tensors in place), narrow is a plain copy (a copy, not a kernel).
template <typename T>
const float* ModelOps<T>::widen(float* stage, const T* src, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    (void)stage;
    (void)n;
    return src;
  } else {
    launch_op(rt_, stream_, "widen", ops::CastElements<float, T>{stage, src, n}, {span(src, n)}, {span(stage, n)});
    return stage;
  }
}

template <typename T>
void ModelOps<T>::narrow(T* dst, const float* src, int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    copy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
  else
    launch_op(rt_, stream_, "narrow", ops::CastElements<T, float>{dst, src, n}, {span(src, n)}, {span(dst, n)});
}

template <typename T>
kernels::TokenView ModelOps<T>::tokens(TokenGrid grid, const kernels::TokenView& host) {
  const auto g = static_cast<std::size_t>(grid);
  const int64_t n = id_count(host);
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(int32_t);
  if (n == 0) return {nullptr, host.rows, host.cols, host.cols};
  if (ids_pending_[g]) synchronize();  // its staging may still be read by the last copy
  if (rt_.host_memory()) return host;  // the ops read host memory: the view itself
  const char* what = grid == TokenGrid::inputs ? "input ids" : "target ids";
  auto* dev = reinterpret_cast<int32_t*>(ids_[g].at_least(rt_, bytes, what));
  auto* staged = reinterpret_cast<int32_t*>(ids_pinned_[g].at_least(rt_, bytes, what));
  // the rows side by side (a batch's views have a row stride of T+1): a compact [B,T] copy
  for (int64_t b = 0; b < host.rows; ++b)
    std::memcpy(staged + b * host.cols, host.data + b * host.stride,
                static_cast<std::size_t>(host.cols) * sizeof(int32_t));
  rt_.copy_async(dev, staged, bytes, device::CopyKind::host_to_device, stream_);
  ids_pending_[g] = true;
  return {dev, host.rows, host.cols, host.cols};
}

template <typename T>
void ModelOps<T>::embedding_forward(T* out, const kernels::TokenView& tokens, const T* wte, const T* wpe, int64_t vocab,
                                    int64_t C) {
  const int64_t N = id_count(tokens);
  launch_op(rt_, stream_, "embedding_forward", ops::EmbeddingForwardElements<T>{out, tokens, wte, wpe, vocab, C},
            {span(tokens.data, N), span(wte, vocab * C), span(wpe, tokens.cols * C)}, {span(out, N * C)});
}

template <typename T>
void ModelOps<T>::embedding_backward(T* dwte, T* dwpe, const T* dx, const kernels::TokenView& tokens, int64_t vocab,
                                     int64_t C, float* scratch, int32_t* iscratch) {
  (void)scratch;  // the threads sum straight from dx
  const int64_t B = tokens.rows, Tc = tokens.cols, N = B * Tc;
  int32_t* start = iscratch;              // [V+1] group boundaries, as the CPU kernel lays them out
  int32_t* order = iscratch + vocab + 1;  // [N] positions grouped by token
  launch_op(rt_, stream_, "embedding_dwpe", ops::EmbeddingDwpeElements<T>{dwpe, dx, B, Tc, C}, {span(dx, N * C)},
            {span(dwpe, Tc * C)});
  launch_op(rt_, stream_, "embedding_group_positions", ops::EmbeddingGroupPositions{start, order, tokens, vocab},
            {span(tokens.data, N)}, {span(start, vocab + 1), span(order, N)});
  launch_op(rt_, stream_, "embedding_dwte", ops::EmbeddingDwteElements<T>{dwte, dx, start, order, vocab, C},
            {span(dx, N * C), span(start, vocab + 1), span(order, N), span(dwte, vocab * C)}, {span(dwte, vocab * C)});
}

template <typename T>
void ModelOps<T>::layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N,
                                    int64_t C) {
  launch_op(rt_, stream_, "layernorm_forward", ops::LayerNormForwardBlocks<T>{out, mean, rstd, in, w, b, N, C},
            {span(in, N * C), span(w, C), span(b, C)}, {span(out, N * C), span(mean, N), span(rstd, N)});
}

template <typename T>
void ModelOps<T>::layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean,
                                     const float* rstd, const T* w, int64_t N, int64_t C, float* scratch) {
  const std::vector<device::DeviceSpan> cached = {span(dout, N * C), span(in, N * C), span(mean, N), span(rstd, N)};
  std::vector<device::DeviceSpan> row_reads = cached;
  row_reads.push_back(span(w, C));
  launch_op(rt_, stream_, "layernorm_backward_rows",
            ops::LayerNormBackwardBlocks<T>{din, dout, in, mean, rstd, w, N, C}, row_reads, {span(din, N * C)});
  launch_op(rt_, stream_, "layernorm_param_grad",
            ops::LayerNormParamGradTiles<T>{dw, db, dout, in, mean, rstd, N, C, scratch}, cached,
            {span(dw, C), span(db, C)});
}

template <typename T>
void ModelOps<T>::gelu_forward(T* y, const T* x, int64_t n) {
  launch_op(rt_, stream_, "gelu_forward", ops::GeluForwardElements<T>{y, x, n}, {span(x, n)}, {span(y, n)});
}

template <typename T>
void ModelOps<T>::gelu_backward(T* dx, const T* dy, const T* x, int64_t n) {
  launch_op(rt_, stream_, "gelu_backward", ops::GeluBackwardElements<T>{dx, dy, x, n}, {span(dy, n), span(x, n)},
            {span(dx, n)});
}

template <typename T>
void ModelOps<T>::residual_forward(T* out, const T* a, const T* b, int64_t n) {
  launch_op(rt_, stream_, "residual_forward", ops::ResidualForwardElements<T>{out, a, b, n}, {span(a, n), span(b, n)},
            {span(out, n)});
}

template <typename T>
void ModelOps<T>::residual_grad_join(T* skip, const T* branch, int64_t n) {
  // the join is the residual add with the skip path as both an input and the output
  launch_op(rt_, stream_, "residual_grad_join", ops::ResidualForwardElements<T>{skip, skip, branch, n},
            {span(skip, n), span(branch, n)}, {span(skip, n)});
}

template <typename T>
void ModelOps<T>::cross_entropy_forward(float* loss, float* row_max, float* row_sum, const T* logits,
                                        const kernels::TokenView& targets, int64_t V) {
  const int64_t N = id_count(targets);
  launch_op(rt_, stream_, "cross_entropy_forward",
            ops::CrossEntropyForwardBlocks<T>{loss, row_max, row_sum, logits, targets, V},
            {span(logits, N * V), span(targets.data, N)}, {span(loss, N), span(row_max, N), span(row_sum, N)});
}

template <typename T>
void ModelOps<T>::cross_entropy_backward(T* dlogits, const T* logits, const float* row_max, const float* row_sum,
                                         const kernels::TokenView& targets, int64_t V, float grad_scale) {
  const int64_t N = id_count(targets);
  launch_op(rt_, stream_, "cross_entropy_backward",
            ops::CrossEntropyBackwardElements<T>{dlogits, logits, row_max, row_sum, targets, V, grad_scale},
            {span(logits, N * V), span(row_max, N), span(row_sum, N), span(targets.data, N)}, {span(dlogits, N * V)});
}

template <typename T>
void ModelOps<T>::argmax_rows(int32_t* out, const T* logits, int64_t N, int64_t V) {
  if (N == 0) return;
  if (rt_.host_memory())  // the ops write host memory: straight into out
    return launch_op(rt_, stream_, "argmax_rows", ops::ArgmaxRows<T>{out, logits, N, V}, {span(logits, N * V)},
                     {span(out, N)});
  const std::size_t bytes = static_cast<std::size_t>(N) * sizeof(int32_t);
  auto* ids = reinterpret_cast<int32_t*>(argmax_.at_least(rt_, bytes, "predicted ids"));
  auto* staged = argmax_pinned_.at_least(rt_, bytes, "predicted ids");
  launch_op(rt_, stream_, "argmax_rows", ops::ArgmaxRows<T>{ids, logits, N, V}, {span(logits, N * V)}, {span(ids, N)});
  rt_.copy_async(staged, ids, bytes, device::CopyKind::device_to_host, stream_);
  synchronize();
  std::memcpy(out, staged, bytes);
}

template <typename T>
float ModelOps<T>::loss_sum(const float* losses, int64_t n) {
  if (n == 0) return 0.0f;
  const float* staged = losses;  // on the host runtime the losses themselves
  if (!rt_.host_memory()) {
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    auto* pinned = reinterpret_cast<float*>(losses_pinned_.at_least(rt_, bytes, "token losses"));
    rt_.copy_async(pinned, losses, bytes, device::CopyKind::device_to_host, stream_);
    synchronize();
    staged = pinned;
  }
  // the host's sum: the same tree over the same FP32 leaves on every runtime
  return kernels::canonical_sum_f(static_cast<std::size_t>(n), [&](std::size_t i) { return staged[i]; });
}

template <typename T>
void ModelOps<T>::copy(void* dst, const void* src, std::size_t bytes) {
  rt_.copy_async(dst, src, bytes, device::CopyKind::device_to_device, stream_);
}

template <typename T>
ModelOps<T>& host_model_ops() {
  static device::HostRuntime host;  // constructed first, so it outlives the ops
  static ModelOps<T> ops(host, host.create_stream("model"));
  return ops;
}

template class ModelOps<float>;
template class ModelOps<fp16>;
template class ModelOps<bf16>;
template ModelOps<float>& host_model_ops<float>();
template ModelOps<fp16>& host_model_ops<fp16>();
template ModelOps<bf16>& host_model_ops<bf16>();

}  // namespace zt::model
