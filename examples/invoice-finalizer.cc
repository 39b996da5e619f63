// invoice-finalizer: finalizing invoices exactly once, although workers race
// for the same invoices, retry, and lose answers on the way (seed 002).
//
// Each worker finalizes an invoice in one leasehold transaction:
//   lock invoice:N (Transaction-owned)  ->  begin operation finalize-N
//   -> if new: complete it with the outcome + enqueue "charge-N" to the
//      outbox  ->  commit (all or nothing; the lock goes with it)
// and, now and then, throws the commit's answer away as if the network had
// lost it, then retries: the retry finds the stored outcome, not a second
// finalization. Consumers claim the outbox messages and deliver them to a
// fake payment gateway; some "crash" before acknowledging, so the message is
// delivered again after its claim runs out. The gateway, like a real one,
// applies an effect once per idempotency key (the message key), so a
// redelivery never charges twice.
//
// It then checks, from the server's own events and the gateway's ledger,
// that every invoice was finalized exactly once and charged exactly once,
// prints the counts, and exits 0 (or 1 if any check fails).
//
//   invoice-finalizer [--url http://127.0.0.1:7070] [--invoices 40]
//       [--workers 4] [--consumers 2] [--lose 0.3] [--crash 0.2] [--seed N]
//       [--unsafe]
//
// --unsafe drops the operation record and gives every attempt its own
// message key, as code without idempotency would: the checks then fail.
#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leasehold/client.h"

namespace lh = leasehold::client;
namespace json = boost::json;
using std::chrono::milliseconds;

