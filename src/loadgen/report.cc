#include "loadgen/report.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>

namespace leasehold::loadgen {

namespace json = boost::json;

namespace {

double Ms(LatencyHistogram::Nanos d) {
  return static_cast<double>(d.count()) / 1e6;
}

// JSON numbers are integers (Boost.JSON prints doubles as 1.5E3).
std::int64_t Whole(double v) { return std::llround(v); }

std::int64_t Micros(LatencyHistogram::Nanos d) {
  return Whole(static_cast<double>(d.count()) / 1e3);
}

json::object LatencyJson(const LatencyHistogram& h) {
  return json::object{{"count", h.count()},
                      {"p50", Micros(h.Percentile(0.50))},
                      {"p99", Micros(h.Percentile(0.99))},
                      {"p999", Micros(h.Percentile(0.999))},
                      {"max", Micros(h.max())},
                      {"mean", Micros(h.mean())}};
}

json::value MaybeBytes(const std::optional<std::uint64_t>& b) {
  return b ? json::value(*b) : json::value(nullptr);
}

json::object PhaseJson(const PhaseResult& p, bool fairness) {
  json::array samples;
  for (const auto& s : p.error_samples) samples.emplace_back(s);
  json::object o{
      {"name", p.name},
      {"connections", p.connections},
      {"timed", p.timed},
      {"window_ms", Whole(p.seconds * 1e3)},
      {"pairs", p.pairs.count()},
      {"pairs_per_s", Whole(p.pairs_per_second())},
      {"requests", p.requests.count()},
      {"requests_per_s", Whole(p.requests_per_second())},
      {"refused", p.refused},
      {"errors", p.errors},
      {"error_samples", samples},
      {"latency_us", json::object{{"request", LatencyJson(p.requests)},
                                  {"pair", LatencyJson(p.pairs)}}}};
  // CPU per request (µs): what each side spent for one request's worth.
  auto per_request = [&p](const std::optional<std::chrono::nanoseconds>& cpu) {
    if (!cpu || p.requests.count() == 0) return json::value(nullptr);
    return json::value(Whole(static_cast<double>(cpu->count()) / 1e3 /
                             static_cast<double>(p.requests.count())));
  };
  auto cores = [&p](const std::optional<std::chrono::nanoseconds>& cpu) {
    if (!cpu || p.seconds <= 0) return json::value(nullptr);
    return json::value(
        Whole(static_cast<double>(cpu->count()) / 1e6 / p.seconds));
  };
  o["cpu"] = json::object{{"server_us_per_request", per_request(p.server_cpu)},
                          {"client_us_per_request", per_request(p.client_cpu)},
                          {"server_millicores", cores(p.server_cpu)},
                          {"client_millicores", cores(p.client_cpu)}};
  if (p.store) {
    const StoreCounters& c = *p.store;
    o["store"] = json::object{
        {"fsyncs", Whole(c.batches)},
        {"entries", Whole(c.entries)},
        {"entries_per_fsync_x100",
         c.batches > 0 ? Whole(100 * c.entries / c.batches) : 0},
        {"mean_commit_us",
         c.batches > 0 ? Whole(1e6 * c.commit_seconds / c.batches) : 0}};
  }
  if (fairness) {
    const Fairness f = FairnessOf(p);
    o["fairness"] = json::object{{"min", f.min},
                                 {"max", f.max},
                                 {"fair_share", Whole(f.fair_share)},
                                 {"jain_ppm", Whole(f.jain * 1e6)}};
  }
  return o;
}

std::string Count(double v) {
  return fmt::format(std::locale("C"), "{:.0f}", v);
}

std::string MiB(const std::optional<std::uint64_t>& b) {
  if (!b) return "unknown";
  return fmt::format("{:.1f} MiB", static_cast<double>(*b) / (1 << 20));
}

std::string LatencyCells(const LatencyHistogram& h) {
  if (h.count() == 0) return fmt::format("{:>8} {:>8} {:>8}", "-", "-", "-");
  return fmt::format("{:8.3f} {:8.3f} {:8.3f}", Ms(h.Percentile(0.50)),
                     Ms(h.Percentile(0.99)), Ms(h.Percentile(0.999)));
}

}  // namespace

const char* ScenarioName(Scenario s) {
  switch (s) {
    case Scenario::kApplock:
      return "applock";
    case Scenario::kCheckout:
      return "checkout";
    case Scenario::kHot:
      return "hot";
    case Scenario::kIdle:
      return "idle";
  }
  return "?";
}

Fairness FairnessOf(const PhaseResult& phase) {
  Fairness f;
  const auto& v = phase.pairs_per_connection;
  if (v.empty()) return f;
  f.min = *std::min_element(v.begin(), v.end());
  f.max = *std::max_element(v.begin(), v.end());
  double sum = 0, squares = 0;
  for (std::uint64_t x : v) {
    sum += static_cast<double>(x);
    squares += static_cast<double>(x) * static_cast<double>(x);
  }
  f.fair_share = sum / static_cast<double>(v.size());
  f.jain =
      squares > 0 ? sum * sum / (static_cast<double>(v.size()) * squares) : 0;
  return f;
}

std::string FormatTable(const BenchReport& r) {
  const BenchOptions& o = r.options;
  const std::string driver =
      r.target
          ? fmt::format(
                "{} ({}; durable: {}), {} clients, one thread "
                "each",
                o.target, r.target->kind, r.target->durability, o.connections)
          : fmt::format(
                "{}://{}:{}{}, {} connections on {} I/O "
                "thread(s){}",
                o.server.tls ? "https" : "http", o.server.host, o.server.port,
                r.spawned ? " (spawned)" : "", o.connections, o.io_threads,
                o.new_connection_per_request ? ", a new connection per request"
                                             : "");
  std::string out = fmt::format(
      "leasehold bench: scenario {}, {}, warmup {:.1f} s, window {:.1f} s\n",
      ScenarioName(o.scenario), driver,
      static_cast<double>(o.warmup.count()) / 1e3,
      static_cast<double>(o.duration.count()) / 1e3);
  out += fmt::format(
      "{:<34} {:>5} {:>6} {:>9} {:>9} | {:>26} | {:>26} | {:>7} {:>6}\n", "",
      "", "", "", "", "latency per request, ms", "latency per pair, ms", "",
      "");
  out += fmt::format(
      "{:<34} {:>5} {:>6} {:>9} {:>9} | {:>8} {:>8} {:>8} | {:>8} {:>8} {:>8} "
      "| {:>7} {:>6}\n",
      "phase", "conns", "secs", "pairs/s", "req/s", "p50", "p99", "p99.9",
      "p50", "p99", "p99.9", "refused", "errors");
  for (const PhaseResult& p : r.phases) {
    out += fmt::format(
        "{:<34} {:>5} {:>6.1f} {:>9} {:>9} | {} | {} | {:>7} {:>6}\n", p.name,
        p.connections, p.seconds, Count(p.pairs_per_second()),
        Count(p.requests_per_second()), LatencyCells(p.requests),
        LatencyCells(p.pairs), p.refused, p.errors);
  }
  for (const PhaseResult& p : r.phases) {
    if (!p.timed || p.requests.count() == 0) continue;
    const auto per_request = [&p](const auto& cpu) {
      return cpu ? fmt::format(
                       "{:.1f} µs/request ({:.2f} cores)",
                       static_cast<double>(cpu->count()) / 1e3 /
                           static_cast<double>(p.requests.count()),
                       static_cast<double>(cpu->count()) / 1e9 / p.seconds)
                 : std::string("unknown");
    };
    out += fmt::format("cpu ({}): server {}, load generator {}\n", p.name,
                       per_request(p.server_cpu), per_request(p.client_cpu));
    if (p.store && p.store->batches > 0) {
      out += fmt::format(
          "store ({}): {:.0f} fsyncs/s, {:.1f} entries per fsync, mean "
          "commit {:.2f} ms\n",
          p.name, p.store->batches / p.seconds,
          p.store->entries / p.store->batches,
          1e3 * p.store->commit_seconds / p.store->batches);
    }
  }
  if (o.scenario == Scenario::kHot && !r.phases.empty()) {
    const Fairness f = FairnessOf(r.phases.front());
    out += fmt::format(
        "hot: {:.0f} hand-offs/s; grants per connection min {} / max {} "
        "(fair share {:.1f}: {:.2f}x to {:.2f}x); Jain's index {:.4f}\n",
        r.phases.front().pairs_per_second(), f.min, f.max, f.fair_share,
        f.fair_share > 0 ? static_cast<double>(f.min) / f.fair_share : 0,
        f.fair_share > 0 ? static_cast<double>(f.max) / f.fair_share : 0,
        f.jain);
  }
  if (r.idle) {
    out += fmt::format(
        "idle: {} sessions x {} locks built in {:.2f} s; server RSS {} "
        "before, {} after\n",
        r.idle->sessions, r.idle->locks_per_session, r.idle->build_seconds,
        MiB(r.idle->rss_before), MiB(r.idle->rss_after));
  }
  out += fmt::format(
      "server: pid {}, RSS at the end {}\n",
      r.server_pid > 0 ? std::to_string(r.server_pid) : std::string("unknown"),
      MiB(r.rss_end));
  for (const PhaseResult& p : r.phases) {
    for (const auto& s : p.error_samples) {
      out += fmt::format("error ({}): {}\n", p.name, s);
    }
  }
  return out;
}

json::object ToJson(const BenchReport& r) {
  const BenchOptions& o = r.options;
  json::array phases;
  for (const PhaseResult& p : r.phases) {
    phases.push_back(PhaseJson(p, o.scenario == Scenario::kHot));
  }
  json::object out{
      {"scenario", ScenarioName(o.scenario)},
      {"url", std::string(o.server.tls ? "https://" : "http://") +
                  o.server.host + ":" + std::to_string(o.server.port)},
      {"spawned", r.spawned},
      {"connections", o.connections},
      {"io_threads", o.io_threads},
      {"new_connection_per_request", o.new_connection_per_request},
      {"warmup_ms", o.warmup.count()},
      {"duration_ms", o.duration.count()},
      {"keys", o.keys},
      {"phases", phases},
      {"errors", r.errors()},
      {"ok", r.ok()},
      {"server",
       json::object{{"pid", r.server_pid > 0 ? json::value(r.server_pid)
                                             : json::value(nullptr)},
                    {"rss_bytes", MaybeBytes(r.rss_end)}}}};
  if (r.target) {
    out["url"] = o.target;
    out["target"] = json::object{{"url", o.target},
                                 {"kind", r.target->kind},
                                 {"durable", r.target->durable},
                                 {"durability", r.target->durability}};
  }
  // The headline: the last timed phase.
  for (const PhaseResult& p : r.phases) {
    if (!p.timed) continue;
    out["pairs_per_s"] = Whole(p.pairs_per_second());
    out["requests_per_s"] = Whole(p.requests_per_second());
  }
  if (r.idle) {
    out["idle"] =
        json::object{{"sessions", r.idle->sessions},
                     {"locks_per_session", r.idle->locks_per_session},
                     {"locks", static_cast<std::uint64_t>(r.idle->sessions) *
                                   r.idle->locks_per_session},
                     {"build_ms", Whole(r.idle->build_seconds * 1e3)},
                     {"rss_bytes_before", MaybeBytes(r.idle->rss_before)},
                     {"rss_bytes_after", MaybeBytes(r.idle->rss_after)}};
  }
  return out;
}

}  // namespace leasehold::loadgen
