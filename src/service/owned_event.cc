#include "service/owned_event.h"

#include <utility>

namespace leasehold {

void EventCollector::OnEvent(const Event& e) {
  OwnedEvent o;
  o.type = e.type;
  o.at = e.at;
  o.session = e.session;
  o.session_name = e.session_name;
  o.transaction = e.transaction;
  o.ns = e.ns;
  o.principal = e.principal;
  o.resource = e.resource;
  o.owner = e.owner;
  o.mode = e.mode;
  o.count = e.count;
  o.limit = e.limit;
  o.fence = e.fence;
  o.until = e.until;
  if (e.deadlock != nullptr) o.deadlock = *e.deadlock;
  o.holder = e.holder;
  o.version = e.version;
  o.key = e.key;
  o.message = e.message;
  events_.push_back(std::move(o));
}

std::vector<OwnedEvent> EventCollector::Take() {
  return std::exchange(events_, {});
}

}  // namespace leasehold
