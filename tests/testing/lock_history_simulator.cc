// The simulated server decides with the engine's own mode table (Compatible,
// Combine), so the random tests compare the checker with a second opinion.
#include "tests/testing/lock_history_simulator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "engine/lock_types.h"

namespace leasehold::testing {
namespace {

using std::chrono::microseconds;

constexpr microseconds kTtl{2000};

struct ServerGrant {
  unsigned count = 0;
  LockMode mode = LockMode::kNoLock;
};

struct ServerSession {
  Instant expires;
  bool alive = true;
};

// What a client can prove of one of its locks, counted as the mutual
// exclusion check counts it.
struct ClientLock {
  unsigned count = 0;
  LockMode mode = LockMode::kNoLock;
  bool after_unknown_release = false;
  bool doubtful = false;  // an acquire went unanswered: release to be sure
};

struct Client {
  std::string session;  // empty: opens one next
  int sessions_opened = 0;
  Instant ready;    // may invoke its next call from here on
  Instant horizon;  // invoke + ttl of its latest answered renewal
  // After a release without an answer its later grants prove nothing
  // (lock_history_check.h), so it may go on with a new session.
  bool moving_on = false;
  std::map<int, ClientLock> locks;
};

// How the server answers one call, decided before it is applied.
struct Fate {
  bool applies = true;       // the server acts on the call
  bool answer_lost = false;  // the client records kUnknown
};

// An acquire parked until it can be granted or its timeout passes.
struct Waiter {
  int client = 0;
  int resource = 0;
  LockMode mode = LockMode::kNoLock;
  Instant invoke, deadline;
  bool answer_lost = false;
};

class Simulator {
 public:
  explicit Simulator(const SimulationOptions& options)
      : options_(options),
        random_(options.seed),
        clients_(static_cast<std::size_t>(options.clients)),
        locks_(static_cast<std::size_t>(options.resources)),
        registers_(static_cast<std::size_t>(options.keys)) {
    inject_after_ = options.operations / 4 + Below(options.operations / 2 + 1);
  }

  Simulation Run() {
    for (Client& c : clients_) c.ready = now_;
    while (history_.size() < options_.operations) {
      now_ += microseconds(1 + Below(20));
      if (Chance(1.0 / 3000)) FailOver();
      ExpireSessions();
      GrantWaiters();
      ApplyLateWrites(now_);
      Client& c = clients_[Below(clients_.size())];
      if (c.ready <= now_) Step(static_cast<int>(&c - clients_.data()));
    }
    // Writers have stopped; whatever is still in flight lands, then each
    // key is read.
    now_ += microseconds(1000);
    ApplyLateWrites(Instant::max());
    for (std::size_t k = 0; k < registers_.size(); ++k) {
      history_.push_back(
          Read(Key(k), registers_[k], now_, now_ + microseconds(5)));
    }
    return {std::move(history_), std::move(bug_)};
  }

 private:
  std::size_t Below(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(random_); }
  static std::string Key(std::size_t k) { return "k" + std::to_string(k); }
  static std::string Resource(int r) { return "r" + std::to_string(r); }

  // Most answers are quick; a few take up to a millisecond.
  microseconds Latency() {
    return microseconds(1 + Below(Chance(0.03) ? 1000 : 40));
  }

  void FailOver() {
    fences_ += 1000;  // the new leader's epoch starts far above
    outage_until_ = now_ + microseconds(300);
    // Waits die with the old leader; their clients hear nothing.
    for (const Waiter& w : std::exchange(waiters_, {})) {
      Answer(w, Outcome::kUnknown, 0);
    }
  }

  void ExpireSessions() {
    for (auto& [id, s] : sessions_) {
      if (!s.alive || now_ < s.expires) continue;
      s.alive = false;
      for (auto& holders : locks_) holders.erase(id);
      std::erase_if(waiters_, [&](const Waiter& w) {
        if (clients_[static_cast<std::size_t>(w.client)].session != id) {
          return false;
        }
        Answer(w, Outcome::kSessionLost, 0);
        return true;
      });
    }
  }

