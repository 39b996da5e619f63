// Lock and semaphore waits across a restart of the server
// (across_restarts.h).
#include "client/across_restarts.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <thread>
#include <type_traits>

namespace leasehold::client::detail {
namespace {

using Clock = std::chrono::steady_clock;

// The longest wait a deadline is computed for, as the server does: a
// longer timeout waits this long, in effect forever.
constexpr Milliseconds kLongestTimedWait =
    std::chrono::duration_cast<Milliseconds>(std::chrono::years(100));

// Whether `text`, without trailing blanks, is `word` in any case: how the
// server reads a mode or an owner.
bool SameWord(std::string_view text, std::string_view word) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return std::ranges::equal(text, word, [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

// Principal scopes compare ignoring ASCII case, as the server compares them
// (it lists them lower-cased).
bool SamePrincipal(std::string_view listed, std::string_view asked) {
  return std::ranges::equal(listed, asked, [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

// Whether `error` broke a wait the server may have decided meanwhile: its
// connection broke (a restart, or the leader's end), or the node answered
// 503 unavailable (it stepped down, or lost its store, or stands by).
bool BrokeTheWait(const Error& error) {
  return error.code == "unreachable" || error.code == "unavailable";
}

// Waits until a server answers /healthz again (the same one after a
// restart, or another node of the cluster after a failover), or `until`
// passes.
bool AwaitServer(Client& client, Clock::time_point until) {
  while (true) {
    if (auto ok = client.Healthy(); ok && *ok) return true;
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// What the session holds of the locks asked for after a break, from the
// lock listing; `unexplained` names a lock held in a mode not asked for,
// which this request cannot have left (someone else used the session).
struct LeftByBreak {
  std::vector<GrantedLock> held;  // canonical order
  std::string unexplained;
};

Result<LeftByBreak> ReadLeftByBreak(Client& client,
                                    const SessionLockRequest& request) {
  auto listing = client.ListLocks(request.ns);
  if (!listing) return std::unexpected(listing.error());
  LeftByBreak left;
  for (const LockInfo& lock : *listing) {
    if (!SamePrincipal(lock.principal, request.principal)) continue;
    const auto asked =
        std::ranges::find(request.locks, lock.resource, &LockSpec::resource);
    if (asked == request.locks.end()) continue;
    for (const LockHolder& h : lock.granted) {
      if (h.session != request.session || !SameWord(h.owner, "Session")) {
        continue;
      }
      if (!SameWord(asked->mode, h.mode)) {
        left.unexplained = lock.resource + " as " + h.mode;
      }
      left.held.push_back({lock.resource, h.mode, h.fence, h.count});
    }
  }
  // std::string orders by unsigned bytes: the server's canonical order.
  std::ranges::sort(left.held, {}, &GrantedLock::resource);
  return left;
}

// Releases the locks a broken acquire-all had taken before its wait.
Result<void> GiveBack(Client& client, const SessionLockRequest& request,
                      const std::vector<GrantedLock>& taken) {
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    auto released = client.Release(request.ns, request.session, it->resource,
                                   "Session", request.principal);
    if (!released) return released;
  }
  return {};
}

// A grant adopted after a break: it had to wait for the restart, at least.
template <typename Outcome>
Outcome Adopted(std::vector<GrantedLock> held) {
  Outcome out;
  out.result = 1;
  out.status = "granted_after_wait";
  if constexpr (std::is_same_v<Outcome, AcquireOutcome>) {
    out.fence = held.front().fence;
  } else {
    out.locks = std::move(held);
  }
  return out;
}

bool MayWaitAcrossRestarts(std::string_view owner, Milliseconds timeout) {
  return SameWord(owner, "Session") && timeout.count() != 0;
}

// What a broken request left, read once a server serves again: the outcome
// to adopt, nullopt to ask again, or an Error (`broke` amended, or the
// reading's own).
template <typename Outcome>
using AfterBreak = std::function<Result<std::optional<Outcome>>(Error& broke)>;

// `send` until it is answered, reading what each break left with
// `after_break`, within `timeout` (what is left of it for each new try).
template <typename Outcome>
Result<Outcome> AcrossBreaks(Client& client, Milliseconds timeout,
                             const SendOnce<Outcome>& send,
                             const AfterBreak<Outcome>& after_break) {
  const bool forever = timeout.count() < 0;
  timeout = forever ? timeout : std::min(timeout, kLongestTimedWait);
  const Clock::time_point deadline =
      Clock::now() + std::max(timeout, Milliseconds(0));
  while (true) {
    auto answer = send(timeout);
    if (answer || !BrokeTheWait(answer.error())) return answer;
    // However long the wait may be, a server gone for longer than the I/O
    // allowance past it is reported.
    const Clock::time_point give_up =
        std::max(forever ? Clock::now() : deadline, Clock::now()) +
        client.options().io_timeout;
    if (!AwaitServer(client, give_up)) return answer;
    auto left = after_break(answer.error());
    if (!left) return std::unexpected(left.error());
    if (*left) return std::move(**left);
    if (!forever) {
      timeout = std::max(
          std::chrono::duration_cast<Milliseconds>(deadline - Clock::now()),
          Milliseconds(0));
    }
  }
}

// What a broken lock request left (see AfterBreak).
template <typename Outcome>
Result<std::optional<Outcome>> LocksLeftByBreak(
    Client& client, const SessionLockRequest& request, Error& broke) {
  auto left = ReadLeftByBreak(client, request);
  if (!left) return std::unexpected(left.error());
  if (!left->unexplained.empty()) {
    broke.message += "; once served again the session holds " +
                     left->unexplained + ", not as asked: not asked again";
    return std::unexpected(broke);
  }
  if (left->held.size() == request.locks.size()) {
    return Adopted<Outcome>(std::move(left->held));
  }
  if (auto undone = GiveBack(client, request, left->held); !undone) {
    return std::unexpected(undone.error());
  }
  return std::nullopt;
}

// The permits the session holds (as owner Session) of the semaphore, with
// the fence of its latest grant; 0 when it holds none or nobody uses it.
struct HeldPermits {
  std::int64_t permits = 0;
  std::uint64_t fence = 0;
};

Result<HeldPermits> ReadHeldPermits(Client& client,
                                    const SessionSemaphoreRequest& request) {
  auto info = client.GetSemaphore(request.ns, request.name, request.principal);
  if (!info && info.error().code == "not_found") return HeldPermits{};
  if (!info) return std::unexpected(info.error());
  for (const SemaphoreHolder& h : info->holders) {
    if (h.session == request.session && SameWord(h.owner, "Session")) {
      return HeldPermits{h.permits, h.fence};
    }
  }
  return HeldPermits{};
}

// What a broken semaphore request left (see AfterBreak).
Result<std::optional<SemaphoreOutcome>> PermitsLeftByBreak(
    Client& client, const SessionSemaphoreRequest& request, Error& broke) {
  auto held = ReadHeldPermits(client, request);
  if (!held) return std::unexpected(held.error());
  if (held->permits == 0) return std::nullopt;
  if (held->permits != request.permits) {
    broke.message += "; once served again the session holds " +
                     std::to_string(held->permits) + " permits of " +
                     request.name + ", not as asked: not asked again";
    return std::unexpected(broke);
  }
  SemaphoreOutcome out;
  out.result = 1;  // it had to wait for the restart, at least
  out.status = "granted_after_wait";
  out.fence = held->fence;
  out.permits = held->permits;
  return out;
}

Result<bool> HoldsNoneOf(Client& client, const SessionLockRequest& request) {
  for (const LockSpec& lock : request.locks) {
    auto mode = client.Mode(request.ns, request.session, lock.resource,
                            "Session", request.principal);
    if (!mode) return std::unexpected(mode.error());
    if (*mode != "NoLock") return false;
  }
  return true;
}

}  // namespace

template <typename Outcome>
Result<Outcome> SendAcrossRestarts(Client& client,
                                   const SessionLockRequest& request,
                                   Milliseconds timeout,
                                   const SendOnce<Outcome>& send) {
  return AcrossBreaks<Outcome>(client, timeout, send, [&](Error& broke) {
    return LocksLeftByBreak<Outcome>(client, request, broke);
  });
}

Result<SemaphoreOutcome> SendAcrossRestarts(
    Client& client, const SessionSemaphoreRequest& request,
    Milliseconds timeout, const SendOnce<SemaphoreOutcome>& send) {
  return AcrossBreaks<SemaphoreOutcome>(
      client, timeout, send,
      [&](Error& broke) { return PermitsLeftByBreak(client, request, broke); });
}

template <typename Outcome>
Result<Outcome> SendAcrossRestartsIfSafe(Client& client,
                                         const SessionLockRequest& request,
                                         std::string_view owner,
                                         Milliseconds timeout,
                                         const SendOnce<Outcome>& send) {
  if (!MayWaitAcrossRestarts(owner, timeout)) return send(timeout);
  if (auto none = HoldsNoneOf(client, request); !none || !*none) {
    return send(timeout);
  }
  return SendAcrossRestarts(client, request, timeout, send);
}

Result<SemaphoreOutcome> SendAcrossRestartsIfSafe(
    Client& client, const SessionSemaphoreRequest& request,
    std::string_view owner, Milliseconds timeout,
    const SendOnce<SemaphoreOutcome>& send) {
  if (!MayWaitAcrossRestarts(owner, timeout)) return send(timeout);
  if (auto held = ReadHeldPermits(client, request); !held || held->permits) {
    return send(timeout);
  }
  return SendAcrossRestarts(client, request, timeout, send);
}

template Result<AcquireOutcome> SendAcrossRestarts(
    Client&, const SessionLockRequest&, Milliseconds,
    const SendOnce<AcquireOutcome>&);
template Result<AcquireAllOutcome> SendAcrossRestarts(
    Client&, const SessionLockRequest&, Milliseconds,
    const SendOnce<AcquireAllOutcome>&);
template Result<AcquireOutcome> SendAcrossRestartsIfSafe(
    Client&, const SessionLockRequest&, std::string_view, Milliseconds,
    const SendOnce<AcquireOutcome>&);
template Result<AcquireAllOutcome> SendAcrossRestartsIfSafe(
    Client&, const SessionLockRequest&, std::string_view, Milliseconds,
    const SendOnce<AcquireAllOutcome>&);

}  // namespace leasehold::client::detail
