#include "tests/property/invariants.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace leasehold::property {
namespace {

// The rights a mode contains, one bit per requestable mode.
enum Right : unsigned {
  kRightIS = 1,
  kRightS = 2,
  kRightU = 4,
  kRightIX = 8,
  kRightX = 16
};

unsigned Rights(LockMode m) {
  switch (m) {
    case LockMode::kNoLock:
      return 0;
    case LockMode::kIntentShared:
      return kRightIS;
    case LockMode::kShared:
      return kRightS;
    case LockMode::kUpdate:
      return kRightU;
    case LockMode::kIntentExclusive:
      return kRightIX;
    case LockMode::kSharedIntentExclusive:
      return kRightS | kRightIX;
    case LockMode::kUpdateIntentExclusive:
      return kRightU | kRightIX;
    case LockMode::kExclusive:
      return kRightX;
  }
  return 0;
}

LockMode FromRights(unsigned r) {
  if (r & kRightX) return LockMode::kExclusive;
  if (r & kRightIX) {
    if (r & kRightU) return LockMode::kUpdateIntentExclusive;
    if (r & kRightS) return LockMode::kSharedIntentExclusive;
    return LockMode::kIntentExclusive;
  }
  if (r & kRightU) return LockMode::kUpdate;
  if (r & kRightS) return LockMode::kShared;
  if (r & kRightIS) return LockMode::kIntentShared;
  return LockMode::kNoLock;
}

std::string KeyName(const LockInfo& info) {
  return info.ns + "/" + info.principal + "/'" + info.resource + "'";
}

std::string Owner(LockOwner owner) {
  return owner == LockOwner::kSession ? "Session" : "Transaction";
}

}  // namespace

std::string ShortModeName(LockMode mode) {
  switch (mode) {
    case LockMode::kNoLock:
      return "-";
    case LockMode::kIntentShared:
      return "IS";
    case LockMode::kShared:
      return "S";
    case LockMode::kUpdate:
      return "U";
    case LockMode::kIntentExclusive:
      return "IX";
    case LockMode::kSharedIntentExclusive:
      return "SIX";
    case LockMode::kUpdateIntentExclusive:
      return "UIX";
    case LockMode::kExclusive:
      return "X";
  }
  return "?";
}

bool ModesCompatible(LockMode a, LockMode b) {
  return Compatible(a, b) && Compatible(b, a);
}

LockMode ExpectedCombine(LockMode a, LockMode b) {
  return FromRights(Rights(a) | Rights(b));
}

std::vector<WaitEdge> EdgesFrom(const LockInfo& info, std::size_t index) {
  std::vector<WaitEdge> edges;
  const WaitingLockInfo& w = info.waiting[index];
  auto add = [&](SessionId holder) {
    edges.push_back(
        WaitEdge{w.session, holder, info.ns, info.principal, info.resource});
  };
  for (const GrantedLockInfo& g : info.granted) {
    if (g.session != w.session && !ModesCompatible(g.mode, w.target)) {
      add(g.session);
    }
  }
  if (!w.conversion) {
    for (std::size_t j = 0; j < index; ++j) {
      const WaitingLockInfo& ahead = info.waiting[j];
      if (ahead.session != w.session &&
          !ModesCompatible(ahead.target, w.target)) {
        add(ahead.session);
      }
    }
  }
  return edges;
}

std::vector<WaitEdge> WaitForGraph(const std::vector<LockInfo>& locks) {
  std::vector<WaitEdge> edges;
  for (const LockInfo& info : locks) {
    for (std::size_t i = 0; i < info.waiting.size(); ++i) {
      std::vector<WaitEdge> from = EdgesFrom(info, i);
      edges.insert(edges.end(), from.begin(), from.end());
    }
  }
  return edges;
}

std::optional<std::vector<SessionId>> FindCycle(
    const std::vector<WaitEdge>& edges) {
  std::map<SessionId, std::vector<SessionId>> next;
  for (const WaitEdge& e : edges) next[e.waiter].push_back(e.holder);
  enum class Color { kWhite, kGrey, kBlack };
  std::map<SessionId, Color> color;
  std::vector<SessionId> path;
  std::optional<std::vector<SessionId>> found;
  // Iterative DFS would be longer; the graphs here have at most a few
  // dozen nodes, so recursion depth is no concern.
  auto visit = [&](auto&& self, SessionId s) -> void {
    color[s] = Color::kGrey;
    path.push_back(s);
    for (SessionId t : next[s]) {
      if (found) return;
      if (color[t] == Color::kGrey) {
        auto start = std::find(path.begin(), path.end(), t);
        found = std::vector<SessionId>(start, path.end());
        return;
      }
      if (color[t] == Color::kWhite) self(self, t);
    }
    path.pop_back();
    color[s] = Color::kBlack;
  };
  for (const auto& [s, unused] : next) {
    if (found) break;
    if (color[s] == Color::kWhite) visit(visit, s);
  }
  return found;
}

bool GrantableAtOnce(const LockInfo* info, SessionId session, LockMode target,
                     bool conversion) {
  if (info == nullptr) return true;
  for (const GrantedLockInfo& g : info->granted) {
    if (g.session != session && !ModesCompatible(g.mode, target)) return false;
  }
  if (conversion) return true;
  for (const WaitingLockInfo& w : info->waiting) {
    if (w.session != session && !ModesCompatible(w.target, target)) {
      return false;
    }
  }
  return true;
}

