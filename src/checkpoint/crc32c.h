// checkpoint/crc32c.h — the two ways this project computes CRC-32C, and how to join two CRCs.
//
// CRC-32C is the CRC with the Castagnoli polynomial 0x1EDC6F41 (0x82F63B78 bit-reversed), initial
// value and final XOR all ones, bits processed least significant first: the checksum of iSCSI,
// ext4 and SSE4.2's crc32 instruction. Its check value is crc32c("123456789") = 0xE3069283.
// checkpoint::crc32c (manifest.h) picks the instruction when the CPU has it, and otherwise the
// portable tables; both give the same value for every input (a test compares them), so a
// checkpoint written on one machine verifies on any other.
// Combining: the CRC of A followed by B follows from crc(A), crc(B) and |B| alone, because a CRC
// register is linear over GF(2): running |B| more bytes multiplies its state by x^(8|B|) modulo
// the polynomial. The writer uses that to get the whole-file CRC from the interval CRCs without
// reading the bytes twice.
// Not a general hashing library: one polynomial, one bit order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zt::checkpoint {

/// CRC-32C with 8 lookup tables (slicing-by-8: eight bytes per step), on any CPU.
/// @param data bytes. @param size count. @param crc the running value (0 to start).
/// @return the updated value.
uint32_t crc32c_portable(const void* data, std::size_t size, uint32_t crc = 0);

/// Whether this CPU executes SSE4.2's crc32 instruction (asked once, at run time).
/// @return true on x86-64 CPUs with SSE4.2.
bool crc32c_hardware_available();

/// CRC-32C with the crc32 instruction, three independent streams at a time, joined with
/// crc32c_shift. Only call it where crc32c_hardware_available() (zt::Error otherwise).
/// @param data bytes. @param size count. @param crc the running value (0 to start).
/// @return the updated value.
uint32_t crc32c_hardware(const void* data, std::size_t size, uint32_t crc = 0);

/// The raw CRC register after `bytes` zero bytes: reg · x^(8·bytes) mod P, in the reflected
/// representation. @param reg a register value. @param bytes how many zero bytes.
/// @return the shifted register.
uint32_t crc32c_shift(uint32_t reg, uint64_t bytes);

/// The CRC-32C of A followed by B. @param crc_a crc32c(A). @param crc_b crc32c(B).
/// @param size_b |B| in bytes. @return crc32c(A B).
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b);

}  // namespace zt::checkpoint
