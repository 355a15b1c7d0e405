// collective/staged_collective.cc — device buffers through pinned host memory around a host
// collective (see staged_collective.h).
#include "collective/staged_collective.h"

namespace zt {

using device::CopyKind;

StagedCollective::StagedCollective(Collective& inner, device::Runtime& runtime, device::Stream stream)
    : inner_(inner), rt_(runtime), stream_(stream) {}

StagedCollective::StagedCollective(std::unique_ptr<Collective> inner, device::Runtime& runtime, device::Stream stream)
    : owned_(std::move(inner)), inner_(*owned_), rt_(runtime), stream_(stream) {}

StagedCollective::~StagedCollective() {
  for (Pinned* p : {&in_, &out_})
    if (p->ptr) rt_.release_pinned(p->ptr);
}

void StagedCollective::grow(Pinned& room, std::size_t bytes) {
  if (room.bytes >= bytes) return;
  if (room.ptr) rt_.release_pinned(room.ptr);
  room = {rt_.allocate_pinned(bytes, "collective staging"), bytes};
}

void StagedCollective::reserve(StagingRooms rooms) {
  grow(in_, rooms.in);
  grow(out_, rooms.out);
}

void* StagedCollective::host_side(Pinned& room, const void* buffer, std::size_t bytes, bool fill) {
  if (bytes == 0 || !rt_.is_device(buffer)) return const_cast<void*>(buffer);
  grow(room, bytes);
  if (fill) {  // after everything queued on the stream: the buffer's producers
    rt_.copy_async(room.ptr, buffer, bytes, CopyKind::device_to_host, stream_);
    rt_.synchronize(stream_);
  }
  return room.ptr;
}

void StagedCollective::write_back(void* buffer, const void* host, std::size_t bytes) {
  if (bytes == 0 || host == buffer) return;
  rt_.copy_async(buffer, host, bytes, CopyKind::host_to_device, stream_);
  rt_.synchronize(stream_);  // the pinned stand-in is free again
}

Work StagedCollective::start_all_reduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
  const std::size_t bytes = count * dtype_size(dtype);
  void* h = host_side(in_, data, bytes, true);
  inner_.all_reduce_async(h, count, dtype, op).wait();
  write_back(data, h, bytes);
  return {};
}

Work StagedCollective::start_reduce_scatter_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                              DType dtype, ReduceOp op) {
  const std::size_t e = dtype_size(dtype);
  const std::size_t in_bytes = total_of(counts) * e;
  const std::size_t out_bytes = counts[static_cast<std::size_t>(rank())] * e;
  const void* h_in = host_side(in_, input, in_bytes, true);
  void* h_out = host_side(out_, output, out_bytes, false);  // written whole by the collective
  inner_.reduce_scatter_v_async(h_in, h_out, counts, dtype, op).wait();
  write_back(output, h_out, out_bytes);
  return {};
}

Work StagedCollective::start_all_gather_v(const void* input, void* output, const std::vector<std::size_t>& counts,
                                          DType dtype) {
  const std::size_t e = dtype_size(dtype);
  const std::size_t in_bytes = counts[static_cast<std::size_t>(rank())] * e;
  const std::size_t out_bytes = total_of(counts) * e;
  const void* h_in = host_side(in_, input, in_bytes, true);  // may lie inside output: read first
  void* h_out = host_side(out_, output, out_bytes, false);
  inner_.all_gather_v_async(h_in, h_out, counts, dtype).wait();
  write_back(output, h_out, out_bytes);
  return {};
}

Work StagedCollective::start_broadcast(void* data, std::size_t count, DType dtype, int root) {
  const std::size_t bytes = count * dtype_size(dtype);
  void* h = host_side(in_, data, bytes, rank() == root);
  inner_.broadcast_async(h, count, dtype, root).wait();
  write_back(data, h, bytes);
  return {};
}

Work StagedCollective::start_barrier() {
  inner_.barrier_async().wait();
  return {};
}

// A batch: every device buffer sent is copied down into the input room (packed, in batch order),
// every device buffer received lands in the output room and is copied up once the batch is done.
Work StagedCollective::start_p2p(std::vector<P2pOp> ops) {
  std::size_t down = 0, up = 0;
  for (const P2pOp& op : ops) {
    if (!op.count || !rt_.is_device(op.data)) continue;
    (op.dir == P2pOp::Dir::send ? down : up) += op.bytes();
  }
  grow(in_, down);
  grow(out_, up);
  std::vector<P2pOp> host_ops = ops;
  std::size_t at_in = 0, at_out = 0;
  for (P2pOp& op : host_ops) {
    if (!op.count || !rt_.is_device(op.data)) continue;
    if (op.dir == P2pOp::Dir::send) {
      rt_.copy_async(in_.ptr + at_in, op.data, op.bytes(), CopyKind::device_to_host, stream_);
      op.data = in_.ptr + at_in;
      at_in += op.bytes();
    } else {
      op.data = out_.ptr + at_out;
      at_out += op.bytes();
    }
  }
  if (down) rt_.synchronize(stream_);  // the sends' bytes are on the host
  inner_.p2p_async(host_ops).wait();
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].dir == P2pOp::Dir::recv && host_ops[i].data != ops[i].data)
      rt_.copy_async(ops[i].data, host_ops[i].data, ops[i].bytes(), CopyKind::host_to_device, stream_);
  if (up) rt_.synchronize(stream_);  // the output room is free again
  return {};
}

std::unique_ptr<Collective> StagedCollective::make_subgroup(const std::vector<int>& members, const std::string& name) {
  return std::make_unique<StagedCollective>(inner_.subgroup(members, name), rt_, stream_);
}

}  // namespace zt
