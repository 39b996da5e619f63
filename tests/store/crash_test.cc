// Kill -9 at random moments: nothing acknowledged is lost, nothing is half
// applied, and the store stays sound, on every backend. The child is
// crash_writer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "tests/store/backends.h"
#include "tests/store/crash_pattern.h"
#include "tests/store/spawn_child.h"

namespace leasehold {
namespace {

constexpr int kWriterThreads = 4;

pid_t StartWriter(const std::string& db, const std::string& acks, int seed) {
  return SpawnChild({LEASEHOLD_CRASH_WRITER, db, acks,
                     std::to_string(kWriterThreads), std::to_string(seed)});
}

std::string IntegrityCheck(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr);
  std::string result;
  while (sqlite3_step(s) == SQLITE_ROW) {
    result += reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return result;
}

// The highest acknowledged version of every key.
std::map<std::string, std::uint64_t> ReadAcks(const std::string& path) {
  std::map<std::string, std::uint64_t> acked;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string a, b;
    std::uint64_t va = 0, vb = 0;
    if (!(fields >> a >> va >> b >> vb)) continue;  // a torn last line
    acked[a] = std::max(acked[a], va);
    acked[b] = std::max(acked[b], vb);
  }
  return acked;
}

struct RoundResult {
  std::size_t keys = 0;
  std::size_t acked_keys = 0;
};

RoundResult Check(const std::string& db, const std::string& acks) {
  RoundResult result;
  auto store = OpenAnyStore(db);
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  if (!store) return result;
  auto state = (*store)->LoadAll();
  EXPECT_TRUE(state.has_value());
  if (!state) return result;
  std::map<std::string, const KeyRow*> rows;
  for (const KeyRow& r : state->rows) {
    rows[r.key] = &r;
    // Whole, never torn: the body is exactly what this version wrote, and
    // every lease was checked in within the same command.
    EXPECT_TRUE(r.has_record) << r.key;
    EXPECT_EQ(r.body, crash::BodyFor(r.key, r.version)) << r.key;
    EXPECT_FALSE(r.lock_expires_at.has_value()) << r.key;
    EXPECT_LE(r.fence, state->fences_reserved) << r.key;
  }
  // Both keys of a pair are written in one command: same version always.
  for (const auto& [key, row] : rows) {
    if (!key.ends_with("-a")) continue;
    const std::string other = key.substr(0, key.size() - 1) + "b";
    if (!rows.count(other)) {
      ADD_FAILURE() << "half of a pair: " << key;
      continue;
    }
    EXPECT_EQ(row->version, rows[other]->version) << key;
  }
  // Every acknowledged write is there.
  const auto acked = ReadAcks(acks);
  for (const auto& [key, version] : acked) {
    auto it = rows.find(key);
    if (it == rows.end()) {
      ADD_FAILURE() << "acknowledged key lost: " << key;
      continue;
    }
    EXPECT_GE(it->second->version, version)
        << "acknowledged write lost: " << key;
  }
  result.keys = rows.size();
  result.acked_keys = acked.size();
  return result;
}

class Crash : public ::testing::TestWithParam<Backend> {};

TEST_P(Crash, KillNineNeverLosesAcknowledgedWrites) {
  const StoreLocation location(GetParam());
  ASSERT_FALSE(location.where().empty());
  const std::string& db = location.where();
  const std::string acks = location.File("acks.log");
  const int rounds = KillRounds(GetParam());
  std::mt19937 rng(20261130);
  std::size_t acked_lines_before = 0;
  int rounds_with_progress = 0;
  for (int round = 0; round < rounds; ++round) {
    const pid_t pid = StartWriter(db, acks, round);
    ASSERT_GT(pid, 0);
    WaitForWriting(acks);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 300));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    location.AwaitWritersGone();
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the writer stopped by itself (exit " << WEXITSTATUS(status)
        << ") in round " << round;
    if (GetParam() == Backend::kSqlite) {
      EXPECT_EQ(IntegrityCheck(db), "ok") << "round " << round;
    }
    const RoundResult r = Check(db, acks);
    ASSERT_FALSE(HasFailure()) << "round " << round;
    std::ifstream in(acks);
    const std::size_t lines = static_cast<std::size_t>(
        std::count(std::istreambuf_iterator<char>(in), {}, '\n'));
    if (lines > acked_lines_before) ++rounds_with_progress;
    acked_lines_before = lines;
    if (round == rounds - 1) {
      std::printf(
          "crash test (%s): %d rounds, %zu acknowledged commands, %zu keys\n",
          BackendName(GetParam()).c_str(), rounds, lines, r.keys);
    }
  }
  // The kills must have landed while writes were happening, not before.
  EXPECT_GE(rounds_with_progress, rounds / 2);
}

INSTANTIATE_TEST_SUITE_P(AllStores, Crash,
                         ::testing::Values(Backend::kSqlite,
                                           Backend::kPostgres),
                         BackendTestName);

}  // namespace
}  // namespace leasehold
