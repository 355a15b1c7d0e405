// model/host_ops.h — the model's ops on the host: each method calls the CPU kernel of the same
// name with the same arguments (kernels/*.h), so a model on HostOps computes exactly what it
// computed when it called the kernels itself, with the same bits and the same speed (one virtual
// call per op; the ops work on whole tensors).
//
// It is the default of every Gpt<T> (Gpt::set_ops says otherwise). It holds no state: tokens()
// hands the host view back, loss_sum() sums in place, copy() is memcpy. Threads are the kernels'
// own business: each splits its outputs over the pool the calling rank installed (`--threads`,
// core/cpu_pool.h), or runs on the calling thread when there is none. Not here: device memory
// (model/device_ops.h).
#pragma once

#include <cstring>

#include "kernels/attention.h"
#include "kernels/cross_entropy.h"
#include "kernels/embedding.h"
#include "kernels/gelu.h"
#include "kernels/layernorm.h"
#include "kernels/linear.h"
#include "kernels/parallel_linear.h"
#include "kernels/residual.h"
#include "kernels/row_sum.h"
#include "model/model_ops.h"

namespace zt::model {

/// The CPU kernels as ModelOps (see the file comment). Stateless, so one instance may serve any
/// number of models and threads.
template <typename T>
class HostOps final : public ModelOps<T> {
 public:
  /// @param grid unused. @param host the ids. @return host itself: the kernels read host memory.
  kernels::TokenView tokens(TokenGrid grid, const kernels::TokenView& host) override {
    (void)grid;
    return host;
  }
  void embedding_forward(T* out, const kernels::TokenView& tokens, const T* wte, const T* wpe, int64_t vocab,
                         int64_t C) override {
    kernels::embedding_forward(out, tokens, wte, wpe, vocab, C);
  }
  void embedding_backward(T* dwte, T* dwpe, const T* dx, const kernels::TokenView& tokens, int64_t vocab, int64_t C,
                          float* scratch, int32_t* iscratch) override {
    kernels::embedding_backward(dwte, dwpe, dx, tokens, vocab, C, scratch, iscratch);
  }
  void layernorm_forward(T* out, float* mean, float* rstd, const T* in, const T* w, const T* b, int64_t N,
                         int64_t C) override {
    kernels::layernorm_forward(out, mean, rstd, in, w, b, N, C);
  }
  void layernorm_backward(T* din, T* dw, T* db, const T* dout, const T* in, const float* mean, const float* rstd,
                          const T* w, int64_t N, int64_t C, float* scratch) override {
    kernels::layernorm_backward(din, dw, db, dout, in, mean, rstd, w, N, C, scratch);
  }
  void linear_forward(T* y, const T* x, const T* W, const T* b, int64_t N, int64_t in, int64_t out,
                      float* scratch) override {
    kernels::linear_forward(y, x, W, b, N, in, out, scratch);
  }
  void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, int64_t N, int64_t in, int64_t out,
                       float* scratch) override {
    kernels::linear_backward(dx, dW, db, dy, x, W, N, in, out, scratch);
  }
  void column_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                               int64_t in, int64_t G, int64_t outb, float* scratch) override {
    kernels::column_parallel_forward(y, x, blocks, N, in, G, outb, scratch);
  }
  void column_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, const T* dy, const T* x,
                                const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N, int64_t in, int64_t G,
                                int64_t outb, const kernels::FinishBlockSum& finish_sum, float* scratch) override {
    kernels::column_parallel_backward(dx, grads, dy, x, blocks, N, in, G, outb, finish_sum, scratch);
  }
  void row_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, const T* b, int64_t N,
                            int64_t inb, int64_t out, const kernels::FinishBlockSum& finish_sum,
                            float* scratch) override {
    kernels::row_parallel_forward(y, x, blocks, b, N, inb, out, finish_sum, scratch);
  }
  void row_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, T* db, const T* dy,
                             const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N, int64_t inb,
                             int64_t out, float* scratch) override {
    kernels::row_parallel_backward(dx, grads, db, dy, x, blocks, N, inb, out, scratch);
  }
  void attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H,
                         float* scratch) override {
    kernels::attention_forward(out, P, qkv, B, Tc, C, H, scratch);
  }
  void attention_backward(T* dqkv, const T* dout, const T* qkv, const T* P, int64_t B, int64_t Tc, int64_t C, int64_t H,
                          float* scratch) override {
    kernels::attention_backward(dqkv, dout, qkv, P, B, Tc, C, H, scratch);
  }
  void gelu_forward(T* y, const T* x, int64_t n) override { kernels::gelu_forward(y, x, n); }
  void gelu_backward(T* dx, const T* dy, const T* x, int64_t n) override { kernels::gelu_backward(dx, dy, x, n); }
  void residual_forward(T* out, const T* a, const T* b, int64_t n) override { kernels::residual_forward(out, a, b, n); }
  void residual_grad_join(T* skip, const T* branch, int64_t n) override {
    kernels::residual_grad_join(skip, branch, n);
  }
  void cross_entropy_forward(float* loss, float* row_max, float* row_sum, const T* logits,
                             const kernels::TokenView& targets, int64_t V) override {
    kernels::cross_entropy_forward(loss, row_max, row_sum, logits, targets, V);
  }
  void cross_entropy_backward(T* dlogits, const T* logits, const float* row_max, const float* row_sum,
                              const kernels::TokenView& targets, int64_t V, float grad_scale) override {
    kernels::cross_entropy_backward(dlogits, logits, row_max, row_sum, targets, V, grad_scale);
  }
  void argmax_rows(int32_t* out, const T* logits, int64_t N, int64_t V) override {
    kernels::argmax_rows(out, logits, N, V);
  }
  float loss_sum(const float* losses, int64_t n) override {
    return kernels::canonical_sum_f(static_cast<std::size_t>(n), [&](std::size_t i) { return losses[i]; });
  }
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
};

/// The process's one HostOps for T (stateless: shared by every model that has no ops of its own).
/// @return it.
template <typename T>
HostOps<T>& host_ops() {
  static HostOps<T> ops;
  return ops;
}

}  // namespace zt::model
