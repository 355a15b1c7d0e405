// zero-launch — start N ranks of a program on this machine, torchrun-style:
//
//   zero-launch -n 4 [--master-addr A] [--master-port P] [--grace-s S] [--store SPEC] -- PROG ARGS
//   zero-launch --nnodes 2 --node-rank K --nproc-per-node 2 --master-addr NODE0 --master-port P -- PROG ARGS
//
// The second form runs on each of several machines (the same command, K = 0, 1, ...): machine K
// starts global ranks K*2 and K*2+1, and machine 0 serves the store at NODE0:P.
// Each rank sees RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (and
// ZT_STORE with --store); its output lines come back prefixed "[rank R] ". zero-launch itself
// serves the TCP store at MASTER_ADDR:MASTER_PORT (without --master-port it binds port 0 and
// passes on the port it got), so ranks only connect to it. The exit status is 0 iff every rank
// exits 0; otherwise the code of the rank that caused the failure (128+signal if it was killed),
// which is not always the first to exit: a rank that exits 3 only learnt of a peer's failure.
// All the work is in launch/spawn.h; this file is only the command line.
#include <string>
#include <vector>

#include "core/check.h"
#include "core/cli.h"
#include "launch/rank_env.h"
#include "launch/spawn.h"
#include "launch/store_spec.h"

namespace {

// ArgParser knows only --long flags; `-n N` and `-nN` (the launcher convention) become --nproc.
std::vector<std::string> translate_short_n(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "-n")
      args[i] = "--nproc";
    else if (args[i].size() > 2 && args[i].compare(0, 2, "-n") == 0)
      args[i] = "--nproc=" + args[i].substr(2);
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  return zt::run_main("zero-launch", [&]() -> int {
    std::vector<std::string> args = translate_short_n(argc, argv);
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());

    int64_t nproc = 0, port = 0, nnodes = 1, node_rank = 0;
    double grace_s = 3.0;
    std::string addr = "127.0.0.1", store;
    zt::ArgParser p("zero-launch",
                    "Start N ranks of a program on this machine: zero-launch -n N -- PROGRAM ARGS\n"
                    "(several machines: the same command on each, with --nnodes M --node-rank K --master-addr "
                    "NODE0 --master-port P)");
    p.add_int("nproc", &nproc, "number of ranks to start on this machine (also -n N, --nproc-per-node N)", 1, 1024);
    p.set_default_text("nproc", "none, required");
    p.add_int("nproc-per-node", &nproc, "the same as --nproc (torchrun's name)", 1, 1024);
    p.set_default_text("nproc-per-node", "none, required");
    p.add_int("nnodes", &nnodes, "machines in the job, each running zero-launch with the same flags", 1, 4096);
    p.add_int("node-rank", &node_rank, "this machine's index in [0, nnodes); node 0 serves the store", 0, 4095);
    p.add_string("master-addr", &addr, "MASTER_ADDR for the ranks");
    p.add_int("master-port", &port, "MASTER_PORT for the ranks: the port of the TCP store zero-launch serves", 0,
              65535);
    p.set_default_text("master-port", "any free port (bound as port 0)");
    p.add_double("grace-s", &grace_s, "seconds between SIGTERM and SIGKILL when terminating ranks", 0, 3600);
    p.add_string("store", &store, "ZT_STORE for the ranks: file:DIR | redis:HOST[:PORT] | tcp | tcp:HOST:PORT");
    p.set_default_text("store", "ZT_STORE as inherited, else tcp");
    if (!p.parse(static_cast<int>(cargs.size()), cargs.data())) return 0;
    ZT_CHECK(p.given("nproc") || p.given("nproc-per-node"),
             "the number of ranks is required: zero-launch -n N -- PROGRAM ARGS");
    ZT_CHECK(!(p.given("nproc") && p.given("nproc-per-node")), "give -n/--nproc or --nproc-per-node, not both");
    ZT_CHECK(node_rank < nnodes, "--node-rank ", node_rank, " is outside [0, --nnodes ", nnodes, ")");
    ZT_CHECK(nnodes == 1 || p.given("master-port"), "--nnodes ", nnodes,
             " needs --master-port: every machine must know the port of node 0's store");
    ZT_CHECK(nnodes == 1 || p.given("master-addr"), "--nnodes ", nnodes,
             " needs --master-addr: node 0's address, the same on every machine");
    ZT_CHECK(!p.rest().empty(), "no program given: zero-launch -n N -- PROGRAM ARGS");
    ZT_CHECK(!addr.empty(), "--master-addr must not be empty");
    if (!store.empty()) {
      zt::launch::RankEnv children;  // what the ranks will see, to check the spec's syntax now
      children.master_addr = addr;
      children.master_port = 1;
      zt::launch::parse_store_spec(store, children);
    }

    zt::launch::SpawnOptions o;
    o.world_size = static_cast<int>(nproc);
    o.nnodes = static_cast<int>(nnodes);
    o.node_rank = static_cast<int>(node_rank);
    o.master_addr = addr;
    o.master_port = static_cast<uint16_t>(port);
    o.store = store;
    o.grace = std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000.0));
    return zt::launch::spawn_ranks(p.rest(), o).status;
  });
}
