// The service's modes without a store: the lives a service leads, and the
// moves none may make.
#include "service/service_state.h"

#include <gtest/gtest.h>

#include <vector>

namespace leasehold {
namespace {

using M = ServiceMode;

void Walk(M initial, const std::vector<M>& modes) {
  ServiceState s(initial);
  for (M m : modes) {
    ASSERT_TRUE(IsLegalMove(s.mode(), m))
        << ServiceModeName(s.mode()) << " -> " << ServiceModeName(m);
    const std::uint64_t epoch = s.epoch();
    s.MoveTo(m);
    EXPECT_TRUE(s.Is(m));
    EXPECT_EQ(s.epoch(), epoch + 1);
  }
}

TEST(ServiceStateTest, TheLivesOfServices) {
  // A single node: its store fails and recovers, twice, then it stops.
  Walk(M::kServing, {M::kRecovering, M::kServing, M::kRecovering, M::kServing,
                     M::kStopping});
  // Without recovery a failed store stays failed.
  Walk(M::kServing, {M::kFailed, M::kStopping});
  // A cluster node: stands by, leads, steps down (while recovering too).
  Walk(M::kStandingBy, {M::kStandingBy, M::kServing, M::kStandingBy,
                        M::kServing, M::kRecovering, M::kStandingBy,
                        M::kServing, M::kFailed, M::kStandingBy, M::kStopping});
}

TEST(ServiceStateTest, MovesNoServiceMakes) {
  EXPECT_FALSE(IsLegalMove(M::kServing, M::kServing));
  // A failed store serves again only through a recovery or an attach.
  EXPECT_FALSE(IsLegalMove(M::kFailed, M::kServing));
  EXPECT_FALSE(IsLegalMove(M::kFailed, M::kRecovering));
  // A standby has no store to recover or to fail.
  EXPECT_FALSE(IsLegalMove(M::kStandingBy, M::kRecovering));
  EXPECT_FALSE(IsLegalMove(M::kStandingBy, M::kFailed));
  EXPECT_FALSE(IsLegalMove(M::kRecovering, M::kFailed));
  // Stopping is the end.
  for (M m : {M::kServing, M::kFailed, M::kRecovering, M::kStandingBy,
              M::kStopping}) {
    EXPECT_FALSE(IsLegalMove(M::kStopping, m)) << ServiceModeName(m);
  }
}

TEST(ServiceStateDeathTest, AnIllegalMoveAborts) {
  ServiceState s(M::kServing);
  s.MoveTo(M::kStopping);
  EXPECT_DEATH(s.MoveTo(M::kServing),
               "moved illegally.*from=stopping to=serving");
}

}  // namespace
}  // namespace leasehold
