// Random histories from the simulated server (lock_history_simulator.h):
// legal ones of 12,000 operations pass every check; one injected violation,
// of each kind, is caught.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "tests/testing/lock_history_check.h"
#include "tests/testing/lock_history_simulator.h"
#include "tests/testing/lock_history_test_support.h"

namespace leasehold::testing {
namespace {

constexpr std::uint64_t kSeeds[] = {1, 2, 3, 4, 5};

Simulation Legal(std::uint64_t seed) {
  SimulationOptions options;
  options.seed = seed;
  return Simulate(options);
}

// The history's grants of one resource, by the resource.
std::map<std::string, std::vector<std::size_t>> GrantsByResource(
    const History& history) {
  std::map<std::string, std::vector<std::size_t>> grants;
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (history[i].kind == OperationKind::kAcquire &&
        history[i].outcome == Outcome::kOk) {
      grants[history[i].name].push_back(i);
    }
  }
  return grants;
}

// A random grant that some other grant of its resource certainly preceded,
// with that one: (earlier, later).
std::pair<std::size_t, std::size_t> OrderedGrants(const History& history,
                                                  std::mt19937_64& random) {
  const auto grants = GrantsByResource(history);
  while (true) {
    auto it = grants.begin();
    std::advance(it, random() % grants.size());
    const std::vector<std::size_t>& of_resource = it->second;
    const std::size_t later = of_resource[random() % of_resource.size()];
    std::vector<std::size_t> before;
    for (std::size_t g : of_resource) {
      if (history[g].complete < history[later].invoke) before.push_back(g);
    }
    if (!before.empty()) return {before[random() % before.size()], later};
  }
}

struct KeyCalls {
  std::vector<std::size_t> writes;
  std::size_t read = 0;
};

std::map<std::string, KeyCalls> CallsByKey(const History& history) {
  std::map<std::string, KeyCalls> keys;
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (history[i].kind == OperationKind::kWrite) {
      keys[history[i].name].writes.push_back(i);
    }
    if (history[i].kind == OperationKind::kRead) keys[history[i].name].read = i;
  }
  return keys;
}

