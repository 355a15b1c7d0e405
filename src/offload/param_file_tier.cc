// offload/param_file_tier.cc — the file and the ring of the parameter tier (see param_file_tier.h).
#include "offload/param_file_tier.h"

#include <algorithm>
#include <cstring>

#include "core/check.h"

namespace zt::offload {

namespace {
std::size_t largest(const std::vector<std::size_t>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }
}  // namespace

ParamFileTier::ParamFileTier(const std::string& dir, int world_rank, std::vector<std::size_t> record_bytes,
                             std::size_t buffers, Arena& arena, ParamTierDevice device)
    : records_(std::move(record_bytes)),
      offsets_(prefix_sums(records_)),
      slots_(std::max<std::size_t>(1, buffers)),
      slot_bytes_(largest(records_)),
      ring_(arena.allocate(slots_ * slot_bytes_, kParamBuffersCategory)),
      device_(device),
      file_(file_tier_path(dir, world_rank, "params"), total(records_)),
      io_(std::make_unique<TransferThread>(file_.fd, file_.path)),
      last_(slots_) {
  if (!device_.runtime) return;
  ZT_CHECK(device_.host != nullptr, "parameter tier: a device needs a host arena for its bounce record");
  copies_ = device_.runtime->create_stream("parameter tier");
  bounce_ = device_.host->allocate(slot_bytes_, kParamStagingCategory);
  released_.resize(slots_);  // no event yet: nothing on the compute stream has used a buffer
}

ParamFileTier::~ParamFileTier() {
  for (auto& h : last_) {
    try {
      h.wait();
    } catch (...) {  // the run is failing already (or its result is in); the file goes anyway
    }
  }
}

void ParamFileTier::drain() {
  for (auto& h : last_) h.wait();
}

void ParamFileTier::start_pass(std::vector<std::size_t> visits) {
  drain();  // an abandoned pass may have jobs on any buffer
  for (std::size_t u : visits)
    ZT_CHECK(u < records_.size() && records_[u] > 0, "parameter tier: unit ", u, " has no record");
  visits_ = std::move(visits);
  next_ = freed_ = issued_ = 0;
  read_through();
}

void ParamFileTier::read_through() {
  for (; issued_ < visits_.size() && issued_ < freed_ + slots_; ++issued_) {
    const std::size_t u = visits_[issued_], s = slot(issued_), bytes = records_[u];
    if (device_.runtime)
      last_[s] = io_->read(bounce_.data(), bytes, offset(u),
                           [this, s, bytes, e = released_[s]] { bounce_copy(s, bytes, e, /*up=*/true); });
    else
      last_[s] = io_->read(buffer(s), bytes, offset(u));
  }
}

std::byte* ParamFileTier::get(std::size_t k) {
  ZT_CHECK(k == next_ && k < visits_.size(), "parameter tier: visit ", k, " out of order (expected ", next_, " of ",
           visits_.size(), ")");
  ZT_CHECK(k < freed_ + slots_, "parameter tier: visit ", k, " needs more than the ring's ", slots_, " buffers");
  ++next_;
  read_through();
  last_[slot(k)].wait();
  return buffer(slot(k));
}

void ParamFileTier::put(std::size_t k, bool write) {
  ZT_CHECK(k == freed_ && k < next_, "parameter tier: visit ", k, " put back out of order (expected ", freed_, ")");
  const std::size_t u = visits_[k], s = slot(k), bytes = records_[u];
  if (device_.runtime) {
    released_[s] = device_.runtime->record(device_.compute);  // after the gather or the update queued there
    if (write)
      last_[s] = io_->write(bounce_.data(), bytes, offset(u),
                            [this, s, bytes, e = released_[s]] { bounce_copy(s, bytes, e, /*up=*/false); });
  } else if (write) {
    last_[s] = io_->write(buffer(s), bytes, offset(u));
  }
  ++freed_;
  read_through();
}

std::byte* ParamFileTier::load(std::size_t u, bool fresh) {
  ZT_CHECK(u < records_.size() && records_[u] > 0, "parameter tier: unit ", u, " has no record");
  drain();
  visits_.clear();  // whatever pass was read ahead is over
  next_ = freed_ = issued_ = 0;
  std::byte* record = device_.runtime ? bounce_.data() : buffer(0);  // host memory either way
  if (fresh) {
    std::memset(record, 0, records_[u]);
  } else {
    last_[0] = io_->read(record, records_[u], offset(u));
    last_[0].wait();
  }
  return record;
}

void ParamFileTier::store(std::size_t u, bool modified) {
  if (!modified) return;
  last_[0] = io_->write(device_.runtime ? bounce_.data() : buffer(0), records_[u], offset(u));
  last_[0].wait();
}

void ParamFileTier::bounce_copy(std::size_t s, std::size_t bytes, device::Event released, bool up) {
  device::Runtime& rt = *device_.runtime;
  if (released.id >= 0) rt.wait(copies_, released);
  if (up)
    rt.copy_async(buffer(s), bounce_.data(), bytes, device::CopyKind::host_to_device, copies_);
  else
    rt.copy_async(bounce_.data(), buffer(s), bytes, device::CopyKind::device_to_host, copies_);
  // up: the bounce is free for the next job, and get() returns after this; down: the record is in
  // the bounce, and the file write follows
  rt.synchronize(copies_);
}

}  // namespace zt::offload
