// The lock crash test's history: the lines lock_crash_writer appends to its
// ACKS file (one write(2) each), and the check of a store's lock rows
// against them. A session does one lock call at a time and logs it twice:
//   want S OWNER NS RESOURCE MODE             before it asks
//   got S OWNER NS RESOURCE HELD COUNT FENCE  once the grant is durable
//   refused S OWNER NS RESOURCE               once the refusal is answered
//   drop S OWNER NS RESOURCE                  before it releases
//   dropped S OWNER NS RESOURCE               once the release is durable
// OWNER is "s" (Session) or "t" (Transaction); modes are LockModeName's.
#ifndef LEASEHOLD_TESTS_STORE_LOCK_CRASH_HISTORY_H_
#define LEASEHOLD_TESTS_STORE_LOCK_CRASH_HISTORY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/journal.h"
#include "engine/lock_types.h"

namespace leasehold::lock_crash {

inline std::string OwnerCode(LockOwner owner) {
  return owner == LockOwner::kSession ? "s" : "t";
}

// One grant's identity in the history and in the store.
inline std::string GrantName(SessionId session, LockOwner owner,
                             const std::string& ns,
                             const std::string& resource) {
  return std::to_string(session) + " " + OwnerCode(owner) + " " + ns + " " +
         resource;
}

inline std::string WantLine(const std::string& grant, LockMode mode) {
  return "want " + grant + " " + std::string(LockModeName(mode)) + "\n";
}
inline std::string GotLine(const std::string& grant, LockMode held,
                           std::uint32_t count, Fence fence) {
  return "got " + grant + " " + std::string(LockModeName(held)) + " " +
         std::to_string(count) + " " + std::to_string(fence) + "\n";
}
inline std::string RefusedLine(const std::string& grant) {
  return "refused " + grant + "\n";
}
inline std::string DropLine(const std::string& grant) {
  return "drop " + grant + "\n";
}
inline std::string DroppedLine(const std::string& grant) {
  return "dropped " + grant + "\n";
}

inline std::optional<LockMode> ModeNamed(const std::string& name) {
  for (int m = 0; m < kLockModeCount; ++m) {
    if (LockModeName(static_cast<LockMode>(m)) == name) {
      return static_cast<LockMode>(m);
    }
  }
  return std::nullopt;
}

// What the history says of one grant: its last acknowledged state, and the
// call in flight (logged, not answered) if any.
struct GrantHistory {
  LockMode mode = LockMode::kNoLock;
  std::uint32_t count = 0;
  Fence fence = 0;
  std::optional<LockMode> wanted;  // an acquire in flight
  bool dropping = false;           // a release in flight
};

// Reads the ACKS text; a torn last line (no newline) is ignored, as its
// call was never sent.
inline std::map<std::string, GrantHistory> ReadHistory(
    const std::string& text) {
  std::map<std::string, GrantHistory> grants;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    std::istringstream fields(text.substr(start, end - start));
    start = end + 1;
    std::string verb, session, owner, ns, resource;
    if (!(fields >> verb >> session >> owner >> ns >> resource)) continue;
    const std::string name = session + " " + owner + " " + ns + " " + resource;
    GrantHistory& g = grants[name];
    std::string mode;
    if (verb == "want" && fields >> mode) {
      g.wanted = ModeNamed(mode);
    } else if (verb == "got" && fields >> mode >> g.count >> g.fence) {
      g.mode = ModeNamed(mode).value_or(LockMode::kNoLock);
      g.wanted.reset();
    } else if (verb == "refused") {
      g.wanted.reset();
    } else if (verb == "drop") {
      g.dropping = true;
    } else if (verb == "dropped") {
      g.dropping = false;
      // The mode stays while references are left.
      if (--g.count == 0) g.mode = LockMode::kNoLock;
    }
  }
  return grants;
}

// Every way the store's lock rows break the history, one line each; empty
// when they keep it:
//  - an acknowledged grant not acknowledged released is held with its
//    count (one less if a release was in flight), mode and fence;
//  - nothing more is held (one more reference if an acquire was in flight,
//    in the combined mode, with a new fence), and nothing never asked for;
//  - no two sessions hold conflicting modes on one resource;
//  - fences of held grants are unique and within the reservation.
inline std::vector<std::string> CheckLocks(
    const std::map<std::string, GrantHistory>& history,
    const std::vector<LockRow>& rows, Fence fences_reserved) {
  std::vector<std::string> broken;
  std::map<std::string, const LockRow*> held;
  for (const LockRow& r : rows) {
    held[GrantName(r.session, r.owner, r.ns, r.resource)] = &r;
  }
  for (const auto& [name, g] : history) {
    auto it = held.find(name);
    const std::uint32_t count = it == held.end() ? 0 : it->second->count;
    const std::uint32_t lowest = g.count - (g.dropping ? 1 : 0);
    const std::uint32_t highest = g.count + (g.wanted ? 1 : 0);
    if (count < lowest) {
      broken.push_back("acknowledged grant lost: " + name + " holds " +
                       std::to_string(count) + ", acknowledged " +
                       std::to_string(g.count));
      continue;
    }
    if (count > highest) {
      broken.push_back("held beyond what was asked: " + name + " holds " +
                       std::to_string(count) + ", acknowledged " +
                       std::to_string(g.count));
      continue;
    }
    if (count == 0) continue;
    const LockRow& r = *it->second;
    const bool in_flight_grant = g.wanted && count == g.count + 1;
    const LockMode mode = in_flight_grant ? Combine(g.mode, *g.wanted) : g.mode;
    if (r.mode != mode) {
      broken.push_back("wrong mode: " + name + " holds " +
                       std::string(LockModeName(r.mode)) + ", expected " +
                       std::string(LockModeName(mode)));
    }
    if (!in_flight_grant && r.fence != g.fence) {
      broken.push_back("wrong fence: " + name + " holds " +
                       std::to_string(r.fence) + ", acknowledged " +
                       std::to_string(g.fence));
    }
  }
  std::map<std::tuple<std::string, std::string, std::string>,
           std::vector<const LockRow*>>
      by_resource;
  std::set<Fence> fences;
  for (const auto& [name, r] : held) {
    if (!history.contains(name)) {
      broken.push_back("held but never asked for: " + name);
    }
    for (const LockRow* other :
         by_resource[{r->ns, r->principal, r->resource}]) {
      if (other->session != r->session && !Compatible(other->mode, r->mode)) {
        broken.push_back("conflict: " + name + " " +
                         std::string(LockModeName(r->mode)) +
                         " beside session " + std::to_string(other->session) +
                         " " + std::string(LockModeName(other->mode)));
      }
    }
    by_resource[{r->ns, r->principal, r->resource}].push_back(r);
    if (!fences.insert(r->fence).second) {
      broken.push_back("fence repeated: " + name + " " +
                       std::to_string(r->fence));
    }
    if (r->fence == 0 || r->fence > fences_reserved) {
      broken.push_back("fence outside the reservation: " + name + " " +
                       std::to_string(r->fence) + " > " +
                       std::to_string(fences_reserved));
    }
  }
  return broken;
}

}  // namespace leasehold::lock_crash

#endif  // LEASEHOLD_TESTS_STORE_LOCK_CRASH_HISTORY_H_
