// model/model_ops_gemm.cc — ModelOps' ops built on GEMMs: the linear layers (the tied head, and
// the split Linears of a block with one block here) and attention, as the canonical GEMM's
// per-element kernels plus the item ops around them.
//
// Each reproduces its CPU kernel's sequence of roundings with the `--gemm canonical` GEMM, in the
// same FP32 scratch at the same offsets (so it needs exactly the floats the Workspace sizes):
//   linear forward:  x, W widened to FP32 (16-bit T only; exact), y_f = x W^T, then the bias
//                    epilogue y = round(y_f + b) (ops/linear_items.h);
//   linear backward: dy, W, x widened, dx_f = dy W and dW_f = dy^T x, each rounded once to T;
//                    db = the canonical column sums of dy (the CPU's row-wise sum, same tree);
//   attention:       whatever `--gemm` says, the canonical chains (kernels/attention.h): on a
//                    device the block ops of ops/attention_blocks.h, one launch forward and two
//                    backward over every sequence and head, scores in shared memory; on the host
//                    runtime one launch of the CPU kernel, per head through the CPU's canonical
//                    GEMM, the same chains and trees.
// For T = float a widening is the identity, so the kernels read the tensors themselves, and a
// result the CPU copies out of scratch unchanged is written in place; the values are the same.
// With `--gemm blas`, a 16-bit T and a device, the linear layers' GEMMs take the 16-bit tensors
// themselves (launch_half_gemm: the GPU's tensor cores; the same products, exact in FP32), so the
// widenings of x, W and dy are not launched; the results are the same FP32 scratch as before.
// With one block and no FinishBlockSum, the column- and row-parallel ops are linear.h's calls
// (kernels/parallel_linear.h says so), and that is what runs here.
#include <type_traits>

#include "kernels/attention.h"
#include "model/launch.h"
#include "model/model_ops.h"
#include "ops/attention_blocks.h"
#include "ops/linear_items.h"
#include "ops/parallel_linear_items.h"

