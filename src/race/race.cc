#include "race/race.h"

#include <fmt/format.h>

#include <array>
#include <barrier>
#include <memory>
#include <mutex>
#include <thread>

namespace leasehold::race {
namespace {

using std::chrono::milliseconds;

Status CheckOptions(const Target& target, const RaceOptions& options) {
  if (options.sessions < 1 || options.rows < 1) {
    return Status(StatusCode::kBadRequest,
                  "--sessions and --rows must be at least 1");
  }
  if (options.ttl.count() <= 0 || options.gap.count() < 0) {
    return Status(StatusCode::kBadRequest,
                  "--ttl must be positive and --gap-us not negative");
  }
  if (options.variant == Variant::kNaive && !target.SupportsNaive()) {
    return Status(
        StatusCode::kBadRequest,
        fmt::format("{} has no naive variant: its API has no check-then-set, "
                    "every checkout is one atomic decision; use --variant "
                    "atomic",
                    target.Engine()));
  }
  return Status::Ok();
}

// One session's walk over every document; stops at the first failure.
Status Walk(TargetSession& session, const RaceOptions& options,
            std::vector<bool>& granted) {
  for (int doc = 1; doc <= options.rows; ++doc) {
    auto ok = session.Checkout(doc, options.variant, options.ttl, options.gap);
    if (!ok) return ok.error();
    if (Status st = session.Log(doc, *ok); !st.ok()) return st;
    granted[static_cast<std::size_t>(doc - 1)] = *ok;
  }
  return Status::Ok();
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

Result<RaceResult> RunRace(Target& target, const RaceOptions& options,
                           const Clock& clock) {
  if (Status st = CheckOptions(target, options); !st.ok()) {
    return std::unexpected(st);
  }
  if (Status st = target.Prepare(options.rows); !st.ok()) {
    return std::unexpected(st);
  }
  RaceResult result;
  result.engine = std::string(target.Engine());
  result.options = options;
  result.sessions = SessionNames(options.sessions);
  // Every session connects before the start, so the barrier releases
  // sessions that are ready to ask at once.
  std::vector<std::unique_ptr<TargetSession>> sessions;
  for (const auto& name : result.sessions) {
    auto s = target.Open(name);
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
  auto logged = target.TallyLog(options.rows, options.sessions);
  if (!logged) return std::unexpected(logged.error());
  if (logged->has_value()) {
    if (**logged != result.tally) {
      return Error(StatusCode::kInternal,
                   "the race log disagrees with what the sessions were told");
    }
    result.from_log = true;
  }
  return result;
}

}  // namespace leasehold::race
