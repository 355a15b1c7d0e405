// launch/child_process.cc — program lookup, rank environment, fork/exec (see child_process.h).
#include "launch/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "core/check.h"
#include "store/socket.h"

extern char** environ;

namespace zt::launch::detail {

std::string resolve_program(const std::string& name) {
  ZT_CHECK(!name.empty(), "no program given to launch");
  if (name.find('/') != std::string::npos) {
    ZT_CHECK(::access(name.c_str(), X_OK) == 0, "cannot run '", name, "': ", std::strerror(errno));
    return name;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  for (;;) {
    std::size_t end = dirs.find(':', start);
    std::string dir = dirs.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  ZT_FAIL("cannot run '", name, "': not found on PATH");
}

std::vector<std::string> child_environment(const SpawnOptions& opt, int rank, uint16_t port) {
  static const std::set<std::string> kOwned = {"RANK",        "WORLD_SIZE",  "LOCAL_RANK",        "LOCAL_WORLD_SIZE",
                                               "MASTER_ADDR", "MASTER_PORT", "ZT_LAUNCHER_STORE", "GROUP_RANK"};
  std::set<std::string> replaced = kOwned;
  if (!opt.store.empty()) replaced.insert("ZT_STORE");
  for (const auto& [k, v] : opt.extra_env) replaced.insert(k);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    if (!replaced.count(entry.substr(0, entry.find('=')))) env.push_back(std::move(entry));
  }
  auto add = [&](const std::string& k, const std::string& v) { env.push_back(k + "=" + v); };
  // torchrun's numbering: node k's local rank r is global rank k * nproc_per_node + r
  add("RANK", std::to_string(opt.node_rank * opt.world_size + rank));
  add("WORLD_SIZE", std::to_string(opt.nnodes * opt.world_size));
  add("LOCAL_RANK", std::to_string(rank));
  add("LOCAL_WORLD_SIZE", std::to_string(opt.world_size));
  add("GROUP_RANK", std::to_string(opt.node_rank));
  add("MASTER_ADDR", opt.master_addr);
  add("MASTER_PORT", std::to_string(port));
  add("ZT_LAUNCHER_STORE", store::format_address(opt.master_addr, port));
  if (!opt.store.empty()) add("ZT_STORE", opt.store);
  for (const auto& [k, v] : opt.extra_env) add(k, v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

pid_t start_child(const std::string& program, std::vector<char*>& argv, std::vector<char*>& envp, int out_w, int err_w,
                  int null_r) {
  int status_pipe[2];
  ZT_CHECK(::pipe2(status_pipe, O_CLOEXEC) == 0, "pipe: ", std::strerror(errno));
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(status_pipe[0]);
    ::close(status_pipe[1]);
    ZT_FAIL("fork: ", std::strerror(e));
  }
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s : {SIGINT, SIGTERM, SIGCHLD, SIGPIPE}) ::sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // If the launcher dies (even by SIGKILL) its ranks must not linger.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Its own process group, so that signalling the rank reaches the processes it starts too
    // (a shell's children, say); a terminal's Ctrl-C reaches it through our forwarding, once.
    ::setpgid(0, 0);
    ::dup2(null_r, 0);
    ::dup2(out_w, 1);
    ::dup2(err_w, 2);
    ::execve(program.c_str(), argv.data(), envp.data());
    int e = errno;
    if (::write(status_pipe[1], &e, sizeof e) < 0) {
    }
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we might signal it
  ::close(status_pipe[1]);
  int e = 0;
  ssize_t n;
  while ((n = ::read(status_pipe[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return -e;
  }
  return pid;
}

}  // namespace zt::launch::detail
