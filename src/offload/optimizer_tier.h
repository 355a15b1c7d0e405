// offload/optimizer_tier.h — ZeRO-Offload: the FP32 master weights, the optimizer state and the
// update of a rank's owned elements live in the host tier (or, ZeRO-Infinity style, in a file
// streamed through the host tier); the accelerator tier keeps the compute copy and the gradients.
//
// One of the three places a rank's optimizer states can live (offload/state_store.h: the host and
// the file store). Per unit u, in one applied step (the engine's update(u, owned) on the store):
//   1. copy down: the rank's reduced gradient of its owned elements, accelerator → host
//      (s_g bytes each: 4 with the FP32 accumulator, 2 with --reduce-dtype compute and one
//      micro-batch per rank — the ZeRO-Offload paper's 2ψ assumes 16-bit gradients);
//   2. the update on the host: apply_update (step/owned_slice.h), the very per-element code of
//      the run without offload, on the same values — the reason the runs are bitwise equal;
//   3. copy up: the refreshed compute copy of the owned elements, host → accelerator (2 bytes each;
//      fp32 precision: the updated FP32 values themselves, 4 bytes each — there the compute copy
//      and the master are the same values, so the host keeps the master and the device the
//      compute copy, equal bit for bit after every step).
// Every copy goes through the TransferThread (offload/transfer_thread.h) and is counted. The master and
// state sit either in two host arrays (ledger categories `master` and `optimizer` of the host
// tier: the accelerator tier's ledger has none of either), or in a FileTier (offload/file_tier.h:
// only its bounded ring is in RAM). Host staging: one unit's gradient (`offload_grads`) and, below
// fp32, one unit's refreshed 16-bit values (`offload_params`).
// On a device (--device emulated|cuda) the host tier's arena is pinned memory and the TransferThread a
// copy stream ordered after the compute stream by events (offload/transfer_thread.h), so the copies
// are DMA transfers; the update runs on the CPU as here, this same code. The copies of a unit are waited for before the
// next unit: the updated values must be on the accelerator before the engine's all-gather of the unit reads them. It
// does not reduce, gather or decide a step (zero/train_zero.cc does).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "memory/arena.h"
#include "memory/buffer.h"
#include "offload/file_tier.h"
#include "offload/state_store.h"
#include "offload/tier.h"
#include "offload/transfer_thread.h"
#include "optim/grad_norm.h"
#include "step/categories.h"
#include "step/element_optimizer.h"
#include "step/owned_slice.h"

namespace zt::offload {

/// The host (or file) tier of one rank's optimizer; T is the compute type.
template <typename T>
class OptimizerTier final : public StateStore<T> {
  static constexpr bool kFp32 = std::is_same_v<T, float>;

 public:
  /// Allocate the tier (master and zeroed state in `host`, or the file and its ring) and the
  /// staging buffers. @param settings where. @param shape the owned elements.
  /// @param host the host tier's arena. @param copies the transfers between the tiers.
  OptimizerTier(const TierSettings& settings, TierShape shape, Arena& host, TransferThread& copies)
      : shape_(std::move(shape)), copies_(copies) {
    std::size_t total = 0, largest = 0;
    for (std::size_t u = 0; u < units(); ++u) {
      offsets_.push_back(total);
      total += shape_.extents[u];
      largest = std::max(largest, shape_.counts[u]);
    }
    if (settings.kind == TierKind::host) {
      master_ = make_buffer<float>(host, total, step::category::master);
      state_ = make_buffer<float>(host, total * shape_.moments, step::category::optimizer);
      std::memset(state_.data(), 0, state_.size() * sizeof(float));
    } else {
      std::vector<std::size_t> records;  // unit u's record: its master, then each moment, e_u floats each
      for (std::size_t e : shape_.extents) records.push_back(e * (1 + shape_.moments));
      file_ = std::make_unique<FileTier>(settings.dir, settings.world_rank, records, settings.buffers,
                                         settings.read_ahead, host);
    }
    grad_stage_ = make_buffer<std::byte>(host, largest * grad_width(), category::grads);
    if constexpr (!kFp32) {
      param_stage_ = make_buffer<T>(host, largest, category::params);
      std::memset(static_cast<void*>(param_stage_.data()), 0, largest * sizeof(T));
    }
  }

  /// Write unit u's initial master (units in order 0, 1, ...; the state starts at zero).
  /// @param u the unit. @param fill called with e_u floats to fill.
  void initialise(std::size_t u, const std::function<void(float*)>& fill) override {
    if (!file_) return fill(master_.data() + offsets_[u]);
    fill(file_->begin(u, /*fresh=*/true));
    file_->end(u);
  }

