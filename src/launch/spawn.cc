// launch/spawn.cc — fork/exec of the ranks and the supervision loop (see spawn.h).
//
// One thread does everything: poll() over the children's pipes and a self-pipe that the signal
// handlers write to; after each wake-up it copies complete lines, reaps children with
// waitpid(pid, WNOHANG) (only our own pids, never -1: the caller may have other children), and
// escalates SIGTERM -> SIGKILL when the grace period is over.
#include "launch/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "core/check.h"
#include "core/error_report.h"
#include "launch/child_process.h"
#include "launch/line_prefixer.h"
#include "store/socket.h"
#include "store/tcp_store_server.h"

namespace zt::launch {
namespace {

using Clock = std::chrono::steady_clock;

int g_signal_pipe_write = -1;  // read by the signal handler only
std::atomic<bool> g_running{false};

void on_signal(int signo) {
  int saved = errno;
  unsigned char byte = static_cast<unsigned char>(signo);
  if (::write(g_signal_pipe_write, &byte, 1) < 0) {
    // The pipe is full: a wake-up is already pending, which is all the loop needs.
  }
  errno = saved;
}

// The supervised signals' handlers are installed for the call's duration and restored after.
class SignalScope {
 public:
  explicit SignalScope(int write_fd) {
    g_signal_pipe_write = write_fd;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 3; ++i) ::sigaction(kHandled[i], &sa, &old_[i]);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &old_pipe_);
  }
  ~SignalScope() {
    for (int i = 0; i < 3; ++i) ::sigaction(kHandled[i], &old_[i], nullptr);
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
    g_signal_pipe_write = -1;
  }
  static constexpr int kHandled[3] = {SIGINT, SIGTERM, SIGCHLD};

 private:
  struct sigaction old_[3];
  struct sigaction old_pipe_;
};

void write_fd(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own stdout is gone (EPIPE): nothing better to do than drop it
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// "PROGRAM: error: message" is how every program of this project reports the error that ends it
// (core/cli.h run_main); other programs' last lines are quoted whole.
bool is_error_line(const std::string& line) { return line.find(": error: ") != std::string::npos; }

std::string error_message(const std::string& line) {
  const std::size_t at = line.find(": error: ");
  const std::size_t prog_end = line.find(' ');
  if (at != std::string::npos && at < prog_end) return line.substr(at + 9);
  return line;
}

struct Stream {
  int fd = -1;     // read end of the child's pipe, -1 once closed
  int target = 1;  // our fd the lines go to
  LinePrefixer lines{""};
  std::size_t prefix_bytes = 0;  // the length of the prefix lines gets (to compare what ranks said)
  int rank = -1;                 // the rank whose stream this is
};

/// SpawnOptions::collapse_repeated_stderr: each distinct stderr line, without its "[rank R] "
/// prefix, is written the first time a rank prints it; a repeat from another rank is held back.
class RepeatFilter {
 public:
  /// @param s the stream the lines came from. @param text whole prefixed lines. @return the
  /// lines to write.
  std::string pass(const Stream& s, const std::string& text) {
    std::string out;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = std::min(text.find('\n', at), text.size() - 1) + 1;
      const std::string line = text.substr(at, end - at);
      at = end;
      const std::string said = line.substr(std::min(s.prefix_bytes, line.size()));
      const auto [it, fresh] = first_rank_.emplace(said, s.rank);
      if (fresh || it->second == s.rank)
        out += line;
      else
        held_back_ranks_.insert(s.rank);
    }
    return out;
  }
  /// @return one line naming the ranks whose repeats were held back ("" when none were).
  std::string summary(const std::string& name) const {
    if (held_back_ranks_.empty()) return "";
    std::string ranks;
    for (const int r : held_back_ranks_) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    return concat(name, ": rank", held_back_ranks_.size() > 1 ? "s " : " ", ranks,
                  " printed stderr lines another rank had printed already; those copies are left out\n");
  }

 private:
  std::map<std::string, int> first_rank_;  // a line as said -> the rank that said it first
  std::set<int> held_back_ranks_;
};

struct Child {
  pid_t pid = -1;
  bool alive = false;
  bool signalled = false;  // we sent it a signal
  Stream out, err;
};

// "SIGTERM", "SIGKILL", ... ("signal N" for unknown numbers).
std::string signal_name(int signo) {
  if (const char* abbrev = ::sigabbrev_np(signo)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signo);
}

}  // namespace

bool RankExit::peer_failed() const { return started && exited && code == kExitPeerFailed && !by_launcher; }

std::string RankExit::describe() const {
  if (!started) return "was never started";
  std::string how = exited ? "exited with code " + std::to_string(code) : "killed by " + signal_name(signal);
  return by_launcher ? how + " (after being signalled by the launcher)" : how;
}