LockInfo WithWaiter(LockInfo info, const WaitingLockInfo& waiter) {
  auto pos = info.waiting.end();
  if (waiter.conversion) {
    pos = std::find_if(info.waiting.begin(), info.waiting.end(),
                       [](const WaitingLockInfo& w) { return !w.conversion; });
  }
  info.waiting.insert(pos, waiter);
  return info;
}

std::string CheckWellFormed(const std::vector<LockInfo>& locks) {
  std::ostringstream out;
  std::set<SessionId> waiting_sessions;
  for (std::size_t i = 0; i < locks.size(); ++i) {
    const LockInfo& info = locks[i];
    if (i > 0) {
      const LockInfo& prev = locks[i - 1];
      if (std::tie(prev.ns, prev.principal, prev.resource) >=
          std::tie(info.ns, info.principal, info.resource)) {
        out << "ListLocks not sorted/unique at " << KeyName(prev) << ", "
            << KeyName(info);
        return out.str();
      }
    }
    if (info.granted.empty() && info.waiting.empty()) {
      out << KeyName(info) << " is listed with neither holder nor waiter";
      return out.str();
    }
    std::set<std::pair<SessionId, LockOwner>> owners;
    for (const GrantedLockInfo& g : info.granted) {
      if (g.count == 0 || g.mode == LockMode::kNoLock) {
        out << KeyName(info) << ": session " << g.session << " "
            << Owner(g.owner) << " listed with count " << g.count << " mode "
            << ShortModeName(g.mode);
        return out.str();
      }
      if (!owners.insert({g.session, g.owner}).second) {
        out << KeyName(info) << ": session " << g.session << " "
            << Owner(g.owner) << " has two granted entries";
        return out.str();
      }
    }
    bool seen_plain = false;
    for (const WaitingLockInfo& w : info.waiting) {
      if (!waiting_sessions.insert(w.session).second) {
        out << "session " << w.session << " has two parked requests";
        return out.str();
      }
      if (w.conversion && seen_plain) {
        out << KeyName(info) << ": conversion of session " << w.session
            << " is queued behind a non-conversion";
        return out.str();
      }
      seen_plain = seen_plain || !w.conversion;
    }
  }
  return "";
}

std::string CheckCompatibleHolders(const std::vector<LockInfo>& locks) {
  for (const LockInfo& info : locks) {
    for (const GrantedLockInfo& a : info.granted) {
      for (const GrantedLockInfo& b : info.granted) {
        if (a.session != b.session && !ModesCompatible(a.mode, b.mode)) {
          std::ostringstream out;
          out << "(a) incompatible holders on " << KeyName(info) << ": session "
              << a.session << " holds " << ShortModeName(a.mode) << ", session "
              << b.session << " holds " << ShortModeName(b.mode);
          return out.str();
        }
      }
    }
  }
  return "";
}

std::string CheckNoGrantableWaiter(const std::vector<LockInfo>& locks) {
  for (const LockInfo& info : locks) {
    for (std::size_t i = 0; i < info.waiting.size(); ++i) {
      if (EdgesFrom(info, i).empty()) {
        const WaitingLockInfo& w = info.waiting[i];
        std::ostringstream out;
        out << "(b) grantable request left waiting on " << KeyName(info)
            << ": wait " << w.wait << " of session " << w.session << " for "
            << ShortModeName(w.target) << (w.conversion ? " (conversion)" : "")
            << " at queue position " << i;
        return out.str();
      }
    }
  }
  return "";
}

std::string CheckNoWaitCycle(const std::vector<LockInfo>& locks) {
  std::optional<std::vector<SessionId>> cycle = FindCycle(WaitForGraph(locks));
  if (!cycle) return "";
  std::ostringstream out;
  out << "(c) wait-for cycle survives:";
  for (SessionId s : *cycle) out << " " << s << " ->";
  out << " " << cycle->front();
  return out.str();
}

std::string CheckLockTable(const std::vector<LockInfo>& locks) {
  for (auto check : {CheckWellFormed, CheckCompatibleHolders,
                     CheckNoGrantableWaiter, CheckNoWaitCycle}) {
    std::string error = check(locks);
    if (!error.empty()) return error;
  }
  return "";
}

std::string DescribeLocks(const std::vector<LockInfo>& locks) {
  std::ostringstream out;
  if (locks.empty()) out << "  (no locks)\n";
  for (const LockInfo& info : locks) {
    out << "  " << KeyName(info) << "\n";
    for (const GrantedLockInfo& g : info.granted) {
      out << "    granted s" << g.session << " " << Owner(g.owner) << " "
          << ShortModeName(g.mode) << " x" << g.count << " fence " << g.fence
          << "\n";
    }
    for (const WaitingLockInfo& w : info.waiting) {
      out << "    waiting #" << w.wait << " s" << w.session << " "
          << Owner(w.owner) << " " << ShortModeName(w.requested) << "->"
          << ShortModeName(w.target) << (w.conversion ? " conversion" : "")
          << "\n";
    }
  }
  return out.str();
}

}  // namespace leasehold::property
