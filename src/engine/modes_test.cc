#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/lock_types.h"

namespace leasehold {
namespace {

using M = LockMode;
constexpr M IS = M::kIntentShared, S = M::kShared, U = M::kUpdate,
            IX = M::kIntentExclusive, SIX = M::kSharedIntentExclusive,
            UIX = M::kUpdateIntentExclusive, X = M::kExclusive;

// DESIGN.md's table, written out again so that the code is checked against
// the document rather than against itself. Rows: held; columns: requested.
struct Cell {
  M held, requested;
  bool compatible;
};
const Cell kTable[] = {
    {IS, IS, true},   {IS, S, true},   {IS, U, true},   {IS, IX, true},
    {IS, X, false},   {S, IS, true},   {S, S, true},    {S, U, true},
    {S, IX, false},   {S, X, false},   {U, IS, true},   {U, S, true},
    {U, U, false},    {U, IX, false},  {U, X, false},   {IX, IS, true},
    {IX, S, false},   {IX, U, false},  {IX, IX, true},  {IX, X, false},
    {SIX, IS, true},  {SIX, S, false}, {SIX, U, false}, {SIX, IX, false},
    {SIX, X, false},  {UIX, IS, true}, {UIX, S, false}, {UIX, U, false},
    {UIX, IX, false}, {UIX, X, false}, {X, IS, false},  {X, S, false},
    {X, U, false},    {X, IX, false},  {X, X, false},
};

TEST(Modes, CompatibilityTableEveryCell) {
  for (const Cell& c : kTable) {
    EXPECT_EQ(Compatible(c.held, c.requested), c.compatible)
        << LockModeName(c.held) << " held, " << LockModeName(c.requested)
        << " requested";
  }
}

TEST(Modes, CompatibilityIsSymmetric) {
  for (int a = 0; a < kLockModeCount; ++a) {
    for (int b = 0; b < kLockModeCount; ++b) {
      EXPECT_EQ(Compatible(M(a), M(b)), Compatible(M(b), M(a)));
    }
  }
}

TEST(Modes, NoLockIsCompatibleWithEverything) {
  for (int a = 0; a < kLockModeCount; ++a) {
    EXPECT_TRUE(Compatible(M::kNoLock, M(a)));
    EXPECT_TRUE(Compatible(M(a), M::kNoLock));
  }
}

TEST(Modes, ConversionTableEveryRow) {
  EXPECT_EQ(Combine(IS, S), S);
  EXPECT_EQ(Combine(IS, U), U);
  EXPECT_EQ(Combine(IS, IX), IX);
  EXPECT_EQ(Combine(S, U), U);
  EXPECT_EQ(Combine(S, IX), SIX);
  EXPECT_EQ(Combine(U, IX), UIX);
  EXPECT_EQ(Combine(Combine(S, IX), U), UIX);
  for (M m : {IS, S, U, IX, SIX, UIX, X}) EXPECT_EQ(Combine(m, X), X);
}

TEST(Modes, CombineIsOrderFreeAndIdempotent) {
  for (int a = 0; a < kLockModeCount; ++a) {
    EXPECT_EQ(Combine(M(a), M(a)), M(a));
    EXPECT_EQ(Combine(M(a), M::kNoLock), M(a));
    for (int b = 0; b < kLockModeCount; ++b) {
      EXPECT_EQ(Combine(M(a), M(b)), Combine(M(b), M(a)));
      for (int c = 0; c < kLockModeCount; ++c) {
        EXPECT_EQ(Combine(Combine(M(a), M(b)), M(c)),
                  Combine(M(a), Combine(M(b), M(c))));
      }
    }
  }
}

TEST(Modes, CombineNeverLowers) {
  // Whatever another session may hold beside the combination, it may also
  // hold beside each part: combining only ever narrows compatibility.
  for (int a = 0; a < kLockModeCount; ++a) {
    for (int b = 0; b < kLockModeCount; ++b) {
      for (int o = 0; o < kLockModeCount; ++o) {
        if (Compatible(M(o), Combine(M(a), M(b)))) {
          EXPECT_TRUE(Compatible(M(o), M(a)));
          EXPECT_TRUE(Compatible(M(o), M(b)));
        }
      }
    }
  }
}

TEST(Modes, ParseIgnoresCaseAndTrailingBlanks) {
  EXPECT_EQ(ParseLockMode("Shared").value(), S);
  EXPECT_EQ(ParseLockMode("shared ").value(), S);
  EXPECT_EQ(ParseLockMode("EXCLUSIVE   ").value(), X);
  EXPECT_EQ(ParseLockMode("intentshared").value(), IS);
  EXPECT_EQ(ParseLockMode("IntentExclusive").value(), IX);
  EXPECT_EQ(ParseLockMode("update").value(), U);
  EXPECT_EQ(ParseLockOwner("session  ").value(), LockOwner::kSession);
  EXPECT_EQ(ParseLockOwner("TRANSACTION").value(), LockOwner::kTransaction);
}

TEST(Modes, ParseRefusesOthers) {
  for (const char* bad :
       {"", " Shared", "Share", "SharedIntentExclusive",
        "UpdateIntentExclusive", "NoLock", "S", "X", "Shared\t", "Shared!"}) {
    auto r = ParseLockMode(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kBadMode);
  }
  for (const char* bad : {"", "Sessions", " Session", "Connection"}) {
    auto r = ParseLockOwner(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kBadOwner);
  }
}

TEST(Modes, NamesAreApplockModeNames) {
  const std::map<M, std::string> want = {{M::kNoLock, "NoLock"},
                                         {IS, "IntentShared"},
                                         {S, "Shared"},
                                         {U, "Update"},
                                         {IX, "IntentExclusive"},
                                         {SIX, "SharedIntentExclusive"},
                                         {UIX, "UpdateIntentExclusive"},
                                         {X, "Exclusive"}};
  for (const auto& [m, name] : want) EXPECT_EQ(LockModeName(m), name);
  EXPECT_EQ(AcquireResultName(AcquireResult::kGrantedAfterWait),
            "granted_after_wait");
}

}  // namespace
}  // namespace leasehold
