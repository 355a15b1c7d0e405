// apps/zero-plan/rank_report.cc — zero-plan's per-rank lines and JSON (see rank_report.h).
#include "apps/zero-plan/rank_report.h"

#include <cstdio>

#include "report/report.h"

namespace zt::zero_plan {

using ordered_json = nlohmann::ordered_json;
using train::TrainConfig;

std::string gb(double bytes) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g GB", bytes / 1e9);
  return b;
}

std::size_t allocations(const std::vector<ArenaEvent>& trace) {
  std::size_t n = 0;
  for (const auto& e : trace) n += e.allocate ? 1 : 0;
  return n;
}

std::string rank_label(const plan::RankPrediction& r, const TrainConfig& c) {
  char b[64];
  if (c.pp_size > 1)  // the pipeline stage first, as the rank order has it (collective/grid.h)
    std::snprintf(b, sizeof b, "rank %d (pp %d, dp %d, mp %d)", r.rank, r.pp_rank, r.dp_rank, r.mp_rank);
  else
    std::snprintf(b, sizeof b, "rank %d (dp %d, mp %d)", r.rank, r.dp_rank, r.mp_rank);
  return b;
}

void bytes_line(const std::string& label, const std::string& what, double bytes) {
  if (label.empty())
    std::printf("  %-28s %16.0f B  %s\n", what.c_str(), bytes, gb(bytes).c_str());
  else
    std::printf("  %s  %-28s %16.0f B  %s\n", label.c_str(), what.c_str(), bytes, gb(bytes).c_str());
}

double comm_total(const CommStats& s, uint64_t CollCounters::*field) {
  double t = 0;
  for (std::size_t k = 0; k < kCollKinds; ++k)
    if (static_cast<CollKind>(k) != CollKind::call_check) t += static_cast<double>(s.by_kind[k].*field);
  return t;
}

namespace {

// {collective: {calls, bytes}} for each collective a group's traffic uses
ordered_json comm_object(const CommStats& s) {
  ordered_json j = ordered_json::object();
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    const auto kind = static_cast<CollKind>(k);
    if (kind == CollKind::call_check || !s[kind].calls) continue;
    j[coll_kind_name(kind)] = {{"calls", s[kind].calls}, {"bytes", s[kind].bytes_sent}};
  }
  return j;
}

// one line per collective a group uses
void print_comm(const std::string& label, const char* group, const CommStats& s) {
  for (std::size_t k = 0; k < kCollKinds; ++k) {
    const auto kind = static_cast<CollKind>(k);
    if (kind == CollKind::call_check || !s[kind].calls) continue;
    std::printf("  %s  %s %-15s %8llu calls %16llu B  %s\n", label.c_str(), group, coll_kind_name(kind),
                static_cast<unsigned long long>(s[kind].calls), static_cast<unsigned long long>(s[kind].bytes_sent),
                gb(static_cast<double>(s[kind].bytes_sent)).c_str());
  }
}

}  // namespace

ordered_json rank_json(const plan::RankPrediction& r, const TrainConfig& c) {
  ordered_json j;
  j["rank"] = r.rank;
  j["dp_rank"] = r.dp_rank;
  j["mp_rank"] = r.mp_rank;
  j["pp_rank"] = r.pp_rank;
  j["device"] = r.device;
  j["host"] = r.host;
  j["peak_bytes"] = r.peak_bytes;
  j["high_water_bytes"] = r.high_water_bytes;
  j["fits"] = r.fit.ok;
  j["model_states_bytes"] = r.model_states_bytes;
  j["comm"] = {{"dp", comm_object(r.dp_comm)}, {"mp", comm_object(r.mp_comm)}};
  if (c.hybrid_sharding()) {  // dp's three parts, as zero-train's comm.groups reports them
    j["comm"]["dp_shard"] = comm_object(r.dp_comm - r.dp_replica_comm - r.dp_whole_comm);
    j["comm"]["dp_replica"] = comm_object(r.dp_replica_comm);
    j["comm"]["dp_whole"] = comm_object(r.dp_whole_comm);
  }
  if (c.pp_size > 1) j["comm"]["pp"] = comm_object(r.pp_comm);  // send/recv and the stages' agreement
  // the predicted side of zero-train's objects: the same keys in the same order
  j["host_transfers"] = ordered_json::parse(report::transfers_json({}, r.transfers, {}))["predicted_per_step"];
  j["file_io"] = ordered_json::parse(report::file_io_json({}, r.file_io, {}))["predicted_per_step"];
  if (c.device != device::Device::cpu)
    j["device_copies"] = ordered_json::parse(report::device_copies_json({}, r.device_copies, {}))["predicted_per_step"];
  return j;
}

bool print_traffic(const plan::RunPrediction& run, const TrainConfig& c) {
  bool any = false;
  for (const auto& r : run.ranks) {
    const std::string label = rank_label(r, c);
    if (c.hybrid_sharding()) {  // inside the shard group, across shard groups, over all N_d ranks
      print_comm(label, "dp inside shard group ", r.dp_comm - r.dp_replica_comm - r.dp_whole_comm);
      print_comm(label, "dp across shard groups", r.dp_replica_comm);
      print_comm(label, "dp over all N_d ranks ", r.dp_whole_comm);
    } else {
      print_comm(label, "dp", r.dp_comm);
    }
    print_comm(label, "mp", r.mp_comm);
    if (c.pp_size > 1) print_comm(label, "pp", r.pp_comm);
    const auto& t = r.transfers;
    if (t.to_host_calls || t.to_device_calls)
      std::printf("  %s  host to_host %llu calls %llu B, to_device %llu calls %llu B\n", label.c_str(),
                  static_cast<unsigned long long>(t.to_host_calls), static_cast<unsigned long long>(t.to_host_bytes),
                  static_cast<unsigned long long>(t.to_device_calls),
                  static_cast<unsigned long long>(t.to_device_bytes));
    const auto& d = r.device_copies;
    using device::CopyKind;
    if (d.copies_of(CopyKind::host_to_device) || d.copies_of(CopyKind::device_to_host))
      std::printf("  %s  device host_to_device %llu copies %llu B, device_to_host %llu copies %llu B\n", label.c_str(),
                  static_cast<unsigned long long>(d.copies_of(CopyKind::host_to_device)),
                  static_cast<unsigned long long>(d.bytes_of(CopyKind::host_to_device)),
                  static_cast<unsigned long long>(d.copies_of(CopyKind::device_to_host)),
                  static_cast<unsigned long long>(d.bytes_of(CopyKind::device_to_host)));
    const auto& io = r.file_io;
    if (io.read_calls || io.write_calls)
      std::printf("  %s  file read %llu calls %llu B, write %llu calls %llu B\n", label.c_str(),
                  static_cast<unsigned long long>(io.read_calls), static_cast<unsigned long long>(io.read_bytes),
                  static_cast<unsigned long long>(io.write_calls), static_cast<unsigned long long>(io.write_bytes));
    any = any || comm_total(r.dp_comm, &CollCounters::calls) + comm_total(r.mp_comm, &CollCounters::calls) > 0 ||
          d.copies_of(CopyKind::host_to_device) > 0;
  }
  return any;
}

}  // namespace zt::zero_plan
