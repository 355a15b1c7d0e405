// model/model_ops.h — every operation the GPT performs on its tensors, as one interface, so that
// the same forward and backward run wherever the tensors are: on the host (model/host_ops.h: the
// CPU kernels of kernels/, called exactly as before) or on a device runtime (model/device_ops.h:
// the ops of ops/ and the canonical GEMM's body, launched on a stream).
//
// The rule this interface enforces: the model never dereferences a pointer to an activation, a
// parameter, a gradient or the scratch. It only computes addresses (offsets into the Workspace,
// into a unit's parameters) and hands them to an op. Every pointer an op receives lives where the
// ops compute; on a device that is device memory, which host code must not touch (the emulated
// device kills a process that does: device/emulated_runtime.h).
//
// Exactly three things cross between the host and the ops' memory, each through a method named
// for it: token ids (host data: tokens() stages a [B,T] view where the ops can read it), the loss
// sum (loss_sum(): the per-token losses brought to the host and summed there along the canonical
// tree) and the predictions (argmax_rows() writes host memory). Everything else stays put.
//
// The signatures mirror the CPU kernels the model calls, with the same argument meanings and the
// same scratch (the Workspace's FP32 and int32 staging), so gpt_forward.cc and gpt_backward.cc
// read as the kernels' calls with `ops.` in front, and an implementation must fit in the scratch
// the Workspace already sizes for the CPU kernels. No zero fill: the model overwrites everything
// it reads, and memsets nothing.
//
// Not here: how an op computes (kernels/, ops/), allocation (the caller's Workspace and
// ParamProvider), collectives (a FinishBlockSum is the caller's), which runtime (the caller's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/parallel_linear.h"
#include "kernels/tokens.h"

namespace zt::model {

/// Which token grid a tokens() call stages: inputs and targets are kept apart, so that both of
/// one pass are readable at once.
enum class TokenGrid { inputs, targets };

/// The operations of a GPT's forward and backward (see the file comment). Each op's arguments
/// mean what the CPU kernel's of the same name mean (kernels/*.h); pointers are in the ops' memory
/// unless a comment says "host".
template <typename T>
class ModelOps {
 public:
  virtual ~ModelOps() = default;

  /// A [B,T] token view readable by the ops: the host view itself on the host; on a device a
  /// copy in device memory, valid until the next tokens() call for the same grid.
  /// @param grid inputs or targets. @param host the ids, host memory. @return the view to use.
  virtual kernels::TokenView tokens(TokenGrid grid, const kernels::TokenView& host) = 0;

  /// kernels::embedding_forward. @param out [B,T,C]. @param tokens [B,T] ids (from tokens()).
  /// @param wte [V,C]. @param wpe [>=T,C]. @param vocab V. @param C width.
  virtual void embedding_forward(T* out, const kernels::TokenView& tokens, const T* wte, const T* wpe, int64_t vocab,
                                 int64_t C) = 0;
  /// kernels::embedding_backward. @param dwte [V,C] head part in, full gradient out.
  /// @param dwpe [>=T,C]. @param dx [B,T,C]. @param tokens [B,T] ids (from tokens()).
  /// @param vocab V. @param C width. @param scratch FP32 staging. @param iscratch int32 staging.
  virtual void embedding_backward(T* dwte, T* dwpe, const T* dx, const kernels::TokenView& tokens, int64_t vocab,
                                  int64_t C, float* scratch, int32_t* iscratch) = 0;

