// store/store_state.cc — SET, GET and WAIT on the in-memory map (see store_state.h).
#include "store/store_state.h"

#include "core/check.h"

namespace zt::store {

bool StoreState::wait_parked(uint64_t n, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return parked_cv_.wait_for(lock, timeout, [&] { return parked_ >= n; });
}

void StoreState::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
}

std::string StoreState::wait_for(std::unique_lock<std::mutex>& lock, const std::vector<std::string>& keys,
                                 Deadline deadline) {
  for (;;) {
    std::string missing;
    for (const auto& k : keys)
      if (!data_.count(k)) {
        missing = k;
        break;
      }
    if (missing.empty()) return "";
    if (stopping_) ZT_FAIL("server stopping");
    ++parked_;
    parked_cv_.notify_all();
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (!data_.count(missing)) return missing;
    }
  }
}

Message StoreState::handle(const Request& r) {
  std::unique_lock<std::mutex> lock(mu_);
  if (r.op == 'S') {
    data_[r.keys.at(0)] = r.value;
    lock.unlock();
    changed_.notify_all();
    return {'K', {}};
  }
  std::string missing = wait_for(lock, r.keys, deadline_after(r.timeout));
  if (!missing.empty()) return {'T', {missing}};
  if (r.op == 'G') return {'V', {data_.at(r.keys.at(0))}};
  return {'K', {}};
}

}  // namespace zt::store