  // Grants each waiter that fits, in arrival order; refuses those whose
  // timeout passed. A waiter granted as a holder's release is applied is
  // the tightest hand-off a server can make.
  void GrantWaiters() {
    std::erase_if(waiters_, [&](const Waiter& w) {
      const Client& c = clients_[static_cast<std::size_t>(w.client)];
      if (Grantable(c.session, w.resource, w.mode)) {
        Answer(w, Outcome::kOk, Grant(c.session, w.resource, w.mode));
        return true;
      }
      if (w.deadline <= now_) {
        Answer(w, Outcome::kRefused, 0);
        return true;
      }
      return false;
    });
  }

  Fence Grant(const std::string& session, int r, LockMode mode) {
    ServerGrant& g = locks_[static_cast<std::size_t>(r)][session];
    g.mode = Combine(g.mode, mode);
    ++g.count;
    return ++fences_;
  }

  void Answer(const Waiter& w, Outcome outcome, Fence fence) {
    Client& c = clients_[static_cast<std::size_t>(w.client)];
    const Instant complete = now_ + Latency();
    c.ready = complete + microseconds(1 + Below(10));
    Answered(c, w.resource, w.mode, w.invoke, complete,
             w.answer_lost ? Outcome::kUnknown : outcome, fence);
  }

  void ApplyLateWrites(Instant until) {
    std::erase_if(late_writes_, [&](const LateWrite& w) {
      if (w.at > until) return false;
      registers_[w.key] = w.value;
      return true;
    });
  }

  Fate Decide() {
    Fate f;
    if (now_ < outage_until_) {
      // The leader is gone: nothing it was asked takes effect.
      f.applies = false;
      f.answer_lost = true;
    } else if (Chance(0.04)) {
      f.answer_lost = true;
      f.applies = Chance(0.5);
    }
    return f;
  }

  void Step(int index) {
    Client& c = clients_[static_cast<std::size_t>(index)];
    const Instant invoke =
        c.ready + std::chrono::nanoseconds(Below(
                      static_cast<std::size_t>((now_ - c.ready).count()) + 1));
    const Instant complete = now_ + Latency();
    c.ready = complete + microseconds(1 + Below(10));
    if (Chance(1.0 / 500)) c.ready += 3 * kTtl;  // a stall outlives the ttl
    if (c.session.empty()) {
      Open(c, index, invoke, complete);
    } else if (invoke > c.horizon - 2 * kTtl / 3) {
      Renew(c, invoke, complete);
    } else if (c.moving_on || Chance(1.0 / 400)) {
      End(c, invoke, complete);
    } else if (Chance(0.05)) {
      ReadRecord(invoke, complete);
    } else if (Chance(0.25)) {
      WriteRecord(index, invoke, complete);
    } else {
      LockCall(c, index, invoke, complete);
    }
  }

  // Opening is retried until answered; only the answered call is recorded.
  void Open(Client& c, int index, Instant invoke, Instant complete) {
    c.session =
        "c" + std::to_string(index) + "." + std::to_string(++c.sessions_opened);
    c.locks.clear();
    sessions_[c.session] = {now_ + kTtl, true};
    c.horizon = invoke + kTtl;
    history_.push_back(
        KeepAlive(c.session, invoke, complete, Outcome::kOk, kTtl));
  }

  bool Alive(const Client& c) const { return sessions_.at(c.session).alive; }

  void Lost(Client& c) {
    c.session.clear();
    c.locks.clear();
    c.moving_on = false;
  }

  void Renew(Client& c, Instant invoke, Instant complete) {
    const Fate f = Decide();
    Outcome outcome = Outcome::kUnknown;
    if (f.applies) {
      ServerSession& s = sessions_[c.session];
      if (s.alive) s.expires = now_ + kTtl;
      outcome = s.alive ? Outcome::kOk : Outcome::kSessionLost;
    }
    if (f.answer_lost) outcome = Outcome::kUnknown;
    history_.push_back(KeepAlive(c.session, invoke, complete, outcome, kTtl));
    if (outcome == Outcome::kOk) c.horizon = std::max(c.horizon, invoke + kTtl);
    if (outcome == Outcome::kSessionLost) Lost(c);
  }