namespace zt::model {

using gemm::Operand;
using launch::launch_gemm;
using launch::launch_half_gemm;
using launch::launch_op;
using launch::span;

namespace {

template <typename T>
constexpr bool kNarrow = !std::is_same_v<T, float>;

// Where an FP32 result that is rounded to T goes: the tensor itself for float, else `stage`.
template <typename T>
float* out_f(T* p, float* stage) {
  if constexpr (std::is_same_v<T, float>) {
    (void)stage;
    return p;
  } else {
    (void)p;
    return stage;
  }
}

}  // namespace

// Whether the linear layers' GEMMs take the 16-bit tensors themselves (launch_half_gemm): with
// `--gemm blas`, a 16-bit compute type and a device (the GPU's tensor cores; on the emulated
// device the host's call on exact widenings). On the host runtime the CPU kernel's own steps run.
template <typename T>
bool half_gemms(const device::Runtime& rt) {
  return kNarrow<T> && kernels::gemm_backend() == kernels::GemmBackend::blas && !rt.host_memory();
}

template <typename T>
void ModelOps<T>::linear_forward(T* y, const T* x, const T* W, const T* b, int64_t N, int64_t in, int64_t out,
                                 float* scratch) {
  // the CPU kernel's scratch: y_f [N,out], then (16-bit) x_f [N,in], W_f [out,in]
  float* y_f = scratch;
  float* x_stage = scratch + N * out;
  float* W_stage = x_stage + N * in;
  if (half_gemms<T>(rt_)) {
    launch_half_gemm(rt_, stream_, "linear_forward x W^T", x, in, false, W, in, true, N, out, in, y_f, out);
  } else {
    const float* x_f = widen(x_stage, x, N * in);
    const float* W_f = widen(W_stage, W, out * in);
    launch_gemm(rt_, stream_, "linear_forward x W^T", Operand{x_f, in, false}, Operand{W_f, in, true}, N, out, in, y_f,
                out);
  }
  std::vector<device::DeviceSpan> reads = {span(y_f, N * out)};
  if (b) reads.push_back(span(b, out));
  launch_op(rt_, stream_, "linear_bias", ops::LinearBiasElements<T>{y, y_f, b, N, out}, reads, {span(y, N * out)});
}

template <typename T>
void ModelOps<T>::linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, int64_t N, int64_t in,
                                  int64_t out, float* scratch) {
  // the CPU kernel's scratch: dy_f [N,out], then (16-bit) W_f [out,in], x_f [N,in], dx_f [N,in],
  // dW_f [out,in]
  float* dy_stage = scratch;
  float* W_stage = scratch + N * out;
  float* x_stage = W_stage + out * in;
  float* dx_stage = x_stage + N * in;
  float* dW_stage = dx_stage + N * in;
  float* dx_f = out_f(dx, dx_stage);
  float* dW_f = out_f(dW, dW_stage);
  if (half_gemms<T>(rt_)) {  // dx = dy W and dW = dy^T x from the 16-bit tensors themselves
    launch_half_gemm(rt_, stream_, "linear_backward dy W", dy, out, false, W, in, false, N, in, out, dx_f, in);
    launch_half_gemm(rt_, stream_, "linear_backward dy^T x", dy, out, true, x, in, false, out, in, N, dW_f, in);
  } else {
    const float* dy_f = widen(dy_stage, dy, N * out);
    const float* W_f = widen(W_stage, W, out * in);
    const float* x_f = widen(x_stage, x, N * in);
    launch_gemm(rt_, stream_, "linear_backward dy W", Operand{dy_f, out, false}, Operand{W_f, in, false}, N, in, out,
                dx_f, in);
    launch_gemm(rt_, stream_, "linear_backward dy^T x", Operand{dy_f, out, true}, Operand{x_f, in, false}, out, in, N,
                dW_f, in);
  }
  if constexpr (kNarrow<T>) {
    narrow(dx, dx_f, N * in);
    narrow(dW, dW_f, out * in);
  }
  if (db)
    launch_op(rt_, stream_, "linear_bias_grad", ops::LinearBiasGradColumns<T>{db, dy, N, out, dy_stage},
              {span(dy, N * out)}, {span(db, out)});
}

template <typename T>
void ModelOps<T>::column_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks,
                                          int64_t N, int64_t in, int64_t G, int64_t outb, float* scratch) {
  const auto J = static_cast<int64_t>(blocks.size());
  const int64_t ob = G * outb;
  if (J == 1) return linear_forward(y, x, blocks[0].W, blocks[0].b, N, in, ob, scratch);
  // the CPU kernel's scratch: y_f [N,ob], then (16-bit) x_f [N,in], W_f [ob,in]
  float* y_f = scratch;
  float* x_stage = y_f + N * ob;
  float* W_stage = x_stage + (kNarrow<T> ? N * in : 0);
  const float* x_f = widen(x_stage, x, N * in);
  for (int64_t j = 0; j < J; ++j) {
    const float* W_f = widen(W_stage, blocks[j].W, ob * in);
    launch_gemm(rt_, stream_, "column_parallel_forward x W_j^T", Operand{x_f, in, false}, Operand{W_f, in, true}, N, ob,
                in, y_f, ob);
    std::vector<device::DeviceSpan> reads = {span(y_f, N * ob)};
    if (blocks[j].b) reads.push_back(span(blocks[j].b, ob));
    launch_op(rt_, stream_, "column_parallel_scatter",
              ops::BlockColumnsNarrow<T>{y, y_f, blocks[j].b, N, G, J, j, outb}, reads, {span(y, N * J * ob)});
  }
}

