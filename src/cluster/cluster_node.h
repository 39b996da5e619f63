// ClusterNode: one leasehold node among several sharing a PostgreSQL
// database (docs/ha.md). It keeps the node's LeaderLease on a thread of its
// own and makes the node's EngineService follow it:
//
//  - standby: the service holds no store. Every quarter lease the node reads
//    the leader row; once it has expired (or there is none) it takes it.
//  - taking over: with the new epoch it opens the store fenced by that epoch
//    and loads it (sessions get a fresh ttl plus a grace for the outage;
//    fences, session and transaction ids continue above every reservation
//    the old leader made durable), renewing the lease meanwhile, then
//    serves.
//  - leader: renews every third of a lease and moves the service's lease
//    deadline with each renewal. When a renewal finds another epoch, or the
//    deadline passes without one, it detaches the service (in-flight and
//    waiting requests answer unavailable) and stands by again.
//
// The service refuses commands past the deadline by itself, so a node that
// is paused, or whose keeper is stuck on the network, acknowledges nothing
// once another node may have taken over; and every store transaction is
// fenced by the epoch in the database, so none of an old leader's commits
// after a takeover.
#ifndef LEASEHOLD_CLUSTER_CLUSTER_NODE_H_
#define LEASEHOLD_CLUSTER_CLUSTER_NODE_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cluster/cluster_view.h"
#include "cluster/leader_lease.h"
#include "service/engine_service.h"
#include "store/store.h"

namespace leasehold::cluster {

struct ClusterNodeOptions {
  LeaderLeaseOptions lease;
  // Added to every session's ttl when this node takes over.
  std::chrono::milliseconds session_grace{5000};
  // Told when this node has become the leader (with its epoch) and when it
  // stopped (with 0); may be empty. Runs on the keeper's thread.
  std::function<void(std::uint64_t)> on_leadership;
};

class ClusterNode final : public ClusterView {
 public:
  // Opens the store fenced by `epoch`.
  using StoreOpener =
      std::function<Result<std::unique_ptr<Store>>(std::uint64_t epoch)>;

  // Connects the lease and starts keeping it; `service` must have been
  // opened without a store (EngineService::OpenWithoutStore) and outlive
  // the node. kBadRequest or kUnavailable as LeaderLease::Open.
  static Result<std::unique_ptr<ClusterNode>> Start(ClusterNodeOptions options,
                                                    EngineService& service,
                                                    StoreOpener open_store);
  ~ClusterNode() override;  // Stop(false)

  // Stops keeping the lease. With `resign`, a leader gives the lease up so
  // that a standby takes over at once (call after the service's Shutdown).
  void Stop(bool resign);

  // For EngineService recovery: opens the store again, fenced by this
  // node's epoch, while it leads; kUnavailable otherwise. Thread-safe.
  Result<std::unique_ptr<Store>> ReopenStore();
  // The store failed: checks the lease at once, in case another node took
  // over. Thread-safe, cheap; may be called under the service's mutex.
  void StoreFailed();

  bool Leads() const override;
  std::string LeaderUrl() const override;
  ClusterStatus Snapshot() const override;

 private:
  enum class State { kStandby, kTakingOver, kLeader };

  ClusterNode(ClusterNodeOptions options, EngineService& service,
              StoreOpener open_store, std::unique_ptr<LeaderLease> lease);
  void Keep();  // the keeper thread
  // One round; returns how long to wait before the next.
  std::chrono::milliseconds Tick();
  std::chrono::milliseconds StandbyTick();
  std::chrono::milliseconds LeaderTick();
  void BeginTakeover(std::uint64_t epoch);
  void StepDown(const std::string& why);

  const ClusterNodeOptions options_;
  EngineService& service_;
  const StoreOpener open_store_;
  std::unique_ptr<LeaderLease> lease_;  // the keeper's only

  State state_ = State::kStandby;    // the keeper's only
  std::thread loader_;               // while taking over
  std::atomic<bool> loaded_{false};  // set by loader_ when it ends
  Status load_result_;               // loader_'s, read once it ended
  std::atomic<bool> leads_{false};
  std::atomic<std::uint64_t> epoch_{0};  // this node's while it leads

  mutable std::mutex mu_;  // guards the members below
  std::condition_variable wake_;
  bool woken_ = false;
  bool stopping_ = false;
  ClusterStatus status_;
  std::thread keeper_;
};

}  // namespace leasehold::cluster

#endif  // LEASEHOLD_CLUSTER_CLUSTER_NODE_H_
