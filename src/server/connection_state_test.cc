// The connection's phases without sockets: the moves a request makes, and
// the ones no connection may make.
#include "server/connection_state.h"

#include <gtest/gtest.h>

#include <vector>

namespace leasehold::server {
namespace {

using P = ConnectionPhase;

void Walk(const std::vector<P>& phases) {
  ConnectionState s;
  for (P p : phases) {
    ASSERT_TRUE(IsLegalMove(s.phase(), p))
        << ConnectionPhaseName(s.phase()) << " -> " << ConnectionPhaseName(p);
    s.MoveTo(p);
    EXPECT_TRUE(s.Is(p));
  }
}

TEST(ConnectionStateTest, StartsReading) {
  EXPECT_TRUE(ConnectionState().Is(P::kReading));
}

TEST(ConnectionStateTest, TheLivesOfRequests) {
  // Answered at once, then the next request, then closed after the last.
  Walk({P::kHandling, P::kWriting, P::kReading, P::kHandling, P::kWriting,
        P::kLingering, P::kClosed});
  // Parked: watched, the answer held until the watch ends, then written.
  Walk({P::kHandling, P::kWatching, P::kAnswerHeld, P::kWriting, P::kReading});
  // Parked, the watch re-armed after pipelined bytes, then a hang-up.
  Walk({P::kHandling, P::kWatching, P::kHandling, P::kWatching, P::kHandling,
        P::kWriting, P::kLingering, P::kClosed});
  // Refused (400/413), or a dashboard file: written straight from reading.
  Walk({P::kWriting, P::kLingering, P::kClosed});
  Walk({P::kStreaming});
  Walk({P::kClosed, P::kClosed});  // a close may be repeated
}

TEST(ConnectionStateTest, MovesNoConnectionMakes) {
  EXPECT_FALSE(IsLegalMove(P::kReading, P::kWatching));
  EXPECT_FALSE(IsLegalMove(P::kReading, P::kLingering));
  EXPECT_FALSE(IsLegalMove(P::kHandling, P::kReading));
  EXPECT_FALSE(IsLegalMove(P::kHandling, P::kAnswerHeld));
  EXPECT_FALSE(IsLegalMove(P::kWatching, P::kWriting));  // must hold first
  EXPECT_FALSE(IsLegalMove(P::kAnswerHeld, P::kHandling));
  EXPECT_FALSE(IsLegalMove(P::kLingering, P::kReading));
  EXPECT_FALSE(IsLegalMove(P::kClosed, P::kReading));
  // The socket belongs to the stream: the connection does nothing more.
  for (P p : {P::kReading, P::kHandling, P::kWatching, P::kAnswerHeld,
              P::kWriting, P::kLingering, P::kStreaming, P::kClosed}) {
    EXPECT_FALSE(IsLegalMove(P::kStreaming, p)) << ConnectionPhaseName(p);
  }
}

TEST(ConnectionStateDeathTest, AnIllegalMoveAborts) {
  ConnectionState s;
  s.MoveTo(P::kStreaming);
  EXPECT_DEATH(s.MoveTo(P::kClosed),
               "moved illegally.*from=streaming to=closed");
}

}  // namespace
}  // namespace leasehold::server
