// tests/collective/all_cases.h — the list of every collective call with its expected result, for
// one world size, mode and accumulation: used by the thread-rank tests (test_collectives.cc) and
// by the process probe that zero-launch starts (collective_probe.cc).
#pragma once

#include <algorithm>
#include <cmath>

#include "cases.h"
#include "reference.h"

namespace zt_test {

using namespace zt;

inline constexpr std::size_t kLargeOdd = 10007;

template <typename T>
inline std::vector<T> fill(std::size_t n, const std::function<float(std::size_t)>& f) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = T(f(i));
  return v;
}

// Expected element i of an over-ranks reduction of per-rank values x_q(i).
template <typename T>
inline T reduce_expected(int n, std::size_t i, const std::function<float(int, std::size_t)>& value, ReduceOp op,
                         Accumulation acc) {
  std::vector<float> leaves(n);
  for (int q = 0; q < n; ++q) leaves[q] = static_cast<float>(T(value(q, i)));  // as stored
  if (op == ReduceOp::max) {
    float m = leaves[0];
    for (float v : leaves) m = std::max(m, v);
    return T(m);
  }
  zt_test::AddFn add = [](float a, float b) { return a + b; };
  if (acc == Accumulation::storage) add = [](float a, float b) { return static_cast<float>(T(a + b)); };
  return T(zt_test::reference_tree(leaves, add));
}

inline std::vector<std::size_t> irregular_counts(int n, std::size_t count) {
  std::vector<std::size_t> c(n);
  for (int q = 0; q < n; ++q) c[q] = q == 1 ? 0 : (static_cast<std::size_t>(q) * 5 + count) % 7 + count / n;
  return c;
}

