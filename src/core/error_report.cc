// core/error_report.cc — the process-wide announcement state (see error_report.h).
#include "core/error_report.h"

#include <cstdio>
#include <mutex>

namespace zt {
namespace {

std::mutex g_mu;
bool g_enabled = false;
std::string g_program;
std::string g_announced;  // the message printed, so that run_main does not print it twice
bool g_any_announced = false;

}  // namespace

int exit_status_of(const std::exception& e) {
  return dynamic_cast<const PeerFailed*>(&e) ? kExitPeerFailed : kExitError;
}

EarlyErrorReport::EarlyErrorReport(std::string program) {
  std::lock_guard<std::mutex> lock(g_mu);
  ZT_CHECK(!g_enabled, "EarlyErrorReport: only one per process");
  g_enabled = true;
  g_program = std::move(program);
}

EarlyErrorReport::~EarlyErrorReport() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_enabled = false;
}

void announce_error(const std::exception& e) {
  std::lock_guard<std::mutex> lock(g_mu);
  // Only the first error of a process is its cause; a later one (an agreement failing while
  // the first unwinds) would only blur what the user reads.
  if (!g_enabled || g_any_announced) return;
  g_any_announced = true;
  g_announced = e.what();
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", g_program.c_str(), e.what());
  std::fflush(stderr);
}

bool already_announced(const std::exception& e) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_any_announced && g_announced == e.what();
}

}  // namespace zt