  // The client lets its session go, answered or not.
  void End(Client& c, Instant invoke, Instant complete) {
    const Fate f = Decide();
    if (f.applies) {
      sessions_[c.session].alive = false;
      for (auto& holders : locks_) holders.erase(c.session);
      GrantWaiters();
    }
    history_.push_back(
        EndSession(c.session, invoke, complete,
                   f.answer_lost ? Outcome::kUnknown : Outcome::kOk));
    Lost(c);
  }

  void WriteRecord(int index, Instant invoke, Instant complete) {
    const Fate f = Decide();
    const std::size_t key = Below(registers_.size());
    const std::string value =
        "c" + std::to_string(index) + "-" + std::to_string(++writes_);
    // A refusal (say, the checkout expired) is an answer: never lost.
    const bool refused = !f.answer_lost && Chance(0.05);
    if (f.applies && !refused) {
      if (f.answer_lost && Chance(0.5)) {
        late_writes_.push_back(
            {now_ + microseconds(1 + Below(800)), key, value});
      } else {
        registers_[key] = value;
      }
    }
    const Outcome outcome = f.answer_lost ? Outcome::kUnknown
                            : refused     ? Outcome::kRefused
                                          : Outcome::kOk;
    history_.push_back(Write(Key(key), value, invoke, complete, outcome));
  }

  // A read while writes are in flight, some of them landing late.
  void ReadRecord(Instant invoke, Instant complete) {
    const Fate f = Decide();
    const std::size_t key = Below(registers_.size());
    Operation read = Read(Key(key), registers_[key], invoke, complete);
    if (f.answer_lost) {
      read.outcome = Outcome::kUnknown;
      read.value.reset();
    }
    history_.push_back(std::move(read));
  }

  void LockCall(Client& c, int index, Instant invoke, Instant complete) {
    const int r = static_cast<int>(Below(locks_.size()));
    const ClientLock& mine = c.locks[r];
    if ((mine.count > 0 || mine.doubtful) && Chance(0.7)) {
      ReleaseLock(c, r, invoke, complete);
    } else {
      AcquireLock(c, index, r, invoke, complete);
    }
  }

  LockMode RandomMode() {
    constexpr LockMode kModes[] = {
        LockMode::kExclusive,       LockMode::kExclusive,
        LockMode::kShared,          LockMode::kShared,
        LockMode::kUpdate,          LockMode::kIntentShared,
        LockMode::kIntentExclusive,
    };
    return kModes[Below(std::size(kModes))];
  }

  bool Grantable(const std::string& session, int r, LockMode mode) const {
    for (const auto& [holder, grant] : locks_[static_cast<std::size_t>(r)]) {
      if (holder != session && !Compatible(grant.mode, mode)) return false;
    }
    return true;
  }

  // A client whose hold of `r` the checker can prove from before `now_` to
  // past `complete`, in a mode that conflicts with `mode`.
  std::optional<int> ProvableConflictingHolder(int asker, int r, LockMode mode,
                                               Instant complete) const {
    for (std::size_t h = 0; h < clients_.size(); ++h) {
      const Client& holder = clients_[h];
      if (static_cast<int>(h) == asker || holder.session.empty() ||
          !Alive(holder) || holder.ready > now_ ||
          holder.horizon <= complete + kTtl / 4) {
        continue;
      }
      const auto lock = holder.locks.find(r);
      if (lock != holder.locks.end() && lock->second.count > 0 &&
          !Compatible(lock->second.mode, mode)) {
        return static_cast<int>(h);
      }
    }
    return std::nullopt;
  }

  void AcquireLock(Client& c, int index, int r, Instant invoke,
                   Instant complete) {
    const Fate f = Decide();
    const LockMode mode = RandomMode();
    Outcome outcome = Outcome::kUnknown;
    Fence fence = 0;
    if (f.applies) {
      if (!Alive(c)) {
        outcome = Outcome::kSessionLost;
      } else if (Grantable(c.session, r, mode) ||
                 (!f.answer_lost &&
                  GrantInError(c, index, r, mode, complete))) {
        fence = Grant(c.session, r, mode);
        outcome = Outcome::kOk;
      } else if (Chance(0.5)) {
        // It waits, busy, until granted or timed out.
        waiters_.push_back({index, r, mode, invoke,
                            now_ + microseconds(1 + Below(300)),
                            f.answer_lost});
        c.ready = Instant::max();
        return;
      } else {
        outcome = Outcome::kRefused;
      }
    }
    Answered(c, r, mode, invoke, complete,
             f.answer_lost ? Outcome::kUnknown : outcome, fence);
  }

