// tests/launch/store_bytes.h — what the TCP store's tests share: a value's bytes and back (the store
// keeps std::vector<char>), and kHang, a limit so long that only a hang reaches it (never a
// statement about speed).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace zt_test {

inline constexpr std::chrono::milliseconds kHang{60000};

inline std::vector<char> bytes(const std::string& s) { return {s.begin(), s.end()}; }
inline std::string text(const std::vector<char>& v) { return {v.begin(), v.end()}; }

}  // namespace zt_test
