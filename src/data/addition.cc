// data/addition.cc — the addition language (format and split in addition.h).
#include "data/addition.h"

#include "core/check.h"
#include "data/counter_hash.h"

namespace zt {

namespace {
// Domain tags keep the training and held-out streams from ever sharing a key.
constexpr uint64_t kTrainDomain = 0x747261696eull;  // "train"
constexpr uint64_t kHeldoutDomain = 0x68656c64ull;  // "held"
constexpr uint64_t kSplitDomain = 0x73706c6974ull;  // "split"
// Rejection sampling needs ~modulus tries for a held-out problem; this many failing in a row
// means the split is (nearly) empty for these settings.
constexpr uint64_t kMaxTries = 1u << 20;
}  // namespace

AdditionDataset::AdditionDataset(const AdditionConfig& c) : config_(c), operand_limit_(1) {
  ZT_CHECK(c.digits >= 1 && c.digits <= 9, "addition: digits must be 1..9, not ", c.digits);
  ZT_CHECK(c.context >= 1, "addition: context must be at least 1");
  ZT_CHECK(c.heldout_modulus >= 2, "addition: held-out modulus must be >= 2");
  for (int i = 0; i < c.digits; ++i) operand_limit_ *= 10;
}

std::string AdditionDataset::describe() const {
  return concat("addition of ", config_.digits, "-digit numbers (vocab ", kAdditionVocab, ", context ", config_.context,
                ", 1 in ", config_.heldout_modulus, " problems held out)");
}

bool AdditionDataset::is_heldout(uint64_t a, uint64_t b) const {
  return hash_key({kSplitDomain, a, b}) % config_.heldout_modulus == 0;
}

void AdditionDataset::write_problem(uint64_t a, uint64_t b, int32_t* out) const {
  const int d = config_.digits;
  uint64_t x = a, y = b, c = a + b;
  for (int i = d - 1; i >= 0; --i, x /= 10) out[i] = static_cast<int32_t>(x % 10);
  out[d] = kPlus;
  for (int i = 2 * d; i > d; --i, y /= 10) out[i] = static_cast<int32_t>(y % 10);
  out[2 * d + 1] = kEquals;
  for (int i = 0; i <= d; ++i, c /= 10) out[2 * d + 2 + i] = static_cast<int32_t>(c % 10);
  out[3 * d + 3] = kEnd;
}

void AdditionDataset::fill(uint64_t domain, uint64_t seed, uint64_t step, uint64_t index, bool heldout,
                           int32_t* out) const {
  const std::size_t n = config_.context + 1, len = problem_length();
  int32_t problem[3 * 9 + 4];
  for (uint64_t j = 0; j * len < n; ++j) {
    uint64_t a = 0, b = 0, tries = 0;
    for (;; ++tries) {
      ZT_CHECK(tries < kMaxTries, "addition: no ", heldout ? "held-out" : "training", " problem found for ",
               config_.digits, " digits and modulus ", config_.heldout_modulus);
      const uint64_t h = hash_key({domain, seed, step, index, j, tries});
      a = h % operand_limit_;
      b = (h / operand_limit_) % operand_limit_;
      if (is_heldout(a, b) == heldout) break;
    }
    write_problem(a, b, problem);
    for (std::size_t k = 0; k < len && j * len + k < n; ++k) out[j * len + k] = problem[k];
  }
}

void AdditionDataset::sample(uint64_t seed, uint64_t step, uint64_t global_index, int32_t* out) const {
  fill(kTrainDomain, seed, step, global_index, false, out);
}

void AdditionDataset::heldout_sample(uint64_t seed, uint64_t index, int32_t* out) const {
  fill(kHeldoutDomain, seed, 0, index, true, out);
}

ExactMatch AdditionDataset::exact_match(const int32_t* tokens, const int32_t* predicted) const {
  const std::size_t t_len = config_.context, len = problem_length();
  const std::size_t d = static_cast<std::size_t>(config_.digits);
  ExactMatch m;
  // Problem j's answer occupies tokens [j·len + 2D + 2, j·len + 3D + 2]; token k is predicted at
  // position k − 1, and only tokens 1..T are targets.
  for (std::size_t start = 0; start + 3 * d + 2 <= t_len; start += len) {
    bool right = true;
    for (std::size_t k = start + 2 * d + 2; k <= start + 3 * d + 2; ++k) right = right && predicted[k - 1] == tokens[k];
    ++m.total;
    m.correct += right ? 1 : 0;
  }
  return m;
}

ExactMatch AdditionDataset::exact_match_batch(const int32_t* tokens, const int32_t* predicted,
                                              std::size_t count) const {
  const std::size_t t_len = config_.context;
  ExactMatch sum;
  for (std::size_t i = 0; i < count; ++i) {
    const ExactMatch m = exact_match(tokens + i * (t_len + 1), predicted + i * t_len);
    sum.correct += m.correct;
    sum.total += m.total;
  }
  return sum;
}

std::string AdditionDataset::render(const int32_t* tokens, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    const int32_t t = tokens[i];
    s += t >= 0 && t <= 9 ? static_cast<char>('0' + t) : t == kPlus ? '+' : t == kEquals ? '=' : t == kEnd ? ';' : '?';
  }
  return s;
}

}  // namespace zt
