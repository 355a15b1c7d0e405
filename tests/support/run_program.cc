// tests/support/run_program.cc — see run_program.h.
//
// fork/exec by hand rather than posix_spawn, for three things the child needs before exec: its
// own process group (so a timeout kills what it started too), PR_SET_PDEATHSIG (so it dies with
// the test), and default signal dispositions. Between fork and exec only async-signal-safe calls
// are made (tests have threads). The parent waits with poll() on the output pipes and a pidfd:
// it wakes when something happens, never on a timer.
#include "support/run_program.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>

extern char** environ;

namespace zt::test {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::set<std::string> replaced;
  for (const auto& [k, v] : extra) replaced.insert(k);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    if (!replaced.count(entry.substr(0, entry.find('=')))) env.push_back(std::move(entry));
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + (a.empty() ? std::string("''") : a);
  return s;
}

std::string tail(const std::string& s, std::size_t n = 4000) {
  return s.size() <= n ? s : "[...]" + s.substr(s.size() - n);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

struct Child {
  pid_t pid = -1;
  int out = -1;  // read end of its stdout pipe (stderr too when merged)
  int err = -1;  // read end of its stderr pipe, -1 when merged
};

// Start argv with stdin from /dev/null and stdout/stderr into fresh pipes.
Child start_child(const std::vector<std::string>& argv, const RunOptions& opt, bool merge) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
    throw std::invalid_argument("run_program: the program must be an absolute path, got '" +
                                (argv.empty() ? std::string() : argv[0]) + "' (use bin(NAME))");
  int out[2], err[2] = {-1, -1}, status[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || (!merge && ::pipe2(err, O_CLOEXEC) != 0) || ::pipe2(status, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("run_program: pipe: ") + std::strerror(errno));
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::string> args(argv), env = environment_with(opt.env);
  std::vector<char*> cargs = c_strings(args), cenv = c_strings(env);
  std::fflush(stdout);  // or buffered output would be written twice, once by the child
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);                     // its own group: a timeout kills its helpers too
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // and it never outlives the test
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s = 1; s < 32; ++s)
      if (s != SIGKILL && s != SIGSTOP) ::sigaction(s, &dfl, nullptr);  // an ignored one survives exec
    if (null_in >= 0) ::dup2(null_in, 0);
    ::dup2(out[1], 1);
    ::dup2(merge ? out[1] : err[1], 2);
    ::execve(cargs[0], cargs.data(), cenv.data());
    const int e = errno;
    if (::write(status[1], &e, sizeof e) < 0) {
    }
    ::_exit(127);
  }
  const int fork_errno = errno;
  if (null_in >= 0) ::close(null_in);
  ::close(out[1]);
  if (!merge) ::close(err[1]);
  ::close(status[1]);
  if (pid < 0) {
    ::close(out[0]);
    if (!merge) ::close(err[0]);
    ::close(status[0]);
    throw std::runtime_error(std::string("run_program: fork: ") + std::strerror(fork_errno));
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it
  int e = 0;
  ssize_t n;
  while ((n = ::read(status[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(status[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {  // exec failed
    ::close(out[0]);
    if (!merge) ::close(err[0]);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("run_program: cannot run " + argv[0] + ": " + std::strerror(e));
  }
  return {pid, out[0], merge ? -1 : err[0]};
}

// A descriptor that becomes readable when the process exits, or -1 where the kernel has none.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

int poll_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 1 << 30));
}

// Wait until `pid` exits or the deadline passes; true (and its status) when it exited.
bool wait_exit(pid_t pid, int& status, Clock::time_point deadline) {
  const int pidfd = open_pidfd(pid);
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) {
      if (pidfd >= 0) ::close(pidfd);
      return true;
    }
    if (Clock::now() >= deadline) break;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, poll_ms(deadline));
    } else {
      ::poll(nullptr, 0, std::min(poll_ms(deadline), 10));  // old kernel: no pidfd to wait on
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return false;
}

void decode(int raw, int& status, int& signal) {
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  signal = WIFSIGNALED(raw) ? WTERMSIG(raw) : 0;
}

// Append what is readable on fd to `to`; close it at end of file. @return bytes read.
ssize_t pump(int& fd, std::string& to) {
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
  if (n <= 0) {
    close_fd(fd);
    return 0;
  }
  to.append(buf, static_cast<std::size_t>(n));
  return n;
}

}  // namespace

std::string build_dir() { return ZT_BUILD_DIR; }

std::string bin(const std::string& name) { return build_dir() + "/bin/" + name; }

std::vector<std::string> split_args(const std::string& text) {
  if (text.find_first_of("\"'<>|$;&`\\") != std::string::npos)
    throw std::invalid_argument("split_args: '" + text +
                                "' has shell syntax; pass an argv vector (and RunOptions::env)");
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  if (!words.empty() && words[0].find('=') != std::string::npos && words[0][0] != '-')
    throw std::invalid_argument("split_args: '" + words[0] +
                                "' looks like a shell variable assignment; use RunOptions::env");
  return words;
}

std::vector<std::string> argv_of(std::vector<std::string> head, const std::string& tail_text) {
  for (auto& w : split_args(tail_text)) head.push_back(std::move(w));
  return head;
}

