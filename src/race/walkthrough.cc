#include "race/walkthrough.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <thread>

namespace leasehold::race {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLongLease{300'000};

std::string Seconds(milliseconds d) {
  return d.count() % 1000 == 0
             ? fmt::format("{} s", d.count() / 1000)
             : fmt::format("{:.1f} s", static_cast<double>(d.count()) / 1e3);
}

std::string Bit(bool b) { return b ? "1" : "0"; }

std::string Describe(const DocumentView& v) {
  return fmt::format("locked_by {}, {}", v.locked_by.value_or("(none)"),
                     v.locked ? "locked" : "free");
}

// Records steps; the first failed call ends the walkthrough with an error.
class Script {
 public:
  Script(peers::Peer& peer, std::string name) : peer_(peer) {
    result_.name = std::move(name);
    result_.engine = std::string(peer.Name());
  }

  Status Start() {
    if (Status st = peer_.PrepareDocuments(2); !st.ok()) return st;
    auto asha = peer_.OpenDocumentSession("Asha");
    if (!asha) return asha.error();
    auto ravi = peer_.OpenDocumentSession("Ravi");
    if (!ravi) return ravi.error();
    asha_ = std::move(*asha);
    ravi_ = std::move(*ravi);
    return Status::Ok();
  }

  peers::DocumentSession& asha() { return *asha_; }
  peers::DocumentSession& ravi() { return *ravi_; }

  Status Answer(std::string what, const Result<bool>& got, bool expected) {
    if (!got) return got.error();
    result_.steps.push_back({std::move(what), Bit(*got), Bit(expected)});
    return Status::Ok();
  }

  Status Look(int doc, std::string what, const DocumentView& expected) {
    auto got = asha_->Read(doc);
    if (!got) return got.error();
    result_.steps.push_back(
        {std::move(what), Describe(*got), Describe(expected)});
    return Status::Ok();
  }

  void Wait(milliseconds d) {
    std::this_thread::sleep_for(d);
    result_.steps.push_back({"wait " + Seconds(d), "", ""});
  }

  Walkthrough Done() { return std::move(result_); }

 private:
  peers::Peer& peer_;
  std::unique_ptr<peers::DocumentSession> asha_, ravi_;
  Walkthrough result_;
};

}  // namespace

bool Walkthrough::ok() const {
  return std::ranges::all_of(steps, [](const Step& s) { return s.ok(); });
}

Result<Walkthrough> RunExpiryWalkthrough(peers::Peer& peer, milliseconds ttl) {
  if (ttl.count() <= 0) {
    return Error(StatusCode::kBadRequest, "--ttl must be positive");
  }
  Script s(peer, "expiry");
  const auto atomic = Variant::kAtomic;
  const std::chrono::microseconds no_gap{0};
  Status st = s.Start();
  if (st.ok()) {
    st = s.Answer("Asha checks out document 1 for " + Seconds(ttl),
                  s.asha().Checkout(1, atomic, ttl, no_gap), true);
  }
  if (st.ok()) {
    st = s.Answer("Ravi tries at once",
                  s.ravi().Checkout(1, atomic, ttl, no_gap), false);
  }
  if (st.ok()) {
    s.Wait(ttl * 3 / 2);
    st = s.Look(1, "document 1 after the wait", {"Asha", false});
  }
  if (st.ok()) {
    st = s.Answer("Ravi tries after expiry (" + Seconds(kLongLease) + ")",
                  s.ravi().Checkout(1, atomic, kLongLease, no_gap), true);
  }
  if (st.ok()) {
    st = s.Answer("Asha saves late", s.asha().Save(1, "Asha edit"), false);
  }
  if (st.ok()) {
    st = s.Answer("Ravi saves", s.ravi().Save(1, "Ravi edit"), true);
  }
  if (!st.ok()) return std::unexpected(st);
  return s.Done();
}

Result<Walkthrough> RunCheckinWalkthrough(peers::Peer& peer) {
  Script s(peer, "checkin");
  const std::chrono::microseconds no_gap{0};
  Status st = s.Start();
  if (st.ok()) {
    st = s.Answer("Asha checks out document 2 for " + Seconds(kLongLease),
                  s.asha().Checkout(2, Variant::kAtomic, kLongLease, no_gap),
                  true);
  }
  if (st.ok()) st = s.Look(2, "document 2", {"Asha", true});
  if (st.ok()) st = s.Answer("Ravi checks in", s.ravi().Checkin(2), false);
  if (st.ok()) st = s.Answer("Asha checks in", s.asha().Checkin(2), true);
  if (st.ok()) {
    st = s.Look(2, "document 2 after the check-in", {std::nullopt, false});
  }
  if (!st.ok()) return std::unexpected(st);
  return s.Done();
}

}  // namespace leasehold::race
