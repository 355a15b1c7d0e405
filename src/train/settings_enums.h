// train/settings_enums.h — the closed choices among zero-train's settings, each an enum with its
// table of words (core/words.h).
//
// A flag such as --optimizer is parsed once into its enum (core/cli.h's add_enum); every decision
// compares enum values, and the words come back only where text goes out (--print-config, the
// summary JSON, printed lines), spelled exactly as the flag accepts them. A table's order is the
// order --help lists the words in. Choices that belong to a lower module live there with their
// words: model::Precision (model/precision.h), kernels::GemmBackend (kernels/blas.h),
// device::Device (device/cuda_probe.h). Open-ended values (numbers, paths, file:DIR) are not here.
#pragma once

#include <array>
#include <tuple>

#include "core/words.h"

namespace zt::train {

/// --model: the model family.
enum class ModelFamily { gpt };

/// --optimizer: Adam (L2 decay in the gradient), AdamW (decoupled decay) or SGD with momentum.
enum class Optimizer { adam, adamw, sgd };

/// --reduce-dtype: gradients stored and reduced in FP32, or in the compute type (16-bit runs).
enum class ReduceDtype { fp32, compute };

/// --loss-scale: fp16's dynamic loss scaler, or none (S = 1; chapter 2's underflow demonstration).
enum class LossScale { dynamic, none };

/// --partition-activations: ZeRO-R's P_a. off; on (each checkpoint as a 1/N_m slice per
/// model-parallel rank); cpu (the slices in host memory, P_a+cpu).
enum class PartitionActivations { off, on, cpu };

/// --allocator: the arena's policy. general: one first-fit region; zero: ZeRO-R's M_D
/// (long-lived tensors in pre-allocated contiguous regions).
enum class Allocator { general, zero };

/// --zero-config: a configuration of the ZeRO paper's Table 3 (C1 = P_os ... C5 = P_os+g + P_a+cpu).
enum class ZeroPreset { C1, C2, C3, C4, C5 };

/// --ranks-as: how --world-size N starts its ranks on one machine.
enum class RanksAs { processes, threads };

/// --grad-sync: gradients reduced once per optimizer step, or after every micro-batch.
enum class GradSync { step, micro_batch };

/// --stage1-reduce: how stage 1 reduces gradients (each rank needs only its shard's).
enum class Stage1Reduce { reduce_scatter, all_reduce };

/// --collective-mode: reductions in the canonical order (bitwise the same on every rank), or the
/// backend's own (collective/collective.h's ReduceMode).
enum class CollectiveMode { deterministic, fast };

/// --collective: the library between ranks (train/collective_choice.h): NCCL where every rank has
/// a GPU of its own, Gloo otherwise (staged through pinned memory on a device).
enum class CollectiveBackend { automatic, nccl, gloo };

/// The words of every choice above, one table each, in the order --help lists them.
inline constexpr std::tuple kChoiceWords{
    std::array{Word{"gpt", ModelFamily::gpt}},
    std::array{Word{"adam", Optimizer::adam}, Word{"adamw", Optimizer::adamw}, Word{"sgd", Optimizer::sgd}},
    std::array{Word{"fp32", ReduceDtype::fp32}, Word{"compute", ReduceDtype::compute}},
    std::array{Word{"dynamic", LossScale::dynamic}, Word{"none", LossScale::none}},
    std::array{Word{"off", PartitionActivations::off}, Word{"on", PartitionActivations::on},
               Word{"cpu", PartitionActivations::cpu}},
    std::array{Word{"general", Allocator::general}, Word{"zero", Allocator::zero}},
    std::array{Word{"C1", ZeroPreset::C1}, Word{"C2", ZeroPreset::C2}, Word{"C3", ZeroPreset::C3},
               Word{"C4", ZeroPreset::C4}, Word{"C5", ZeroPreset::C5}},
    std::array{Word{"processes", RanksAs::processes}, Word{"threads", RanksAs::threads}},
    std::array{Word{"step", GradSync::step}, Word{"micro-batch", GradSync::micro_batch}},
    std::array{Word{"reduce-scatter", Stage1Reduce::reduce_scatter}, Word{"all-reduce", Stage1Reduce::all_reduce}},
    std::array{Word{"deterministic", CollectiveMode::deterministic}, Word{"fast", CollectiveMode::fast}},
    std::array{Word{"auto", CollectiveBackend::automatic}, Word{"nccl", CollectiveBackend::nccl},
               Word{"gloo", CollectiveBackend::gloo}}};

/// The words of one of the choices above (core/words.h finds it by argument-dependent lookup).
/// @return E's table from kChoiceWords.
template <typename E>
constexpr auto words(E) {
  return table_of<E>(kChoiceWords);
}

}  // namespace zt::train
