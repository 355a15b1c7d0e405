// report/report.h — what zero-train writes for a ZeRO run beyond the single-rank summary: per-rank
// memory moved between processes (as JSON text through the rendezvous store) and the `comm`
// object. The --verify comparison is report/compare_runs.h. Plain conversions; no training and no
// collectives here.
#pragma once

#include <string>
#include <vector>

#include "collective/stats.h"
#include "memory/arena.h"
#include "train/run_options.h"
#include "train/run_result.h"
#include "zero/train_zero.h"

namespace zt::report {

/// Parse the text of one rank's memory (report/summary_json.h's rank_memory_json) back.
/// @param text the JSON. @return the report.
train::RankMemory rank_memory_from_json(const std::string& text);

/// The `comm` object: {bytes_sent_per_step, calls_per_step, predicted_bytes_sent_per_step,
/// predicted_calls_per_step}, each {kind: number}, kinds with no traffic left out.
/// @param measured counters of one step. @param predicted predicted counters of one step.
/// @return JSON text.
std::string comm_json(const CommStats& measured, const CommStats& predicted);

/// The `comm` object of a run on a data-parallel × model-parallel grid: the fields above summed
/// over both groups, and `groups` = {dp: {...}, mp: {...}} with the same fields per group; with
/// hybrid sharding also dp's three parts: `dp_shard` (inside the shard groups), `dp_replica`
/// (across them) and `dp_whole` (over all N_d ranks: the loss sums); with a pipeline also `pp`,
/// the pipeline group's (send/recv and the stages' agreement), included in the sum.
/// @param dp the data-parallel group's counters. @param mp the model-parallel group's (zero
/// without model parallelism). @param dp_replica, dp_whole hybrid sharding's parts of dp (null
/// without it). @param pp the pipeline group's (null without a pipeline). @return JSON text.
std::string comm_json(const zero::GroupComm& dp, const zero::GroupComm& mp, const zero::GroupComm* dp_replica = nullptr,
                      const zero::GroupComm* dp_whole = nullptr, const zero::GroupComm* pp = nullptr);

/// The `host_transfers` object (P_a+cpu, ZeRO-Offload): bytes and calls each way in the last step, measured and
/// predicted, and the copy thread's and the compute thread's seconds over all training steps.
/// @param per_step the last step's. @param predicted the closed form. @param total all steps.
/// @return JSON text.
std::string transfers_json(const offload::TransferStats& per_step, const offload::TransferStats& predicted,
                           const offload::TransferStats& total);

/// The `offload_file_io` object (--offload-optimizer file:DIR): bytes and calls read and written
/// in the last step, measured and predicted, and the I/O thread's and the compute thread's
/// (blocked) seconds over all training steps.
/// @param per_step the last step's. @param predicted the closed form. @param total all steps.
/// @return JSON text.
std::string file_io_json(const offload::TransferStats& per_step, const offload::TransferStats& predicted,
                         const offload::TransferStats& total);

/// The `device_copies` object (--device emulated|cuda): copies and bytes by kind
/// (host_to_device, device_to_host, device_to_device) in the last step, measured and predicted
/// (the two host kinds: predict/zero_comm.h's predict_device_copies_per_step), and over all
/// training steps. @param per_step the last step's. @param predicted the closed form.
/// @param total all steps. @return JSON text.
std::string device_copies_json(const device::CopyStats& per_step, const device::CopyStats& predicted,
                               const device::CopyStats& total);

/// An arena trace as JSON: {"capacity", "allocator", "events": [[allocate 1|0, id, bytes,
/// category], ...]} (zero_r/allocation_replay.h replays it; zero-memreplay reads it).
/// @param events the trace. @param c the run's settings (capacity, allocator). @return JSON text.
std::string arena_trace_json(const std::vector<ArenaEvent>& events, const train::RunOptions& c);

/// The largest request a trace may hold: 2^50 bytes, the largest capacity zero-memreplay takes.
inline constexpr std::size_t kMaxTraceBytes = std::size_t{1} << 50;

/// Parse arena_trace_json's text, checking it as a file from anywhere: each event is
/// [1|0, id, bytes, category] with non-negative integers, bytes at most kMaxTraceBytes, a block
/// allocated only while not live and released only while live, with its allocated size; the
/// allocations side by side stay under 2^60 bytes. Anything else is one zt::Error naming the
/// event. @param text the JSON. @return the events.
std::vector<ArenaEvent> arena_trace_from_json(const std::string& text);

}  // namespace zt::report
