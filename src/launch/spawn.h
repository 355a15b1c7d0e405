// launch/spawn.h — start N ranks of a program as local child processes and supervise them.
//
// Before any rank starts, the supervisor binds and serves the job's TCP store (store/tcp_store.h)
// at MASTER_ADDR:MASTER_PORT; with no port given it binds port 0, so the kernel picks a free port
// that nothing can take in between. Each child gets the torchrun variables (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT that store's port, ZT_LAUNCHER_STORE
// its address, so that every rank, rank 0 included, only connects to it, and ZT_STORE when one
// is chosen); its stdout and stderr come back
// through pipes and are copied to ours line by line, each line prefixed "[rank R] " (rank 0's
// stdout may go unprefixed: see SpawnOptions::plain_rank0_stdout). SIGINT and
// SIGTERM sent to the launcher are forwarded to every child.
// Failures: a rank that exits non-zero or dies by a signal is the job's *cause*, and the others get
// SIGTERM and, after a grace period, SIGKILL — except a rank that exits with kExitPeerFailed (3,
// core/error_report.h): it only stopped because another rank failed, so the supervisor waits up to
// the grace period for the rank that did to end on its own (and print why) before terminating the
// rest. The result names the cause — the first rank to fail on its own — with its last line on
// stderr (its error message) and its status, not merely the first rank to exit.
// Each rank runs in its own process group, and signals go to the
// whole group, so a rank's own helper processes are stopped with it. Used by zero-launch and by
// programs given --world-size N. Several machines: each runs one supervisor for its own ranks
// (nnodes, node_rank, as torchrun's static rendezvous); node 0's serves the store. A supervisor
// sees only its own ranks: a failure on another machine reaches it through its ranks, which fail
// with kExitPeerFailed. It is not a cluster scheduler: no restarts, no elastic membership.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zt::launch {

/// How to start and supervise the ranks.
struct SpawnOptions {
  int world_size = 1;  ///< number of ranks to start on this machine (nproc per node)
  /// Machines in the job, each running one supervisor with the same world_size (torchrun's
  /// --nnodes); the job has nnodes * world_size ranks.
  int nnodes = 1;
  /// This machine's index in [0, nnodes): its ranks are node_rank * world_size + 0..world_size-1.
  /// Node 0's supervisor serves the store; the others' ranks connect to it at master_addr.
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";  ///< MASTER_ADDR given to every rank
  /// MASTER_PORT, the port the supervisor's TCP store binds; 0 = any free port (bound as port 0;
  /// one machine only: the other machines must be told the port)
  uint16_t master_port = 0;
  std::string store;                      ///< ZT_STORE for the ranks; "" = leave as inherited
  std::chrono::milliseconds grace{3000};  ///< SIGTERM -> SIGKILL delay when terminating ranks
  std::string name = "zero-launch";       ///< prefix of the supervisor's own messages
  bool report = true;                     ///< print failures and the summary to stderr
  /// Copy rank 0's stdout without the "[rank 0] " prefix: a program that spawns itself (zero-train
  /// --world-size N) speaks for the job through rank 0, and prints the same lines whether its
  /// ranks are threads or processes. Every other stream keeps its prefix.
  bool plain_rank0_stdout = false;
  /// Print a stderr line only once when several ranks print it word for word (the same error
  /// hits every rank of a symmetric data-parallel step): the first rank's copy is shown, the
  /// others are counted in one line at the end.
  bool collapse_repeated_stderr = false;
  /// Extra NAME=value variables for every rank (set after the rank variables).
  std::vector<std::pair<std::string, std::string>> extra_env;
};

/// How one rank ended.
struct RankExit {
  int rank = -1;             ///< the rank
  bool started = false;      ///< false when it was never started (an earlier rank failed to exec)
  pid_t pid = -1;            ///< its process id
  bool exited = false;       ///< true: exited normally with `code`; false: killed by `signal`
  int code = 0;              ///< exit code (when exited)
  int signal = 0;            ///< signal number (when killed)
  bool by_launcher = false;  ///< it ended after the supervisor had signalled it
  std::string last_error;    ///< its last non-empty line on stderr ("" if none)
  /// @return "exited with code 3", "killed by SIGSEGV", ... (plus "(after SIGTERM from the
  /// launcher)" when by_launcher).
  std::string describe() const;
  /// @return true for exit code 0.
  bool ok() const { return exited && code == 0; }
  /// @return true when it exited on its own with kExitPeerFailed: another rank was the cause.
  bool peer_failed() const;
};

/// What happened to the job.
struct SpawnResult {
  /// 0 iff every rank exited with 0; otherwise the cause's exit code, or 128+signal if it was
  /// killed; with no cause, kExitPeerFailed if a rank reported a peer's failure, else (after an
  /// interruption) 128+that signal.
  int status = 0;
  /// The cause: the first rank to fail on its own (-1: none). Ranks that exited with
  /// kExitPeerFailed, or were stopped by the supervisor, are not causes — except a rank stopped
  /// after it had printed an error line while no other cause appeared (it failed, but was
  /// terminated before it could exit).
  int first_failed_rank = -1;
  std::string first_failure;    ///< how it failed (RankExit::describe), "" if none
  std::string cause_message;    ///< the cause's last stderr line, "PROGRAM: error: " removed
  int interrupted_by = 0;       ///< SIGINT/SIGTERM received and forwarded (0: none)
  uint16_t master_port = 0;     ///< the MASTER_PORT the ranks were given (the store's port)
  std::vector<RankExit> ranks;  ///< every rank's end, indexed by rank
};

/// Start `command` (program followed by its arguments; searched on PATH unless it contains a
/// '/') as opt.world_size ranks and wait for all of them, serving the job's TCP store at
/// opt.master_addr:opt.master_port meanwhile. A program that cannot be found or run, or a store
/// address that cannot be bound (a port in use), is a zt::Error before anything starts. Installs handlers for SIGINT,
/// SIGTERM, SIGCHLD and ignores SIGPIPE while it runs (restoring them after); only one call may run at a time. The
/// ranks get SIGKILL if the calling thread ends (PR_SET_PDEATHSIG), so call it from a thread that
/// waits for the result, normally the main thread.
/// @param command program and arguments. @param opt ranks and supervision settings.
/// @return how the job ended.
SpawnResult spawn_ranks(const std::vector<std::string>& command, const SpawnOptions& opt);

/// Path of the running executable (/proc/self/exe), for programs that spawn themselves.
/// @return the absolute path.
std::string self_executable();

}  // namespace zt::launch
