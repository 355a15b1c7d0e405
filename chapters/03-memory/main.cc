// chapter-03 — where the memory goes: the 16ψ breakdown of model states, their per-rank size under
// each ZeRO stage, the ZeRO paper's Table 1 recomputed from the formula module
// (memory/model_states.h), and fragmentation shown in a real arena (memory/arena.h).
// It computes and prints; it trains nothing (zero-train --summary-json gives a run's ledger).
#include <cstdio>
#include <string>
#include <vector>

#include "core/check.h"
#include "core/cli.h"
#include "memory/arena.h"
#include "memory/model_states.h"

namespace {

std::vector<std::size_t> parse_world_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const int64_t n = zt::parse_int_strict(text.substr(start, comma - start), "--world-sizes");
    ZT_CHECK(n >= 1, "--world-sizes: ", n, " is not a world size (>= 1)");
    sizes.push_back(static_cast<std::size_t>(n));
    start = comma + 1;
  }
  return sizes;
}

// The values as printed in the paper's Table 1 (7.5B, 128B, 1T; P_os, P_os+g, P_os+g+p), shown
// beside the recomputed ones so the reader sees where the paper rounds and where it truncates.
struct PrintedRow {
  std::size_t n;
  const char* gb[9];
};
const PrintedRow kPrinted[] = {
    {1, {"120", "120", "120", "2048", "2048", "2048", "16000", "16000", "16000"}},
    {4, {"52.5", "41.3", "30", "896", "704", "512", "7000", "5500", "4000"}},
    {16, {"35.6", "21.6", "7.5", "608", "368", "128", "4750", "2875", "1000"}},
    {64, {"31.4", "16.6", "1.88", "536", "284", "32", "4187", "2218", "250"}},
    {256, {"30.4", "15.4", "0.47", "518", "263", "8", "4046", "2054", "62.5"}},
    {1024, {"30.1", "15.1", "0.12", "513", "257", "2", "4011", "2013", "15.6"}},
};

void print_breakdown(double psi, const std::string& optimizer, int k) {
  const auto m = zt::paper_model_states(psi, k, zt::shard_spec_for_stage(0, 1));
  std::printf("Model states of a %.6g-parameter model, mixed precision, %s (K = %d):\n", psi, optimizer.c_str(), k);
  std::printf("  16-bit parameters        2 psi = %12.6g GB\n", m.params / 1e9);
  std::printf("  16-bit gradients         2 psi = %12.6g GB\n", m.grads / 1e9);
  std::printf("  optimizer states       %2d psi = %12.6g GB   (fp32 master 4 psi + %s)\n", k, m.optimizer / 1e9,
              k == 12 ? "m 4 psi + v 4 psi" : "momentum 4 psi");
  std::printf("  model states, total    %2d psi = %12.6g GB\n\n", 4 + k, m.total / 1e9);
}

void print_stages(double psi, int k, const std::vector<std::size_t>& world_sizes) {
  std::printf("Per-rank model states in GB (1 GB = 1e9 bytes) by ZeRO stage:\n");
  std::printf("%8s %12s %12s %12s %12s\n", "N", "stage 0", "stage 1", "stage 2", "stage 3");
  for (std::size_t n : world_sizes) {
    std::printf("%8zu", n);
    for (int stage = 0; stage <= 3; ++stage)
      std::printf(" %12.6g", zt::paper_model_states(psi, k, zt::shard_spec_for_stage(stage, n)).total / 1e9);
    std::printf("\n");
  }
  std::printf("\n");
}

void print_table1() {
  const char* models[3] = {"7.5B", "128B", "1T"};
  const double psi[3] = {7.5e9, 128e9, 1e12};
  std::printf("The ZeRO paper's Table 1 recomputed, GB per device (K = 12); [as printed]:\n");
  for (int model = 0; model < 3; ++model) {
    std::printf("%s model\n%8s %20s %20s %20s\n", models[model], "N", "P_os", "P_os+g", "P_os+g+p");
    for (const PrintedRow& row : kPrinted) {
      std::printf("%8zu", row.n);
      for (int stage = 1; stage <= 3; ++stage) {
        const double gb = zt::paper_model_states(psi[model], 12, zt::shard_spec_for_stage(stage, row.n)).total / 1e9;
        std::printf(" %11.6g [%6s]", gb, row.gb[3 * model + stage - 1]);
      }
      std::printf("\n");
    }
  }
  std::printf(
      "(the 7.5B columns round to nearest; the 128B and 1T columns truncate: 513.5 is\n"
      " printed 513, 4187.5 is printed 4187)\n");
}

