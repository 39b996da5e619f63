// `leasehold-peers bench --target URL`: one scenario of the load generator
// against any peer, one blocking thread per client (src/peer_bench).
#include <iostream>
#include <memory>

#include "loadgen/bench_flags.h"
#include "peer_bench/peer_bench.h"
#include "peers_cli/commands.h"

namespace leasehold::peers_cli {

namespace {

struct PeerBenchFlags {
  loadgen::BenchFlags bench;
  std::string target;
};

int RunBench(const PeerBenchFlags& flags) {
  auto options = loadgen::ToOptions(flags.bench);
  if (!options) {
    std::cerr << "leasehold-peers bench: " << options.error().message() << "\n";
    return 2;
  }
  options->target = flags.target;
  return loadgen::PrintReport(peer_bench::RunPeerBench(*options),
                              flags.bench.json);
}

}  // namespace

void AddBenchCommand(CLI::App& app, int& code) {
  auto flags = std::make_shared<PeerBenchFlags>();
  auto* bench = app.add_subcommand(
      "bench",
      "Load one system with the benchmark scenarios, one blocking thread per "
      "client, the same way for every kind (docs/benchmarks.md), and report "
      "pairs/s, operations/s and latency percentiles; exit 1 on any "
      "unexpected answer");
  bench
      ->add_option("--target", flags->target,
                   "http://HOST:PORT (leasehold), redis://HOST:PORT, "
                   "postgresql://…[?mode=advisory|update], sqlite:PATH, "
                   "etcd://HOST:PORT")
      ->required();
  loadgen::AddBenchFlags(bench, flags->bench);
  bench->callback([flags, &code] { code = RunBench(*flags); });
}

}  // namespace leasehold::peers_cli