std::string self_executable() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  ZT_CHECK(n > 0, "cannot read /proc/self/exe: ", std::strerror(errno));
  return std::string(buf, static_cast<std::size_t>(n));
}

namespace {

/// One job's supervision: the ranks started, their output copied line by line, their exits
/// reaped, a failure's cause found and the others stopped, the outcome summarised.
class Supervisor {
 public:
  explicit Supervisor(const SpawnOptions& opt) : opt_(opt), n_(opt.world_size) {}

  SpawnResult run(const std::string& program, const std::vector<std::string>& command) {
    serve_job_store();
    int sig_pipe[2];
    ZT_CHECK(::pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0, "pipe: ", std::strerror(errno));
    sig_r_ = store::Fd(sig_pipe[0]);
    store::Fd sig_w(sig_pipe[1]);
    SignalScope signals(sig_w.get());
    start_ranks(program, command);
    while (supervise_once()) {
    }
    conclude();
    report();
    return std::move(result_);
  }

 private:
  int global(int local) const { return opt_.node_rank * n_ + local; }  // the rank the job knows
  RankExit& exit_of(int r) { return result_.ranks[static_cast<std::size_t>(r)]; }

  // The job's TCP store, bound before any rank exists (port 0: the kernel picks a free port and
  // it stays ours) and served until every rank has ended; ranks only connect to it. Its threads
  // start with the supervised signals blocked, so those are delivered to this thread's handlers.
  // On several machines node 0's supervisor serves it and the others' ranks connect there.
  void serve_job_store() {
    if (opt_.node_rank == 0) {
      sigset_t block, old;
      sigemptyset(&block);
      for (int s : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) sigaddset(&block, s);
      ::pthread_sigmask(SIG_BLOCK, &block, &old);
      try {
        job_store_ = std::make_unique<store::TcpStoreServer>(opt_.master_addr, opt_.master_port);
      } catch (...) {
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        throw;
      }
      ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
    result_.master_port = job_store_ ? job_store_->port() : opt_.master_port;
  }

  void start_ranks(const std::string& program, const std::vector<std::string>& command) {
    store::Fd null_r(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    ZT_CHECK(null_r.get() >= 0, "cannot open /dev/null: ", std::strerror(errno));
    std::vector<std::string> argv_strings(command);
    std::vector<char*> argv = detail::c_strings(argv_strings);
    children_.resize(static_cast<std::size_t>(n_));
    result_.ranks.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) exit_of(r).rank = global(r);
    std::fflush(stdout);  // or buffered output would be duplicated into every child
    std::fflush(stderr);
    for (int r = 0; r < n_; ++r) {
      int out[2], err[2];
      ZT_CHECK(::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0, "pipe: ", std::strerror(errno));
      std::vector<std::string> env_strings = detail::child_environment(opt_, r, result_.master_port);
      std::vector<char*> envp = detail::c_strings(env_strings);
      pid_t pid = detail::start_child(program, argv, envp, out[1], err[1], null_r.get());
      ::close(out[1]);
      ::close(err[1]);
      Child& c = children_[static_cast<std::size_t>(r)];
      const std::string prefix = "[rank " + std::to_string(global(r)) + "] ";
      const bool plain = opt_.plain_rank0_stdout && global(r) == 0;
      c.out = {out[0], 1, LinePrefixer(plain ? "" : prefix), plain ? 0 : prefix.size(), global(r)};
      c.err = {err[0], 2, LinePrefixer(prefix), prefix.size(), global(r)};
      RankExit& e = exit_of(r);
      e.started = true;
      if (pid < 0) {  // exec failed: this rank "exited" 127 and the job is failing
        e.exited = true;
        e.code = 127;
        if (opt_.report)
          write_fd(2, concat(opt_.name, ": rank ", global(r), ": cannot execute ", program, ": ",
                             std::strerror(-static_cast<int>(pid)), "\n"));
        record_failure(r, e);
        terminate_all(SIGTERM);
        break;
      }
      c.pid = e.pid = pid;
      c.alive = true;
    }
  }

  void signal_all(int signo) {
    for (auto& c : children_)
      if (c.alive) {
        if (::kill(-c.pid, signo) != 0) ::kill(c.pid, signo);
        c.signalled = true;
      }
  }
  void terminate_all(int signo) {
    if (!terminating_) kill_at_ = Clock::now() + opt_.grace;
    terminating_ = true;
    signal_all(signo);
  }
  void record_failure(int r, const RankExit& e) {
    if (cause_ >= 0 || e.ok() || e.by_launcher || e.peer_failed()) return;
    cause_ = r;
    result_.first_failed_rank = global(r);
    result_.first_failure = e.describe();
    if (opt_.report)
      write_fd(2, concat(opt_.name, ": rank ", global(r), " ", e.describe(), "; terminating the other ",
                         "ranks (SIGTERM, then SIGKILL after ", opt_.grace.count(), " ms)\n"));
  }
  // A rank that exits with kExitPeerFailed is an echo of a failure elsewhere: the rank that
  // failed may still be printing why, so it gets the grace period to end on its own.
  void record_echo(int r, const RankExit& e) {
    if (terminating_ || echo_deadline_ != Clock::time_point::max()) return;
    echo_deadline_ = Clock::now() + opt_.grace;
    if (opt_.report)
      write_fd(2, concat(opt_.name, ": rank ", global(r), " ", e.describe(), ": it stopped because a peer failed; ",
                         "waiting up to ", opt_.grace.count(), " ms for the rank that failed\n"));
  }

  /// Reap the children that ended (our own pids only); @return how many are still alive.
  int reap() {
    int live = 0;
    for (int r = 0; r < n_; ++r) {
      Child& c = children_[static_cast<std::size_t>(r)];
      if (!c.alive) continue;
      int st;
      pid_t w = ::waitpid(c.pid, &st, WNOHANG);
      if (w == 0) {
        ++live;
        continue;
      }
      c.alive = false;
      RankExit& e = exit_of(r);
      e.exited = w > 0 && WIFEXITED(st);
      e.code = e.exited ? WEXITSTATUS(st) : 0;
      e.signal = (w > 0 && WIFSIGNALED(st)) ? WTERMSIG(st) : 0;
      e.by_launcher = c.signalled;
      if (e.peer_failed()) {
        record_echo(r, e);
      } else if (!e.ok()) {
        record_failure(r, e);
        if (!terminating_) terminate_all(SIGTERM);
      }
    }
    return live;
  }

  void emit(const Stream& s, const std::string& text) {
    write_fd(s.target, opt_.collapse_repeated_stderr && s.target == 2 ? repeats_.pass(s, text) : text);
  }
  void pump(Stream& s) {
    char buf[65536];
    ssize_t got = ::read(s.fd, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) return close_stream(s);
    emit(s, s.lines.feed(buf, static_cast<std::size_t>(got)));
  }
  void close_stream(Stream& s) {
    emit(s, s.lines.finish());
    ::close(s.fd);
    s.fd = -1;
  }

  /// One wake-up: reap, escalate, wait for output or a signal, copy it. @return false when the
  /// job is over (every rank ended and its output is drained).
  bool supervise_once() {
    const int live = reap();
    if (live > 0 && !terminating_ && Clock::now() >= echo_deadline_) terminate_all(SIGTERM);
    if (live > 0 && Clock::now() >= kill_at_) {
      signal_all(SIGKILL);
      kill_at_ = Clock::time_point::max();
    }
    std::vector<pollfd> fds{{sig_r_.get(), POLLIN, 0}};
    std::vector<Stream*> streams;
    for (auto& c : children_)
      for (Stream* s : {&c.out, &c.err})
        if (s->fd >= 0) {
          fds.push_back({s->fd, POLLIN, 0});
          streams.push_back(s);
        }
    // All ranks gone: only their output is left. A grandchild that keeps a pipe open must not
    // keep us here, so draining is bounded.
    if (live == 0) {
      if (streams.empty()) return false;
      if (drain_until_ == Clock::time_point::max()) drain_until_ = Clock::now() + std::chrono::milliseconds(500);
      if (Clock::now() >= drain_until_) {
        for (Stream* s : streams) close_stream(*s);
        return false;
      }
    }
    auto wake = std::min({kill_at_, echo_deadline_, drain_until_, Clock::now() + std::chrono::milliseconds(100)});
    int ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wake - Clock::now()).count() + 1);
    int rc = ::poll(fds.data(), fds.size(), std::max(ms, 0));
    if (rc < 0 && errno != EINTR) ZT_FAIL("poll: ", std::strerror(errno));
    if (rc <= 0) return true;
    if (fds[0].revents & POLLIN) on_signals();
    for (std::size_t i = 1; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) pump(*streams[i - 1]);
    return true;
  }
  void on_signals() {
    unsigned char sig[64];
    ssize_t k = ::read(sig_r_.get(), sig, sizeof sig);
    for (ssize_t i = 0; i < k; ++i) {
      if (sig[i] != SIGINT && sig[i] != SIGTERM) continue;  // SIGCHLD only wakes us up
      if (result_.interrupted_by != 0) {
        signal_all(SIGKILL);  // asked twice: stop waiting politely
      } else {
        result_.interrupted_by = sig[i];
        if (opt_.report)
          write_fd(2, concat(opt_.name, ": received ", signal_name(sig[i]), ", forwarding it to the ranks\n"));
        terminate_all(sig[i]);
      }
    }
  }