  // The client's side of an acquire's answer.
  void Answered(Client& c, int r, LockMode mode, Instant invoke,
                Instant complete, Outcome outcome, Fence fence) {
    history_.push_back(Acquire(c.session, Resource(r), mode, invoke, complete,
                               outcome, outcome == Outcome::kOk ? fence : 0));
    ClientLock& mine = c.locks[r];
    if (outcome == Outcome::kUnknown) mine.doubtful = true;
    if (outcome == Outcome::kOk && !mine.after_unknown_release &&
        complete < c.horizon) {
      mine.mode = mine.count++ == 0 ? mode : Combine(mine.mode, mode);
    }
    if (outcome == Outcome::kSessionLost) Lost(c);
  }

  // The bug, when due: grant `mode` although a holder the checker can see
  // conflicts.
  bool GrantInError(Client& c, int index, int r, LockMode mode,
                    Instant complete) {
    if (!BugDue(c, r, complete)) return false;
    const auto holder = ProvableConflictingHolder(index, r, mode, complete);
    if (!holder) return false;
    Client& h = clients_[static_cast<std::size_t>(*holder)];
    // The holder stays put until the bad grant has been answered.
    h.ready = std::max(h.ready, complete + microseconds(1));
    bug_ = "granted " + c.session + " " + Resource(r) + " " +
           std::string(LockModeName(mode)) + " as #" +
           std::to_string(history_.size()) + " while " + h.session +
           " held it " + std::string(LockModeName(h.locks.at(r).mode));
    return true;
  }

  bool BugDue(const Client& c, int r, Instant complete) const {
    if (!options_.conflicting_grant || !bug_.empty() ||
        history_.size() < inject_after_ || complete + kTtl / 4 >= c.horizon) {
      return false;
    }
    const auto lock = c.locks.find(r);
    return lock == c.locks.end() ||
           (lock->second.count == 0 && !lock->second.after_unknown_release);
  }

  void ReleaseLock(Client& c, int r, Instant invoke, Instant complete) {
    const Fate f = Decide();
    Outcome outcome = Outcome::kUnknown;
    if (f.applies) {
      if (!Alive(c)) {
        outcome = Outcome::kSessionLost;
      } else {
        auto& holders = locks_[static_cast<std::size_t>(r)];
        const auto held = holders.find(c.session);
        if (held == holders.end()) {
          outcome = Outcome::kRefused;  // not_held
        } else {
          if (--held->second.count == 0) holders.erase(held);
          outcome = Outcome::kOk;
          GrantWaiters();
        }
      }
    }
    if (f.answer_lost) outcome = Outcome::kUnknown;
    history_.push_back(
        Release(c.session, Resource(r), invoke, complete, outcome));
    ClientLock& mine = c.locks[r];
    if (outcome == Outcome::kUnknown) {
      mine.after_unknown_release = true;
      c.moving_on = Chance(0.5);
    } else {
      mine.doubtful = false;
    }
    if (mine.count > 0 && --mine.count == 0) mine.mode = LockMode::kNoLock;
    if (outcome == Outcome::kSessionLost) Lost(c);
  }

  struct LateWrite {
    Instant at;
    std::size_t key;
    std::string value;
  };

  SimulationOptions options_;
  std::mt19937_64 random_;
  Instant now_ = Instant{} + std::chrono::seconds(1);
  Instant outage_until_;
  std::vector<Client> clients_;
  std::map<std::string, ServerSession> sessions_;
  std::vector<std::map<std::string, ServerGrant>> locks_;  // by resource
  std::vector<std::optional<std::string>> registers_;      // by key
  std::vector<LateWrite> late_writes_;
  std::vector<Waiter> waiters_;
  Fence fences_ = 0;
  std::size_t writes_ = 0;
  std::size_t inject_after_ = 0;
  History history_;
  std::string bug_;
};

}  // namespace

Simulation Simulate(const SimulationOptions& options) {
  return Simulator(options).Run();
}

}  // namespace leasehold::testing
