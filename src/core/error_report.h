// core/error_report.h — who caused a failed job, and how a process says so before it is too late.
//
// When one rank of a job fails, every other rank fails soon after: it is told by an agreement
// (a job-wide max of "did anyone fail?"), or it finds a peer's connection closed, or a peer stops
// answering and the collective times out. Only the first rank knows what went wrong; the others
// only know that *someone* did. Two rules keep the first rank's message from being lost:
//   - the two kinds of failure are different errors with different exit statuses: a rank's own
//     error (zt::Error, status 2) and "a peer failed" (zt::PeerFailed, status 3), so a launcher
//     can tell the cause from its echoes (launch/spawn.h reports the cause, not the first exit);
//   - a rank that detects an error prints its message *before* it tells the others
//     (announce_error), because once they know, they exit, and a launcher that sees ranks exit
//     starts terminating the rest, possibly before the first rank has printed anything.
// Announcing is switched on per process (EarlyErrorReport) by a program whose rank is the whole
// process; ranks that are threads of one process report when they are joined, so nothing is lost
// and nothing is printed twice. This is not a logging facility: it prints one line, once.
#pragma once

#include <exception>
#include <string>

#include "core/check.h"

namespace zt {

/// Exit status of a process that stops on its own error (bad input, a failed check).
inline constexpr int kExitError = 2;
/// Exit status of a process that stops because another rank failed, stalled or left: it is not
/// the cause, and a launcher looks further for the rank that is.
inline constexpr int kExitPeerFailed = 3;

/// The error of a rank that stops only because a peer did: the message says which agreement or
/// collective learnt of it and, where known, which peer. Caught like any zt::Error.
class PeerFailed : public Error {
 public:
  /// @param message one line: where this rank learnt of the failure, and which peer if known.
  explicit PeerFailed(const std::string& message) : Error(message) {}
};

/// Throw zt::PeerFailed with the concatenated message parts unless `cond` holds.
#define ZT_CHECK_PEERS(cond, ...)                                   \
  do {                                                              \
    if (!(cond)) throw ::zt::PeerFailed(::zt::concat(__VA_ARGS__)); \
  } while (0)

/// The exit status for an error: kExitPeerFailed for zt::PeerFailed, else kExitError.
/// @param e the error that ends the process. @return the status.
int exit_status_of(const std::exception& e);

/// While one of these is alive, announce_error prints "<program>: error: <message>" to stderr at
/// once (flushed) and remembers it, so run_main does not print it again. One per process, on
/// the thread that runs the process's one rank.
class EarlyErrorReport {
 public:
  /// @param program the name printed before the message.
  explicit EarlyErrorReport(std::string program);
  ~EarlyErrorReport();
  EarlyErrorReport(const EarlyErrorReport&) = delete;
  EarlyErrorReport& operator=(const EarlyErrorReport&) = delete;
};

/// Called by code that is about to tell its peers that this rank failed (or is unwinding past a
/// Collective, which closes its connections): prints the error now if an EarlyErrorReport is
/// alive, else does nothing (the error is reported where it is caught).
/// @param e the error.
void announce_error(const std::exception& e);

/// Run `body`; if it throws, announce the error, then let it propagate unchanged. Wrap code in
/// it *inside* the scope of the Collectives it uses, so the message is out before their
/// destructors tell the peers.
/// @param body the code. @return what it returns.
template <typename Body>
auto announcing_errors(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    announce_error(e);
    throw;
  }
}

/// Whether this error's message was already printed by announce_error (run_main skips it).
/// @param e the error. @return true if announced.
bool already_announced(const std::exception& e);

}  // namespace zt