ProgramOutput run_program(const std::string& program, const std::string& args, const RunOptions& opt) {
  return run_program(argv_of({program.find('/') == std::string::npos ? bin(program) : program}, args), opt);
}

ProgramOutput run_program(const std::vector<std::string>& argv, const RunOptions& opt) {
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt.timeout_s));
  Child c = start_child(argv, opt, opt.merge_stderr);
  int pidfd = open_pidfd(c.pid);
  ProgramOutput r;
  bool exited = false, signalled = false;
  int raw = 0;
  for (;;) {
    if (!exited) {
      const pid_t w = ::waitpid(c.pid, &raw, WNOHANG);
      exited = w == c.pid;
      if (exited) close_fd(pidfd);
    }
    if (exited && c.out < 0 && c.err < 0) break;
    if (Clock::now() >= deadline) {
      ::kill(-c.pid, SIGKILL);
      ::kill(c.pid, SIGKILL);
      close_fd(c.out);
      close_fd(c.err);
      close_fd(pidfd);
      if (!exited)
        while (::waitpid(c.pid, &raw, 0) < 0 && errno == EINTR) {
        }
      throw std::runtime_error(
          "run_program: '" + command_text(argv) + "' " +
          (exited ? "exited, but something it started still held its output open" : "was still running") + " after " +
          std::to_string(opt.timeout_s) + " s (the limit only guards against a hang): killed it.\n" +
          "--- its stdout so far ---\n" + tail(r.out) + "\n--- its stderr so far ---\n" + tail(r.err));
    }
    std::vector<pollfd> fds;
    if (c.out >= 0) fds.push_back({c.out, POLLIN, 0});
    if (c.err >= 0) fds.push_back({c.err, POLLIN, 0});
    if (pidfd >= 0 && !exited) fds.push_back({pidfd, POLLIN, 0});
    // Without a pidfd and with both pipes closed, only a timer can notice the exit (old kernels).
    const int wait = (fds.empty() || (pidfd < 0 && !exited && c.out < 0 && c.err < 0)) ? std::min(poll_ms(deadline), 10)
                                                                                       : poll_ms(deadline);
    const int rc = ::poll(fds.data(), fds.size(), wait);
    if (rc < 0 && errno != EINTR) throw std::runtime_error(std::string("run_program: poll: ") + std::strerror(errno));
    if (rc <= 0) continue;
    for (const pollfd& p : fds) {
      if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (p.fd == c.out) {
        if (pump(c.out, r.out) > 0 && opt.signal_when && !signalled && opt.signal_when(r.out)) {
          ::kill(c.pid, opt.signo);
          signalled = true;
        }
      } else if (p.fd == c.err) {
        pump(c.err, r.err);
      }
      // the pidfd: the loop's waitpid reaps it
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  decode(raw, r.status, r.term_signal);
  return r;
}

BackgroundProgram::BackgroundProgram(const std::vector<std::string>& argv, const RunOptions& opt)
    : argv0_(argv.empty() ? "" : argv[0]) {
  Child c = start_child(argv, opt, true);
  pid_ = c.pid;
  out_fd_ = c.out;
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    stop(0);
    throw std::runtime_error(std::string("BackgroundProgram: pipe: ") + std::strerror(errno));
  }
}

BackgroundProgram::~BackgroundProgram() {
  stop();
  close_fd(wake_[0]);
  close_fd(wake_[1]);
}

bool BackgroundProgram::wait_for_output(const std::function<bool(const std::string&)>& ready, double timeout_s) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  if (drain_.joinable()) return ready(output());
  for (;;) {
    if (ready(output_)) break;
    if (out_fd_ < 0) return false;  // it closed its output (it exited): never ready
    if (Clock::now() >= deadline)
      throw std::runtime_error(argv0_ + " printed nothing that means ready within " + std::to_string(timeout_s) +
                               " s (the limit only guards against a hang); its output:\n" + tail(output_));
    pollfd p{out_fd_, POLLIN, 0};
    if (::poll(&p, 1, poll_ms(deadline)) > 0) pump(out_fd_, output_);
  }
  // Keep reading so that the program never blocks on a full pipe; stop() wakes this thread.
  drain_ = std::thread([this] {
    for (;;) {
      pollfd p[2] = {{out_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(p, 2, -1) < 0 && errno != EINTR) return;
      if (p[1].revents) return;
      if (p[0].revents) {
        std::string more;
        pump(out_fd_, more);
        std::lock_guard<std::mutex> lock(mu_);
        output_ += more;
        if (out_fd_ < 0) return;
      }
    }
  });
  return true;
}

std::string BackgroundProgram::output() const {
  std::lock_guard<std::mutex> lock(mu_);
  return output_;
}

int BackgroundProgram::stop(double grace_s) {
  if (pid_ > 0 && !reaped_) {
    int raw = 0;
    ::kill(-pid_, SIGTERM);
    ::kill(pid_, SIGTERM);
    const auto grace =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(grace_s));
    if (!wait_exit(pid_, raw, grace)) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
      }
    }
    reaped_ = true;
    int signal = 0;
    decode(raw, status_, signal);
  }
  if (drain_.joinable()) {
    const char byte = 1;
    if (::write(wake_[1], &byte, 1) < 0) {
    }
    drain_.join();
  }
  close_fd(out_fd_);
  return status_;
}

}  // namespace zt::test
