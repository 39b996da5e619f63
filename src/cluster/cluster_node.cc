#include "cluster/cluster_node.h"

#include "common/log.h"

#include <fmt/format.h>

namespace leasehold::cluster {

namespace {

using std::chrono::milliseconds;
using LeaseClock = LeaderLease::Clock;

// How often a node taking over looks whether its load has finished.
constexpr milliseconds kLoadPoll{20};
// How soon a leader tries again after a renewal that could not reach the
// database (its deadline still runs).
constexpr milliseconds kRenewRetry{100};

}  // namespace

Result<std::unique_ptr<ClusterNode>> ClusterNode::Start(
    ClusterNodeOptions options, EngineService& service,
    StoreOpener open_store) {
  auto lease = LeaderLease::Open(options.lease);
  if (!lease) return std::unexpected(lease.error());
  std::unique_ptr<ClusterNode> node(new ClusterNode(
      std::move(options), service, std::move(open_store), std::move(*lease)));
  node->keeper_ = std::thread([raw = node.get()] { raw->Keep(); });
  return node;
}

ClusterNode::ClusterNode(ClusterNodeOptions options, EngineService& service,
                         StoreOpener open_store,
                         std::unique_ptr<LeaderLease> lease)
    : options_(std::move(options)),
      service_(service),
      open_store_(std::move(open_store)),
      lease_(std::move(lease)) {
  status_.role = "standby";
  status_.node = lease_->holder();
  status_.advertise = options_.lease.advertise;
  service_.SetLeaseDeadline(LeaseClock::time_point::min());
}

ClusterNode::~ClusterNode() { Stop(false); }

void ClusterNode::Stop(bool resign) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (keeper_.joinable()) keeper_.join();
  if (loader_.joinable()) loader_.join();
  if (resign && state_ != State::kStandby) {
    leads_ = false;
    service_.SetLeaseDeadline(LeaseClock::time_point::min());
    const Status st = lease_->Resign();
    log::Info(st.ok() ? "resigned the lease: a standby takes over at once"
                      : "could not resign the lease (" + st.message() +
                            "): a standby takes over once it expires");
  }
}

Result<std::unique_ptr<Store>> ClusterNode::ReopenStore() {
  const std::uint64_t epoch = epoch_.load();
  if (!leads_.load() || epoch == 0) {
    return Error(StatusCode::kUnavailable, "this node does not lead");
  }
  return open_store_(epoch);
}

void ClusterNode::StoreFailed() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

bool ClusterNode::Leads() const { return leads_.load(); }

std::string ClusterNode::LeaderUrl() const {
  std::lock_guard lock(mu_);
  // Asked only when this node does not serve: never send clients to itself
  // (e.g. while it steps down, before its status says so).
  if (status_.leader == options_.lease.advertise) return "";
  return status_.leader;
}

ClusterStatus ClusterNode::Snapshot() const {
  std::lock_guard lock(mu_);
  return status_;
}

void ClusterNode::Keep() {
  for (;;) {
    const milliseconds wait = Tick();
    std::unique_lock lock(mu_);
    wake_.wait_for(lock, wait, [this] { return stopping_ || woken_; });
    woken_ = false;
    if (stopping_) return;
  }
}

milliseconds ClusterNode::Tick() {
  const milliseconds wait =
      state_ == State::kStandby ? StandbyTick() : LeaderTick();
  // Best effort: the list of nodes is for operators, not for safety.
  const char* role = state_ == State::kLeader ? "leader" : "standby";
  if (lease_->Announce(role).ok()) {
    if (auto members = lease_->Members()) {
      std::lock_guard lock(mu_);
      status_.nodes.clear();
      for (MemberRow& m : *members) {
        status_.nodes.push_back({std::move(m.node), std::move(m.advertise),
                                 std::move(m.role), m.seen_ago});
      }
    }
  }
  return wait;
}

