// The stage orders of schedule/pipeline.h run over real point-to-point transfers between thread
// ranks (one rank per stage): activations go forward and gradients back with send/recv, each
// stage accumulating a "weight gradient" over its micro-batches in order. For P = 2, 3, 4, both
// schedules and M from P to 8, every run completes (the issue pattern below cannot deadlock) and
// every stage's gradient sum and every returned input gradient equal, bit for bit, one thread
// running the same passes in single-device order: the pipeline moves where each pass runs, not
// the order of any sum.
//
// The issue pattern (Megatron's, in its p2p_communication): a stage posts the send that ends one
// pass together with the receive that starts its next pass, as one batch, so two neighbours
// that each send to the other before receiving never wait on each other.
#include <catch2/catch.hpp>

#include <optional>

#include "collective/thread_ranks.h"
#include "schedule/pipeline.h"

using namespace zt;
using namespace zt::schedule;

namespace {

constexpr std::size_t kWidth = 37;  // elements of one boundary activation

// Stage s's toy block: y = x·a_s + c_s elementwise; its input gradient g·a_s; its "weight
// gradient" for a micro-batch sum_i g_i·x_i, accumulated over micro-batches in order.
float a_of(int s) { return 1.0f + 0.1f * static_cast<float>(s + 1); }
float c_of(int s) { return 0.01f * static_cast<float>(s + 1); }
float input_of(int m, std::size_t i) { return 0.5f + 0.001f * static_cast<float>(m * 131 + static_cast<int>(i)); }

struct StageResult {
  float weight_grad = 0.0f;                  // sum over micro-batches, in micro-batch order
  std::vector<std::vector<float>> in_grads;  // stage 0: the gradient reaching each micro-batch's input
};

float dot(const std::vector<float>& g, const std::vector<float>& x) {
  float s = 0.0f;
  for (std::size_t i = 0; i < g.size(); ++i) s += g[i] * x[i];
  return s;
}

// One device: every micro-batch through every stage and back, micro-batch by micro-batch.
std::vector<StageResult> one_device(int p, int m) {
  std::vector<StageResult> out(p);
  out[0].in_grads.resize(m);
  for (int mb = 0; mb < m; ++mb) {
    std::vector<std::vector<float>> xs(p + 1, std::vector<float>(kWidth));
    for (std::size_t i = 0; i < kWidth; ++i) xs[0][i] = input_of(mb, i);
    for (int s = 0; s < p; ++s)
      for (std::size_t i = 0; i < kWidth; ++i) xs[s + 1][i] = xs[s][i] * a_of(s) + c_of(s);
    std::vector<float> g(kWidth);
    for (std::size_t i = 0; i < kWidth; ++i) g[i] = 2.0f * xs[p][i];  // d(sum y^2)/dy
    for (int s = p - 1; s >= 0; --s) {
      out[s].weight_grad += dot(g, xs[s]);
      for (float& v : g) v *= a_of(s);
    }
    out[0].in_grads[mb] = g;
  }
  return out;
}

StageResult run_stage(Collective& pp, PipeSchedule sched, int m) {
  const int s = pp.rank(), p = pp.size();
  const auto order = stage_order(sched, p, s, m);
  StageResult out;
  if (s == 0) out.in_grads.resize(m);
  std::vector<std::vector<float>> inputs(m), outputs(m);  // held from forward to backward
  std::vector<float> grad_in(kWidth), grad_out(kWidth), recv_buf(kWidth);
  std::vector<P2pOp> pending_send;  // the send that ends the previous pass
  std::vector<float> send_buf;
  for (const PipeOp& op : order) {
    const bool fwd = op.kind == PipeOp::Kind::forward;
    std::vector<P2pOp> batch = pending_send;
    const int from = fwd ? s - 1 : s + 1;
    const bool receives = fwd ? s > 0 : s < p - 1;
    if (receives) batch.push_back(P2pOp::recv(recv_buf.data(), kWidth, DType::fp32, from));
    if (!batch.empty()) pp.p2p_async(batch).wait();
    pending_send.clear();
    if (fwd) {
      inputs[op.micro].resize(kWidth);
      for (std::size_t i = 0; i < kWidth; ++i) inputs[op.micro][i] = s == 0 ? input_of(op.micro, i) : recv_buf[i];
      outputs[op.micro].resize(kWidth);
      for (std::size_t i = 0; i < kWidth; ++i) outputs[op.micro][i] = inputs[op.micro][i] * a_of(s) + c_of(s);
      if (s < p - 1) {
        send_buf = outputs[op.micro];
        pending_send = {P2pOp::send(send_buf.data(), kWidth, DType::fp32, s + 1)};
      }
    } else {
      std::vector<float> g(kWidth);
      for (std::size_t i = 0; i < kWidth; ++i) g[i] = s == p - 1 ? 2.0f * outputs[op.micro][i] : recv_buf[i];
      out.weight_grad += dot(g, inputs[op.micro]);
      for (float& v : g) v *= a_of(s);
      inputs[op.micro].clear();
      outputs[op.micro].clear();
      if (s > 0) {
        send_buf = g;
        pending_send = {P2pOp::send(send_buf.data(), kWidth, DType::fp32, s - 1)};
      } else {
        out.in_grads[op.micro] = g;
      }
    }
  }
  if (!pending_send.empty()) pp.p2p_async(pending_send).wait();
  return out;
}

}  // namespace

TEST_CASE("GPipe and 1F1B over send/recv give one device's bits", "[ch15][pipeline][p2p]") {
  for (PipeSchedule sched : {PipeSchedule::gpipe, PipeSchedule::one_f_one_b})
    for (int p : {2, 3, 4})
      for (int m : {p, 5, 8}) {
        INFO(word_of(sched) << " P = " << p << " M = " << m);
        const auto expected = one_device(p, m);
        auto group = thread_group(p);
        auto out = run_thread_ranks(p, [&](int r) {
          GlooCollective pp(group.for_rank(r));
          return run_stage(pp, sched, m);
        });
        for (int s = 0; s < p; ++s) {
          INFO("stage " << s << ": " << out[s].error);
          REQUIRE(out[s].ok());
          CHECK(out[s].value->weight_grad == expected[s].weight_grad);
        }
        for (int mb = 0; mb < m; ++mb) CHECK(out[0].value->in_grads[mb] == expected[0].in_grads[mb]);
      }
}
