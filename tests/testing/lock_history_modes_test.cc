// The checker's own mode table agrees with the engine's, pair by pair.
#include <gtest/gtest.h>

#include "engine/lock_types.h"
#include "tests/testing/lock_history_modes.h"

namespace leasehold::testing {
namespace {

TEST(LockHistoryModes, ConflictsAreExactlyWhatTheEngineRefuses) {
  for (int a = 0; a < kLockModeCount; ++a) {
    for (int b = 0; b < kLockModeCount; ++b) {
      const auto held = static_cast<LockMode>(a);
      const auto asked = static_cast<LockMode>(b);
      EXPECT_EQ(ModesConflict(held, asked), !Compatible(held, asked))
          << ModeName(held) << " beside " << ModeName(asked);
    }
  }
}

TEST(LockHistoryModes, CombinationIsTheEngines) {
  for (int a = 0; a < kLockModeCount; ++a) {
    for (int b = 0; b < kLockModeCount; ++b) {
      const auto first = static_cast<LockMode>(a);
      const auto second = static_cast<LockMode>(b);
      EXPECT_EQ(CombinedMode(first, second), Combine(first, second))
          << ModeName(first) << " + " << ModeName(second);
    }
  }
}

TEST(LockHistoryModes, NamesAreTheEngines) {
  for (int m = 0; m < kLockModeCount; ++m) {
    const auto mode = static_cast<LockMode>(m);
    EXPECT_EQ(ModeName(mode), LockModeName(mode));
    const auto parsed = ParseLockMode(LockModeName(mode));
    EXPECT_EQ(RequestedLockMode(LockModeName(mode)),
              parsed ? std::optional(*parsed) : std::nullopt);
    EXPECT_EQ(IsRequestable(mode), parsed.has_value());
  }
  EXPECT_EQ(RequestedLockMode("exclusive"), LockMode::kExclusive);
  EXPECT_EQ(RequestedLockMode("Exclusiv"), std::nullopt);
}

// The matrix as SQL Server documents it, spelled out once more: a test of
// the table by hand, not by the engine.
TEST(LockHistoryModes, TheDocumentedMatrix) {
  const LockMode modes[] = {LockMode::kIntentShared, LockMode::kShared,
                            LockMode::kUpdate, LockMode::kIntentExclusive,
                            LockMode::kExclusive};
  const bool compatible[5][5] = {{true, true, true, true, false},
                                 {true, true, true, false, false},
                                 {true, true, false, false, false},
                                 {true, false, false, true, false},
                                 {false, false, false, false, false}};
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) {
      EXPECT_EQ(ModesConflict(modes[a], modes[b]), !compatible[a][b])
          << ModeName(modes[a]) << " beside " << ModeName(modes[b]);
    }
  }
}

}  // namespace
}  // namespace leasehold::testing