namespace {

struct Settings {
  lh::ClientOptions client;
  int invoices = 40;
  int workers = 4;
  int consumers = 2;
  double lose = 0.3;   // share of commit answers thrown away
  double crash = 0.2;  // share of deliveries not acknowledged
  unsigned seed = std::random_device{}();
  bool unsafe = false;
  std::string ns;
};

// The external service: counts deliveries, applies each idempotency key once.
class FakeGateway {
 public:
  void Deliver(const std::string& key, const json::value& payload) {
    std::lock_guard lock(mu_);
    ++deliveries_;
    if (!applied_keys_.emplace(key, true).second) return;  // seen: no effect
    ++charges_[std::string(payload.at("invoice").as_string())];
  }
  std::map<std::string, int> Charges() const {
    std::lock_guard lock(mu_);
    return charges_;
  }
  int deliveries() const {
    std::lock_guard lock(mu_);
    return deliveries_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, bool> applied_keys_;
  std::map<std::string, int> charges_;  // invoice -> effects
  int deliveries_ = 0;
};

struct Counts {
  std::atomic<int> attempts{0}, finalized{0}, lost_answers{0},
      found_completed{0}, refused_commits{0}, errors{0}, crashes{0},
      late_acks{0};
};

std::string Invoice(int n) { return std::to_string(1000 + n); }

// One attempt at finalizing `invoice` in session `sid`. Returns true when
// the invoice is known to be done (by this attempt or an earlier one).
bool FinalizeOnce(lh::Client& c, const Settings& s, const std::string& sid,
                  const std::string& invoice, std::mt19937& rng, Counts& counts,
                  int attempt_id) {
  ++counts.attempts;
  auto rollback = [&] { (void)c.Rollback(sid); };
  // Any failed step: undo the transaction and let the caller retry.
  auto fail = [&] {
    rollback();
    ++counts.errors;
    return false;
  };
  if (!c.BeginTransaction(sid)) {
    ++counts.errors;
    return false;
  }
  lh::AcquireOptions lock;
  lock.owner = "Transaction";
  lock.timeout = milliseconds(5'000);
  auto got = c.Acquire(s.ns, sid, "invoice:" + invoice, lock);
  if (!got || !got->granted()) return fail();

  const std::string op = "finalize-" + invoice;
  std::string key = "charge-" + invoice;
  if (!s.unsafe) {
    auto state = c.BeginOperation(s.ns, op, sid);
    if (!state) return fail();
    if (state->completed) {
      ++counts.found_completed;
      rollback();  // nothing staged; releases the lock
      return true;
    }
    const json::value outcome = {{"invoice", invoice},
                                 {"total_cents", 1250 + 7 * std::stoi(invoice)},
                                 {"attempt", attempt_id}};
    if (!c.CompleteOperation(s.ns, op, sid, outcome)) return fail();
  } else {
    key += "-attempt-" + std::to_string(attempt_id);  // no stable key
  }
  const json::value payload = {{"invoice", invoice}, {"attempt", attempt_id}};
  if (!c.Enqueue(s.ns, "payments", key, payload, sid)) return fail();
  auto committed = c.Commit(sid);
  if (!committed) {
    // transaction_aborted: another worker completed it first.
    if (committed.error().code == "transaction_aborted") {
      ++counts.refused_commits;
    } else {
      ++counts.errors;
    }
    return false;
  }
  if (std::bernoulli_distribution(s.lose)(rng)) {
    ++counts.lost_answers;  // as if the answer never came: try again
    return false;
  }
  ++counts.finalized;
  return true;
}

void Worker(lh::Client c, const Settings& s, int index, Counts& counts) {
  std::mt19937 rng(s.seed + static_cast<unsigned>(index));
  auto session = c.StartSession("finalizer-" + std::to_string(index),
                                milliseconds(10'000));
  if (!session) {
    ++counts.errors;
    return;
  }
  std::vector<int> order(static_cast<std::size_t>(s.invoices));
  for (int i = 0; i < s.invoices; ++i) order[static_cast<std::size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (int n : order) {
    // Every worker tries every invoice; unsafe mode gives up after a while.
    for (int attempt = 0; attempt < 20; ++attempt) {
      const int attempt_id = index * 1'000'000 + n * 100 + attempt;
      if (FinalizeOnce(c, s, session->id(), Invoice(n), rng, counts,
                       attempt_id)) {
        break;
      }
      if (s.unsafe && attempt >= 1) break;
    }
  }
}

void Consumer(lh::Client c, const Settings& s, int index, FakeGateway& gateway,
              Counts& counts, const std::atomic<bool>& stop) {
  std::mt19937 rng(s.seed * 31 + static_cast<unsigned>(index));
  const std::string name = "consumer-" + std::to_string(index);
  while (!stop) {
    auto batch = c.Claim(s.ns, "payments", name, 10, milliseconds(300));
    if (!batch || batch->empty()) {
      std::this_thread::sleep_for(milliseconds(20));
      continue;
    }
    for (const lh::OutboxMessage& m : *batch) {
      gateway.Deliver(m.key, m.payload);
      if (std::bernoulli_distribution(s.crash)(rng)) {
        ++counts.crashes;  // gone before the ack: delivered again later
        continue;
      }
      auto ack = c.Ack(s.ns, "payments", m.id, m.claim_token);
      if (ack && !ack->acked) ++counts.late_acks;  // claim ran out meanwhile
    }
  }
}

int ParseArgs(int argc, char** argv, Settings& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--unsafe") {
      s.unsafe = true;
      continue;
    }
    if (i + 1 >= argc) return std::fprintf(stderr, "missing value\n"), 2;
    const std::string value = argv[++i];
    if (flag == "--url")
      s.client.url = value;
    else if (flag == "--invoices")
      s.invoices = std::stoi(value);
    else if (flag == "--workers")
      s.workers = std::stoi(value);
    else if (flag == "--consumers")
      s.consumers = std::stoi(value);
    else if (flag == "--lose")
      s.lose = std::stod(value);
    else if (flag == "--crash")
      s.crash = std::stod(value);
    else if (flag == "--seed")
      s.seed = static_cast<unsigned>(std::stoul(value));
    else
      return std::fprintf(stderr, "unknown flag %s\n", argv[i - 1]), 2;
  }
  if (s.invoices < 1 || s.workers < 1 || s.consumers < 1 || s.lose < 0 ||
      s.lose >= 1 || s.crash < 0 || s.crash >= 1) {
    return std::fprintf(stderr, "bad settings\n"), 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  if (int bad = ParseArgs(argc, argv, s)) return bad;
  // A fresh namespace per run, so runs against one server do not mix.
  s.ns = "invoices-" + std::to_string(s.seed);
  auto client = lh::Client::Create(s.client);
  if (!client) {
    std::fprintf(stderr, "client: %s\n", client.error().message.c_str());
    return 1;
  }

  // The server's own account of what happened: its events, counted.
  std::mutex events_mu;
  std::map<std::string, int> completed_events, enqueued_events;
  std::atomic<bool> watching{false}, stop_watch{false};
  std::thread watcher([&] {
    (void)client->Watch(s.ns, [&](const lh::Event& e) {
      watching = true;
      std::lock_guard lock(events_mu);
      if (e.type == "operation.completed") {
        ++completed_events[std::string(e.data.at("resource").as_string())];
      } else if (e.type == "outbox.enqueued" &&
                 e.data.at("topic").as_string() == "payments") {
        ++enqueued_events[std::string(e.data.at("key").as_string())];
      }
      return !stop_watch.load();
    });
  });
  // Probe until the subscription is live, so no event is missed.
  for (int i = 0; !watching && i < 500; ++i) {
    (void)client->Enqueue(s.ns, "probe", "probe-" + std::to_string(i),
                          json::object{});
    std::this_thread::sleep_for(milliseconds(10));
  }
  if (!watching) {
    std::fprintf(stderr, "cannot watch events at %s\n", s.client.url.c_str());
    stop_watch = true;
    watcher.detach();
    return 1;
  }

  Counts counts;
  FakeGateway gateway;
  std::atomic<bool> stop_consumers{false};
  std::vector<std::thread> consumers, workers;
  for (int i = 0; i < s.consumers; ++i) {
    consumers.emplace_back(Consumer, *client, std::cref(s), i,
                           std::ref(gateway), std::ref(counts),
                           std::cref(stop_consumers));
  }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < s.workers; ++i) {
    workers.emplace_back(Worker, *client, std::cref(s), i, std::ref(counts));
  }
  for (auto& w : workers) w.join();
  // Wait until the outbox is drained (claims that ran out come back).
  for (int i = 0; i < 3000; ++i) {
    auto box = client->GetOutbox(s.ns, "payments");
    if (box && box->pending == 0 && box->claimed == 0) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  stop_consumers = true;
  for (auto& c : consumers) c.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  stop_watch = true;
  (void)client->Enqueue(s.ns, "probe", "stop",
                        json::object{});  // wakes the watcher
  watcher.join();

  // The checks.
  const auto charges = gateway.Charges();
  int finalized_once = 0, charged_once = 0, enqueued_total = 0;
  for (int n = 0; n < s.invoices; ++n) {
    const std::string inv = Invoice(n);
    finalized_once += completed_events["finalize-" + inv] == 1;
    auto it = charges.find(inv);
    charged_once += it != charges.end() && it->second == 1;
  }
  for (const auto& [key, k] : enqueued_events) enqueued_total += k;
  int operations_completed = 0;
  for (const auto& [op, k] : completed_events) operations_completed += k;
  const bool ok = (s.unsafe || finalized_once == s.invoices) &&
                  charged_once == s.invoices &&
                  static_cast<int>(charges.size()) == s.invoices;

  std::printf(
      "invoice-finalizer: %d invoices, %d workers, %d consumers, "
      "%.0f%% of commit answers lost, %.0f%% of deliveries crash, %.1f s%s\n",
      s.invoices, s.workers, s.consumers, s.lose * 100, s.crash * 100, seconds,
      s.unsafe ? " (UNSAFE: no operation record, no stable key)" : "");
  std::printf("  finalize attempts               %d\n", counts.attempts.load());
  std::printf("  commit answers thrown away      %d\n",
              counts.lost_answers.load());
  std::printf("  attempts that found it done     %d\n",
              counts.found_completed.load());
  std::printf("  commits refused (lost the race) %d\n",
              counts.refused_commits.load());
  std::printf("  other errors retried            %d\n", counts.errors.load());
  std::printf(
      "  operation.completed events      %d (%d invoices exactly once)\n",
      operations_completed, finalized_once);
  std::printf("  messages enqueued               %d\n", enqueued_total);
  std::printf(
      "  deliveries to the gateway       %d (%d consumer crashes, %d "
      "late acks)\n",
      gateway.deliveries(), counts.crashes.load(), counts.late_acks.load());
  int effects = 0;
  for (const auto& [inv, k] : charges) effects += k;
  std::printf(
      "  charges applied                 %d (%d invoices exactly once)\n",
      effects, charged_once);
  std::printf(ok ? "OK: every invoice was finalized exactly once and charged "
                   "exactly once\n"
                 : "FAILED: some invoice was finalized or charged more than "
                   "once, or never\n");
  return ok ? 0 : 1;
}
