// collective/staged_groups.h — the groups a loop on a device reduces and gathers its tensors over:
// each host-side group behind pinned staging (collective/staged_collective.h), kept together so
// their rooms can be reserved for the largest call and reported as pinned host memory.
//
// On the host there is nothing to stage: every group is used as it is. Only the ZeRO engine
// communicates; the reference loop has no group, so this lives beside the collectives and not
// in the loops' placement (step_device/placement.h).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collective/collective.h"
#include "collective/device_routed.h"
#include "collective/staged_collective.h"
#include "core/check.h"
#include "device/runtime.h"

namespace zt {

/// Makes a group on device buffers (NCCL) for a runtime's stream: the group orders its calls
/// after the work enqueued on that stream before each call.
using DeviceGroupMaker = std::function<std::unique_ptr<Collective>(device::Runtime&, device::Stream)>;

/// A device's staged groups (none on the host).
class StagedGroups {
 public:
  /// @param runtime the device whose buffers are staged (null: the host). @param stream the
  /// stream the buffers' producers and consumers run on.
  StagedGroups(device::Runtime* runtime, device::Stream stream) : runtime_(runtime), stream_(stream) {}

  /// The group to reduce and gather the loop's tensors over. @param group a host-side group
  /// (outlives this object). @return `group` itself on the host; on a device, `group` behind
  /// pinned staging, kept by this object.
  Collective& over(Collective& group) {
    if (!runtime_) return group;
    staged_.push_back(std::make_unique<StagedCollective>(group, *runtime_, stream_));
    return *staged_.back();
  }
  /// The group to reduce and gather over, with a device library beside the host one: on a device
  /// with a maker, device buffers go to the group it makes (NCCL) and host values to `group`
  /// (collective/device_routed.h); otherwise over(group). @param group a host-side group.
  /// @param device_group makes the device-side group (may be empty). @return the group to use.
  Collective& over(Collective& group, const DeviceGroupMaker& device_group) {
    if (!runtime_ || !device_group) return over(group);
    routed_.push_back(std::make_unique<DeviceRoutedCollective>(group, device_group(*runtime_, stream_), *runtime_));
    return *routed_.back();
  }
  /// On a device, reserve a staged group's rooms for its largest call; nothing on the host.
  /// @param group what over() returned. @param rooms the input and output rooms' sizes.
  void reserve(Collective& group, StagingRooms rooms) {
    for (auto& s : staged_)
      if (s.get() == &group) return s->reserve(rooms);
    for (auto& r : routed_)
      if (r.get() == &group) return;  // device buffers never cross the host: no rooms
    ZT_CHECK(!runtime_, "StagedGroups::reserve: the group is not one of these staged groups");
  }
  /// @return the rooms' pinned host memory, by ledger category (empty on the host).
  std::map<std::string, std::size_t> pinned_by_category() const {
    std::size_t rooms = 0;
    for (const auto& s : staged_) rooms += s->room_bytes();
    if (rooms == 0) return {};
    return {{kCollectiveStagingCategory, rooms}};
  }

 private:
  device::Runtime* runtime_;
  device::Stream stream_;
  std::vector<std::unique_ptr<StagedCollective>> staged_;
  std::vector<std::unique_ptr<DeviceRoutedCollective>> routed_;
};

}  // namespace zt
