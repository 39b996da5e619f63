// What each namespace holds, for Engine::ListNamespaces: the parts that the
// record and outbox tables know. Kept apart from their commands because it
// only reads.
#include "engine/outbox_table.h"
#include "engine/record_table.h"

namespace leasehold::engine {
namespace {

NamespaceInfo& Entry(std::map<std::string, NamespaceInfo, std::less<>>& out,
                     std::string_view ns) {
  auto it = out.find(ns);
  if (it == out.end()) it = out.emplace(std::string(ns), NamespaceInfo{}).first;
  return it->second;
}

}  // namespace

void RecordTable::CountByNamespace(
    std::map<std::string, NamespaceInfo, std::less<>>& out) const {
  for (const auto& [name, ns] : namespaces_) {
    if (!ns.keys.empty()) Entry(out, name).keys += ns.keys.size();
  }
  // leases_ holds exactly the leases not yet reported as expired.
  for (const auto& [id, lease] : leases_)
    ++Entry(out, *lease.ns).active_checkouts;
}

void OutboxTable::ListTopics(
    std::map<std::string, NamespaceInfo, std::less<>>& out) const {
  for (const auto& [name, topics] : namespaces_) {
    if (topics.empty()) continue;
    NamespaceInfo& info = Entry(out, name);
    for (const auto& [topic, unused] : topics) info.topics.push_back(topic);
  }
}

}  // namespace leasehold::engine