template <typename T>
void ModelOps<T>::column_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, const T* dy,
                                           const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, int64_t N,
                                           int64_t in, int64_t G, int64_t outb,
                                           const kernels::FinishBlockSum& finish_sum, float* scratch) {
  const auto J = static_cast<int64_t>(blocks.size());
  const int64_t ob = G * outb;
  if (J == 1 && !finish_sum)
    return linear_backward(dx, grads[0].dW, grads[0].db, dy, x, blocks[0].W, N, in, ob, scratch);
  // the CPU kernel's scratch: dy_f [N,ob], then (16-bit) W_f [ob,in], x_f [N,in], dW_f [ob,in],
  // then the J partial input gradients [N,in] each (FP32 with one block: dx itself)
  float* dy_f = scratch;
  float* W_stage = dy_f + N * ob;
  float* x_stage = W_stage + (kNarrow<T> ? ob * in : 0);
  float* dW_stage = x_stage + (kNarrow<T> ? N * in : 0);
  float* partials = dW_stage + (kNarrow<T> ? ob * in : 0);
  if constexpr (!kNarrow<T>)
    if (J == 1) partials = reinterpret_cast<float*>(dx);
  const float* x_f = widen(x_stage, x, N * in);
  for (int64_t j = 0; j < J; ++j) {
    launch_op(rt_, stream_, "column_parallel_gather dy_j", ops::BlockColumnsWiden<T>{dy_f, dy, N, G, J, j, outb},
              {span(dy, N * J * ob)}, {span(dy_f, N * ob)});
    const float* W_f = widen(W_stage, blocks[j].W, ob * in);
    float* dW_f = out_f(grads[j].dW, dW_stage);
    launch_gemm(rt_, stream_, "column_parallel_backward dy_j W_j", Operand{dy_f, ob, false}, Operand{W_f, in, false}, N,
                in, ob, partials + j * N * in, in);
    launch_gemm(rt_, stream_, "column_parallel_backward dy_j^T x", Operand{dy_f, ob, true}, Operand{x_f, in, false}, ob,
                in, N, dW_f, in);
    if constexpr (kNarrow<T>) narrow(grads[j].dW, dW_f, ob * in);
    if (grads[j].db)
      launch_op(rt_, stream_, "column_parallel_bias_grad", ops::BiasGradColumnsF<T>{grads[j].db, dy_f, N, ob},
                {span(dy_f, N * ob)}, {span(grads[j].db, ob)});
  }
  sum_blocks(partials, N * in, J);
  if (finish_sum) finish_sum(partials, static_cast<std::size_t>(N * in));  // on this stream's order (the group stages)
  if (kNarrow<T> || partials != reinterpret_cast<float*>(dx)) narrow(dx, partials, N * in);
}

template <typename T>
void ModelOps<T>::row_parallel_forward(T* y, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks, const T* b,
                                       int64_t N, int64_t inb, int64_t out, const kernels::FinishBlockSum& finish_sum,
                                       float* scratch) {
  const auto J = static_cast<int64_t>(blocks.size());
  if (J == 1 && !finish_sum) return linear_forward(y, x, blocks[0].W, b, N, inb, out, scratch);
  // the CPU kernel's scratch: the J partial outputs [N,out] each, then x_j [N,inb] (16-bit or
  // several blocks), then (16-bit) W_j [out,inb]
  float* partials = scratch;
  float* x_stage = partials + J * N * out;
  float* W_stage = x_stage + (kNarrow<T> || J > 1 ? N * inb : 0);
  for (int64_t j = 0; j < J; ++j) {
    const float* x_f = x_stage;
    if (J > 1)
      launch_op(rt_, stream_, "row_parallel_gather x_j", ops::BlockColumnsWiden<T>{x_stage, x, N, 1, J, j, inb},
                {span(x, N * J * inb)}, {span(x_stage, N * inb)});
    else
      x_f = widen(x_stage, x, N * inb);
    const float* W_f = widen(W_stage, blocks[j].W, out * inb);
    launch_gemm(rt_, stream_, "row_parallel_forward x_j W_j^T", Operand{x_f, inb, false}, Operand{W_f, inb, true}, N,
                out, inb, partials + j * N * out, out);
  }
  sum_blocks(partials, N * out, J);
  if (finish_sum) finish_sum(partials, static_cast<std::size_t>(N * out));
  std::vector<device::DeviceSpan> reads = {span(partials, N * out)};
  if (b) reads.push_back(span(b, out));
  launch_op(rt_, stream_, "row_parallel_bias", ops::LinearBiasElements<T>{y, partials, b, N, out}, reads,
            {span(y, N * out)});
}

