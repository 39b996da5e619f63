// EventHub: fans the engine's events out to live subscribers (the SSE
// stream GET /v1/events, the dashboard, `leasehold watch`). Each event is
// serialized once, as an SSE frame, and shared by every subscriber whose
// namespace filter it passes.
#ifndef LEASEHOLD_SERVER_EVENT_HUB_H_
#define LEASEHOLD_SERVER_EVENT_HUB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "service/owned_event.h"

namespace leasehold::server {

// `event: applock.granted\ndata: {...}\n\n` for one event.
std::string SseFrame(const OwnedEvent& event);

class EventHub {
 public:
  using Frame = std::shared_ptr<const std::string>;
  using Deliver = std::function<void(const Frame&)>;

  // `ns` empty: every event; else events of that namespace, plus those
  // that belong to no namespace (sessions, transactions) when `unscoped`.
  // `deliver` is called on the publishing thread and must not block. A new
  // subscriber that takes events of no namespace first gets, at once, the
  // last `cluster.leader` published: the event is published as a node takes
  // over, when nobody can be listening to it yet (a standby sends its
  // streams to the leader), so a client that reconnects after a takeover
  // learns of it this way. Returns an id for Unsubscribe.
  std::uint64_t Subscribe(std::string ns, Deliver deliver,
                          bool unscoped = true);
  void Unsubscribe(std::uint64_t id);

  // Delivers `events`, in order. Thread-safe.
  void Publish(const std::vector<OwnedEvent>& events);

  std::size_t subscribers() const;

 private:
  struct Subscriber {
    std::string ns;
    Deliver deliver;
    bool unscoped = true;
  };
  mutable std::mutex mu_;
  std::uint64_t last_id_ = 0;
  std::unordered_map<std::uint64_t, Subscriber> subscribers_;
  Frame last_leader_;  // the last cluster.leader frame, or null
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_EVENT_HUB_H_
