// tests/fuzz/store_request.cc — fuzz target: what a TCP store client sends, as the server reads
// and answers it: the input is the byte stream of one connection, written into one end of a
// socketpair and then closed; the other end is read frame by frame with receive_message (size
// prefix, payload, decode), each request checked by parse_request and answered by a fresh
// StoreState, and each reply encoded. Reading must end with the stream (closed, or one
// zt::Error for a bad frame, which drops the connection); no input may make it allocate what the
// stream does not contain. A GET or WAIT for a missing key is answered at once (timeout 0):
// how long a client asks to wait is its own business, not a parsing question; only the deadline
// computed from its timeout is checked (deadline_after). Not the accept
// loop or the connection threads (tests/launch/test_tcp_store.cc runs those).
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>

#include "core/check.h"
#include "fuzz/fuzz_support.h"
#include "store/protocol.h"
#include "store/socket.h"
#include "store/store_state.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace zt::store;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) zt::fuzz::broken("socketpair failed");
  Fd reader(pair[0]);
  // The writer is a thread of its own: the input may exceed what the socket buffers hold. It
  // stops early (and quietly) once the reader has dropped the connection.
  std::thread writer([fd = pair[1], data, size] {
    for (std::size_t at = 0; at < size;) {
      const ssize_t n = ::send(fd, data + at, size - at, MSG_NOSIGNAL);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::shutdown(fd, SHUT_WR);
  });
  StoreState state;
  try {
    for (;;) {
      Message m;
      if (receive_message(reader.get(), Deadline::max(), "fuzz", m) != ReadStatus::kOk) break;
      Request r = parse_request(m);
      // the one part of a wait that the client's number decides: never a deadline in the past
      const Deadline before = std::chrono::steady_clock::now();
      if (deadline_after(r.timeout) < before) zt::fuzz::broken("a client's timeout gave a deadline in the past");
      r.timeout = std::chrono::milliseconds(0);
      encode(state.handle(r));
    }
  } catch (const zt::Error&) {
  }
  reader.reset();  // unblocks a writer still sending
  writer.join();
  ::close(pair[1]);
  return 0;
}