  /// Protocol steps 4-6 of unit u on this tier (see the file comment): gradient down, the update,
  /// compute copy up. @param u the unit (in order 0, 1, ... within a step).
  /// @param device the accelerator tier's slice of u (params: where the refreshed values go;
  /// grad: the reduced gradient; state_index: its offset in the S_o-extent state).
  /// @param inv_scale 1/S. @param clip the step's clipping. @param opt the step's optimizer
  /// (its state pointer is this tier's).
  void update(std::size_t u, const step::OwnedSlice<T>& device, float inv_scale, const ClipDecision& clip,
              step::ElementOptimizer opt) override {
    const std::size_t n = shape_.counts[u];
    ZT_CHECK(device.count == n && device.state_index == offsets_[u], "optimizer tier: unit ", u,
             " differs from the engine's owned slice");
    copy_down(grad_stage_.data(), gradient_bytes(device.grad), n * grad_width()).wait();  // 1. accelerator → host
    const StateView s = open(u);
    opt.state = s.state;
    opt.n = s.n;
    step::GradSpan<T> g;
    if (shape_.grad_16bit)
      g.compute = reinterpret_cast<const T*>(grad_stage_.data());
    else
      g.fp32 = reinterpret_cast<const float*>(grad_stage_.data());
    if constexpr (kFp32) {  // the master is the value the optimizer updates; it goes up itself
      step::apply_update(step::OwnedSlice<T>{s.master, nullptr, s.index, g, n}, inv_scale, clip, opt);  // 2.
      copy_up(device.params, s.master, n * sizeof(T)).wait();  // 3. host → accelerator
    } else {                                                   // FP32 update, then the refreshed 16-bit copy goes up
      step::apply_update(step::OwnedSlice<T>{param_stage_.data(), s.master, s.index, g, n}, inv_scale, clip, opt);
      copy_up(device.params, param_stage_.data(), n * sizeof(T)).wait();
    }
    close(u);
  }

  /// Between steps: unit u's owned state in memory (a file tier's record brought into a buffer);
  /// fn(const StateView&) returns whether it changed it (written back before this returns).
  /// @param u the unit. @param fn the visitor (checkpoints: save and resume).
  void with_owned_state(std::size_t u, const typename StateStore<T>::Visit& fn) override {
    if (!file_) {
      fn(host_view(u));
      return;
    }
    file_->with_record(u, [&](float* r) { return fn(record_view(u, r)); });
  }

  /// The file tier's I/O so far (zeros for the host tier). @return the counters.
  TransferStats file_stats() const override { return file_ ? file_->stats() : TransferStats{}; }

 private:
  std::size_t units() const { return shape_.extents.size(); }
  std::size_t grad_width() const { return shape_.grad_16bit ? sizeof(T) : sizeof(float); }
  static const void* gradient_bytes(const step::GradSpan<T>& g) {
    return g.fp32 ? static_cast<const void*>(g.fp32) : static_cast<const void*>(g.compute);
  }
  // the two directions, named by tier (on a GPU: cudaMemcpyAsync on the copy stream)
  TransferHandle copy_down(void* host_dst, const void* device_src, std::size_t bytes) {
    return copies_.copy(host_dst, device_src, bytes, CopyDirection::to_host);
  }
  TransferHandle copy_up(void* device_dst, const void* host_src, std::size_t bytes) {
    return copies_.copy(device_dst, host_src, bytes, CopyDirection::to_device);
  }
  StateView host_view(std::size_t u) {
    return {master_.data() + offsets_[u], state_.data(), offsets_[u], master_.size(), shape_.extents[u]};
  }
  StateView record_view(std::size_t u, float* r) const {
    const std::size_t e = shape_.extents[u];
    return {r, r + e, 0, e, e};
  }
  StateView open(std::size_t u) { return file_ ? record_view(u, file_->begin(u)) : host_view(u); }
  void close(std::size_t u) {
    if (file_) file_->end(u);
  }

  TierShape shape_;
  TransferThread& copies_;
  std::vector<std::size_t> offsets_;   // per unit: its first element in the S_o-extent state
  TypedBuffer<float> master_;          // host tier: Σ e_u FP32 master values
  TypedBuffer<float> state_;           // host tier: each moment's Σ e_u values, moment after moment
  std::unique_ptr<FileTier> file_;     // file tier: the records, streamed through a ring
  TypedBuffer<std::byte> grad_stage_;  // one unit's gradient, copied down
  TypedBuffer<T> param_stage_;         // one unit's refreshed 16-bit values, copied up (not fp32)
};

}  // namespace zt::offload
