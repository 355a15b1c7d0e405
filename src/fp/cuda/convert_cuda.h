// fp/cuda/convert_cuda.h — float <-> fp16/bf16 conversion of whole arrays on a CUDA device.
//
// The kernels call the very same scalar functions as the CPU (fp16.h, bf16.h), so a tensor cast
// on the GPU has the same bits as one cast on the CPU. It is not an optimised cast kernel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zt::cuda {

/// Round n floats (host memory) to fp16 on the current device, results copied back to host.
/// @param in host input. @param out host output of fp16 bit patterns. @param n element count.
void round_to_fp16(const float* in, uint16_t* out, std::size_t n);

/// Round n floats (host memory) to bf16 on the current device, results copied back to host.
/// @param in host input. @param out host output of bf16 bit patterns. @param n element count.
void round_to_bf16(const float* in, uint16_t* out, std::size_t n);

/// Stochastically round n floats to fp16 on the current device (fp/stochastic_round.h), element
/// i drawing its random bits from random16(seed, i) (fp/random_bits.h): the same bits as the CPU.
/// @param in host input. @param out host output of fp16 bit patterns. @param n element count.
/// @param seed the stream of random bits.
void round_to_fp16_stochastic(const float* in, uint16_t* out, std::size_t n, uint64_t seed);

/// Stochastically round n floats to bf16 on the current device, as round_to_fp16_stochastic.
/// @param in host input. @param out host output of bf16 bit patterns. @param n element count.
/// @param seed the stream of random bits.
void round_to_bf16_stochastic(const float* in, uint16_t* out, std::size_t n, uint64_t seed);

}  // namespace zt::cuda