milliseconds ClusterNode::StandbyTick() {
  const milliseconds poll = options_.lease.lease / 4;
  auto row = lease_->Current();
  if (!row) {
    log::Warn("cannot read the leader row: " + row.error().message());
    return poll;
  }
  const bool held = row->has_value() && (*row)->expires_in.count() > 0;
  // A row still naming this very node (it stood by because it could not
  // renew), or its URL (its previous process, killed), names no leader to
  // send clients to: that would be itself.
  const bool elsewhere = held && (*row)->node != lease_->holder() &&
                         (*row)->advertise != options_.lease.advertise;
  {
    std::lock_guard lock(mu_);
    status_.epoch = row->has_value() ? (*row)->epoch : 0;
    status_.leader = elsewhere ? (*row)->advertise : "";
    status_.leader_node = elsewhere ? (*row)->node : "";
  }
  if (held && (*row)->node != lease_->holder()) return poll;
  auto taken = lease_->TryTake();
  if (!taken) {
    log::Warn("cannot take the lease: " + taken.error().message());
    return poll;
  }
  if (!taken->has_value()) return poll;  // another node was quicker
  BeginTakeover(**taken);
  return kLoadPoll;
}

void ClusterNode::BeginTakeover(std::uint64_t epoch) {
  state_ = State::kTakingOver;
  epoch_ = epoch;
  service_.SetLeaseDeadline(lease_->valid_until());
  {
    std::lock_guard lock(mu_);
    status_.epoch = epoch;
    status_.leader.clear();
    status_.leader_node.clear();
  }
  log::Info(fmt::format("took the lease (epoch {}); loading the store", epoch));
  loaded_ = false;
  loader_ = std::thread([this, epoch] {
    auto store = open_store_(epoch);
    load_result_ = store ? service_.Attach(std::move(*store),
                                           std::chrono::duration_cast<Duration>(
                                               options_.session_grace))
                         : store.error();
    loaded_ = true;
    StoreFailed();  // wakes the keeper: serve at once
  });
}

milliseconds ClusterNode::LeaderTick() {
  auto renewed = lease_->Renew();
  if (renewed && *renewed == LeaderLease::Renewal::kRenewed) {
    service_.SetLeaseDeadline(lease_->valid_until());
  } else if (renewed) {
    StepDown(
        fmt::format("another node took the lease over (this node's "
                    "epoch was {})",
                    epoch_.load()));
    return milliseconds(0);
  } else if (!lease_->valid(LeaseClock::now())) {
    StepDown("could not renew the lease in time: " + renewed.error().message());
    return milliseconds(0);
  }
  if (state_ == State::kTakingOver && loaded_) {
    loader_.join();
    if (!load_result_.ok()) {
      log::Warn("could not load the store: " + load_result_.message());
      (void)lease_->Resign();  // let any node try again
      StepDown("the store could not be loaded");
      return options_.lease.lease / 4;
    }
    state_ = State::kLeader;
    leads_ = true;
    {
      std::lock_guard lock(mu_);
      status_.role = "leader";
      status_.leader = options_.lease.advertise;
      status_.leader_node = lease_->holder();
      ++status_.took_over;
    }
    log::Info(fmt::format("leading (epoch {}) at {}", epoch_.load(),
                          options_.lease.advertise));
    if (options_.on_leadership) options_.on_leadership(epoch_.load());
  }
  if (!renewed) return kRenewRetry;
  return state_ == State::kTakingOver ? kLoadPoll : options_.lease.lease / 3;
}

void ClusterNode::StepDown(const std::string& why) {
  const bool was_leading = leads_.exchange(false);
  {
    std::lock_guard lock(mu_);
    status_.leader.clear();  // not this node any more
    status_.leader_node.clear();
  }
  service_.SetLeaseDeadline(LeaseClock::time_point::min());
  if (loader_.joinable()) loader_.join();
  service_.Detach(
      Status(StatusCode::kUnavailable, "this node no longer leads: " + why));
  state_ = State::kStandby;
  epoch_ = 0;
  {
    std::lock_guard lock(mu_);
    status_.role = "standby";
    status_.leader.clear();
    status_.leader_node.clear();
    if (was_leading) ++status_.stepped_down;
  }
  log::Info("standing by: " + why);
  if (was_leading && options_.on_leadership) options_.on_leadership(0);
}

}  // namespace leasehold::cluster
