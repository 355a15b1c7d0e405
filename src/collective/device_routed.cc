// collective/device_routed.cc — device buffers to one group, host buffers to the other
// (see device_routed.h).
#include "collective/device_routed.h"

#include "core/check.h"

namespace zt {

DeviceRoutedCollective::DeviceRoutedCollective(Collective& host, std::unique_ptr<Collective> device,
                                               const device::Runtime& runtime)
    : host_(host), device_(std::move(device)), rt_(runtime) {
  ZT_CHECK(device_ != nullptr, "device-routed group: no device group");
  ZT_CHECK(device_->rank() == host_.rank() && device_->size() == host_.size(),
           "device-routed group: the device group is rank ", device_->rank(), " of ", device_->size(),
           ", the host group rank ", host_.rank(), " of ", host_.size());
  ZT_CHECK(device_->mode() == host_.mode(), "device-routed group: the two groups reduce in different modes");
}

CommStats DeviceRoutedCollective::stats() const { return host_.stats() + device_->stats(); }

Collective& DeviceRoutedCollective::side(const char* call, const void* a, const void* b) {
  const bool on_device = rt_.is_device(a);
  ZT_CHECK(b == nullptr || rt_.is_device(b) == on_device, "device-routed group: ", call,
           " has its input and its output on different sides of the host-device line");
  return on_device ? *device_ : host_;
}

Work DeviceRoutedCollective::start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  return side("all_reduce", data, nullptr).all_reduce_async(data, count, dtype, op);
}

Work DeviceRoutedCollective::start_reduce_scatter_v(const void* input, void* output,
                                                    const std::vector<std::size_t>& counts, DType dtype, ReduceOp op) {
  return side("reduce_scatter", input, output).reduce_scatter_v_async(input, output, counts, dtype, op);
}

Work DeviceRoutedCollective::start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                                DType dtype) {
  return side("all_gather", input, output).all_gather_v_async(input, output, counts, dtype);
}

Work DeviceRoutedCollective::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  return side("broadcast", data, nullptr).broadcast_async(data, count, dtype, root);
}

Work DeviceRoutedCollective::start_barrier() { return host_.barrier_async(); }

Work DeviceRoutedCollective::start_p2p(std::vector<P2pOp>) {
  ZT_FAIL(
      "device-routed group: point-to-point transfers (a pipeline) are not routed; a pipeline's stages use the "
      "staged Gloo path (--collective gloo)");
}

std::unique_ptr<Collective> DeviceRoutedCollective::make_subgroup(const std::vector<int>&, const std::string&) {
  ZT_FAIL(
      "device-routed group: sub-groups (--mp-size, --pp-size, --shard-group) are not routed; they use the staged "
      "Gloo path (--collective gloo)");
}

}  // namespace zt
