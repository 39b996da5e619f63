// EventHub: who gets which frame, and the last cluster.leader for a
// subscriber that comes after it.
#include "server/event_hub.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace leasehold::server {
namespace {

OwnedEvent Leader(std::string url, std::uint64_t epoch) {
  OwnedEvent e;
  e.type = EventType::kClusterLeader;
  e.holder = std::move(url);
  e.version = epoch;
  return e;
}

OwnedEvent Granted(std::string ns) {
  OwnedEvent e;
  e.type = EventType::kLockGranted;
  e.ns = std::move(ns);
  e.resource = "invoice:481";
  return e;
}

// Subscribes and collects what it is sent.
struct Listener {
  Listener(EventHub& hub, std::string ns, bool unscoped = true) {
    hub.Subscribe(
        std::move(ns),
        [this](const EventHub::Frame& frame) { frames.push_back(*frame); },
        unscoped);
  }
  std::vector<std::string> frames;
};

TEST(EventHub, ASubscriberAfterATakeoverFirstGetsTheLastLeader) {
  EventHub hub;
  hub.Publish({Leader("http://127.0.0.1:7001", 3)});  // nobody listening
  hub.Publish({Leader("http://127.0.0.1:7002", 4)});
  hub.Publish({Granted("billing")});  // not kept

  Listener everything(hub, "");
  Listener billing(hub, "billing");
  Listener billing_only(hub, "billing", /*unscoped=*/false);

  ASSERT_EQ(everything.frames.size(), 1u);
  EXPECT_EQ(everything.frames[0].rfind("event: cluster.leader\n", 0), 0u);
  EXPECT_NE(everything.frames[0].find(R"("leader":"http://127.0.0.1:7002")"),
            std::string::npos)
      << everything.frames[0];
  EXPECT_NE(everything.frames[0].find(R"("epoch":4)"), std::string::npos);
  EXPECT_EQ(billing.frames, everything.frames);
  EXPECT_TRUE(billing_only.frames.empty());  // takes no unscoped events

  hub.Publish({Granted("billing"), Leader("http://127.0.0.1:7001", 5)});
  ASSERT_EQ(everything.frames.size(), 3u);
  EXPECT_NE(everything.frames[1].find("event: applock.granted"),
            std::string::npos);
  EXPECT_NE(everything.frames[2].find(R"("epoch":5)"), std::string::npos);
  EXPECT_EQ(billing_only.frames.size(), 1u);  // the grant only
  Listener later(hub, "");
  ASSERT_EQ(later.frames.size(), 1u);
  EXPECT_EQ(later.frames[0], everything.frames[2]);
}

TEST(EventHub, NoLeaderNoGreeting) {
  EventHub hub;
  hub.Publish({Granted("billing")});
  Listener everything(hub, "");
  EXPECT_TRUE(everything.frames.empty());
}

}  // namespace
}  // namespace leasehold::server
