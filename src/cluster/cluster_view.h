// ClusterView: what the HTTP layer needs to know of the node it runs in —
// whether it leads, and where the leader is — without knowing how
// leadership is decided (ClusterNode, on PostgreSQL). Header only.
#ifndef LEASEHOLD_CLUSTER_CLUSTER_VIEW_H_
#define LEASEHOLD_CLUSTER_CLUSTER_VIEW_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace leasehold::cluster {

struct ClusterMember {
  std::string node;
  std::string advertise;  // its URL for clients
  std::string role;       // "leader" or "standby", as it last said
  std::chrono::milliseconds seen_ago{0};
};

struct ClusterStatus {
  std::string role;         // this node's: "leader" or "standby"
  std::string node;         // this node's name
  std::string advertise;    // this node's URL
  std::uint64_t epoch = 0;  // the latest leader's epoch this node has seen
  std::string leader;       // the leader's URL; empty when none is known
  std::string leader_node;  // the leader's name; empty when none is known
  std::vector<ClusterMember> nodes;
  // Times this node became the leader, and stopped being it.
  std::uint64_t took_over = 0;
  std::uint64_t stepped_down = 0;
};

class ClusterView {
 public:
  virtual ~ClusterView() = default;
  // True while this node leads and serves: every request is answered here.
  // Cheap (one atomic), asked per request.
  virtual bool Leads() const = 0;
  // The leader's URL ("" when none is known), for a redirect.
  virtual std::string LeaderUrl() const = 0;
  virtual ClusterStatus Snapshot() const = 0;
};

}  // namespace leasehold::cluster

#endif  // LEASEHOLD_CLUSTER_CLUSTER_VIEW_H_