  /// kernels::layernorm_forward. @param out [N,C]. @param mean [N]. @param rstd [N].
  /// @param in [N,C]. @param w [C]. @param b [C]. @param N rows. @param C width.
  virtual void layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N,
                                 int64_t C) = 0;
  /// kernels::layernorm_backward. @param din [N,C]. @param dw [C]. @param db [C].
  /// @param dout [N,C]. @param in [N,C]. @param mean [N]. @param rstd [N]. @param w [C].
  /// @param N rows. @param C width. @param scratch FP32 staging.
  virtual void layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean,
                                  const float* rstd, const T* w, int64_t N, int64_t C, float* scratch) = 0;

  /// kernels::linear_forward (the tied head). @param y [N,out]. @param x [N,in]. @param W [out,in].
  /// @param b [out] or null. @param N rows. @param in input width. @param out output width.
  /// @param scratch FP32 staging.
  virtual void linear_forward(T* y, const T* x, const T* W, const T* b, int64_t N, int64_t in, int64_t out,
                              float* scratch) = 0;
  /// kernels::linear_backward. @param dx [N,in]. @param dW [out,in]. @param db [out] or null.
  /// @param dy [N,out]. @param x [N,in]. @param W [out,in]. @param N rows. @param in input width.
  /// @param out output width. @param scratch FP32 staging.
  virtual void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, int64_t N, int64_t in,
                               int64_t out, float* scratch) = 0;

  /// kernels::column_parallel_forward. @param y [N,G·J·outb]. @param x [N,in]. @param blocks J.
  /// @param N rows. @param in input width. @param G groups. @param outb per block and group.
  /// @param scratch FP32 staging.
  virtual void column_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                                       int64_t in, int64_t G, int64_t outb, float* scratch) = 0;
  /// kernels::column_parallel_backward. @param dx [N,in]. @param grads J slots. @param dy
  /// [N,G·J·outb]. @param x [N,in]. @param blocks J. @param N rows. @param in input width.
  /// @param G groups. @param outb per block and group. @param finish_sum completes the block sum
  /// (may be empty). @param scratch FP32 staging.
  virtual void column_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, const T* dy,
                                        const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                                        int64_t in, int64_t G, int64_t outb, const kernels::FinishBlockSum& finish_sum,
                                        float* scratch) = 0;
  /// kernels::row_parallel_forward. @param y [N,out]. @param x [N,J·inb]. @param blocks J.
  /// @param b [out] or null. @param N rows. @param inb per block. @param out output width.
  /// @param finish_sum completes the block sum (may be empty). @param scratch FP32 staging.
  virtual void row_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, const T* b,
                                    int64_t N, int64_t inb, int64_t out, const kernels::FinishBlockSum& finish_sum,
                                    float* scratch) = 0;
  /// kernels::row_parallel_backward. @param dx [N,J·inb]. @param grads J slots. @param db [out]
  /// or null. @param dy [N,out]. @param x [N,J·inb]. @param blocks J. @param N rows.
  /// @param inb per block. @param out output width. @param scratch FP32 staging.
  virtual void row_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, T* db, const T* dy,
                                     const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                                     int64_t inb, int64_t out, float* scratch) = 0;

  /// kernels::attention_forward. @param out [B,T,C]. @param P [B,H,T,T]. @param qkv [B,T,3C].
  /// @param B batch. @param Tc context. @param C width. @param H heads. @param scratch FP32 staging.
  virtual void attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H,
                                 float* scratch) = 0;
  /// kernels::attention_backward. @param dqkv [B,T,3C]. @param dout [B,T,C]. @param qkv
  /// [B,T,3C]. @param P [B,H,T,T]. @param B batch. @param Tc context. @param C width.
  /// @param H heads. @param scratch FP32 staging.
  virtual void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* P, int64_t B, int64_t Tc, int64_t C,
                                  int64_t H, float* scratch) = 0;

  /// kernels::gelu_forward. @param y [n] (may be x). @param x [n]. @param n count.
  virtual void gelu_forward(T* y, const T* x, int64_t n) = 0;
  /// kernels::gelu_backward. @param dx [n] (may be dy). @param dy [n]. @param x [n]. @param n count.
  virtual void gelu_backward(T* dx, const T* dy, const T* x, int64_t n) = 0;

  /// kernels::residual_forward. @param out [n] (may alias a or b). @param a [n]. @param b [n].
  /// @param n count.
  virtual void residual_forward(T* out, const T* a, const T* b, int64_t n) = 0;
  /// kernels::residual_grad_join. @param skip [n] in and out. @param branch [n]. @param n count.
  virtual void residual_grad_join(T* skip, const T* branch, int64_t n) = 0;

  /// kernels::cross_entropy_forward. @param loss [N]. @param row_max [N]. @param row_sum [N].
  /// @param logits [N,V]. @param targets [B,T] ids (from tokens()). @param V classes.
  virtual void cross_entropy_forward(float* loss, float* row_max, float* row_sum, const T* logits,
                                     const kernels::TokenView& targets, int64_t V) = 0;
  /// kernels::cross_entropy_backward. @param dlogits [N,V]. @param logits [N,V].
  /// @param row_max [N]. @param row_sum [N]. @param targets [B,T] ids (from tokens()).
  /// @param V classes. @param grad_scale the seed gradient.
  virtual void cross_entropy_backward(T* dlogits, const T* logits, const float* row_max, const float* row_sum,
                                      const kernels::TokenView& targets, int64_t V, float grad_scale) = 0;

  /// kernels::argmax_rows, delivered to the host: returns once `out` holds the ids.
  /// @param out [N] ids, HOST memory (written). @param logits [N,V]. @param N rows. @param V classes.
  virtual void argmax_rows(int32_t* out, const T* logits, int64_t N, int64_t V) = 0;

  /// The canonical sum (kernels::canonical_sum_f, position order) of n per-token losses, on the
  /// host: on a device the losses are copied to pinned host memory and the stream synchronised
  /// first, so this is where a forward waits for its device work.
  /// @param losses [n] FP32 losses. @param n count. @return their sum.
  virtual float loss_sum(const float* losses, int64_t n) = 0;

  /// Copy bytes between two places in the ops' memory (the block output into the residual-stream
  /// buffer, a checkpoint in or out); the ranges do not overlap.
  /// @param dst destination. @param src source. @param bytes how many.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
};

}  // namespace zt::model
