// tests/collective/cases.h — one collective call with its expected per-rank result.
//
// A Case runs on every rank thread (run) and returns the bytes of that rank's result; expect
// computes the same rank's result independently in the test thread (closed form or the
// reference tree of reference.h). check_cases runs a list of cases on a thread group and returns
// one line per mismatch, so the test asserts only in its own thread; run_cases and
// find_mismatches are its two halves, for tests that run cases on groups they build themselves.
#pragma once

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "collective/thread_ranks.h"

namespace zt_test {

using Bytes = std::vector<unsigned char>;

/// One call and its expectation.
struct Case {
  std::string name;                                     ///< printed on mismatch
  std::function<Bytes(zt::Collective&, int rank)> run;  ///< runs on the rank thread
  std::function<Bytes(int rank)> expect;                ///< computed in the test thread
};

/// Bytes of a typed vector. @param v values. @return their object representation.
template <typename T>
Bytes bytes_of(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

/// Run every case, in order, on one rank. @param coll the rank's group. @param rank its rank in
/// that group. @param cases the calls. @return each case's result bytes.
inline std::vector<Bytes> run_cases(zt::Collective& coll, int rank, const std::vector<Case>& cases) {
  std::vector<Bytes> results;
  for (const auto& c : cases) results.push_back(c.run(coll, rank));
  return results;
}

/// Compare one rank's results with the cases' expectations; append a line per mismatch.
/// @param cases the calls. @param rank the rank in its group. @param got its results (run_cases).
/// @param who how to name the rank in a line. @param problems where lines are appended.
inline void find_mismatches(const std::vector<Case>& cases, int rank, const std::vector<Bytes>& got,
                            const std::string& who, std::vector<std::string>& problems) {
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Bytes want = cases[k].expect(rank);
    if (want == got[k]) continue;
    std::size_t at = 0;
    while (at < want.size() && at < got[k].size() && want[at] == got[k][at]) ++at;
    problems.push_back(who + " " + cases[k].name + ": mismatch (sizes " + std::to_string(got[k].size()) +
                       " vs expected " + std::to_string(want.size()) + ", first differing byte " + std::to_string(at) +
                       ")");
  }
}

/// Run all cases on n thread ranks of one group; return a description of every mismatch.
/// @param group the group's options. @param cases the calls, in order (all ranks run all).
/// @return mismatch lines (empty when everything matched).
inline std::vector<std::string> check_cases(const zt::ThreadGroup& group, const std::vector<Case>& cases) {
  const int n = group.base.size;
  auto outcomes = zt::run_thread_ranks(n, [&](int r) {
    zt::GlooCollective coll(group.for_rank(r));
    auto results = run_cases(coll, r, cases);
    coll.barrier();
    return results;
  });
  std::vector<std::string> problems;
  for (int r = 0; r < n; ++r) {
    if (!outcomes[r].ok()) {
      problems.push_back("rank " + std::to_string(r) + " threw: " + outcomes[r].error);
      continue;
    }
    find_mismatches(cases, r, *outcomes[r].value, "N=" + std::to_string(n) + " rank " + std::to_string(r), problems);
  }
  return problems;
}

}  // namespace zt_test