  /// The job's status and its cause.
  void conclude() {
    for (std::size_t r = 0; r < children_.size(); ++r) result_.ranks[r].last_error = children_[r].err.lines.last_line();
    for (const auto& e : result_.ranks) all_ok_ = all_ok_ && e.ok();
    // No rank failed on its own, yet one that the supervisor stopped had printed an error: it was
    // the cause, terminated before it could exit (an echo's grace period ran out first).
    if (!all_ok_ && cause_ < 0 && !result_.interrupted_by)
      for (std::size_t r = 0; r < result_.ranks.size() && cause_ < 0; ++r) {
        const RankExit& e = result_.ranks[r];
        if (e.by_launcher && !e.peer_failed() && is_error_line(e.last_error)) {
          cause_ = static_cast<int>(r);
          result_.first_failed_rank = e.rank;
          result_.first_failure = e.describe();
        }
      }
    for (std::size_t r = 0; r < result_.ranks.size() && echo_ < 0; ++r)
      if (result_.ranks[r].peer_failed()) echo_ = static_cast<int>(r);
    if (all_ok_) {
      result_.status = 0;
    } else if (cause_ >= 0) {
      const RankExit& f = exit_of(cause_);
      result_.status = f.by_launcher ? kExitError : f.exited ? f.code : 128 + f.signal;
      result_.cause_message = error_message(f.last_error);
    } else if (echo_ >= 0 && !result_.interrupted_by) {
      result_.status = kExitPeerFailed;
    } else {
      result_.status = 128 + (result_.interrupted_by ? result_.interrupted_by : SIGTERM);
    }
  }

