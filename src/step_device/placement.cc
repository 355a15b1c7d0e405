// step_device/placement.cc — the host's and the devices' answers (see placement.h).
#include "step_device/placement.h"

#include <cstdlib>

#include "core/check.h"
#include "device/host_runtime.h"
#include "device/make_runtime.h"
#include "fp/bf16.h"
#include "fp/fp16.h"
#include "model/model_ops.h"
#include "step_device/loop_ops.h"
#include "step_device/step_ops.h"

namespace zt::step {

template <typename T>
Placement<T>::Placement(device::Device where, int gpu) {
  if (where == device::Device::cpu) {  // every op runs at once on the rank's pool
    host_ = std::make_unique<device::HostRuntime>();
    stream_ = host_->create_stream("compute");
    model_ = std::make_unique<model::ModelOps<T>>(*host_, stream_);
    step_ = std::make_unique<step::StepOps<T>>(*host_, stream_);
    loop_ = std::make_unique<step::LoopOps<T>>(*host_, stream_);
    return;
  }
  runtime_ = device::make_runtime(
      where == device::Device::cuda ? device::RuntimeKind::cuda : device::RuntimeKind::emulated, gpu);
  stream_ = runtime_->create_stream("compute");
  model_ = std::make_unique<model::ModelOps<T>>(*runtime_, stream_);
  step_ = std::make_unique<step::StepOps<T>>(*runtime_, stream_);
  loop_ = std::make_unique<step::LoopOps<T>>(*runtime_, stream_);
}

template <typename T>
Placement<T>::~Placement() {
  if (runtime_) runtime_->synchronize();  // nothing queued may outlive the ops that enqueued it
}

template <typename T>
ArenaSlab Placement<T>::slab(std::size_t bytes, const std::string& name) {
  if (!runtime_) return host_slab(bytes, name);
  device::Runtime* rt = runtime_.get();
  return {rt->allocate(Arena::aligned_size(bytes), name), bytes, [rt](std::byte* p) { rt->release(p); }};
}

template <typename T>
ArenaSlab Placement<T>::host_slab(std::size_t bytes, const std::string& name) {
  if (runtime_) {
    device::Runtime* rt = runtime_.get();
    return {rt->allocate_pinned(Arena::aligned_size(bytes), name), bytes,
            [rt](std::byte* p) { rt->release_pinned(p); }};
  }
  // as the arena reserves its own: a multiple of the alignment, pages touched only when used
  void* p = std::aligned_alloc(Arena::kAlignment, Arena::aligned_size(bytes));
  ZT_CHECK(p != nullptr, name, ": the host could not reserve ", bytes, " bytes");
  return {static_cast<std::byte*>(p), bytes, [](std::byte* q) { std::free(q); }};
}

template class Placement<float>;
template class Placement<fp16>;
template class Placement<bf16>;

}  // namespace zt::step
