// Restart time and memory: a store with 1M keys, 100,000 sessions and 1M
// application locks (issue 15: under 3 s), loaded the way `leasehold serve`
// starts (OpenSqliteStore with its integrity check, then EngineService::Open,
// which restores the engine).
//
// Three stores are written once: keys only; keys and sessions; keys,
// sessions and their locks. Each restore runs in a fresh process (this
// binary with --restore), so its resident memory starts from nothing and a
// freed earlier run cannot hide the growth. Per run: wall time, CPU time
// (getrusage, user + system), VmRSS before and after, VmHWM. The medians of
// the differences between the stores give the memory per lock.
//
// Run: build-rel/bench/restart_bench [--runs 3] [--keys N] [--sessions N]
//      [--locks-per-session N] [--dir DIR] [--keep] [--outage-reads]
// Files go to DIR (default $LEASEHOLD_BENCH_DIR, else /tmp).
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/real_clock.h"
#include "service/engine_service.h"
#include "store/sqlite/sqlite_store.h"

namespace leasehold {
namespace {

using std::chrono::seconds;

struct Shape {
  int keys = 1'000'000;
  int sessions = 100'000;
  int locks_per_session = 10;
};

// --- writing the stores ---------------------------------------------------

// One key in ten is checked out; one in twenty is a lease without a record
// (checked out before it was ever written).
KeyRow BenchKey(int i, Time expires) {
  KeyRow row;
  row.ns = "docs";
  row.key = "note:" + std::to_string(i);
  if (i % 20 != 5) {
    row.has_record = true;
    row.body = "Garden note " + std::to_string(i) + ", first draft";
    row.version = 1 + static_cast<std::uint64_t>(i % 3);
  }
  if (i % 10 == 0 || i % 20 == 5) {
    row.locked_by = "Asha";
    row.token = "3f2c9a1b7d4e8f60a1b2c3d4e5f60718";
    row.lock_expires_at = expires;
    row.fence = static_cast<Fence>(i + 1);
  }
  return row;
}

// Every other session had a transaction open when the server stopped: it
// comes back lost, keeping its Transaction-owned locks.
SessionRow BenchSession(SessionId id, Time now) {
  SessionRow row;
  row.id = id;
  row.name = "worker-" + std::to_string(id);
  row.caller = "svc-billing";
  row.ttl = std::chrono::milliseconds(30'000);
  row.opened_at = now;
  if (id % 2 == 0) {
    row.transaction = id;
    row.transaction_started_at = now;
  }
  return row;
}

// Distinct resources (no two sessions share one), every mode in turn; in a
// session with a lost transaction every other lock belongs to it.
LockRow BenchLock(SessionId session, int i, Fence fence, Time now) {
  LockRow row;
  row.session = session;
  row.owner = session % 2 == 0 && i % 2 == 0 ? LockOwner::kTransaction
                                             : LockOwner::kSession;
  row.ns = "docs";
  row.principal = "svc-billing";
  row.resource = "invoice:" + std::to_string(fence);
  row.mode = static_cast<LockMode>(1 + fence % (kLockModeCount - 1));
  row.count = 1 + static_cast<std::uint32_t>(fence % 3 == 0);
  row.fence = fence;
  row.since = now;
  return row;
}

bool Write(const std::string& path, const Shape& shape) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::filesystem::remove(path + suffix);
  }
  auto store = OpenSqliteStore(path, {.synchronous = "NORMAL"});
  if (!store) {
    std::cerr << store.error().message() << "\n";
    return false;
  }
  const Time now = RealClock().Now();
  JournalBatch batch;
  bool ok = true;
  auto add = [&](JournalEntry&& e) {
    batch.push_back(std::move(e));
    if (batch.size() < 50'000) return;
    ok = ok && (*store)->Append(batch).ok();
    batch.clear();
  };
  auto entry = [](JournalEntry::Kind kind) {
    JournalEntry e;
    e.kind = kind;
    return e;
  };
  Fence fence = static_cast<Fence>(shape.keys) + 1;
  for (int i = 0; i < shape.keys; ++i) {
    JournalEntry e = entry(JournalEntry::Kind::kPutKey);
    e.row = BenchKey(i, now + seconds(3600));
    add(std::move(e));
  }
  for (SessionId id = 1; id <= static_cast<SessionId>(shape.sessions); ++id) {
    JournalEntry e = entry(JournalEntry::Kind::kPutSession);
    e.session = BenchSession(id, now);
    add(std::move(e));
    for (int i = 0; i < shape.locks_per_session; ++i) {
      JournalEntry l = entry(JournalEntry::Kind::kPutLock);
      l.lock = BenchLock(id, i, fence++, now);
      add(std::move(l));
    }
  }
  JournalEntry fences = entry(JournalEntry::Kind::kReserveFences);
  fences.fences_reserved = fence;
  add(std::move(fences));
  JournalEntry sessions = entry(JournalEntry::Kind::kReserveSessionIds);
  sessions.session_ids_reserved = static_cast<SessionId>(shape.sessions);
  add(std::move(sessions));
  JournalEntry transactions = entry(JournalEntry::Kind::kReserveTransactionIds);
  transactions.transaction_ids_reserved =
      static_cast<TransactionId>(shape.sessions);
  add(std::move(transactions));
  ok = ok && (*store)->Append(batch).ok();
  if (!ok) std::cerr << "writing " << path << " failed\n";
  return ok;
}

// --- one restore, in this process -----------------------------------------

long StatusKib(const char* field) {  // a "VmRSS:   1234 kB" line
  std::ifstream in("/proc/self/status");
  const std::string name = std::string(field) + ":";
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(name)) return std::stol(line.substr(name.size()));
  }
  return -1;
}

double CpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const auto ms = [](timeval t) {
    return static_cast<double>(t.tv_sec) * 1e3 +
           static_cast<double>(t.tv_usec) / 1e3;
  };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

// Prints one line: wall_ms open_ms cpu_ms rss_before_kib rss_after_kib hwm_kib
// keys sessions locks.
int Restore(const std::string& path, bool outage_reads) {
  RealClock clock;
  boost::asio::io_context io;
  const long rss_before = StatusKib("VmRSS");
  const double cpu_before = CpuMs();
  const auto start = std::chrono::steady_clock::now();
  auto store = OpenSqliteStore(path);  // as serve: synchronous FULL, checked
  if (!store) {
    std::cerr << store.error().message() << "\n";
    return 1;
  }
  const double open_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  auto service = EngineService::Open(io, std::move(*store), {}, clock,
                                     {.outage_reads = outage_reads});
  if (!service) {
    std::cerr << service.error().message() << "\n";
    return 1;
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  const double cpu_ms = CpuMs() - cpu_before;
  const long rss_after = StatusKib("VmRSS");
  const auto stats = (*service)->Run([](Engine& e, Time) { return e.Stats(); });
  if (!stats) return 1;
  const EngineStats& s = *stats;
  std::printf("%.1f %.1f %.1f %ld %ld %ld %zu %zu %zu\n", wall_ms, open_ms,
              cpu_ms, rss_before, rss_after, StatusKib("VmHWM"), s.keys,
              s.restored_sessions, s.restored_locks);
  return 0;
}

// --- the runs, each in a child process ------------------------------------

struct Run {
  double wall_ms = 0, open_ms = 0, cpu_ms = 0;
  long rss_before = 0, rss_after = 0, hwm = 0;
  std::size_t keys = 0, sessions = 0, locks = 0;
  double load = 0;  // 1-minute load average before the run
};

double LoadAverage() {
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  return load;
}

bool RunChild(const std::string& path, bool outage_reads, Run& run) {
  int out[2];
  if (pipe(out) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::string self = "/proc/self/exe", flag = "--restore", file = path,
              reads = "--outage-reads";
  char* argv[] = {self.data(), flag.data(), file.data(),
                  outage_reads ? reads.data() : nullptr, nullptr};
  run.load = LoadAverage();
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  int status = 0;
  if (spawned != 0 || waitpid(pid, &status, 0) != pid || status != 0) {
    return false;
  }
  std::istringstream in(text);
  in >> run.wall_ms >> run.open_ms >> run.cpu_ms >> run.rss_before >>
      run.rss_after >> run.hwm >> run.keys >> run.sessions >> run.locks;
  return static_cast<bool>(in);
}

template <typename F>
double Median(const std::vector<Run>& runs, F field) {
  std::vector<double> v;
  for (const Run& r : runs) v.push_back(static_cast<double>(field(r)));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double AddedMib(const Run& r) {
  return static_cast<double>(r.rss_after - r.rss_before) / 1024;
}

int Main(int argc, char** argv) {
  if ((argc == 3 || argc == 4) && std::string(argv[1]) == "--restore") {
    return Restore(argv[2], argc == 4);
  }
  Shape shape;
  int runs = 3;
  bool keep = false;
  bool outage_reads = false;  // ServiceOptions::outage_reads: its cost
  const char* env_dir = std::getenv("LEASEHOLD_BENCH_DIR");
  std::string dir = env_dir != nullptr ? env_dir : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--keep") {
      keep = true;
    } else if (arg == "--outage-reads") {
      outage_reads = true;
    } else if (arg == "--runs" && has_value) {
      runs = std::stoi(argv[++i]);
    } else if (arg == "--keys" && has_value) {
      shape.keys = std::stoi(argv[++i]);
    } else if (arg == "--sessions" && has_value) {
      shape.sessions = std::stoi(argv[++i]);
    } else if (arg == "--locks-per-session" && has_value) {
      shape.locks_per_session = std::stoi(argv[++i]);
    } else if (arg == "--dir" && has_value) {
      dir = argv[++i];
    } else {
      std::cerr << "usage: restart_bench [--runs N] [--keys N] [--sessions N] "
                   "[--locks-per-session N] [--dir DIR] [--keep] "
                   "[--outage-reads]\n"
                   "       restart_bench --restore FILE [--outage-reads]\n";
      return 2;
    }
  }
  struct Case {
    std::string label;
    Shape shape;
    std::string path;
    std::vector<Run> runs;
  };
  const std::string prefix =
      dir + "/leasehold-restart-" + std::to_string(getpid()) + "-";
  std::vector<Case> stores = {
      {"keys", {shape.keys, 0, 0}, prefix + "keys.db", {}},
      {"keys+sessions",
       {shape.keys, shape.sessions, 0},
       prefix + "sessions.db",
       {}},
      {"keys+sessions+locks", shape, prefix + "locks.db", {}},
  };
  for (Case& s : stores) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!Write(s.path, s.shape)) return 1;
    std::cerr << "wrote " << s.path << " ("
              << std::filesystem::file_size(s.path) / 1'000'000 << " MB) in "
              << std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                     .count()
              << " s\n";
  }
  // Runs alternate between the stores, so a busy moment hits all of them.
  for (int i = 0; i < runs; ++i) {
    for (Case& s : stores) {
      Run r;
      if (!RunChild(s.path, outage_reads, r)) {
        std::cerr << "restoring " << s.path << " failed\n";
        return 1;
      }
      // A fast restore that dropped rows would be no figure at all.
      const auto want_locks = static_cast<std::size_t>(
          s.shape.sessions * s.shape.locks_per_session);
      if (r.keys != static_cast<std::size_t>(s.shape.keys) ||
          r.sessions != static_cast<std::size_t>(s.shape.sessions) ||
          r.locks != want_locks) {
        std::cerr << "restoring " << s.path << " brought back " << r.keys
                  << " keys, " << r.sessions << " sessions, " << r.locks
                  << " locks; it holds " << s.shape.keys << ", "
                  << s.shape.sessions << ", " << want_locks << "\n";
        return 1;
      }
      std::fprintf(stderr,
                   "  %-20s wall %7.1f ms (open %6.1f)  cpu %7.1f ms  "
                   "rss +%6.1f MiB  hwm %6.1f MiB  load %.2f\n",
                   s.label.c_str(), r.wall_ms, r.open_ms, r.cpu_ms, AddedMib(r),
                   static_cast<double>(r.hwm) / 1024, r.load);
      s.runs.push_back(r);
    }
  }
  std::printf("medians of %d runs (each a fresh process):\n", runs);
  std::printf("%-20s %9s %9s %9s %10s %10s %9s %9s %9s\n", "store", "wall_ms",
              "open_ms", "cpu_ms", "rss+_MiB", "hwm_MiB", "keys", "sessions",
              "locks");
  for (const Case& s : stores) {
    std::printf("%-20s %9.1f %9.1f %9.1f %10.1f %10.1f %9zu %9zu %9zu\n",
                s.label.c_str(),
                Median(s.runs, [](const Run& r) { return r.wall_ms; }),
                Median(s.runs, [](const Run& r) { return r.open_ms; }),
                Median(s.runs, [](const Run& r) { return r.cpu_ms; }),
                Median(s.runs, AddedMib),
                Median(s.runs, [](const Run& r) { return r.hwm; }) / 1024,
                s.runs[0].keys, s.runs[0].sessions, s.runs[0].locks);
  }
  const double keys_mib = Median(stores[0].runs, AddedMib);
  const double sessions_mib = Median(stores[1].runs, AddedMib);
  const double locks_mib = Median(stores[2].runs, AddedMib);
  const double locks = static_cast<double>(stores[2].runs[0].locks);
  const double bytes = 1024.0 * 1024.0;
  if (stores[0].runs[0].keys > 0) {
    std::printf("rss per key: %.0f B\n",
                keys_mib * bytes / static_cast<double>(stores[0].runs[0].keys));
  }
  if (locks > 0) {
    std::printf(
        "rss per lock: %.0f B (%.0f B with its share of the sessions)\n",
        (locks_mib - sessions_mib) * bytes / locks,
        (locks_mib - keys_mib) * bytes / locks);
  }
  double low = 1e9, high = 0;
  for (const Case& s : stores) {
    for (const Run& r : s.runs) {
      low = std::min(low, r.load);
      high = std::max(high, r.load);
    }
  }
  std::printf("load average (1 min) before the runs: %.2f to %.2f\n", low,
              high);
  if (!keep) {
    for (const Case& s : stores) {
      for (const char* suffix : {"", "-wal", "-shm"}) {
        std::filesystem::remove(s.path + suffix);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace leasehold

int main(int argc, char** argv) { return leasehold::Main(argc, argv); }