  /// Every rank that did not end well, and the job's outcome in one line.
  void report() {
    if (opt_.report) write_fd(2, repeats_.summary(opt_.name));
    if (!opt_.report || all_ok_) return;
    std::string text;
    for (const auto& e : result_.ranks)
      if (!e.ok())
        text += concat(opt_.name, ": rank ", e.rank, " ", e.describe(),
                       e.peer_failed() ? " (it stopped because a peer failed)" : "", "\n");
    if (cause_ >= 0) {
      text +=
          concat(opt_.name, ": job failed: rank ", result_.first_failed_rank, " failed (", result_.first_failure, ")");
      text += result_.cause_message.empty() ? "\n" : concat(": ", result_.cause_message, "\n");
    } else if (result_.interrupted_by) {
      text += concat(opt_.name, ": job interrupted by ", signal_name(result_.interrupted_by), "\n");
    } else if (echo_ >= 0) {
      text += concat(opt_.name, ": job failed: no rank reported an error of its own; rank ", exit_of(echo_).rank,
                     " stopped because a peer failed: ", error_message(exit_of(echo_).last_error), "\n");
    }
    write_fd(2, text);
  }

  const SpawnOptions& opt_;
  const int n_;
  SpawnResult result_;
  std::unique_ptr<store::TcpStoreServer> job_store_;
  store::Fd sig_r_;
  std::vector<Child> children_;
  RepeatFilter repeats_;
  bool terminating_ = false;  // SIGTERM has gone out to every live child
  bool all_ok_ = true;
  int cause_ = -1;  // index into result_.ranks of first_failed_rank
  int echo_ = -1;   // index of the first rank (in rank order) that reported a peer's failure
  Clock::time_point kill_at_ = Clock::time_point::max();
  Clock::time_point echo_deadline_ = Clock::time_point::max();
  Clock::time_point drain_until_ = Clock::time_point::max();
};

}  // namespace

SpawnResult spawn_ranks(const std::vector<std::string>& command, const SpawnOptions& opt) {
  ZT_CHECK(!command.empty(), opt.name, ": no program given (usage: ... -- PROGRAM ARGS)");
  ZT_CHECK(opt.world_size >= 1 && opt.world_size <= 4096, opt.name, ": world size ", opt.world_size,
           " is outside [1, 4096]");
  ZT_CHECK(opt.grace.count() >= 0, opt.name, ": the grace period must not be negative");
  ZT_CHECK(opt.nnodes >= 1 && opt.node_rank >= 0 && opt.node_rank < opt.nnodes, opt.name, ": node rank ", opt.node_rank,
           " is outside [0, ", opt.nnodes, ")");
  ZT_CHECK(opt.nnodes == 1 || opt.master_port != 0, opt.name,
           ": a job on several machines needs --master-port: the other machines must know where node 0's store is");
  const std::string program = detail::resolve_program(command[0]);
  ZT_CHECK(!g_running.exchange(true), "spawn_ranks is already running in this process");
  struct Release {
    ~Release() { g_running = false; }
  } release;
  return Supervisor(opt).run(program, command);
}

}  // namespace zt::launch
