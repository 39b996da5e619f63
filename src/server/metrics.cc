#include "server/metrics.h"

#include <algorithm>
#include <sstream>

#include "common/version.h"
#include "server/routes.h"

namespace leasehold::server {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

void Metric(std::ostringstream& out, const char* name, const char* type,
            const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type
      << "\n";
}

}  // namespace

Metrics::Metrics()
    : answers_(std::make_unique<AnswerStats[]>(Routes().size() + 1)) {}

void Metrics::OnAnswer(const Route* route, unsigned status,
                       std::chrono::steady_clock::duration took) {
  const std::span<const Route> routes = Routes();
  AnswerStats& stats =
      answers_[route == nullptr
                   ? routes.size()
                   : static_cast<std::size_t>(route - routes.data())];
  const unsigned klass = std::clamp(status / 100, 1u, 5u) - 1;
  stats.by_class[klass].fetch_add(1, std::memory_order_relaxed);
  const double seconds = std::chrono::duration<double>(took).count();
  for (std::size_t i = 0; i < kAnswerBuckets.size(); ++i) {
    if (seconds <= kAnswerBuckets[i]) {
      stats.buckets[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  stats.nanoseconds.fetch_add(
      static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()),
      std::memory_order_relaxed);
}

// Only endpoints that have answered: the table has some sixty.
void Metrics::RenderAnswers(std::ostringstream& out) const {
  const std::span<const Route> routes = Routes();
  constexpr const char* kClasses[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
  std::ostringstream requests, times;
  Metric(requests, "leasehold_http_requests_total", "counter",
         "Requests answered, by endpoint (method and path template; "
         "\"other\": none serves it) and status class.");
  Metric(times, "leasehold_http_request_seconds", "histogram",
         "Time from a request's arrival to its answer, by endpoint; a lock "
         "request's wait included.");
  for (std::size_t r = 0; r <= routes.size(); ++r) {
    const AnswerStats& stats = answers_[r];
    std::uint64_t count = 0;
    std::array<std::uint64_t, 5> by_class{};
    for (std::size_t k = 0; k < by_class.size(); ++k) {
      by_class[k] = stats.by_class[k].load(std::memory_order_relaxed);
      count += by_class[k];
    }
    if (count == 0) continue;
    const std::string route = r == routes.size()
                                  ? "other"
                                  : std::string(routes[r].method) + " " +
                                        std::string(routes[r].pattern.text());
    for (std::size_t k = 0; k < by_class.size(); ++k) {
      if (by_class[k] == 0) continue;
      requests << "leasehold_http_requests_total{route=\"" << route
               << "\",code=\"" << kClasses[k] << "\"} " << by_class[k] << "\n";
    }
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kAnswerBuckets.size(); ++i) {
      cumulative += stats.buckets[i].load(std::memory_order_relaxed);
      times << "leasehold_http_request_seconds_bucket{route=\"" << route
            << "\",le=\"" << kAnswerBuckets[i] << "\"} "
            << std::min(cumulative, count) << "\n";
    }
    times << "leasehold_http_request_seconds_bucket{route=\"" << route
          << "\",le=\"+Inf\"} " << count << "\n"
          << "leasehold_http_request_seconds_sum{route=\"" << route << "\"} "
          << static_cast<double>(
                 stats.nanoseconds.load(std::memory_order_relaxed)) /
                 1e9
          << "\n"
          << "leasehold_http_request_seconds_count{route=\"" << route << "\"} "
          << count << "\n";
  }
  out << requests.str() << times.str();
}

void Metrics::ObserveWait(double seconds) {
  for (std::size_t i = 0; i < kWaitBuckets.size(); ++i) {
    if (seconds <= kWaitBuckets[i]) ++wait_buckets_[i];
  }
  ++wait_count_;
  wait_sum_ += seconds;
}

void Metrics::OnEvents(const std::vector<OwnedEvent>& events) {
  std::lock_guard lock(mu_);
  for (const OwnedEvent& e : events) {
    auto waited = [&] {
      auto it = waiting_since_.find(e.session);
      if (it == waiting_since_.end()) return false;
      ObserveWait(Seconds(e.at - it->second));
      waiting_since_.erase(it);
      return true;
    };
    // Results: granted, granted after a wait, timeout, cancelled, deadlock.
    const auto count_result = [&](Results& results, EventType kind) {
      switch (kind) {
        case EventType::kLockGranted:
          ++results[waited() ? 1 : 0];
          break;
        case EventType::kLockTimeout:
          waited();
          ++results[2];
          break;
        case EventType::kLockCancelled:
          waited();
          ++results[3];
          break;
        case EventType::kLockDeadlock:
          waited();
          ++results[4];
          break;
        default:
          break;
      }
    };
    switch (e.type) {
      case EventType::kLockWaiting:
      case EventType::kSemaphoreWaiting:
        waiting_since_[e.session] = e.at;
        break;
      case EventType::kLockGranted:
      case EventType::kLockTimeout:
      case EventType::kLockCancelled:
      case EventType::kLockDeadlock:
        count_result(lock_results_, e.type);
        break;
      case EventType::kSemaphoreGranted:
        count_result(semaphore_results_, EventType::kLockGranted);
        break;
      case EventType::kSemaphoreTimeout:
        count_result(semaphore_results_, EventType::kLockTimeout);
        break;
      case EventType::kSemaphoreCancelled:
        count_result(semaphore_results_, EventType::kLockCancelled);
        break;
      case EventType::kSemaphoreDeadlock:
        count_result(semaphore_results_, EventType::kLockDeadlock);
        break;
      case EventType::kSessionExpired:
        ++sessions_expired_;
        waiting_since_.erase(e.session);
        break;
      case EventType::kSessionClosed:
        waiting_since_.erase(e.session);
        break;
      case EventType::kOutboxEnqueued:
        ++enqueued_;
        break;
      case EventType::kOutboxClaimed:
        ++claimed_;
        break;
      case EventType::kOutboxAcked:
        ++acked_;
        break;
      case EventType::kOperationCompleted:
        ++operations_completed_;
        break;
      default:
        break;
    }
  }
}

void Metrics::OnBackup(bool ok, double seconds, std::uint64_t bytes) {
  std::lock_guard lock(mu_);
  if (!ok) {
    ++backups_failed_;
    return;
  }
  ++backups_ok_;
  last_backup_seconds_ = seconds;
  last_backup_bytes_ = bytes;
}

std::string Metrics::Render(const EngineStats& engine, std::size_t parked,
                            const StoreReport& report, Time now) const {
  const GroupCommitStats& store = report.commits;
  std::lock_guard lock(mu_);
  std::ostringstream out;
  Metric(out, "leasehold_build_info", "gauge",
         "Always 1; the version label names the running build.");
  out << "leasehold_build_info{version=\"" << Version() << "\"} 1\n";
  constexpr const char* kResultNames[] = {"granted", "granted_after_wait",
                                          "timeout", "cancelled", "deadlock"};
  const auto results = [&](const char* name, const char* help,
                           const Results& counts) {
    Metric(out, name, "counter", help);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      out << name << "{result=\"" << kResultNames[i] << "\"} " << counts[i]
          << "\n";
    }
  };
  results("leasehold_acquisitions_total",
          "Application-lock requests by result.", lock_results_);
  results("leasehold_semaphore_acquisitions_total",
          "Semaphore requests by result.", semaphore_results_);
  Metric(out, "leasehold_wait_seconds", "histogram",
         "How long parked lock and semaphore requests waited before their "
         "answer.");
  for (std::size_t i = 0; i < kWaitBuckets.size(); ++i) {
    out << "leasehold_wait_seconds_bucket{le=\"" << kWaitBuckets[i] << "\"} "
        << wait_buckets_[i] << "\n";
  }
  out << "leasehold_wait_seconds_bucket{le=\"+Inf\"} " << wait_count_ << "\n"
      << "leasehold_wait_seconds_sum " << wait_sum_ << "\n"
      << "leasehold_wait_seconds_count " << wait_count_ << "\n";
  auto gauge = [&](const char* name, const char* help, double v) {
    Metric(out, name, "gauge", help);
    out << name << " " << v << "\n";
  };
  auto counter = [&](const char* name, const char* help, double v) {
    Metric(out, name, "counter", help);
    out << name << " " << v << "\n";
  };
  Metric(out, "leasehold_holds_taken_back_total", "counter",
         "Locks and semaphore permits the server took back from a living "
         "session: at a hold limit (expired) or by a break (broken).");
  out << "leasehold_holds_taken_back_total{reason=\"expired\"} "
      << engine.holds_expired << "\n"
      << "leasehold_holds_taken_back_total{reason=\"broken\"} "
      << engine.holds_broken << "\n";
  gauge("leasehold_locks_held", "Granted application-lock entries.",
        static_cast<double>(engine.granted_locks));
  gauge("leasehold_lock_waiters", "Parked lock requests.",
        static_cast<double>(parked));
  gauge("leasehold_sessions_open", "Open sessions.",
        static_cast<double>(engine.sessions));
  gauge("leasehold_sessions_restored",
        "Sessions brought back from the store at start-up.",
        static_cast<double>(engine.restored_sessions));
  gauge("leasehold_locks_restored",
        "Application-lock entries brought back from the store at start-up.",
        static_cast<double>(engine.restored_locks));
  gauge("leasehold_sessions_owed_lock_news",
        "Restored sessions not yet told that their memory-namespace locks "
        "are gone; while above 0 those namespaces grant nothing.",
        static_cast<double>(engine.sessions_owed_lock_news));
  counter("leasehold_sessions_expired_total", "Sessions that expired.",
          static_cast<double>(sessions_expired_));
  gauge("leasehold_transactions_open", "Open transactions.",
        static_cast<double>(engine.open_transactions));
  counter("leasehold_transactions_expired_total",
          "Transactions rolled back for staying open longer than a "
          "namespace's max_transaction_ms.",
          static_cast<double>(engine.transactions_expired));
  gauge("leasehold_oldest_transaction_age_seconds",
        "Age of the oldest open transaction (0 if none).",
        engine.oldest_transaction_start
            ? Seconds(now - *engine.oldest_transaction_start)
            : 0);
  gauge("leasehold_checkouts_active", "Unexpired checkout leases.",
        static_cast<double>(engine.active_checkouts));
  gauge("leasehold_keys", "Keys with a record or a lease.",
        static_cast<double>(engine.keys));
  Metric(out, "leasehold_outbox_messages_total", "counter",
         "Outbox messages enqueued, claims handed out, and acks.");
  const std::pair<const char*, std::uint64_t> outbox[] = {
      {"enqueued", enqueued_}, {"claimed", claimed_}, {"acked", acked_}};
  for (const auto& [what, n] : outbox) {
    out << "leasehold_outbox_messages_total{event=\"" << what << "\"} " << n
        << "\n";
  }
  counter("leasehold_operations_completed_total",
          "Idempotent operations completed (at commit).",
          static_cast<double>(operations_completed_));
  counter("leasehold_store_batches_total", "Store commits (one fsync each).",
          static_cast<double>(store.batches));
  counter("leasehold_store_entries_total", "Journal entries committed.",
          static_cast<double>(store.entries));
  gauge("leasehold_store_last_batch_entries",
        "Journal entries in the last commit (group-commit size).",
        static_cast<double>(store.last_batch_entries));
  counter("leasehold_store_commit_seconds_total",
          "Time spent committing, in seconds.", store.total_commit_seconds);
  gauge("leasehold_store_last_commit_seconds",
        "Latency of the last commit, in seconds.", store.last_commit_seconds);
  gauge("leasehold_store_commit_in_flight_seconds",
        "How long the commit now in flight has been, in seconds (0: none); "
        "past store_stall_ms, /healthz answers 503.",
        store.commit_in_flight_seconds);
  gauge("leasehold_store_up",
        "1 while the store accepts writes, 0 from a failure to its recovery.",
        report.up ? 1 : 0);
  counter("leasehold_store_recoveries_total",
          "Times the server reopened and reloaded a failed store.",
          static_cast<double>(report.recoveries));
  Metric(out, "leasehold_backups_total", "counter",
         "Backups (GET /v1/admin/backup) by result.");
  out << "leasehold_backups_total{result=\"ok\"} " << backups_ok_ << "\n"
      << "leasehold_backups_total{result=\"failed\"} " << backups_failed_
      << "\n";
  gauge("leasehold_backup_last_seconds",
        "How long the last successful backup's copy took, in seconds.",
        last_backup_seconds_);
  // As an integer: a double's default six digits would round the size.
  Metric(out, "leasehold_backup_last_bytes", "gauge",
         "Size of the last successful backup.");
  out << "leasehold_backup_last_bytes " << last_backup_bytes_ << "\n";
  counter("leasehold_fence", "The last fence handed out.",
          static_cast<double>(engine.last_fence));
  if (const auto& c = report.cluster) {
    gauge("leasehold_cluster_leader", "1 while this node leads, else 0.",
          c->role == "leader" ? 1 : 0);
    gauge("leasehold_cluster_epoch",
          "The latest leader's epoch this node has seen.",
          static_cast<double>(c->epoch));
    gauge("leasehold_cluster_nodes",
          "Nodes heard from in the last three leases.",
          static_cast<double>(c->nodes.size()));
    counter("leasehold_cluster_took_over_total",
            "Times this node became the leader.",
            static_cast<double>(c->took_over));
    counter("leasehold_cluster_stepped_down_total",
            "Times this node stopped leading.",
            static_cast<double>(c->stepped_down));
  }
  if (const std::int64_t expiry = tls_expiry_.load(); expiry != 0) {
    // As an integer: a double's six digits would round the time.
    Metric(out, "leasehold_tls_certificate_expiry_timestamp_seconds", "gauge",
           "When the certificate new TLS handshakes use expires (Unix "
           "time, seconds).");
    out << "leasehold_tls_certificate_expiry_timestamp_seconds " << expiry
        << "\n";
  }
  RenderAnswers(out);
  return out.str();
}

}  // namespace leasehold::server
