#include "peer_bench/client_phase.h"

#include <memory>
#include <thread>
#include <vector>

#include "loadgen/process_stats.h"

namespace leasehold::peer_bench {

namespace {
using loadgen::AddTally;
using loadgen::CpuTime;
constexpr std::size_t kErrorSamples = 5;
}  // namespace

ClientWorker::ClientWorker(int index, const BenchOptions& options,
                           peers::LockClient& client,
                           SteadyClock::time_point window_start,
                           SteadyClock::time_point window_end)
    : index_(index),
      options_(options),
      client_(client),
      window_start_(window_start),
      window_end_(window_end),
      random_(
          0x1ea5e401dULL * static_cast<std::uint64_t>(index + 1) ^
          static_cast<std::uint64_t>(window_start.time_since_epoch().count())) {
}

std::uint64_t ClientWorker::Random(std::uint64_t n) {
  return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(random_);
}

void ClientWorker::Record(SteadyClock::time_point start) {
  const auto end = SteadyClock::now();
  if (InWindow(end)) tally_.requests.Record(end - start);
}

void ClientWorker::RecordPair(SteadyClock::time_point start) {
  const auto end = SteadyClock::now();
  if (InWindow(end)) tally_.pairs.Record(end - start);
}

void ClientWorker::Error(std::string what) {
  ++tally_.errors;
  if (tally_.error_samples.size() < kErrorSamples) {
    tally_.error_samples.push_back(std::move(what));
  }
}

PhaseResult RunClientPhase(const BenchOptions& options, peers::Peer& peer,
                           std::string name, int clients,
                           std::optional<std::chrono::milliseconds> duration,
                           const ClientBody& body) {
  PhaseResult r;
  r.name = std::move(name);
  r.connections = clients;
  r.timed = duration.has_value();
  std::vector<std::unique_ptr<peers::LockClient>> links(clients);
  std::vector<std::string> connect_errors;
  for (int i = 0; i < clients; ++i) {
    auto c = peer.Connect(i);
    if (c) {
      links[i] = std::move(*c);
    } else {
      connect_errors.push_back("connect: " + c.error().message());
    }
  }
  const auto begin = SteadyClock::now();
  const auto window_start = duration ? begin + options.warmup : begin;
  const auto window_end =
      duration ? window_start + *duration : SteadyClock::time_point::max();
  std::vector<std::unique_ptr<ClientWorker>> workers;
  for (int i = 0; i < clients; ++i) {
    if (links[i] == nullptr) continue;
    workers.push_back(std::make_unique<ClientWorker>(i, options, *links[i],
                                                     window_start, window_end));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&body, &w] { body(*w); });
  }
  if (duration) {
    // CPU time inside the window: this process, and the peer's server
    // when its pid is known.
    auto server = [&options] {
      return options.server_pid > 0 ? CpuTime(options.server_pid)
                                    : std::nullopt;
    };
    std::this_thread::sleep_until(window_start);
    const auto client_start = CpuTime(0), server_start = server();
    std::this_thread::sleep_until(window_end);
    const auto client_end = CpuTime(0), server_end = server();
    if (client_start && client_end) r.client_cpu = *client_end - *client_start;
    if (server_start && server_end) r.server_cpu = *server_end - *server_start;
  }
  for (auto& t : threads) t.join();
  const auto finish = SteadyClock::now();
  r.seconds =
      std::chrono::duration<double>(
          duration ? std::chrono::nanoseconds(*duration) : finish - begin)
          .count();
  r.errors += connect_errors.size();
  for (auto& e : connect_errors) {
    if (r.error_samples.size() < kErrorSamples) r.error_samples.push_back(e);
  }
  for (auto& w : workers) AddTally(r, w->tally());
  return r;
}

}  // namespace leasehold::peer_bench