template <typename T>
void ModelOps<T>::row_parallel_backward(T* dx, const std::vector<kernels::LinearBlockGrad<T>>& grads, T* db,
                                        const T* dy, const T* x, const std::vector<kernels::LinearBlock<T>>& blocks,
                                        int64_t N, int64_t inb, int64_t out, float* scratch) {
  const auto J = static_cast<int64_t>(blocks.size());
  if (J == 1) return linear_backward(dx, grads[0].dW, db, dy, x, blocks[0].W, N, inb, out, scratch);
  // the CPU kernel's scratch: dy_f [N,out], then (16-bit) W_j [out,inb], then x_j and dx_j
  // [N,inb] each, then (16-bit) dW_j [out,inb]
  float* dy_stage = scratch;
  float* W_stage = dy_stage + N * out;
  float* x_stage = W_stage + (kNarrow<T> ? out * inb : 0);
  float* dx_stage = x_stage + N * inb;
  float* dW_stage = dx_stage + N * inb;
  const float* dy_f = widen(dy_stage, dy, N * out);
  for (int64_t j = 0; j < J; ++j) {
    const float* W_f = widen(W_stage, blocks[j].W, out * inb);
    launch_op(rt_, stream_, "row_parallel_gather x_j", ops::BlockColumnsWiden<T>{x_stage, x, N, 1, J, j, inb},
              {span(x, N * J * inb)}, {span(x_stage, N * inb)});
    float* dW_f = out_f(grads[j].dW, dW_stage);
    launch_gemm(rt_, stream_, "row_parallel_backward dy W_j", Operand{dy_f, out, false}, Operand{W_f, inb, false}, N,
                inb, out, dx_stage, inb);
    launch_gemm(rt_, stream_, "row_parallel_backward dy^T x_j", Operand{dy_f, out, true}, Operand{x_stage, inb, false},
                out, inb, N, dW_f, inb);
    launch_op(rt_, stream_, "row_parallel_scatter dx_j",
              ops::BlockColumnsNarrow<T>{dx, dx_stage, nullptr, N, 1, J, j, inb}, {span(dx_stage, N * inb)},
              {span(dx, N * J * inb)});
    if constexpr (kNarrow<T>) narrow(grads[j].dW, dW_f, out * inb);
  }
  if (db)
    launch_op(rt_, stream_, "row_parallel_bias_grad", ops::LinearBiasGradColumns<T>{db, dy, N, out, dy_stage},
              {span(dy, N * out)}, {span(db, out)});
}

template <typename T>
void ModelOps<T>::sum_blocks(float* partials, int64_t n, int64_t J) {
  if (J > 1)
    launch_op(rt_, stream_, "block_sum", ops::BlockSumElements{partials, n, J}, {span(partials, J * n)},
              {span(partials, n)});
}

template <typename T>
void ModelOps<T>::attention_forward(T* out, T* P, const T* qkv, int64_t B, int64_t Tc, int64_t C, int64_t H,
                                    float* scratch) {
  const int64_t TT = Tc * Tc, C3 = 3 * C;
  if (rt_.host_memory())
    return launch::launch_host(rt_, stream_, "attention_forward (cpu)", {span(qkv, B * Tc * C3)},
                               {span(out, B * Tc * C), span(P, B * H * TT)},
                               [=] { kernels::attention_forward(out, P, qkv, B, Tc, C, H, scratch); });
  const float scale = kernels::attention_scale(C / H);
  launch_op(rt_, stream_, "attention_forward", ops::AttentionForwardBlocks<T>{out, P, qkv, {B, Tc, C, H, scale}},
            {span(qkv, B * Tc * C3)}, {span(out, B * Tc * C), span(P, B * H * TT)});
}

