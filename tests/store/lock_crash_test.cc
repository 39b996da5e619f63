// Kill -9 at random moments while sessions take and let go of application
// locks: every acknowledged grant is still held, nothing is held that was
// never asked for, no two sessions hold conflicting modes, fences are unique
// and reserved, and the restored engine takes every row. The child is
// lock_crash_writer; the rules are lock_crash_history.h's. On every store
// backend.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "common/real_clock.h"
#include "service/restore.h"
#include "tests/store/backends.h"
#include "tests/store/lock_crash_history.h"
#include "tests/store/spawn_child.h"

namespace leasehold::lock_crash {
namespace {

constexpr int kWriterThreads = 4;

pid_t StartWriter(const std::string& db, const std::string& acks, int seed,
                  const std::string& ns) {
  return SpawnChild({LEASEHOLD_LOCK_CRASH_WRITER, db, acks,
                     std::to_string(kWriterThreads), std::to_string(seed), ns});
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Checks the store against the history; returns how many grants it holds.
std::size_t Check(const std::string& db, const std::string& acks) {
  auto store = OpenAnyStore(db);
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  if (!store) return 0;
  auto state = (*store)->LoadAll();
  EXPECT_TRUE(state.has_value()) << state.error().ToString();
  if (!state) return 0;
  for (const std::string& broken : CheckLocks(
           ReadHistory(ReadFile(acks)), state->locks, state->fences_reserved)) {
    ADD_FAILURE() << broken;
  }
  // And the engine takes every row back (it refuses conflicts itself).
  RealClock clock;
  auto engine = RestoreEngine(**store, {}, clock);
  EXPECT_TRUE(engine.has_value()) << engine.error().ToString();
  if (engine) {
    EXPECT_EQ((*engine)->Stats().restored_locks, state->locks.size());
  }
  return state->locks.size();
}

class LockCrash : public ::testing::TestWithParam<Backend> {};

TEST_P(LockCrash, KillNineKeepsEveryAcknowledgedLockAndNothingElse) {
  const StoreLocation location(GetParam());
  ASSERT_FALSE(location.where().empty());
  const std::string& db = location.where();
  const std::string acks = location.File("acks.log");
  const int rounds = KillRounds(GetParam());
  std::mt19937 rng(20261202);
  std::size_t lines_before = 0;
  int rounds_with_progress = 0;
  for (int round = 0; round < rounds; ++round) {
    // A namespace per round: the sessions of earlier rounds come back with
    // their locks each time, untouched, and stay checked.
    const pid_t pid =
        StartWriter(db, acks, round, "round" + std::to_string(round));
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
    const std::size_t held = Check(db, acks);
    ASSERT_FALSE(HasFailure()) << "round " << round;
    const std::string text = ReadFile(acks);
    const std::size_t lines =
        static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    if (lines > lines_before) ++rounds_with_progress;
    lines_before = lines;
    if (round == rounds - 1) {
      std::printf(
          "lock crash test (%s): %d rounds, %zu logged calls, %zu held\n",
          BackendName(GetParam()).c_str(), rounds, lines, held);
    }
  }
  // The kills must have landed while locks were moving, not before.
  EXPECT_GE(rounds_with_progress, rounds / 2);
}

INSTANTIATE_TEST_SUITE_P(AllStores, LockCrash,
                         ::testing::Values(Backend::kSqlite,
                                           Backend::kPostgres),
                         BackendTestName);

}  // namespace
}  // namespace leasehold::lock_crash
