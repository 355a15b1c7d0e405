// tests/checkpoint/fixtures.h — what the checkpoint tests share: a temporary directory, synthetic
// manifests and values, a deal of every element to ranks in odd-sized pieces, and the whole save
// protocol run in-process (each "rank" a RankFileWriter, one after the other).
//
// Values are finite floats drawn from a seeded generator (no NaN, whose bits a float round trip
// through Python could change), so every comparison is exact: memcmp of the bytes.
// Not a model of any real sharding: the deal is deliberately irregular (random cuts, random
// owners, pieces added out of order, a rank with nothing), which is what the format must survive.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "checkpoint/manifest.h"
#include "checkpoint/reader.h"
#include "checkpoint/writer.h"

namespace zt::test::ckpt {

namespace fs = std::filesystem;
using checkpoint::Manifest;

/// A fresh directory under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  /// @param tag part of the name, for people looking at /tmp.
  explicit TempDir(const std::string& tag) {
    static int counter = 0;
    path_ = (fs::temp_directory_path() /
             ("zt_ckpt_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++)))
                .string();
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// @return the directory.
  const std::string& path() const { return path_; }
  /// @param name a relative path. @return it inside the directory.
  std::string operator/(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

/// A run of elements one rank writes.
struct Piece {
  std::string state;   ///< the state
  int param = 0;       ///< canonical parameter
  int64_t offset = 0;  ///< first element
  int64_t length = 0;  ///< elements
};

/// A header with 1-D parameters "p0", "p1", ... of the given sizes and the given states.
/// @param numels sizes. @param states states. @param step run["step"]. @return the header.
inline Manifest synthetic_header(const std::vector<int64_t>& numels, const std::vector<std::string>& states,
                                 int64_t step) {
  Manifest h;
  h.model = {{"family", "synthetic"}};
  h.sharding = {{"stage", 1}, {"dp_size", 3}};
  h.run = {{"step", step}};
  h.states = states;
  for (std::size_t i = 0; i < numels.size(); ++i) h.params.push_back({"p" + std::to_string(i), {numels[i]}, numels[i]});
  return h;
}

/// Every state's canonical dense values.
struct Values {
  std::vector<std::string> states;        ///< as in the header
  std::vector<int64_t> offsets;           ///< each parameter's first dense element
  std::vector<std::vector<float>> dense;  ///< [state][dense element]
  /// @param state a state. @param param a parameter. @return its first value.
  const float* at(const std::string& state, int param) const {
    const auto s = std::find(states.begin(), states.end(), state) - states.begin();
    return dense[static_cast<std::size_t>(s)].data() + offsets[static_cast<std::size_t>(param)];
  }
};

/// Finite random values for every element of every state. @param h the header.
/// @param seed the generator's seed. @return them.
inline Values make_values(const Manifest& h, uint64_t seed) {
  Values v;
  v.states = h.states;
  int64_t total = 0;
  for (const auto& p : h.params) {
    v.offsets.push_back(total);
    total += p.numel;
  }
  std::mt19937_64 rng(seed);
  for (std::size_t s = 0; s < h.states.size(); ++s) {
    std::vector<float> d(static_cast<std::size_t>(total));
    for (auto& x : d) {
      // sign, an exponent of a normal number in [2^-27, 2^23), any mantissa: finite, not NaN
      const uint64_t r = rng();
      const uint32_t bits = static_cast<uint32_t>((r >> 63) << 31) | static_cast<uint32_t>(100 + (r >> 32) % 50) << 23 |
                            static_cast<uint32_t>(r & 0x7FFFFF);
      std::memcpy(&x, &bits, sizeof x);
    }
    v.dense.push_back(std::move(d));
  }
  return v;
}

/// Cut every (state, parameter) at random places into pieces and deal them to `world` ranks at
/// random, each rank's list shuffled; rank `idle` gets nothing. @param h the header.
/// @param world ranks. @param seed the generator's seed. @param idle a rank left without pieces
/// (-1: none). @return each rank's pieces.
inline std::vector<std::vector<Piece>> deal(const Manifest& h, int world, uint64_t seed, int idle = -1) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Piece>> plan(static_cast<std::size_t>(world));
  for (const auto& state : h.states)
    for (int p = 0; p < static_cast<int>(h.params.size()); ++p) {
      const int64_t n = h.params[static_cast<std::size_t>(p)].numel;
      std::vector<int64_t> cuts = {0, n};
      for (int k = static_cast<int>(rng() % 4); k > 0 && n > 1; --k)
        cuts.push_back(1 + static_cast<int64_t>(rng() % (n - 1)));
      std::sort(cuts.begin(), cuts.end());
      cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
      for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
        int r = static_cast<int>(rng() % static_cast<uint64_t>(world));
        if (r == idle) r = (r + 1) % world;
        plan[static_cast<std::size_t>(r)].push_back({state, p, cuts[c], cuts[c + 1] - cuts[c]});
      }
    }
  for (auto& pieces : plan) std::shuffle(pieces.begin(), pieces.end(), rng);
  return plan;
}

/// The protocol in-process: begin_save, every rank's writer in turn, publish.
/// @param save_dir DIR. @param step the step. @param h the header. @param v the values.
/// @param plan each rank's pieces. @return the published directory.
inline std::string save(const std::string& save_dir, int64_t step, const Manifest& h, const Values& v,
                        const std::vector<std::vector<Piece>>& plan) {
  const std::string temp = checkpoint::begin_save(save_dir, step);
  for (std::size_t r = 0; r < plan.size(); ++r) {
    checkpoint::RankFileWriter w(temp, static_cast<int>(r));
    for (const auto& piece : plan[r])
      w.add(piece.state, piece.param, piece.offset, v.at(piece.state, piece.param) + piece.offset, piece.length);
    w.finish();
  }
  return checkpoint::publish(save_dir, step, h, static_cast<int>(plan.size()));
}

/// Whether every (state, parameter) reads back bit for bit. @param r an open reader.
/// @param v the expected values. @return true when all match.
inline bool reads_back(checkpoint::Reader& r, const Values& v) {
  const Manifest& m = r.manifest();
  for (const auto& state : m.states)
    for (int p = 0; p < static_cast<int>(m.params.size()); ++p) {
      const auto n = static_cast<std::size_t>(m.params[static_cast<std::size_t>(p)].numel);
      std::vector<float> got(n);
      r.read(state, p, 0, static_cast<int64_t>(n), got.data());
      if (std::memcmp(got.data(), v.at(state, p), n * sizeof(float)) != 0) return false;
    }
  return true;
}

/// Whether an error message is one line. @param what the message. @return no newline in it.
inline bool one_line(const std::string& what) { return what.find('\n') == std::string::npos && !what.empty(); }

}  // namespace zt::test::ckpt
