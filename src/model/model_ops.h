// model/model_ops.h — every operation the GPT performs on its tensors, as ops of src/ops enqueued
// on one stream of a runtime (device/runtime.h): the host runtime (device/host_runtime.h: host
// memory, each op run at once over the rank's CPU pool), the emulated device or a GPU. The
// forward and backward (gpt_forward.cc, gpt_backward.cc) are written once, against this class.
//
// The rule it enforces: the model never dereferences a pointer to an activation, a parameter, a
// gradient or the scratch. It only computes addresses (offsets into the Workspace, into a unit's
// parameters) and hands them to an op. Every pointer an op receives lives where the ops compute;
// on a device that is device memory, which host code must not touch (the emulated device kills a
// process that does: device/emulated_runtime.h). Exactly three things cross between the host and
// the ops' memory, each through a method named for it: token ids (tokens()), the loss sum
// (loss_sum(), along the canonical tree on the host) and the predictions (argmax_rows()). On the
// host runtime the three are no copies: the host's memory is the ops' memory.
//
// What runs: the block ops of ops/ and the item ops of ops/*_items.h, launched through
// ops/op_launch.h (on the host runtime an op's host form where it has one: the CPU kernel of
// kernels/ with the same bits), and the linear layers' GEMMs as the GEMM `--gemm` names
// (model/launch.h). Each op makes the roundings its CPU kernel
// makes, in the same order: 16-bit inputs widened exactly into the same FP32 scratch, the FP32
// GEMM, bias added in FP32, one rounding to T. The signatures are the CPU kernels' (kernels/*.h),
// with the same argument meanings and the same scratch (the Workspace's FP32 and int32 staging,
// sized for the CPU kernels); no zero fill: the model overwrites everything it reads.
// So with the canonical GEMM (`--gemm canonical`, the default) every bit is the same on every
// runtime; with `--gemm blas` the host's and the emulated device's GEMM is OpenBLAS (the host's
// bits on the same CPU), a GPU's is cuBLAS (its own bits): for a 16-bit T on a device the linear
// layers hand it the 16-bit tensors themselves (the tensor cores, no widening kernels;
// gemm/half_gemm.h), which the emulated device widens exactly and gives to OpenBLAS.
//
// Token ids on a device: tokens() copies a [B,T] view into a device buffer these ops own (one
// for the inputs, one for the targets), through pinned staging they own too. Not the Workspace's:
// its sizes are the memory ledger's exact prediction of activations and scratch. A staging buffer
// is rewritten only once its last copy is known to be done: after a synchronize of the stream,
// which loss_sum() makes in every forward; a tokens() call that finds its buffer's copy still
// pending synchronises first. loss_sum() and argmax_rows() copy to pinned memory and synchronise;
// nothing else waits. copy() is a copy on the stream. Work on other streams (parameters uploaded
// or gathered, gradients taken away) is ordered against this stream by the caller's events.
//
// Tensor parallelism: the split Linears with J blocks held here run block by block
// (kernels/parallel_linear.h's order), their gathers, scatters and the sum over blocks as item ops
// (ops/parallel_linear_items.h). A FinishBlockSum receives the FP32 partial sum in the ops'
// memory, with everything before it enqueued on this stream.
//
// LayerNorm, the cross-entropy forward and attention (under either `--gemm`: its products are
// always the canonical chains) are block ops (a block per row, per tile of columns, per (batch,
// head, position)). On the host runtime attention is one launch of the CPU kernel
// (kernels/attention.h: per head through the CPU's canonical GEMM), the same bits as the block
// ops, which would run their threads one by one there.
//
// Not here: how an op computes (ops/, kernels/), allocation (the caller's Workspace and
// ParamProvider), collectives (a FinishBlockSum is the caller's), which runtime (the caller's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "device/runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "kernels/parallel_linear.h"
#include "kernels/tokens.h"
#include "ops/op_launch.h"

namespace zt::model {

/// Which token grid a tokens() call stages: inputs and targets are kept apart, so that both of
/// one pass are readable at once.
enum class TokenGrid { inputs, targets };

/// The model's ops as kernels on one stream of a runtime (see the file comment). On a device one
/// instance serves one model on one host thread at a time (its staging buffers are its state); on
/// the host runtime it holds no state, and any number of models and threads may share one.
template <typename T>
class ModelOps {
 public:
  /// @param runtime the device (kept by reference; it must outlive these ops).
  /// @param stream the compute stream every op is enqueued on.
  ModelOps(device::Runtime& runtime, device::Stream stream);
  /// Frees the ops' own buffers (the runtime waits for queued work first).
  ~ModelOps();
  ModelOps(const ModelOps&) = delete;
  ModelOps& operator=(const ModelOps&) = delete;

