#include "server/event_hub.h"

#include <boost/json.hpp>

#include "server/handlers.h"
#include "server/json_io.h"

namespace leasehold::server {

namespace json = boost::json;

std::string SseFrame(const OwnedEvent& e) {
  json::object o{{wire::kType, EventTypeName(e.type)},
                 {wire::kAt, TimeJson(e.at)}};
  if (e.session != 0) {
    o[wire::kSession] = std::to_string(e.session);
    o[wire::kSessionName] = e.session_name;
  }
  if (e.transaction != 0) o[wire::kTransaction] = e.transaction;
  if (!e.ns.empty()) o[wire::kNs] = e.ns;
  if (!e.resource.empty()) o[wire::kResource] = e.resource;
  const bool lock = IsLockEvent(e.type);
  const bool semaphore = IsSemaphoreEvent(e.type);
  if (lock || semaphore) {
    o[wire::kPrincipal] = e.principal;
    o[wire::kOwner] = LockOwnerName(e.owner);
  }
  if (lock) {
    o[wire::kMode] = LockModeName(e.mode);
    o[wire::kCount] = e.count;
  }
  if (semaphore) {
    o[wire::kPermits] = e.count;
    o[wire::kLimit] = e.limit;
  }
  if (e.fence != 0) o[wire::kFence] = e.fence;
  if (e.until) o[wire::kUntil] = TimeJson(*e.until);
  if (e.type == EventType::kClusterLeader) {
    o[wire::kLeader] = e.holder;
    o[wire::kEpoch] = e.version;
  } else {
    if (!e.holder.empty()) o[wire::kHolder] = e.holder;
    if (e.version != 0) o[wire::kVersion] = e.version;
  }
  if (e.message != 0) {
    o[wire::kTopic] = e.resource;
    o[wire::kKey] = e.key;
    o[wire::kId] = e.message;
    if (e.type == EventType::kOutboxClaimed) o[wire::kAttempt] = e.count;
  }
  if (e.deadlock) o[wire::kDeadlock] = DeadlockJson(*e.deadlock);
  std::string frame = "event: ";
  frame += EventTypeName(e.type);
  frame += "\ndata: ";
  frame += Serialize(o);
  frame += "\n\n";
  return frame;
}

std::uint64_t EventHub::Subscribe(std::string ns, Deliver deliver,
                                  bool unscoped) {
  std::lock_guard lock(mu_);
  const std::uint64_t id = ++last_id_;
  if (last_leader_ != nullptr && (ns.empty() || unscoped)) {
    deliver(last_leader_);
  }
  subscribers_.emplace(id,
                       Subscriber{std::move(ns), std::move(deliver), unscoped});
  return id;
}

void EventHub::Unsubscribe(std::uint64_t id) {
  std::lock_guard lock(mu_);
  subscribers_.erase(id);
}

std::size_t EventHub::subscribers() const {
  std::lock_guard lock(mu_);
  return subscribers_.size();
}

void EventHub::Publish(const std::vector<OwnedEvent>& events) {
  std::lock_guard lock(mu_);
  for (const OwnedEvent& e : events) {
    const bool leader = e.type == EventType::kClusterLeader;
    if (subscribers_.empty() && !leader) continue;  // kept only if leader
    auto frame = std::make_shared<const std::string>(SseFrame(e));
    if (leader) last_leader_ = frame;
    for (const auto& [id, s] : subscribers_) {
      const bool pass =
          s.ns.empty() || s.ns == e.ns || (e.ns.empty() && s.unscoped);
      if (pass) s.deliver(frame);
    }
  }
}

}  // namespace leasehold::server
