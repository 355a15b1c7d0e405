// The addition language: the exact token format, purity (a sample depends only on its key, so a
// rank's slice equals the same rows of the whole batch), the held-out split's disjointness, and
// the exact-match metric on hand-made predictions.
#include <catch2/catch.hpp>

#include <set>
#include <utility>
#include <vector>

#include "core/check.h"
#include "data/addition.h"

using namespace zt;

namespace {
// Operands of every complete problem in a sample, read back from the tokens.
std::vector<std::pair<int, int>> problems(const AdditionDataset& d, const std::vector<int32_t>& s, int digits) {
  std::vector<std::pair<int, int>> out;
  const std::size_t len = d.problem_length();
  for (std::size_t start = 0; start + len <= s.size(); start += len) {
    int a = 0, b = 0;
    for (int i = 0; i < digits; ++i) a = a * 10 + s[start + i];
    for (int i = 0; i < digits; ++i) b = b * 10 + s[start + digits + 1 + i];
    int c = 0, scale = 1;
    for (int i = 0; i <= digits; ++i, scale *= 10) c += s[start + 2 * digits + 2 + i] * scale;
    CHECK(c == a + b);  // the reversed answer is the sum
    CHECK(s[start + digits] == kPlus);
    CHECK(s[start + 2 * digits + 1] == kEquals);
    CHECK(s[start + len - 1] == kEnd);
    out.emplace_back(a, b);
  }
  return out;
}
}  // namespace

TEST_CASE("addition problems have the documented format", "[ch2][data]") {
  AdditionDataset d(AdditionConfig{2, 64, 10});
  CHECK(d.vocab_size() == 13);
  CHECK(d.problem_length() == 10);
  std::vector<int32_t> p(10);
  d.write_problem(47, 85, p.data());
  CHECK(AdditionDataset::render(p.data(), p.size()) == "47+85=231;");
  d.write_problem(3, 9, p.data());
  CHECK(AdditionDataset::render(p.data(), p.size()) == "03+09=210;");
  std::vector<int32_t> s(65);
  d.sample(1, 1, 0, s.data());
  CHECK(problems(d, s, 2).size() == 6);  // 65 tokens: six whole problems and a partial one
  for (int32_t t : s) CHECK((t >= 0 && t < 13));
  CHECK_THROWS_AS(AdditionDataset(AdditionConfig{0, 64, 10}), Error);
}

TEST_CASE("samples are pure functions of (seed, step, index)", "[ch2][data]") {
  AdditionDataset d(AdditionConfig{3, 40, 10});
  const std::size_t row = 41, batch = 12;
  std::vector<int32_t> whole(batch * row), again(batch * row);
  fill_batch(d, 7, 3, 0, batch, whole.data());
  fill_batch(d, 7, 3, 0, batch, again.data());
  CHECK(whole == again);
  // a rank owning rows [5, 9) makes exactly those rows
  std::vector<int32_t> slice(4 * row);
  fill_batch(d, 7, 3, 5, 4, slice.data());
  CHECK(std::vector<int32_t>(whole.begin() + 5 * row, whole.begin() + 9 * row) == slice);
  // and another step, index or seed gives other data
  std::vector<int32_t> other(row);
  d.sample(7, 4, 0, other.data());
  CHECK(std::vector<int32_t>(whole.begin(), whole.begin() + row) != other);
  d.sample(8, 3, 0, other.data());
  CHECK(std::vector<int32_t>(whole.begin(), whole.begin() + row) != other);
  d.sample(7, 3, 1, other.data());
  CHECK(std::vector<int32_t>(whole.begin() + row, whole.begin() + 2 * row) == other);
}

TEST_CASE("training and held-out problems are disjoint", "[ch2][data]") {
  AdditionDataset d(AdditionConfig{2, 99, 10});
  std::set<std::pair<int, int>> train, heldout;
  std::vector<int32_t> s(100);
  for (uint64_t i = 0; i < 200; ++i) {
    d.sample(1, 1 + i / 20, i % 20, s.data());
    for (auto p : problems(d, s, 2)) {
      CHECK_FALSE(d.is_heldout(p.first, p.second));
      train.insert(p);
    }
    d.heldout_sample(1, i, s.data());
    for (auto p : problems(d, s, 2)) {
      CHECK(d.is_heldout(p.first, p.second));
      heldout.insert(p);
    }
  }
  for (const auto& p : heldout) CHECK(train.count(p) == 0);
  // about one problem in ten of the 10^4 is held out
  int count = 0;
  for (int a = 0; a < 100; ++a)
    for (int b = 0; b < 100; ++b) count += d.is_heldout(a, b) ? 1 : 0;
  CHECK(count > 800);
  CHECK(count < 1200);
  CHECK(heldout.size() > 500);  // many distinct held-out problems were drawn
}

TEST_CASE("exact match counts whole answers under teacher forcing", "[ch2][data]") {
  AdditionDataset d(AdditionConfig{2, 24, 10});  // 25 tokens: problems at 0 and 10, partial at 20
  std::vector<int32_t> s(25);
  d.sample(3, 1, 0, s.data());
  // a perfect predictor: predicted[t] = tokens[t + 1]
  std::vector<int32_t> pred(s.begin() + 1, s.end());
  ExactMatch m = d.exact_match(s.data(), pred.data());
  CHECK(m.total == 2);  // the third problem's answer (tokens 26..28) lies outside
  CHECK(m.correct == 2);
  // one wrong answer digit in problem 1 (its answer is tokens 16..18, predicted at 15..17)
  pred[16] = (pred[16] + 1) % 10;
  m = d.exact_match(s.data(), pred.data());
  CHECK(m.correct == 1);
  // a wrong operand prediction does not matter: operands are not part of the answer
  pred[16] = s[17];
  pred[0] = (pred[0] + 1) % 10;
  CHECK(d.exact_match(s.data(), pred.data()).correct == 2);
  // a batch of two copies: the counts add up
  std::vector<int32_t> tokens2(s), pred2(pred);
  tokens2.insert(tokens2.end(), s.begin(), s.end());
  pred2[16] = (pred2[16] + 1) % 10;
  pred2.insert(pred2.end(), pred.begin(), pred.end());
  const ExactMatch b = d.exact_match_batch(tokens2.data(), pred2.data(), 2);
  CHECK(b.total == 4);
  CHECK(b.correct == 3);
}
