// model/device_ops.h — the model's ops on a device runtime (device/runtime.h): every op is
// enqueued as kernels on one compute stream, so a Gpt<T> whose Workspace, parameters, gradients
// and checkpoints are device memory runs its unchanged forward and backward there.
//
// What runs: the block ops of ops/ and the item ops of ops/*_items.h (one thread per element or
// row, the CPU kernels' own ZT_HD bodies), launched through ops/op_launch.h, and the GEMMs and
// triangular products of the linear layers and attention as the GEMM `--gemm` names
// (model/device_launch.h): the canonical GEMM's one-thread-per-element bodies
// (gemm/canonical_gemm_kernel.h), or the vendor's GEMM. Each op makes the roundings its CPU kernel
// makes, in the same order: 16-bit inputs widened exactly into the same FP32 scratch, the FP32
// GEMM, bias added in FP32, one rounding to T. So with the canonical GEMM (`--gemm canonical`, the
// default) every bit equals HostOps'; with `--gemm blas` the emulated device's GEMM is the host's
// OpenBLAS call (the host's bits on the same CPU), a GPU's is cuBLAS (its own bits).
//
// Token ids: tokens() copies a [B,T] view into a device buffer these ops own (two, one for the
// inputs and one for the targets), through pinned staging they own too. Not the Workspace's: its
// sizes are the memory ledger's exact prediction of activations and scratch, and the ids (2 B T
// int32) belong to no op's scratch. A staging buffer is rewritten only once its last copy is known
// to be done: after a synchronize of the stream, which loss_sum() makes in every forward; a
// tokens() call that finds its buffer's copy still pending synchronises first (in a training loop:
// a forward after the previous backward waits for that backward's kernels).
//
// Crossings to the host: loss_sum() and argmax_rows() copy to pinned memory and synchronise the
// stream; nothing else waits. copy() is a device-to-device copy on the stream. Work of the
// caller's on other streams (parameters uploaded or gathered, gradients taken away) is ordered
// against this stream by the caller's events, as the emulated device's race checker demands.
//
// Tensor parallelism: the split Linears with J blocks held here run block by block as on the host
// (kernels/parallel_linear.h), their gathers, scatters and the sum over blocks as item ops
// (ops/parallel_linear_items.h). A FinishBlockSum receives the FP32 partial sum in device
// memory, with everything before it enqueued on this stream: the caller's group must take device
// buffers and order itself after the stream (collective/staged_collective.h does both).
//
// LayerNorm, the cross-entropy forward and, with `--gemm canonical`, attention are block ops of ops/ (a block per row,
// per tile of columns, per (batch, head, position): one attention launch forward and two backward); under `--gemm
// blas` attention runs head by head through the vendor's GEMM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "device/runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "model/model_ops.h"

namespace zt::model {

/// The model's ops as kernels on one stream of a device runtime (see the file comment). One
/// instance serves one model on one host thread at a time (its staging buffers are its state).
template <typename T>
class DeviceOps final : public ModelOps<T> {
 public:
  /// @param runtime the device (kept by reference; it must outlive these ops).
  /// @param stream the compute stream every op is enqueued on.
  DeviceOps(device::Runtime& runtime, device::Stream stream);
  /// Frees the ops' own buffers (the runtime waits for queued work first).
  ~DeviceOps() override;
  DeviceOps(const DeviceOps&) = delete;
  DeviceOps& operator=(const DeviceOps&) = delete;

  /// @param grid which of the two device buffers. @param host the ids, host memory.
  /// @return a compact [B,T] view of the device copy.
  kernels::TokenView tokens(TokenGrid grid, const kernels::TokenView& host) override;
  void embedding_forward(T* out, const kernels::TokenView& tokens, const T* wte, const T* wpe, int64_t vocab,
                         int64_t C) override;
  void embedding_backward(T* dwte, T* dwpe, const T* dx, const kernels::TokenView& tokens, int64_t vocab, int64_t C,
                          float* scratch, int32_t* iscratch) override;
  void layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N,
                         int64_t C) override;
  void layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                          const T* w, int64_t N, int64_t C, float* scratch) override;
  void linear_forward(T* y, const T* x, const T* W, const T* b, int64_t N, int64_t in, int64_t out,
                      float* scratch) override;
  void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, int64_t N, int64_t in, int64_t out,
                       float* scratch) override;
  void column_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                               int64_t in, int64_t G, int64_t outb, float* scratch) override;
  void column_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, const T* dy, const T* x,
                                const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N, int64_t in, int64_t G,
                                int64_t outb, const kernels::FinishBlockSum& finish_sum, float* scratch) override;
  void row_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, const T* b, int64_t N,
                            int64_t inb, int64_t out, const kernels::FinishBlockSum& finish_sum,
                            float* scratch) override;
  void row_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, T* db, const T* dy,
                             const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N, int64_t inb,
                             int64_t out, float* scratch) override;
  void attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H,
                         float* scratch) override;
  void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* P, int64_t B, int64_t Tc, int64_t C, int64_t H,
                          float* scratch) override;
  void gelu_forward(T* y, const T* x, int64_t n) override;
  void gelu_backward(T* dx, const T* dy, const T* x, int64_t n) override;
  void residual_forward(T* out, const T* a, const T* b, int64_t n) override;
  void residual_grad_join(T* skip, const T* branch, int64_t n) override;
  void cross_entropy_forward(float* loss, float* row_max, float* row_sum, const T* logits,
                             const kernels::TokenView& targets, int64_t V) override;
  void cross_entropy_backward(T* dlogits, const T* logits, const float* row_max, const float* row_sum,
                              const kernels::TokenView& targets, int64_t V, float grad_scale) override;
  void argmax_rows(int32_t* out, const T* logits, int64_t N, int64_t V) override;
  float loss_sum(const float* losses, int64_t n) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;

 private:
  void synchronize();  // the stream; every staging copy is done after it
  // src in FP32: src itself for float, else `stage` filled with it (exact)
  const float* widen(float* stage, const T* src, int64_t n);
  void narrow(T* dst, const float* src, int64_t n);        // dst = src rounded once to T
  void sum_blocks(float* partials, int64_t n, int64_t J);  // the canonical tree over J blocks, into block 0

  device::Runtime& rt_;
  device::Stream stream_;
  device::Room ids_[2];                                                // per TokenGrid: the device copy
  device::Room ids_pinned_[2] = {{.pinned = true}, {.pinned = true}};  // and its staging
  bool ids_pending_[2] = {false, false};  // a copy from ids_pinned_[g] may not have run yet
  device::Room argmax_, argmax_pinned_{.pinned = true}, losses_pinned_{.pinned = true};
};

extern template class DeviceOps<float>;
extern template class DeviceOps<fp16>;
extern template class DeviceOps<bf16>;

}  // namespace zt::model