TEST(LockHistoryRandom, LegalOnesPass) {
  for (std::uint64_t seed : kSeeds) {
    const Simulation run = Legal(seed);
    ASSERT_GE(run.history.size(), 10'000u);
    const HistorySummary summary = Summarize(run.history);
    std::cout << "seed " << seed << ": " << summary.ToString() << "\n";
    // The simulation exercises what the checks must be careful about.
    EXPECT_GT(summary.grants, 1000u);
    EXPECT_GT(summary.unknowns, 100u);
    EXPECT_GT(summary.sessions_lost, 0u);
    MutualExclusionCoverage coverage;
    EXPECT_EQ(Lines(CheckMutualExclusion(run.history, &coverage)), "")
        << "seed " << seed;
    std::cout << "  " << coverage.holds << " holds compared, "
              << coverage.grants_not_counted << " grants not counted\n";
    // Not vacuous: most grants began a hold the check compared.
    EXPECT_GT(coverage.holds, summary.grants / 3);
    EXPECT_EQ(Lines(CheckFencesRise(run.history)), "") << "seed " << seed;
    EXPECT_EQ(Lines(CheckNoAcknowledgedWriteLost(run.history)), "")
        << "seed " << seed;
  }
}

TEST(LockHistoryRandom, AConflictingGrantIsCaught) {
  for (std::uint64_t seed : kSeeds) {
    SimulationOptions options;
    options.seed = seed;
    options.conflicting_grant = true;
    const Simulation run = Simulate(options);
    ASSERT_FALSE(run.bug.empty()) << "seed " << seed << " found no chance";
    const std::vector<std::string> found = CheckMutualExclusion(run.history);
    ASSERT_FALSE(found.empty()) << "seed " << seed << ": " << run.bug;
    // The bad grant is named: "... as #N while ...".
    const std::string grant = run.bug.substr(run.bug.find('#'));
    const std::string op = grant.substr(0, grant.find(' ')) + " ";
    EXPECT_NE(Lines(found).find(op), std::string::npos) << run.bug << "\n"
                                                        << Lines(found);
    EXPECT_EQ(Lines(CheckFencesRise(run.history)), "");
    EXPECT_EQ(Lines(CheckNoAcknowledgedWriteLost(run.history)), "");
  }
}

TEST(LockHistoryRandom, AnEqualFenceIsCaught) {
  for (std::uint64_t seed : kSeeds) {
    Simulation run = Legal(seed);
    std::mt19937_64 random(seed);
    const auto [earlier, later] = OrderedGrants(run.history, random);
    run.history[later].fence = run.history[earlier].fence;
    EXPECT_NE(Lines(CheckFencesRise(run.history)).find("granted twice"),
              std::string::npos)
        << "seed " << seed;
  }
}

TEST(LockHistoryRandom, AFallingFenceIsCaught) {
  for (std::uint64_t seed : kSeeds) {
    Simulation run = Legal(seed);
    std::mt19937_64 random(seed);
    const auto [earlier, later] = OrderedGrants(run.history, random);
    run.history[later].fence = run.history[earlier].fence - 1;
    const std::string found = Lines(CheckFencesRise(run.history));
    EXPECT_NE(found.find("fence fell"), std::string::npos)
        << "seed " << seed << "\n"
        << found;
    EXPECT_NE(found.find("#" + std::to_string(later) + " "), std::string::npos);
  }
}

TEST(LockHistoryRandom, ALostAcknowledgedWriteIsCaught) {
  for (std::uint64_t seed : kSeeds) {
    Simulation run = Legal(seed);
    std::mt19937_64 random(seed);
    auto keys = CallsByKey(run.history);
    auto it = keys.begin();
    std::advance(it, random() % keys.size());
    const KeyCalls& key = it->second;
    // The first acknowledged write, which a later one certainly followed.
    std::optional<std::size_t> first;
    for (std::size_t w : key.writes) {
      if (run.history[w].outcome == Outcome::kOk) {
        first = w;
        break;
      }
    }
    ASSERT_TRUE(first.has_value());
    bool followed = false;
    for (std::size_t w : key.writes) {
      followed |= run.history[w].outcome == Outcome::kOk &&
                  run.history[*first].complete < run.history[w].invoke;
    }
    ASSERT_TRUE(followed) << "seed " << seed;
    run.history[key.read].value = run.history[*first].value;
    EXPECT_NE(Lines(CheckNoAcknowledgedWriteLost(run.history))
                  .find("lost acknowledged write"),
              std::string::npos)
        << "seed " << seed;
    run.history[key.read].value = std::nullopt;
    EXPECT_NE(Lines(CheckNoAcknowledgedWriteLost(run.history))
                  .find("lost acknowledged write"),
              std::string::npos)
        << "seed " << seed;
  }
}

TEST(LockHistoryRandom, AValueNeverWrittenIsCaught) {
  for (std::uint64_t seed : kSeeds) {
    Simulation run = Legal(seed);
    std::mt19937_64 random(seed);
    const auto keys = CallsByKey(run.history);
    auto it = keys.begin();
    std::advance(it, random() % keys.size());
    run.history[it->second.read].value = "never written";
    EXPECT_NE(Lines(CheckNoAcknowledgedWriteLost(run.history))
                  .find("a value never written"),
              std::string::npos)
        << "seed " << seed;
    // Nor one the server refused.
    for (std::size_t w : it->second.writes) {
      if (run.history[w].outcome == Outcome::kRefused) {
        run.history[it->second.read].value = run.history[w].value;
        break;
      }
    }
    EXPECT_NE(Lines(CheckNoAcknowledgedWriteLost(run.history))
                  .find("the value of a refused write"),
              std::string::npos)
        << "seed " << seed;
  }
}

}  // namespace
}  // namespace leasehold::testing
