// pg::Watchdog on a socket pair: a watch that outlives its limit shuts the
// socket down (a blocked read returns at once), one that ends in time or
// is restarted in time leaves it alone.
#include "pg/watchdog.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace leasehold::pg {
namespace {

using std::chrono::milliseconds;

class SocketPair {
 public:
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  ~SocketPair() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  SocketPair(const SocketPair&) = delete;
  SocketPair& operator=(const SocketPair&) = delete;

  int watched() const { return fds_[0]; }
  // Whether the watched end still carries a byte from the other.
  bool Carries() {
    const char out = 'x';
    char in = 0;
    return ::send(fds_[1], &out, 1, MSG_NOSIGNAL) == 1 &&
           ::read(fds_[0], &in, 1) == 1 && in == 'x';
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST(Watchdog, AReadBlockedPastTheLimitReturns) {
  Watchdog dog(milliseconds(100));
  SocketPair pair;
  auto watch = dog.ArmSocket(pair.watched());
  char byte = 0;
  // Nothing is ever sent: only the watchdog can end this read.
  EXPECT_EQ(::read(pair.watched(), &byte, 1), 0);
  EXPECT_TRUE(watch.fired());
}

TEST(Watchdog, AWatchEndedInTimeLeavesTheSocketAlone) {
  Watchdog dog(milliseconds(1000));
  SocketPair pair;
  {
    auto watch = dog.ArmSocket(pair.watched());
    EXPECT_TRUE(pair.Carries());
    EXPECT_FALSE(watch.fired());
  }
  // Past the limit and the watchdog's next look.
  std::this_thread::sleep_for(milliseconds(1300));
  EXPECT_TRUE(pair.Carries()) << "shut down after its watch ended";
}

TEST(Watchdog, RestartCountsTheLimitFromNow) {
  Watchdog dog(milliseconds(1000));
  SocketPair pair;
  auto watch = dog.ArmSocket(pair.watched());
  // Each step well within the limit, all of them together past it.
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    watch.Restart();
  }
  EXPECT_FALSE(watch.fired());
  EXPECT_TRUE(pair.Carries());
}

TEST(Watchdog, ASocketThatCannotBeWatchedIsLeftAlone) {
  Watchdog dog(milliseconds(10));
  auto watch = dog.ArmSocket(-1);
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(watch.fired());
}

}  // namespace
}  // namespace leasehold::pg
