// bench-checkpoint — how fast checkpoints move: CRC-32C by tables and by the SSE4.2 instruction on
// an in-memory buffer, then a checkpoint of --mib MiB (one FP32 state, --ranks writers one after
// the other, as in-process ranks) saved with the whole protocol (fsyncs included) and read back
// cold (the files evicted from the page cache with posix_fadvise first) with Reader::read_dense.
// Compare with dd on the same filesystem:
//   dd if=/dev/zero of=DIR/dd.bin bs=4M count=64 conv=fsync            (write, fsync included)
//   dd if=DIR/dd.bin iflag=nocache count=0 && dd if=DIR/dd.bin of=/dev/null bs=4M   (cold read)
// Best of --repeat runs. Not a test: no figure here is checked.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <vector>

#include "checkpoint/crc32c.h"
#include "checkpoint/reader.h"
#include "checkpoint/writer.h"
#include "core/check.h"
#include "core/cli.h"

namespace {

using namespace zt::checkpoint;

// Best wall time of `repeat` runs of fn, in seconds; `setup` runs before each, untimed.
double best_of(
    int64_t repeat, const std::function<void()>& fn, const std::function<void()>& setup = [] {}) {
  double best = 1e300;
  for (int64_t i = 0; i < repeat; ++i) {
    setup();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void evict(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const int fd = ::open(e.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("bench-checkpoint", [&]() -> int {
    std::string dir = "/tmp/zt_bench_checkpoint";
    int64_t mib = 256, ranks = 1, repeat = 3;
    zt::ArgParser p("bench-checkpoint", "CRC-32C rates, and a checkpoint's save and cold read rates");
    p.add_string("dir", &dir, "save directory (removed and recreated)");
    p.add_int("mib", &mib, "checkpoint size in MiB (one FP32 state)", 1, 1 << 20);
    p.add_int("ranks", &ranks, "writers, each a contiguous share of every parameter", 1, 1024);
    p.add_int("repeat", &repeat, "runs of each measurement; the best is reported", 1, 100);
    if (!p.parse(argc, argv)) return 0;

    const int64_t elements = mib << 18;  // 2^18 floats per MiB
    std::vector<float> values(static_cast<std::size_t>(elements));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 1000003) * 0.5f;
    const double bytes = 4.0 * static_cast<double>(elements);
    const double gb = bytes / 1e9;

    uint32_t sink = 0;
    const double t_sw = best_of(repeat, [&] { sink ^= crc32c_portable(values.data(), 4 * values.size()); });
    std::printf("crc32c tables:      %6.2f GB/s\n", gb / t_sw);
    if (crc32c_hardware_available()) {
      const double t_hw = best_of(repeat, [&] { sink ^= crc32c_hardware(values.data(), 4 * values.size()); });
      std::printf("crc32c instruction: %6.2f GB/s\n", gb / t_hw);
    }

    // 64 parameters of equal size (the last takes the remainder)
    Manifest h;
    h.states = {"master"};
    const int64_t per = std::max<int64_t>(1, elements / 64);
    for (int64_t at = 0, i = 0; at < elements; at += per, ++i) {
      const int64_t n = std::min(per, elements - at);
      h.params.push_back({zt::concat("p", i), {n}, n});
    }
    std::string published;
    const auto fresh = [&] { std::filesystem::remove_all(dir); };  // as dd writes a new file
    const double t_write = best_of(
        repeat,
        [&] {
          const std::string temp = begin_save(dir, 1);
          for (int64_t r = 0; r < ranks; ++r) {
            RankFileWriter w(temp, static_cast<int>(r));
            int64_t base = 0;
            for (std::size_t i = 0; i < h.params.size(); ++i) {
              const int64_t n = h.params[i].numel, lo = n * r / ranks, hi = n * (r + 1) / ranks;
              if (hi > lo) w.add("master", static_cast<int>(i), lo, values.data() + base + lo, hi - lo);
              base += n;
            }
            w.finish();
          }
          published = publish(dir, 1, h, static_cast<int>(ranks));
        },
        fresh);
    std::printf("save (fsynced):     %6.2f GB/s  (%lld MiB, %lld ranks, %.3f s)\n", gb / t_write,
                static_cast<long long>(mib), static_cast<long long>(ranks), t_write);

    // reads into one buffer, touched before (as dd reuses its buffer), parameter by parameter
    std::vector<float> back(values.size(), 0.0f);
    const auto read_all = [&] {
      Reader reader(published);
      int64_t at = 0;
      for (std::size_t i = 0; i < h.params.size(); ++i) {
        reader.read("master", static_cast<int>(i), 0, h.params[i].numel, back.data() + at);
        at += h.params[i].numel;
      }
    };
    const double t_cold = best_of(repeat, read_all, [&] { evict(published); });
    ZT_CHECK(back == values, "the checkpoint did not read back");
    std::printf("read (cold):        %6.2f GB/s  (%.3f s, every interval's CRC checked)\n", gb / t_cold, t_cold);
    const double t_warm = best_of(repeat, read_all);
    std::printf("read (cached):      %6.2f GB/s\n", gb / t_warm);
    const double t_dense = best_of(repeat, [&] { back = Reader(published).read_dense("master"); });
    std::printf("read_dense (cached, a new vector each time): %.2f GB/s\n", gb / t_dense);
    std::filesystem::remove_all(dir);
    return sink == 0xFFFFFFFFu ? 0 : 0;  // sink keeps the CRC loops from being optimised away
  });
}
