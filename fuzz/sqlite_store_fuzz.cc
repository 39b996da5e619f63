// Fuzz target sqlite_store: a data file as the server finds it at start-up.
// The input is written to a file (on /dev/shm when there is one) and
// opened as `serve` opens its store (OpenSqliteStore, which checks the
// header, the schema and every page) and loaded into a new engine
// (RestoreEngine). It must be refused with a message, or load; a loaded
// engine is then listed, moved on two days (so that the restored sessions
// and leases expire) and what that changed is appended to the same file.
// The corpus holds a database written by a real engine with one of
// everything (fuzz/corpus/sqlite_store/seed-with-everything), which
// libFuzzer mutates.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/clock.h"
#include "engine/engine.h"
#include "fuzz/fuzz_check.h"
#include "service/restore.h"
#include "store/sqlite/sqlite_store.h"

namespace {

using leasehold::fuzz::Violated;
namespace fs = std::filesystem;

// A directory of this process's own, removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const fs::path base = fs::is_directory("/dev/shm")
                              ? fs::path("/dev/shm")
                              : fs::temp_directory_path();
    std::string pattern = (base / "leasehold-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) Violated("mkdtemp failed", pattern);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void RemoveDatabase(const std::string& file) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;
    fs::remove(file + suffix, ec);
  }
}

leasehold::Time Start() {
  return leasehold::Time(std::chrono::sys_days{std::chrono::year{2026} /
                                               std::chrono::January / 1});
}

// A clock that stands at Start(): every run sees the same instant.
class StartClock final : public leasehold::Clock {
 public:
  leasehold::Time Now() const override { return Start(); }
};

void Exercise(leasehold::Engine& engine, leasehold::Store& store) {
  const leasehold::Time now = Start();
  (void)engine.ListSessions(now);
  for (const auto& ns : engine.ListNamespaces(now)) {
    (void)engine.ListLocks(now, ns.ns);
  }
  (void)engine.Stats();
  engine.AdvanceTo(now + std::chrono::hours(48));
  if (engine.HasJournal()) (void)store.Append(engine.TakeJournal());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  static const ScratchDir dir;
  const std::string file = (dir.path() / "leasehold.db").string();
  RemoveDatabase(file);
  {
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data),
              static_cast<std::streamsize>(size));
    if (!out) Violated("cannot write the scratch file", file);
  }
  auto store = leasehold::OpenSqliteStore(
      file, {.synchronous = "NORMAL", .create_if_missing = false});
  if (!store) {
    if (store.error().message().empty()) Violated("a bare refusal", file);
    return 0;
  }
  const StartClock clock;
  auto engine =
      leasehold::RestoreEngine(**store, leasehold::EngineOptions{}, clock);
  if (!engine) {
    if (engine.error().code() != leasehold::StatusCode::kUnavailable) {
      Violated("a load refused other than unavailable",
               engine.error().ToString());
    }
    return 0;
  }
  Exercise(**engine, **store);
  return 0;
}