void print_stats(const char* when, const zt::Arena& arena) {
  const zt::FragmentationStats f = arena.fragmentation();
  std::printf(
      "  %-34s free %9zu B in %3zu blocks, largest free block %9zu B, external "
      "fragmentation %.4f\n",
      when, f.free_bytes, f.free_blocks, f.largest_free_block, f.external_fragmentation);
}

/// Try one allocation and say what happened (the arena's own error line on failure).
void try_request(zt::Arena& arena, std::size_t bytes) {
  try {
    zt::ArenaAllocation a = arena.allocate(bytes, "bucket");
    std::printf("  request of %zu B for 'bucket': placed at offset %zu\n", bytes, a.offset());
  } catch (const zt::Error& e) {
    std::printf("  request of %zu B for 'bucket': %s\n", bytes, e.what());
  }
}

// Backward interleaves short-lived activation gradients with long-lived parameter gradients
// (ZeRO paper, Sec. 3.2 and 6.3). Freed, the short-lived blocks leave holes between the long-lived
// ones: lots of free memory, none of it in one piece. Moving the long-lived tensors into one
// pre-allocated region first (ZeRO-R's defragmentation) keeps the free memory contiguous.
void print_fragmentation(std::size_t pairs, std::size_t block) {
  const std::size_t capacity = 2 * pairs * block, request = 2 * block;
  std::printf(
      "\nFragmentation in an arena of %zu B: %zu activation-gradient blocks (short-lived) and "
      "%zu gradient blocks (long-lived) of %zu B each\n",
      capacity, pairs, pairs, block);
  {
    zt::Arena arena(capacity, "interleaved");
    std::vector<zt::ArenaAllocation> short_lived, long_lived;
    for (std::size_t i = 0; i < pairs; ++i) {
      short_lived.push_back(arena.allocate(block, "activation_grads"));
      long_lived.push_back(arena.allocate(block, "grads"));
    }
    std::printf(" interleaved (allocated in the order backward produces them):\n");
    print_stats("full:", arena);
    short_lived.clear();
    print_stats("after freeing the short-lived:", arena);
    try_request(arena, request);
  }
  {
    zt::Arena arena(capacity, "contiguous");
    zt::ArenaAllocation long_lived = arena.allocate(pairs * block, "grads");
    std::vector<zt::ArenaAllocation> short_lived;
    for (std::size_t i = 0; i < pairs; ++i) short_lived.push_back(arena.allocate(block, "activation_grads"));
    std::printf(" contiguous (the long-lived gradients in one pre-allocated region):\n");
    print_stats("full:", arena);
    short_lived.clear();
    print_stats("after freeing the short-lived:", arena);
    try_request(arena, request);
  }
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("chapter-03", [&] {
    double params = 7.5e9;
    std::string world_sizes = "1,4,16,64,256,1024", optimizer = "adamw";
    zt::ArgParser args("chapter-03", "Where the memory goes: model states per rank under ZeRO.");
    args.add_double("params", &params, "number of model parameters psi", 1, 1e15);
    args.add_string("world-sizes", &world_sizes, "comma-separated data-parallel degrees N");
    args.add_choice("optimizer", &optimizer, {"adam", "adamw", "sgd"}, "optimizer (sets K)");
    int64_t frag_pairs = 8, frag_block = 65536;
    args.add_int("frag-pairs", &frag_pairs, "fragmentation demo: short/long-lived block pairs", 2, 4096);
    args.add_int("frag-block", &frag_block, "fragmentation demo: block size in bytes (multiple of 256)", 256,
                 int64_t{1} << 26);
    if (!args.parse(argc, argv)) return 0;
    ZT_CHECK(frag_block % static_cast<int64_t>(zt::Arena::kAlignment) == 0, "--frag-block ", frag_block,
             " is not a multiple of ", zt::Arena::kAlignment, " bytes");
    const auto sizes = parse_world_sizes(world_sizes);
    const int k = zt::optimizer_k(optimizer);
    print_breakdown(params, optimizer, k);
    print_stages(params, k, sizes);
    print_table1();
    print_fragmentation(static_cast<std::size_t>(frag_pairs), static_cast<std::size_t>(frag_block));
    return 0;
  });
}
