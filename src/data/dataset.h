// data/dataset.h — what a training loop asks of a dataset: samples of T+1 tokens, by key.
//
// A sample is T+1 tokens: the model reads tokens[0..T) and is trained to predict tokens[1..T]. It
// is a PURE function of (seed, step, global sample index): no hidden stream state, so a rank that
// owns samples [i, i+k) of a step's global batch produces exactly those, bit for bit the same as a
// single process producing the whole batch. This interface is not a loader (no files opened per
// sample, no shuffling buffers, no prefetch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace zt {

/// Exact-match count of one or more samples.
struct ExactMatch {
  std::size_t correct = 0;  ///< problems whose whole answer was predicted right
  std::size_t total = 0;    ///< problems whose whole answer lies inside the sample
};

/// A held-out set: samples never drawn for training, and how a prediction of one is scored. The
/// evaluation (train/heldout.h) needs nothing else of a dataset.
class HeldoutSet {
 public:
  virtual ~HeldoutSet() = default;
  /// A held-out sample, a pure function of (seed, index). @param seed data seed.
  /// @param index which held-out sample. @param out T + 1 tokens.
  virtual void heldout_sample(uint64_t seed, uint64_t index, int32_t* out) const = 0;
  /// Exact match of one sample under teacher forcing. @param tokens the sample (T + 1 tokens).
  /// @param predicted T argmax predictions; predicted[t] is the prediction for tokens[t + 1].
  /// @return solved and counted problems.
  virtual ExactMatch exact_match(const int32_t* tokens, const int32_t* predicted) const = 0;
};

/// A source of training samples addressed by (seed, step, global index).
class Dataset {
 public:
  virtual ~Dataset() = default;
  /// Alphabet size V: tokens lie in [0, V). @return V.
  virtual int vocab_size() const = 0;
  /// Context length T (a sample has T + 1 tokens). @return T.
  virtual std::size_t context() const = 0;
  /// Write one training sample. @param seed the run's data seed. @param step optimizer step
  /// (from 1). @param global_index the sample's index within the step's global batch.
  /// @param out T + 1 tokens.
  virtual void sample(uint64_t seed, uint64_t step, uint64_t global_index, int32_t* out) const = 0;
  /// One line describing the data (for logs and summaries). @return it.
  virtual std::string describe() const = 0;
  /// The held-out set the loops evaluate on. @return it, or null when the data has none (a
  /// byte-level text file is all training data).
  virtual const HeldoutSet* heldout() const { return nullptr; }
};

/// Write samples [first_index, first_index + count) of one step, one after another.
/// @param data the dataset. @param seed data seed. @param step optimizer step.
/// @param first_index global index of the first sample. @param count how many samples.
/// @param out count · (T + 1) tokens, row-major [count, T + 1].
void fill_batch(const Dataset& data, uint64_t seed, uint64_t step, uint64_t first_index, std::size_t count,
                int32_t* out);

/// The dataset a run asks for: the byte-level text file at `path` (vocab 256), or the embedded
/// addition task (`digits` per operand, other settings default) when `path` is empty.
/// @param path a text file, or "" for the default dataset. @param context T.
/// @param digits D of the addition task (ignored for a text file).
/// @return the dataset (zt::Error on an unreadable or too short file, or a D out of range).
std::unique_ptr<Dataset> make_dataset(const std::string& path, std::size_t context, int digits = 2);

}  // namespace zt
