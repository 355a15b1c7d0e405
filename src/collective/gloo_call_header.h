// collective/gloo_call_header.h — the 48-byte header GlooCollective sends before a call's data,
// so that a mismatch (another call, size, dtype or root on some rank; a message sent to the wrong
// receive) is one clear error naming each side instead of a timeout or corrupt data. Collectives
// exchange it with every peer of the group (gloo_collective.cc); a point-to-point transfer sends
// it to its receiver only (gloo_p2p.cc). Internal to the Gloo backend; not a wire format anyone
// else reads.
#pragma once

#include <cstdint>

#include <gloo/types.h>

namespace zt::gloo_wire {

/// The wire form of one call (fixed layout); magic catches a peer speaking something else.
struct Header {
  uint64_t seq;          ///< the call's number (a point-to-point message: the pair's message number)
  uint64_t count;        ///< elements of the full buffer
  uint64_t counts_hash;  ///< hash of the per-rank counts (the _v calls), else 0
  uint32_t kind;         ///< CollKind
  uint32_t dtype;        ///< DType
  uint32_t op;           ///< ReduceOp (0 for the others)
  int32_t root;          ///< broadcast root, or the sender of a point-to-point message; else -1
  uint32_t magic;        ///< kMagic
  uint32_t reserved;     ///< 0
};
static_assert(sizeof(Header) == 48, "header layout");

inline constexpr uint32_t kMagic = 0x5A54434Bu;  ///< "ZTCK"
// Gloo's own slot prefixes are 0x01..0x08; ours must not collide with them or each other.
inline constexpr uint8_t kCallSlot = 0x7A;        ///< a collective's header (tag 0: calls run one at a time)
inline constexpr uint8_t kP2pHeaderSlot = 0x7B;   ///< a point-to-point header (tag: the pair's message number)
inline constexpr uint8_t kP2pPayloadSlot = 0x7C;  ///< a point-to-point payload (same tag)
inline constexpr uint8_t kWatchSlot = 0x7D;       ///< never sent to: gloo_p2p.cc's probe of a pair's health

/// The slot of one message. @param prefix one of the constants above. @param tag its tag.
/// @return the Gloo slot. Tags wrap at 2^32, harmlessly: a pair's messages match in order.
inline uint64_t slot(uint8_t prefix, uint64_t tag) { return gloo::Slot::build(prefix, static_cast<uint32_t>(tag)); }

}  // namespace zt::gloo_wire
