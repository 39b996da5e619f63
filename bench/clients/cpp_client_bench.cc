// The C++ client's share of bench/clients/run.sh: CALLERS threads share one
// leasehold::client::Client (one pool of keep-alive connections); each opens
// its own Session, then loops Session::Lock (Exclusive, timeout 0) on its
// own resource "r-<caller>" and LockGuard::Release until told to stop.
// After --warmup seconds the pairs done and the process's CPU (getrusage
// RUSAGE_SELF: user + sys, all threads) are read, and again --seconds later;
// the difference is printed as one JSON line (the drivers' common format,
// bench/clients/README.md). Exit 1 on any failed call.
//
//   client_bench_cpp --url http://127.0.0.1:PORT [--callers 16]
//                    [--seconds 3] [--warmup 0.5] [--ns bench]
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leasehold/client.h"

namespace lc = leasehold::client;

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return s(u.ru_utime) + s(u.ru_stime);
}

struct alignas(64) Counter {
  std::atomic<std::uint64_t> pairs{0};
};

std::mutex error_mutex;
std::string first_error;
std::atomic<bool> stop{false};

void Fail(std::string_view what, const lc::Error& e) {
  std::lock_guard lock(error_mutex);
  if (first_error.empty()) {
    first_error = std::string(what) + ": " + e.code + " " + e.message +
                  " (http " + std::to_string(e.http_status) + ")";
  }
  stop.store(true, std::memory_order_relaxed);
}

void Usage() {
  std::fprintf(stderr,
               "usage: client_bench_cpp --url URL [--callers N] "
               "[--seconds S] [--warmup S] [--ns NS]\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string url, ns = "bench";
  int callers = 16;
  double seconds = 3, warmup = 0.5;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (i + 1 >= argc) Usage();
    const char* v = argv[++i];
    if (a == "--url") {
      url = v;
    } else if (a == "--callers") {
      callers = std::atoi(v);
    } else if (a == "--seconds") {
      seconds = std::atof(v);
    } else if (a == "--warmup") {
      warmup = std::atof(v);
    } else if (a == "--ns") {
      ns = v;
    } else {
      Usage();
    }
  }
  if (url.empty() || callers < 1 || seconds <= 0) Usage();

  lc::ClientOptions client_options;
  client_options.url = url;
  client_options.io_timeout = std::chrono::milliseconds{10'000};
  auto client = lc::Client::Create(std::move(client_options));
  if (!client) {
    std::fprintf(stderr, "client: %s %s\n", client.error().code.c_str(),
                 client.error().message.c_str());
    return 1;
  }
  std::vector<lc::Session> sessions;
  sessions.reserve(static_cast<std::size_t>(callers));
  for (int c = 0; c < callers; ++c) {
    auto s = client->StartSession("bench-cpp-" + std::to_string(c),
                                  std::chrono::milliseconds{60'000});
    if (!s) {
      std::fprintf(stderr, "open session: %s %s\n", s.error().code.c_str(),
                   s.error().message.c_str());
      return 1;
    }
    sessions.push_back(std::move(*s));
  }

  std::vector<Counter> counters(static_cast<std::size_t>(callers));
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      lc::Session& session = sessions[static_cast<std::size_t>(c)];
      const std::string resource = "r-" + std::to_string(c);
      lc::AcquireOptions options;
      options.mode = "Exclusive";
      options.timeout = std::chrono::milliseconds{0};
      Counter& counter = counters[static_cast<std::size_t>(c)];
      while (!stop.load(std::memory_order_relaxed)) {
        auto guard = session.Lock(ns, resource, options);
        if (!guard) return Fail("lock", guard.error());
        if (auto r = guard->Release(); !r) return Fail("release", r.error());
        counter.pairs.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }

  auto total = [&] {
    std::uint64_t n = 0;
    for (auto& c : counters) n += c.pairs.load(std::memory_order_relaxed);
    return n;
  };
  using Clock = std::chrono::steady_clock;
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup));
  const auto t0 = Clock::now();
  const double cpu0 = CpuSeconds();
  const std::uint64_t pairs0 = total();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const std::uint64_t pairs1 = total();
  const double cpu1 = CpuSeconds();
  const auto t1 = Clock::now();
  stop.store(true, std::memory_order_relaxed);
  for (auto& t : threads) t.join();
  if (!first_error.empty()) {
    // Out at once: ending the sessions could wait out io_timeout on a
    // server that is gone.
    std::fprintf(stderr, "client_bench_cpp: %s\n", first_error.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  for (auto& s : sessions) (void)s.End();
  const double wall = std::chrono::duration<double>(t1 - t0).count();
  const auto pairs = static_cast<double>(pairs1 - pairs0);
  const double cpu = cpu1 - cpu0;
  std::printf(
      "{\"driver\":\"cpp-client\",\"callers\":%d,\"pairs\":%.0f,"
      "\"seconds\":%.3f,\"pairs_per_s\":%.1f,\"cpu_s\":%.3f,"
      "\"cpu_us_per_call\":%.2f}\n",
      callers, pairs, wall, pairs / wall, cpu,
      pairs > 0 ? cpu * 1e6 / (2 * pairs) : 0.0);
  return 0;
}
