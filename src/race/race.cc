#include "race/race.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <memory>
#include <mutex>
#include <thread>

namespace leasehold::race {
namespace {

using std::chrono::milliseconds;

Status CheckOptions(const peers::Peer& peer, const RaceOptions& options) {
  if (!peer.HasDocuments()) {
    return Status(StatusCode::kBadRequest,
                  fmt::format("{} holds no documents to race on: the race "
                              "runs on sqlite:PATH, a postgresql:// URL or a "
                              "leasehold server's http:// URL",
                              peer.Name()));
  }
  if (options.sessions < 1 || options.rows < 1) {
    return Status(StatusCode::kBadRequest,
                  "--sessions and --rows must be at least 1");
  }
  if (options.ttl.count() <= 0 || options.gap.count() < 0) {
    return Status(StatusCode::kBadRequest,
                  "--ttl must be positive and --gap-us not negative");
  }
  if (options.variant == Variant::kNaive && !peer.SupportsNaive()) {
    return Status(
        StatusCode::kBadRequest,
        fmt::format("{} has no naive variant: its API has no check-then-set, "
                    "every checkout is one atomic decision; use --variant "
                    "atomic",
                    peer.Name()));
  }
  return Status::Ok();
}

// One session's walk over every document; stops at the first failure.
Status Walk(peers::DocumentSession& session, const RaceOptions& options,
            std::vector<bool>& granted) {
  for (int doc = 1; doc <= options.rows; ++doc) {
    auto ok = session.Checkout(doc, options.variant, options.ttl, options.gap);
    if (!ok) return ok.error();
    if (Status st = session.Log(doc, *ok); !st.ok()) return st;
    granted[static_cast<std::size_t>(doc - 1)] = *ok;
  }
  return Status::Ok();
}

// The tally of the peer's own counts: documents the log does not name had
// no winner, and every count from 0 to the number of sessions is present.
Tally FromLog(const peers::RaceLog& log, const RaceOptions& options) {
  Tally tally;
  tally.documents = options.rows;
  for (int w = 0; w <= std::max(2, options.sessions); ++w) {
    tally.documents_by_winners[w] = 0;
  }
  int logged = 0;
  for (const auto& [winners, documents] : log.documents_by_winners) {
    tally.documents_by_winners[winners] += documents;
    logged += documents;
  }
  tally.documents_by_winners[0] += options.rows - logged;
  tally.grants_by_session = log.grants_by_user;
  return tally;
}

}  // namespace

std::vector<std::string> SessionNames(int count) {
  constexpr std::array<const char*, 8> kNames{"Asha", "Ravi", "Mei",  "Tomas",
                                              "Ines", "Kofi", "Lena", "Omar"};
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    names.push_back(i < static_cast<int>(kNames.size())
                        ? std::string(kNames[static_cast<std::size_t>(i)])
                        : fmt::format("Session{}", i + 1));
  }
  return names;
}

Result<RaceResult> RunRace(peers::Peer& peer, const RaceOptions& options,
                           const Clock& clock) {
  if (Status st = CheckOptions(peer, options); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = peer.PrepareDocuments(options.rows); !st.ok()) {
    return std::unexpected(st);
  }
  RaceResult result;
  result.engine = std::string(peer.Name());
  result.options = options;
  result.sessions = SessionNames(options.sessions);
  // Every session connects before the start, so the barrier releases
  // sessions that are ready to ask at once.
  std::vector<std::unique_ptr<peers::DocumentSession>> sessions;
  for (const auto& name : result.sessions) {
    auto s = peer.OpenDocumentSession(name);
    if (!s) return std::unexpected(s.error());
    sessions.push_back(std::move(*s));
  }
  std::vector<SessionGrants> grants;
  for (const auto& name : result.sessions) {
    grants.push_back(
        {name, std::vector<bool>(static_cast<std::size_t>(options.rows))});
  }
  std::barrier start(options.sessions + 1);
  std::mutex mu;
  Status failed;
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < sessions.size(); ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        Status st = Walk(*sessions[i], options, grants[i].granted);
        if (st.ok()) return;
        std::scoped_lock lock(mu);
        if (failed.ok()) failed = st;
      });
    }
    const Time began = clock.Now();
    start.arrive_and_wait();
    threads.clear();
    result.elapsed =
        std::chrono::duration_cast<milliseconds>(clock.Now() - began);
  }
  if (!failed.ok()) return std::unexpected(failed);
  result.tally = CountGrants(options.rows, grants);
  auto log = peer.CountRaceLog();
  if (!log) return std::unexpected(log.error());
  if (log->has_value()) {
    if (FromLog(**log, options) != result.tally) {
      return Error(StatusCode::kInternal,
                   "the race log disagrees with what the sessions were told");
    }
    result.from_log = true;
  }
  return result;
}

}  // namespace leasehold::race
