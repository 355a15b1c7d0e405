// tests/collective/fault_timing.h — what the collectives' failure tests share: kShort, the timeout
// they give their ranks, and kHang, far beyond any timeout, so that reaching it means a hang, never
// slowness (the only upper bound on wall time these tests assert); the seconds since a start, and a
// substring test for the errors' words. Not a timing utility for anything else.
#pragma once

#include <chrono>
#include <string>

namespace zt_test {

using Clock = std::chrono::steady_clock;

inline constexpr auto kShort = std::chrono::milliseconds(1500);
inline constexpr double kHang = 60.0;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace zt_test
