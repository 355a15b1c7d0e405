// store/protocol.h — the TCP store's wire format: one request, one reply, both length-prefixed.
//
//   frame   := u32 payload_size (big-endian) , payload
//   payload := u8 op , field*          field := u32 size (big-endian) , bytes
//
// Requests (client -> server) and their replies (server -> client):
//   'S' key value            set key to value (overwrites)          -> 'K'
//   'G' timeout_ms key       value of key, waiting up to timeout_ms -> 'V' value | 'T' key
//   'W' timeout_ms key...    wait until every key exists            -> 'K'       | 'T' missing_key
// timeout_ms is a non-negative decimal string (beyond the clock's range: no deadline). A malformed
// request closes that connection (the server keeps serving the others). That is the whole
// protocol: no auth, no delete, no counters.
// This file only encodes and decodes (frames, and what a request's fields mean); sockets are
// store/socket.h, the requests' effect is store_state.h, connections are tcp_store_server.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "store/socket.h"

namespace zt::store {

/// One request or reply: an op letter and its fields (byte strings).
struct Message {
  char op = 0;                      ///< request or reply letter (see the file comment)
  std::vector<std::string> fields;  ///< the fields in order
};

/// Largest payload accepted; a larger size prefix means a confused or foreign peer.
inline constexpr uint32_t kMaxPayloadBytes = 256u << 20;

/// Encode a message as one frame. @param m the message. @return the frame's bytes.
std::string encode(const Message& m);

/// Decode one payload (the bytes after the size prefix). A truncated or trailing field is a
/// zt::Error. @param payload the bytes. @return the message.
Message decode(const std::string& payload);

/// A request whose fields have been checked: the op, its keys, and for 'S' the value, for 'G' and
/// 'W' how long the client lets the server wait.
struct Request {
  char op = 0;                           ///< 'S', 'G' or 'W'
  std::vector<std::string> keys;         ///< 'S' and 'G': one key; 'W': any number
  std::string value;                     ///< 'S': the value
  std::chrono::milliseconds timeout{0};  ///< 'G' and 'W': the client's limit (>= 0)
};

/// Check a decoded request: a known op, the right number of fields, a timeout that is a
/// non-negative decimal integer. Anything else is a zt::Error (the server then drops that client).
/// @param m a decoded message. @return the request.
Request parse_request(const Message& m);

/// Send one message. @param fd connected socket. @param m message. @param peer for errors.
void send_message(int fd, const Message& m, const std::string& peer);

/// Receive one message, waiting until the deadline. Memory follows the bytes that arrive, not
/// the size the peer announces (its buffer grows 64 KiB at a time).
/// @param fd connected socket. @param deadline when to give up. @param peer for errors.
/// @param out the message, filled when the status is kOk.
/// @return kOk, kClosed (peer closed cleanly between messages) or kTimedOut.
ReadStatus receive_message(int fd, Deadline deadline, const std::string& peer, Message& out);

}  // namespace zt::store
