// zero/dp_calls.cc — the staging rooms of dp_calls.h, the largest calls on device buffers.
#include "zero/dp_calls.h"

#include "memory/arena.h"
#include "train/memory_plan.h"

namespace zt::zero {
namespace {

// the visitor: the largest input and output among the calls on device buffers
struct Largest {
  StagingRooms rooms;
  std::size_t r;
  void take(std::size_t in, std::size_t out) {
    rooms.in = std::max(rooms.in, in);
    rooms.out = std::max(rooms.out, out);
  }
  void rs(const std::vector<std::size_t>& counts, std::size_t es, bool on_device) {
    if (on_device) take(total_of(counts) * es, counts[r] * es);
  }
  void ag(const std::vector<std::size_t>& counts, std::size_t es, bool on_device) {
    if (on_device) take(counts[r] * es, total_of(counts) * es);
  }
  void ar(std::size_t count, std::size_t es, bool on_device) {
    if (on_device) take(count * es, 0);  // in place: the input room holds the result too
  }
  void loss(std::size_t) {}  // host-side values: nothing staged
};

}  // namespace

StagingRooms dp_staging_rooms(const ZeroPlan& p) {
  Largest v{{}, p.layout.rank};
  if (p.layout.world_size > 1) for_each_dp_call(p, v);
  return v.rooms;
}

StagingRooms mp_staging_rooms(const ZeroPlan& p) {
  StagingRooms rooms;
  if (p.mp.size <= 1) return rooms;
  const std::size_t tokens = p.shape.micro_batch * p.shape.context;
  rooms.in = tokens * static_cast<std::size_t>(p.shape.model.width) * sizeof(float);  // a block sum's partials
  if (p.partition_activations) {
    const std::size_t slice = checkpoint_slice_of(p) * model::bytes_of(p.shape.precision);
    rooms.in = std::max(rooms.in, slice);
    rooms.out = slice * static_cast<std::size_t>(p.mp.size);
  }
  return rooms;
}

std::size_t pinned_host_side_bytes(const ZeroPlan& p) {
  std::size_t bytes = train::host_side_bytes(p.shape);
  if (p.offload_params) bytes += Arena::aligned_size(p.largest_param_record() * model::bytes_of(p.shape.precision));
  return bytes;
}

}  // namespace zt::zero