  /// A [B,T] token view readable by the ops: the host view itself on the host runtime; on a
  /// device a copy in device memory, valid until the next tokens() call for the same grid.
  /// @param grid inputs or targets. @param host the ids, host memory. @return the view to use.
  kernels::TokenView tokens(TokenGrid grid, const kernels::TokenView& host);

  /// kernels::embedding_forward. @param out [B,T,C]. @param tokens [B,T] ids (from tokens()).
  /// @param wte [V,C]. @param wpe [>=T,C]. @param vocab V. @param C width.
  void embedding_forward(T* out, const kernels::TokenView& tokens, const T* wte, const T* wpe, int64_t vocab,
                         int64_t C);
  /// kernels::embedding_backward. @param dwte [V,C] head part in, full gradient out.
  /// @param dwpe [>=T,C]. @param dx [B,T,C]. @param tokens [B,T] ids (from tokens()).
  /// @param vocab V. @param C width. @param scratch FP32 staging. @param iscratch int32 staging.
  void embedding_backward(T* dwte, T* dwpe, const T* dx, const kernels::TokenView& tokens, int64_t vocab, int64_t C,
                          float* scratch, int32_t* iscratch);

  /// kernels::layernorm_forward. @param out [N,C]. @param mean [N]. @param rstd [N].
  /// @param in [N,C]. @param w [C]. @param b [C]. @param N rows. @param C width.
  void layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N, int64_t C);
  /// kernels::layernorm_backward. @param din [N,C]. @param dw [C]. @param db [C].
  /// @param dout [N,C]. @param in [N,C]. @param mean [N]. @param rstd [N]. @param w [C].
  /// @param N rows. @param C width. @param scratch FP32 staging.
  void layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                          const T* w, int64_t N, int64_t C, float* scratch);

  /// kernels::linear_forward (the tied head). @param y [N,out]. @param x [N,in]. @param W [out,in].
  /// @param b [out] or null. @param N rows. @param in input width. @param out output width.
  /// @param scratch FP32 staging.
  void linear_forward(T* y, const T* x, const T* W, const T* b, int64_t N, int64_t in, int64_t out, float* scratch);
  /// kernels::linear_backward. @param dx [N,in]. @param dW [out,in]. @param db [out] or null.
  /// @param dy [N,out]. @param x [N,in]. @param W [out,in]. @param N rows. @param in input width.
  /// @param out output width. @param scratch FP32 staging.
  void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, int64_t N, int64_t in, int64_t out,
                       float* scratch);

  /// kernels::column_parallel_forward. @param y [N,G·J·outb]. @param x [N,in]. @param blocks J.
  /// @param N rows. @param in input width. @param G groups. @param outb per block and group.
  /// @param scratch FP32 staging.
  void column_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                               int64_t in, int64_t G, int64_t outb, float* scratch);
  /// kernels::column_parallel_backward. @param dx [N,in]. @param grads J slots. @param dy
  /// [N,G·J·outb]. @param x [N,in]. @param blocks J. @param N rows. @param in input width.
  /// @param G groups. @param outb per block and group. @param finish_sum completes the block sum
  /// (may be empty). @param scratch FP32 staging.
  void column_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, const T* dy, const T* x,
                                const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N, int64_t in, int64_t G,
                                int64_t outb, const kernels::FinishBlockSum& finish_sum, float* scratch);
  /// kernels::row_parallel_forward. @param y [N,out]. @param x [N,J·inb]. @param blocks J.
  /// @param b [out] or null. @param N rows. @param inb per block. @param out output width.
  /// @param finish_sum completes the block sum (may be empty). @param scratch FP32 staging.
  void row_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, const T* b, int64_t N,
                            int64_t inb, int64_t out, const kernels::FinishBlockSum& finish_sum, float* scratch);
  /// kernels::row_parallel_backward. @param dx [N,J·inb]. @param grads J slots. @param db [out]
  /// or null. @param dy [N,out]. @param x [N,J·inb]. @param blocks J. @param N rows.
  /// @param inb per block. @param out output width. @param scratch FP32 staging.
  void row_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, T* db, const T* dy,
                             const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N, int64_t inb,
                             int64_t out, float* scratch);

  /// kernels::attention_forward. @param out [B,T,C]. @param P [B,H,T,T]. @param qkv [B,T,3C].
  /// @param B batch. @param Tc context. @param C width. @param H heads. @param scratch FP32 staging.
  void attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H, float* scratch);
  /// kernels::attention_backward. @param dqkv [B,T,3C]. @param dout [B,T,C]. @param qkv
  /// [B,T,3C]. @param P [B,H,T,T]. @param B batch. @param Tc context. @param C width.
  /// @param H heads. @param scratch FP32 staging.
  void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* P, int64_t B, int64_t Tc, int64_t C, int64_t H,
                          float* scratch);

  /// kernels::gelu_forward. @param y [n] (may be x). @param x [n]. @param n count.
  void gelu_forward(T* y, const T* x, int64_t n);
  /// kernels::gelu_backward. @param dx [n] (may be dy). @param dy [n]. @param x [n]. @param n count.
  void gelu_backward(T* dx, const T* dy, const T* x, int64_t n);

  /// kernels::residual_forward. @param out [n] (may alias a or b). @param a [n]. @param b [n].
  /// @param n count.
  void residual_forward(T* out, const T* a, const T* b, int64_t n);
  /// kernels::residual_grad_join. @param skip [n] in and out. @param branch [n]. @param n count.
  void residual_grad_join(T* skip, const T* branch, int64_t n);

  /// kernels::cross_entropy_forward. @param loss [N]. @param row_max [N]. @param row_sum [N].
  /// @param logits [N,V]. @param targets [B,T] ids (from tokens()). @param V classes.
  void cross_entropy_forward(float* loss, float* row_max, float* row_sum, const T* logits,
                             const kernels::TokenView& targets, int64_t V);
  /// kernels::cross_entropy_backward. @param dlogits [N,V]. @param logits [N,V].
  /// @param row_max [N]. @param row_sum [N]. @param targets [B,T] ids (from tokens()).
  /// @param V classes. @param grad_scale the seed gradient.
  void cross_entropy_backward(T* dlogits, const T* logits, const float* row_max, const float* row_sum,
                              const kernels::TokenView& targets, int64_t V, float grad_scale);

  /// kernels::argmax_rows, delivered to the host: returns once `out` holds the ids.
  /// @param out [N] ids, HOST memory (written). @param logits [N,V]. @param N rows. @param V classes.
  void argmax_rows(int32_t* out, const T* logits, int64_t N, int64_t V);

  /// The canonical sum (kernels::canonical_sum_f, position order) of n per-token losses, on the
  /// host: on a device the losses are copied to pinned host memory and the stream synchronised
  /// first, so this is where a forward waits for its device work.
  /// @param losses [n] FP32 losses. @param n count. @return their sum.
  float loss_sum(const float* losses, int64_t n);

  /// Enqueue one op of ops/ that needs no method of its own (a single launch, no crossing to the
  /// host; ops/op_launch.h). A new operation of the model is its header in src/ops, its line in
  /// ops/cuda/ops_cuda.cu and the model's call of this; it runs on every runtime at once (on the
  /// host its items or blocks over the pool, or its host() form when it has one).
  /// @param name the kernel's name. @param op the op. @param reads the ranges it reads.
  /// @param writes the ranges it writes.
  template <typename Op>
  void launch(const char* name, const Op& op, std::vector<device::DeviceSpan> reads,
              std::vector<device::DeviceSpan> writes) {
    if (!ops::empty_op(op)) rt_.launch(stream_, ops::op_kernel(name, op, std::move(reads), std::move(writes)));
  }

  /// Copy bytes between two places in the ops' memory (the block output into the residual-stream
  /// buffer, a checkpoint in or out); the ranges do not overlap.
  /// @param dst destination. @param src source. @param bytes how many.
  void copy(void* dst, const void* src, std::size_t bytes);

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

/// The process's ModelOps for T on the host runtime: the default of every Gpt<T> (set_ops() says
/// otherwise). Stateless on the host, so shared by every model and thread; each op runs on the
/// calling thread's CPU pool (`--threads`, core/cpu_pool.h), or on the calling thread alone.
/// @return it.
template <typename T>
ModelOps<T>& host_model_ops();

extern template class ModelOps<float>;
extern template class ModelOps<fp16>;
extern template class ModelOps<bf16>;

}  // namespace zt::model
