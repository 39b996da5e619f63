// Metrics: counters fed by the engine's events, rendered with the engine's
// and the store's statistics in Prometheus text format (GET /metrics).
#ifndef LEASEHOLD_SERVER_METRICS_H_
#define LEASEHOLD_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "cluster/cluster_view.h"
#include "service/owned_event.h"
#include "store/group_commit.h"

namespace leasehold::server {

struct Route;

class Metrics {
 public:
  // Upper bounds of the wait-time histogram, in seconds.
  static constexpr std::array<double, 11> kWaitBuckets = {
      0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60};
  // Upper bounds of the per-endpoint answer-time histogram, in seconds.
  static constexpr std::array<double, 8> kAnswerBuckets = {
      0.0005, 0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10};

  Metrics();

  // A request to `route` (null: no endpoint serves it) was answered with
  // `status`, `took` after it reached the Api (a lock wait included).
  // Thread-safe and lock-free: every request calls it.
  void OnAnswer(const Route* route, unsigned status,
                std::chrono::steady_clock::duration took);

  // Counts acquisitions by result and times waits. Thread-safe.
  void OnEvents(const std::vector<OwnedEvent>& events);

  // A backup (GET /v1/admin/backup) ended: how long the copy took and
  // its size (0 when it failed). Thread-safe.
  void OnBackup(bool ok, double seconds, std::uint64_t bytes);

  // The expiry of the certificate new TLS handshakes use (reported as
  // leasehold_tls_certificate_expiry_timestamp_seconds). Thread-safe.
  void SetTlsExpiry(std::chrono::system_clock::time_point expiry) {
    tls_expiry_ = std::chrono::duration_cast<std::chrono::seconds>(
                      expiry.time_since_epoch())
                      .count();
  }

  // What /metrics says of the store.
  struct StoreReport {
    GroupCommitStats commits;
    std::uint64_t recoveries = 0;  // EngineService::Recoveries()
    bool up = true;                // it accepts writes
    // Among several nodes: this node's view of the cluster.
    std::optional<cluster::ClusterStatus> cluster = {};
  };
  // The exposition text. `now` measures the oldest transaction's age.
  std::string Render(const EngineStats& engine, std::size_t parked,
                     const StoreReport& store, Time now) const;

 private:
  void ObserveWait(double seconds);

  mutable std::mutex mu_;
  // Requests by result, as leasehold_acquisitions_total orders them; of
  // application locks and of semaphores.
  using Results = std::array<std::uint64_t, 5>;
  Results lock_results_{}, semaphore_results_{};
  std::array<std::uint64_t, kWaitBuckets.size()> wait_buckets_{};
  std::uint64_t wait_count_ = 0;
  double wait_sum_ = 0;
  std::unordered_map<SessionId, Time> waiting_since_;
  std::uint64_t sessions_expired_ = 0;
  std::uint64_t enqueued_ = 0, claimed_ = 0, acked_ = 0;
  std::uint64_t operations_completed_ = 0;
  std::uint64_t backups_ok_ = 0, backups_failed_ = 0;
  double last_backup_seconds_ = 0;
  std::uint64_t last_backup_bytes_ = 0;

  // Per endpoint, in the route table's order, then one for requests no
  // endpoint serves. Relaxed atomics: counts, read only to render.
  struct AnswerStats {
    std::array<std::atomic<std::uint64_t>, 5> by_class{};  // 1xx .. 5xx
    // How many answers fell in each bucket (not cumulative; past the last
    // bound: only in the count).
    std::array<std::atomic<std::uint64_t>, kAnswerBuckets.size()> buckets{};
    std::atomic<std::uint64_t> nanoseconds{0};
  };
  std::unique_ptr<AnswerStats[]> answers_;
  std::atomic<std::int64_t> tls_expiry_{0};  // Unix seconds; 0: no TLS
  void RenderAnswers(std::ostringstream& out) const;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_METRICS_H_
