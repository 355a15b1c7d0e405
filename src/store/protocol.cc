// store/protocol.cc — frame encoding and decoding (see protocol.h for the format).
#include "store/protocol.h"

#include <algorithm>

#include "core/check.h"
#include "core/cli.h"

namespace zt::store {
namespace {

// How far ahead of the bytes received a message's buffer may grow.
constexpr std::size_t kReadChunkBytes = std::size_t{64} << 10;

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

uint32_t get_u32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

std::string encode(const Message& m) {
  std::string payload(1, m.op);
  for (const auto& f : m.fields) {
    ZT_CHECK(f.size() <= kMaxPayloadBytes, "TCP store: a field of ", f.size(), " bytes is too large");
    put_u32(payload, static_cast<uint32_t>(f.size()));
    payload += f;
  }
  ZT_CHECK(payload.size() <= kMaxPayloadBytes, "TCP store: a message of ", payload.size(),
           " bytes exceeds the limit of ", kMaxPayloadBytes);
  std::string frame;
  frame.reserve(4 + payload.size());
  put_u32(frame, static_cast<uint32_t>(payload.size()));
  return frame + payload;
}

Message decode(const std::string& payload) {
  ZT_CHECK(!payload.empty(), "TCP store: empty message");
  Message m;
  m.op = payload[0];
  std::size_t pos = 1;
  const auto* bytes = reinterpret_cast<const unsigned char*>(payload.data());
  while (pos < payload.size()) {
    ZT_CHECK(payload.size() - pos >= 4, "TCP store: truncated field size");
    uint32_t n = get_u32(bytes + pos);
    pos += 4;
    ZT_CHECK(payload.size() - pos >= n, "TCP store: field of ", n, " bytes runs past the message");
    m.fields.emplace_back(payload, pos, n);
    pos += n;
  }
  return m;
}

Request parse_request(const Message& m) {
  const auto& f = m.fields;
  Request r;
  r.op = m.op;
  switch (m.op) {
    case 'S':
      ZT_CHECK(f.size() == 2, "SET takes a key and a value");
      r.keys = {f[0]};
      r.value = f[1];
      return r;
    case 'G':
      ZT_CHECK(f.size() == 2, "GET takes a timeout and a key");
      r.keys = {f[1]};
      break;
    case 'W':
      ZT_CHECK(f.size() >= 1, "WAIT takes a timeout and keys");
      r.keys.assign(f.begin() + 1, f.end());
      break;
    default:
      ZT_FAIL("unknown request op");
  }
  const int64_t ms = parse_int_strict(f[0], "timeout_ms");
  ZT_CHECK(ms >= 0, "timeout_ms must be >= 0");
  r.timeout = std::chrono::milliseconds(ms);
  return r;
}

void send_message(int fd, const Message& m, const std::string& peer) {
  std::string frame = encode(m);
  write_all(fd, frame.data(), frame.size(), peer);
}

ReadStatus receive_message(int fd, Deadline deadline, const std::string& peer, Message& out) {
  unsigned char size_bytes[4];
  ReadStatus st = read_all(fd, size_bytes, 4, deadline, peer);
  if (st != ReadStatus::kOk) return st;
  uint32_t n = get_u32(size_bytes);
  ZT_CHECK(n >= 1 && n <= kMaxPayloadBytes, "TCP store: message size ", n, " from ", peer,
           " is invalid (not a zero-teach store peer?)");
  // The size is only the peer's claim: the buffer grows with the bytes that arrive, one chunk
  // ahead at most, so a peer that announces 256 MiB and sends ten bytes costs ten bytes and a
  // chunk, not 256 MiB (many such peers at once would otherwise exhaust the server's memory).
  std::string payload;
  while (payload.size() < n) {
    const std::size_t at = payload.size();
    const std::size_t chunk = std::min<std::size_t>(n - at, kReadChunkBytes);
    payload.resize(at + chunk);
    st = read_all(fd, payload.data() + at, chunk, deadline, peer);
    ZT_CHECK(st != ReadStatus::kClosed, "TCP store: ", peer, " closed in the middle of a message");
    if (st != ReadStatus::kOk) return st;
  }
  out = decode(payload);
  return ReadStatus::kOk;
}

}  // namespace zt::store
