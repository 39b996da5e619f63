// The recorder takes many threads' operations; the summary counts them; the
// describer names operations the way violations do.
#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

#include "tests/testing/lock_history.h"
#include "tests/testing/lock_history_test_support.h"

namespace leasehold::testing {
namespace {

TEST(LockHistoryRecorder, ManyThreadsAppendEveryOperation) {
  HistoryRecorder recorder;
  constexpr int kThreads = 8, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&recorder, t] {
      const std::string session = "s" + std::to_string(t);
      for (int i = 0; i < kEach; ++i) {
        const Instant invoke = HistoryRecorder::Now();
        recorder.Add(Acquire(session, "r", kS, invoke, HistoryRecorder::Now(),
                             Outcome::kOk, 1));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(recorder.size(), std::size_t{kThreads * kEach});
  const History history = recorder.Snapshot();
  std::map<std::string, int> per_session;
  for (const Operation& op : history) {
    ++per_session[op.session];
    EXPECT_LE(op.invoke, op.complete);
  }
  EXPECT_EQ(per_session.size(), std::size_t{kThreads});
  for (const auto& [session, count] : per_session) EXPECT_EQ(count, kEach);
}

TEST(LockHistoryRecorder, SummaryCountsEachKind) {
  const History history = {
      KeepAlive("a", At(0), At(1), Outcome::kOk, Micros(1000)),
      Acquire("a", "r", kX, At(1), At(2), Outcome::kOk, 1),
      Acquire("b", "r", kX, At(1), At(3), Outcome::kRefused),
      Acquire("b", "r", kX, At(4), At(5), Outcome::kUnknown),
      Release("a", "r", At(6), At(7), Outcome::kOk),
      KeepAlive("b", At(8), At(9), Outcome::kSessionLost),
      KeepAlive("a", At(8), At(9), Outcome::kLocksLost, Micros(1000)),
      Write("k", "v1", At(10), At(11), Outcome::kOk),
      Write("k", "v2", At(10), At(11), Outcome::kUnknown),
      Read("k", "v1", At(20), At(21)),
  };
  const HistorySummary s = Summarize(history);
  EXPECT_EQ(s.operations, 10u);
  EXPECT_EQ(s.acquires, 3u);
  EXPECT_EQ(s.grants, 1u);
  EXPECT_EQ(s.refusals, 1u);
  EXPECT_EQ(s.releases, 1u);
  EXPECT_EQ(s.sessions, 2u);
  EXPECT_EQ(s.sessions_lost, 1u);
  EXPECT_EQ(s.locks_lost, 1u);
  EXPECT_EQ(s.writes, 2u);
  EXPECT_EQ(s.writes_acknowledged, 1u);
  EXPECT_EQ(s.reads, 1u);
  EXPECT_EQ(s.unknowns, 2u);
  EXPECT_EQ(s.ToString(),
            "10 operations: 3 acquires (1 granted, 1 refused), 1 releases, "
            "2 writes (1 acknowledged), 1 reads, 0 probes; 2 unknown "
            "outcomes; 2 "
            "sessions, 1 lost, 1 told their locks were lost");
}

TEST(LockHistoryRecorder, OperationsAreNamedWithTimesFromTheFirstInvoke) {
  const History history = {
      Acquire("a", "r", kX, At(100), At(150), Outcome::kOk, 7),
      Write("k", "v", At(200), At(1'000'200), Outcome::kUnknown),
      Read("k", std::nullopt, At(2'000'000), At(2'000'001)),
  };
  const HistoryDescriber words(history);
  EXPECT_EQ(words.Op(0),
            "#0 acquire a r Exclusive [t+0.000000s..t+0.000050s] granted "
            "fence 7");
  EXPECT_EQ(words.Op(1),
            "#1 write k = \"v\" [t+0.000100s..t+1.000100s] unknown");
  EXPECT_EQ(words.Op(2), "#2 read k [t+1.999900s..t+1.999901s] saw no record");
  EXPECT_EQ(words.At(Instant::max()), "the end of the history");
  EXPECT_EQ(HistoryDescriber::Span(Micros(1)), "1.000us");
}

}  // namespace
}  // namespace leasehold::testing
