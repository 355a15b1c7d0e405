// tests/gpu/device_staged.h — a test adapter: a Collective on host buffers that runs each call on
// a device-buffer Collective (the NCCL backend) by copying the buffers to this rank's GPU and back.
// It lets the GPU tests run tests/collective's case lists (closed forms and the reference tree,
// written for host buffers) unchanged against NcclCollective. Every call is synchronous (copy in,
// call, wait, copy out) and returns a completed Work. Tests only: it is not host staging for
// training (ranks sharing a GPU use the Gloo backend).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "collective/collective.h"
#include "core/check.h"

namespace zt_test {

/// Device memory of a test, freed on scope exit.
class DeviceBytes {
 public:
  /// @param bytes size (0 allowed: no allocation, null pointer).
  explicit DeviceBytes(std::size_t bytes) {
    if (bytes) ZT_CHECK(cudaMalloc(&p_, bytes) == cudaSuccess, "test cudaMalloc of ", bytes, " bytes failed");
  }
  ~DeviceBytes() {
    if (p_) cudaFree(p_);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  /// @return the device pointer.
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

/// Copy host to device (no-op for 0 bytes). @param dst device. @param src host. @param bytes size.
inline void to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes) ZT_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "test upload failed");
}
/// Copy device to host (no-op for 0 bytes). @param dst host. @param src device. @param bytes size.
inline void to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) ZT_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "test download failed");
}

/// Host-buffer Collective over a device-buffer one (see the file comment).
class DeviceStaged : public zt::Collective {
 public:
  /// @param inner the device Collective (owned).
  explicit DeviceStaged(std::unique_ptr<zt::Collective> inner) : inner_(std::move(inner)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  zt::ReduceMode mode() const override { return inner_->mode(); }
  zt::CommStats stats() const override { return inner_->stats(); }
  /// @return the device Collective.
  zt::Collective& inner() { return *inner_; }

 protected:
  zt::Work start_all_reduce(void* data, std::size_t count, zt::DType dtype, zt::ReduceOp op) override {
    const std::size_t bytes = count * zt::dtype_size(dtype);
    DeviceBytes d(bytes);
    to_device(d.get(), data, bytes);
    inner_->all_reduce_async(d.get(), count, dtype, op).wait();
    to_host(data, d.get(), bytes);
    return {};
  }
  zt::Work start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                  zt::DType dtype, zt::ReduceOp op) override {
    const std::size_t es = zt::dtype_size(dtype);
    const auto offsets = zt::offsets_of(counts);
    const std::size_t total = (offsets.back() + counts.back()) * es, mine = counts[rank()] * es;
    DeviceBytes in(total);
    to_device(in.get(), input, total);
    // in place on the device too when the caller's call is in place
    const bool in_place = output == static_cast<const unsigned char*>(input) + offsets[rank()] * es;
    DeviceBytes separate(in_place ? 0 : mine);
    void* out = in_place ? static_cast<unsigned char*>(in.get()) + offsets[rank()] * es : separate.get();
    inner_->reduce_scatter_v_async(in.get(), out, counts, dtype, op).wait();
    to_host(output, out, mine);
    return {};
  }
  zt::Work start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                              zt::DType dtype) override {
    const std::size_t es = zt::dtype_size(dtype);
    const auto offsets = zt::offsets_of(counts);
    const std::size_t total = (offsets.back() + counts.back()) * es, mine = counts[rank()] * es;
    DeviceBytes out(total);
    const bool in_place = input == static_cast<const unsigned char*>(output) + offsets[rank()] * es;
    DeviceBytes separate(in_place ? 0 : mine);
    void* in = in_place ? static_cast<unsigned char*>(out.get()) + offsets[rank()] * es : separate.get();
    to_device(in, input, mine);
    inner_->all_gather_v_async(in, out.get(), counts, dtype).wait();
    to_host(output, out.get(), total);
    return {};
  }
  zt::Work start_broadcast(void* data, std::size_t count, zt::DType dtype, int root) override {
    const std::size_t bytes = count * zt::dtype_size(dtype);
    DeviceBytes d(bytes);
    to_device(d.get(), data, bytes);
    inner_->broadcast_async(d.get(), count, dtype, root).wait();
    to_host(data, d.get(), bytes);
    return {};
  }
  zt::Work start_barrier() override {
    inner_->barrier();
    return {};
  }
  zt::Work start_p2p(std::vector<zt::P2pOp> ops) override {
    std::vector<std::unique_ptr<DeviceBytes>> held;
    std::vector<zt::P2pOp> on_device = ops;
    for (zt::P2pOp& op : on_device) {
      held.push_back(std::make_unique<DeviceBytes>(op.bytes()));
      if (op.dir == zt::P2pOp::Dir::send) to_device(held.back()->get(), op.data, op.bytes());
      op.data = held.back()->get();
    }
    inner_->p2p_async(on_device).wait();
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (ops[i].dir == zt::P2pOp::Dir::recv) to_host(ops[i].data, held[i]->get(), ops[i].bytes());
    return {};
  }
  std::unique_ptr<zt::Collective> make_subgroup(const std::vector<int>& members, const std::string& name) override {
    return std::make_unique<DeviceStaged>(inner_->subgroup(members, name));
  }

 private:
  std::unique_ptr<zt::Collective> inner_;
};

}  // namespace zt_test
