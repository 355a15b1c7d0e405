// data/addition.h — the embedded default dataset: a tiny language of D-digit additions.
//
// Format of one problem, for D digits (D = 2 shown):   4 7 + 8 5 = 2 3 1 ;
//   operands a, b uniform in [0, 10^D), written most significant digit first with leading zeros;
//   the sum c = a + b written with D + 1 digits, LEAST significant digit first (reversed: a
//   left-to-right model can then produce each digit from the carry it has just seen);
//   '+', '=' and ';' (end of problem) as separators. One problem is 3D + 4 tokens.
// Vocabulary (V = 13): tokens 0..9 are the digits, 10 is '+', 11 is '=', 12 is ';'.
// A sample is problems packed end to end from a problem boundary, cut at T + 1 tokens.
//
// Held-out split: a problem (a, b) is held out when hash(a, b) mod 10 == 0 (about 10% of all
// problems), independently of the seed; training samples never contain a held-out problem and
// held-out samples contain only held-out ones, so the held-out accuracy measures generalisation.
// Metric: exact match — a problem counts as solved when, under teacher forcing, the model's
// argmax prediction is right for every one of its D + 1 answer tokens; only problems whose whole
// answer lies inside the sample count.
//
// What the loss can reach: operand digits are random (ln 10 nats each) and everything else is
// determined, so a perfect model's mean loss is about 2D·ln10 / (3D + 4) per token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace zt {

/// Settings of the addition task.
struct AdditionConfig {
  int digits = 2;                 ///< D, digits per operand (1..9)
  std::size_t context = 64;       ///< T
  uint64_t heldout_modulus = 10;  ///< a problem is held out when hash(a, b) mod this == 0 (>= 2)
};

/// Token ids of the addition language.
enum AdditionToken : int32_t { kPlus = 10, kEquals = 11, kEnd = 12, kAdditionVocab = 13 };

/// The addition dataset (see the file comment).
class AdditionDataset : public Dataset, public HeldoutSet {
 public:
  /// @param config settings (zt::Error when out of range).
  explicit AdditionDataset(const AdditionConfig& config = {});

  int vocab_size() const override { return kAdditionVocab; }
  std::size_t context() const override { return config_.context; }
  void sample(uint64_t seed, uint64_t step, uint64_t global_index, int32_t* out) const override;
  std::string describe() const override;
  /// @return this: the problems held out of training (is_heldout) are its held-out split.
  const HeldoutSet* heldout() const override { return this; }

  /// A held-out sample (held-out problems only), a pure function of (seed, index).
  /// @param seed data seed. @param index which held-out sample. @param out T + 1 tokens.
  void heldout_sample(uint64_t seed, uint64_t index, int32_t* out) const override;

  /// Whether the problem a + b is in the held-out split. @param a first operand.
  /// @param b second operand. @return true if held out.
  bool is_heldout(uint64_t a, uint64_t b) const;

  /// Tokens per problem, 3D + 4. @return the length.
  std::size_t problem_length() const { return 3 * static_cast<std::size_t>(config_.digits) + 4; }

  /// Write the problem a + b (problem_length() tokens). @param a first operand.
  /// @param b second operand. @param out destination.
  void write_problem(uint64_t a, uint64_t b, int32_t* out) const;

  /// Exact match of one sample under teacher forcing. @param tokens the sample (T + 1 tokens).
  /// @param predicted T argmax predictions; predicted[t] is the prediction for tokens[t + 1].
  /// @return solved and counted problems.
  ExactMatch exact_match(const int32_t* tokens, const int32_t* predicted) const override;

  /// Exact match summed over a batch. @param tokens [count, T + 1] samples.
  /// @param predicted [count, T] argmax predictions. @param count number of samples.
  /// @return solved and counted problems over the batch.
  ExactMatch exact_match_batch(const int32_t* tokens, const int32_t* predicted, std::size_t count) const;

  /// Render tokens as text ("47+85=231;"). @param tokens the tokens. @param n how many.
  /// @return the text.
  static std::string render(const int32_t* tokens, std::size_t n);

 private:
  void fill(uint64_t domain, uint64_t seed, uint64_t step, uint64_t index, bool heldout, int32_t* out) const;
  AdditionConfig config_;
  uint64_t operand_limit_;  // 10^D
};

}  // namespace zt