template <typename T>
inline void add_cases(std::vector<Case>& cases, int n, ReduceMode mode, Accumulation acc) {
  const bool det = mode == ReduceMode::deterministic;
  const std::string tname = dtype_name(dtype_of_v<T>);
  auto exact = [](int q, std::size_t i) { return zt_test::exact_value(q, i); };
  auto tricky = [](int q, std::size_t i) { return zt_test::order_sensitive_value<T>(q, i); };
  using ValueFn = std::function<float(int, std::size_t)>;
  const ValueFn exact_fn = exact, tricky_fn = tricky;

  for (std::size_t count : {std::size_t{0}, std::size_t{1}, static_cast<std::size_t>(n - 1), kLargeOdd}) {
    const std::string tag = tname + " count " + std::to_string(count);
    // Values whose sum order matters are checked bitwise only where the order is defined.
    std::vector<std::pair<ValueFn, std::string>> sum_inputs = {{exact_fn, "exact"}};
    if (det) sum_inputs.push_back({tricky_fn, "order-sensitive"});

    for (const auto& [value, vname] : sum_inputs) {
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
        const std::string what = std::string(reduce_op_name(op)) + " " + vname + " " + tag;
        cases.push_back({"all_reduce " + what,
                         [=](Collective& c, int r) {
                           auto x = fill<T>(count, [&](std::size_t i) { return value(r, i); });
                           c.all_reduce(std::span<T>(x), op);
                           return zt_test::bytes_of(x);
                         },
                         [=](int) {
                           std::vector<T> y(count);
                           for (std::size_t i = 0; i < count; ++i) y[i] = reduce_expected<T>(n, i, value, op, acc);
                           return zt_test::bytes_of(y);
                         }});
        // Even reduce-scatter: input of N * count, rank r gets shard r.
        cases.push_back({"reduce_scatter " + what,
                         [=](Collective& c, int r) {
                           auto x = fill<T>(count * n, [&](std::size_t i) { return value(r, i); });
                           std::vector<T> out(count);
                           c.reduce_scatter(std::span<const T>(x), std::span<T>(out), op);
                           return zt_test::bytes_of(out);
                         },
                         [=](int r) {
                           std::vector<T> y(count);
                           for (std::size_t i = 0; i < count; ++i)
                             y[i] = reduce_expected<T>(n, r * count + i, value, op, acc);
                           return zt_test::bytes_of(y);
                         }});
        // Uneven reduce-scatter, one rank receiving nothing.
        const auto counts = irregular_counts(n, count);
        const auto offsets = offsets_of(counts);
        const std::size_t total = total_of(counts);
        cases.push_back({"reduce_scatter_v " + what,
                         [=](Collective& c, int r) {
                           auto x = fill<T>(total, [&](std::size_t i) { return value(r, i); });
                           std::vector<T> out(counts[r]);
                           c.reduce_scatter_v(std::span<const T>(x), std::span<T>(out), counts, op);
                           return zt_test::bytes_of(out);
                         },
                         [=](int r) {
                           std::vector<T> y(counts[r]);
                           for (std::size_t i = 0; i < counts[r]; ++i)
                             y[i] = reduce_expected<T>(n, offsets[r] + i, value, op, acc);
                           return zt_test::bytes_of(y);
                         }});
      }
    }
    // Movement only: closed forms.
    auto owned = [](int q, std::size_t i) { return static_cast<float>((q * 31 + static_cast<int>(i % 97)) % 200); };
    cases.push_back({"all_gather " + tag,
                     [=](Collective& c, int r) {
                       auto x = fill<T>(count, [&](std::size_t i) { return owned(r, i); });
                       std::vector<T> out(count * n);
                       c.all_gather(std::span<const T>(x), std::span<T>(out));
                       return zt_test::bytes_of(out);
                     },
                     [=](int) {
                       std::vector<T> y(count * n);
                       for (int q = 0; q < n; ++q)
                         for (std::size_t i = 0; i < count; ++i) y[q * count + i] = T(owned(q, i));
                       return zt_test::bytes_of(y);
                     }});
    const auto counts = irregular_counts(n, count);
    const auto offsets = offsets_of(counts);
    const std::size_t total = total_of(counts);
    cases.push_back({"all_gather_v in place " + tag,
                     [=](Collective& c, int r) {
                       std::vector<T> out(total, T(-1.0f));
                       for (std::size_t i = 0; i < counts[r]; ++i) out[offsets[r] + i] = T(owned(r, i));
                       c.all_gather_v(std::span<const T>(out.data() + offsets[r], counts[r]), std::span<T>(out),
                                      counts);
                       return zt_test::bytes_of(out);
                     },
                     [=](int) {
                       std::vector<T> y(total);
                       for (int q = 0; q < n; ++q)
                         for (std::size_t i = 0; i < counts[q]; ++i) y[offsets[q] + i] = T(owned(q, i));
                       return zt_test::bytes_of(y);
                     }});
    for (int root : {0, n - 1}) {
      cases.push_back(
          {"broadcast root " + std::to_string(root) + " " + tag,
           [=](Collective& c, int r) {
             auto x = fill<T>(count, [&](std::size_t i) { return owned(r, i); });
             c.broadcast(std::span<T>(x), root);
             return zt_test::bytes_of(x);
           },
           [=](int) { return zt_test::bytes_of(fill<T>(count, [&](std::size_t i) { return owned(root, i); })); }});
    }
  }
  cases.push_back({"barrier",
                   [](Collective& c, int) {
                     c.barrier();
                     return Bytes{};
                   },
                   [](int) { return Bytes{}; }});
}

/// Every case for one configuration, all three dtypes (fp32 only with FP32 accumulation, which
/// it ignores). @param n world size. @param mode reduction mode. @param acc 16-bit accumulation.
/// @return the cases in the order every rank runs them.
inline std::vector<Case> all_cases(int n, ReduceMode mode, Accumulation acc) {
  std::vector<Case> cases;
  if (acc == Accumulation::fp32) add_cases<float>(cases, n, mode, acc);
  add_cases<fp16>(cases, n, mode, acc);
  add_cases<bf16>(cases, n, mode, acc);
  return cases;
}

}  // namespace zt_test