template <typename T>
void ModelOps<T>::attention_backward(T* dqkv, const T* dout, const T* qkv, const T* P, int64_t B, int64_t Tc, int64_t C,
                                     int64_t H, float* scratch) {
  const int64_t TT = Tc * Tc, C3 = 3 * C;
  const std::vector<device::DeviceSpan> reads = {span(dout, B * Tc * C), span(qkv, B * Tc * C3), span(P, B * H * TT)};
  if (rt_.host_memory())
    return launch::launch_host(rt_, stream_, "attention_backward (cpu)", reads, {span(dqkv, B * Tc * C3)},
                               [=] { kernels::attention_backward(dqkv, dout, qkv, P, B, Tc, C, H, scratch); });
  const ops::AttentionShape shape{B, Tc, C, H, kernels::attention_scale(C / H)};
  float* rsum = scratch;  // B H T floats; the Workspace's scratch holds LayerNorm's 2 N C >= N H
  std::vector<device::DeviceSpan> key_reads = reads;
  key_reads.push_back(span(rsum, B * H * Tc));
  launch_op(rt_, stream_, "attention_backward_rows",
            ops::AttentionBackwardRowBlocks<T>{dqkv, rsum, dout, qkv, P, shape}, reads,
            {span(dqkv, B * Tc * C3), span(rsum, B * H * Tc)});
  launch_op(rt_, stream_, "attention_backward_keys",
            ops::AttentionBackwardKeyBlocks<T>{dqkv, rsum, dout, qkv, P, shape}, key_reads, {span(dqkv, B * Tc * C3)});
}

// ModelOps<T> is explicitly instantiated in model_ops.cc; the members defined here are
// instantiated here, one by one.
#define ZT_MODEL_OPS_GEMM_INSTANCE(T)                                                                                  \
  template void ModelOps<T>::linear_forward(T*, const T*, const T*, const T*, int64_t, int64_t, int64_t, float*);      \
  template void ModelOps<T>::linear_backward(T*, T*, T*, const T*, const T*, const T*, int64_t, int64_t, int64_t,      \
                                             float*);                                                                  \
  template void ModelOps<T>::column_parallel_forward(T*, const T*, const std::vector<kernels::LinearBlock<T>>&,        \
                                                     int64_t, int64_t, int64_t, int64_t, float*);                      \
  template void ModelOps<T>::column_parallel_backward(T*, const std::vector<kernels::LinearBlockGrad<T>>&, const T*,   \
                                                      const T*, const std::vector<kernels::LinearBlock<T>>&, int64_t,  \
                                                      int64_t, int64_t, int64_t, const kernels::FinishBlockSum&,       \
                                                      float*);                                                         \
  template void ModelOps<T>::row_parallel_forward(T*, const T*, const std::vector<kernels::LinearBlock<T>>&, const T*, \
                                                  int64_t, int64_t, int64_t, const kernels::FinishBlockSum&, float*);  \
  template void ModelOps<T>::row_parallel_backward(T*, const std::vector<kernels::LinearBlockGrad<T>>&, T*, const T*,  \
                                                   const T*, const std::vector<kernels::LinearBlock<T>>&, int64_t,     \
                                                   int64_t, int64_t, float*);                                          \
  template void ModelOps<T>::attention_forward(T*, T*, const T*, int64_t, int64_t, int64_t, int64_t, float*);          \
  template void ModelOps<T>::attention_backward(T*, const T*, const T*, const T*, int64_t, int64_t, int64_t, int64_t,  \
                                                float*);                                                               \
  template void ModelOps<T>::sum_blocks(float*, int64_t, int64_t);
ZT_MODEL_OPS_GEMM_INSTANCE(float)
ZT_MODEL_OPS_GEMM_INSTANCE(fp16)
ZT_MODEL_OPS_GEMM_INSTANCE(bf16)
#undef ZT_MODEL_OPS_GEMM_INSTANCE

}  // namespace zt::model
