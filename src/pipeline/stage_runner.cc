// pipeline/stage_runner.cc — one stage's passes and transfers (see stage_runner.h).
#include "pipeline/stage_runner.h"

#include "core/check.h"

namespace zt::pipeline {

using schedule::PipeOp;

template <typename T>
int StageRunner<T>::slots_needed(schedule::PipeSchedule schedule, int stages, int stage, int micro_batches) {
  return schedule::peak_in_flight(schedule::stage_order(schedule, stages, stage, micro_batches));
}

template <typename T>
StageRunner<T>::StageRunner(model::Gpt<T>& model, Collective& pp, schedule::PipeSchedule schedule, int micro_batches,
                            StageBuffers<T> buffers)
    : model_(model), pp_(pp), stage_(pp.rank()), stages_(pp.size()), micro_(micro_batches), buf_(std::move(buffers)) {
  const model::GptConfig& cfg = model.config();
  const model::ModelOptions& o = model.options();
  const int64_t end = model::stage_end(cfg, o.stage);
  // the stage the model runs must be this rank's place in the pipeline
  ZT_CHECK((stage_ == 0) == model::runs_embedding(o.stage) && (stage_ == stages_ - 1) == model::runs_head(cfg, o.stage),
           "pipeline rank ", stage_, " of ", stages_, " holds blocks [", o.stage.begin, ", ", end,
           "), which is not a stage of that place");
  schedule::check_micro_batches(micro_batches, stages_);
  order_ = schedule::stage_order(schedule, stages_, stage_, micro_batches);
  const int need = schedule::peak_in_flight(order_);
  ZT_CHECK(static_cast<int>(buf_.slots.size()) == need, "pipeline stage ", stage_, " runs ", need,
           " micro-batches at once and needs as many workspaces, got ", buf_.slots.size());
  const auto B = model.micro_batch();
  const model::Precision p = model::precision_of<T>();
  act_bytes_ = model::activation_bytes(cfg, B, p, o);
  ckpt_bytes_ = model::checkpoint_bytes(cfg, B, p, o);
  scratch_bytes_ = model::scratch_bytes(cfg, B, p, o);
  for (const PipeSlot& s : buf_.slots)
    ZT_CHECK(s.activations && s.tokens && (ckpt_bytes_ == 0 || s.checkpoints),
             "a pipeline slot lacks its activations, checkpoints or tokens");
  ZT_CHECK(buf_.scratch, "pipeline stage ", stage_, " has no scratch");
  ZT_CHECK(stage_ == 0 || buf_.grad_send, "pipeline stage ", stage_, " has no buffer for the gradient it sends");
  ZT_CHECK(!(stage_ == stages_ - 1 && stage_ > 0) || buf_.tied_wte, "the last pipeline stage has no room for wte");
}

template <typename T>
model::Workspace StageRunner<T>::workspace(int m) const {
  const PipeSlot& s = slot(m);
  return {s.activations, act_bytes_, buf_.scratch, scratch_bytes_, s.checkpoints, ckpt_bytes_};
}

template <typename T>
void StageRunner<T>::share_tied_wte(model::ParamProvider<T>& params,
                                    const std::function<void(const std::vector<P2pOp>&)>& before_p2p) {
  const int s = stage_, P = stages_;
  const auto wte_count = static_cast<std::size_t>(model_.config().vocab * model_.config().width);
  const auto post = [&](P2pOp op) {
    if (before_p2p) before_p2p({op});
    pp_.p2p_async({op}).wait();
  };
  if (P > 1 && s == 0) {
    post(P2pOp::send(params.acquire(0), wte_count, dtype_of_v<T>, P - 1));
    params.release(0);
  } else if (P > 1 && s == P - 1) {
    post(P2pOp::recv(buf_.tied_wte, wte_count, dtype_of_v<T>, 0));
  }
}

template <typename T>
std::vector<float> StageRunner<T>::run_step(model::ParamProvider<T>& params, float grad_scale,
                                            const StageHooks<T>& hooks) {
  const model::GptConfig& cfg = model_.config();
  const int s = stage_, P = stages_;
  const bool first = s == 0, last = s == P - 1;
  const auto B = model_.micro_batch(), Tc = cfg.context;
  const auto x_count = static_cast<std::size_t>(B * Tc * cfg.width);
  const auto wte_count = static_cast<std::size_t>(cfg.vocab * cfg.width);
  const DType dt = dtype_of_v<T>;
  std::vector<float> losses(last ? static_cast<std::size_t>(micro_) : 0);

  share_tied_wte(params, hooks.before_p2p);  // before anything else crosses the first and last stages

  std::vector<P2pOp> pending;  // the sends that end the previous pass
  for (const PipeOp& op : order_) {
    const bool forward = op.kind == PipeOp::Kind::forward;
    const model::Workspace ws = workspace(op.micro);
    std::vector<P2pOp> batch = std::move(pending);
    pending.clear();
    if (forward && !first) batch.push_back(P2pOp::recv(model_.stage_input(ws), x_count, dt, s - 1));
    if (!forward && !last) batch.push_back(P2pOp::recv(model_.stage_output_grad(ws), x_count, dt, s + 1));
    if (!forward && first && !last)  // after the activation gradient: the order the last stage sends in
      batch.push_back(P2pOp::recv(model_.tied_head_grad(ws), wte_count, dt, P - 1));
    if (!batch.empty() && hooks.before_p2p) hooks.before_p2p(batch);
    if (!batch.empty()) pp_.p2p_async(std::move(batch)).wait();

    if (hooks.before_pass) hooks.before_pass(op);
    int32_t* tokens = slot(op.micro).tokens;
    const auto in = model::batch_inputs(tokens, B, Tc);
    const auto tg = model::batch_targets(tokens, B, Tc);
    if (forward) {
      hooks.fill_tokens(op.micro, tokens);
      const float loss = model_.forward(params, in, tg, ws);
      if (last)
        losses[static_cast<std::size_t>(op.micro)] = loss;
      else
        pending.push_back(P2pOp::send(model_.stage_output(ws), x_count, dt, s + 1));
    } else {
      model_.backward(params, in, tg, grad_scale, ws);
      if (!first) {
        model_.ops().copy(buf_.grad_send, model_.stage_input_grad(ws), x_count * sizeof(T));
        pending.push_back(P2pOp::send(buf_.grad_send, x_count, dt, s - 1));
      }
      if (last && !first) pending.push_back(P2pOp::send(model_.tied_head_grad(ws), wte_count, dt, 0));
    }
    if (hooks.after_pass) hooks.after_pass(op);
    if (!forward && hooks.after_backward) hooks.after_backward(op.micro);
  }
  if (!pending.empty() && hooks.before_p2p) hooks.before_p2p(pending);
  if (!pending.empty()) pp_.p2p_async(std::move(pending)).wait();
  return losses;
}

template class StageRunner<float>;
template class StageRunner<fp16>;
template class StageRunner<bf16>;

}  // namespace zt::pipeline
