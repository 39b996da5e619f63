// StoreCounters: the server's group-commit counters, read from GET /metrics
// (Prometheus text) at the edges of a measured window, so that a report can
// say how many journal entries shared each fsync and how long commits took.
#ifndef LEASEHOLD_LOADGEN_STORE_COUNTERS_H_
#define LEASEHOLD_LOADGEN_STORE_COUNTERS_H_

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string_view>

#include "http/connection.h"

namespace leasehold::loadgen {

struct StoreCounters {
  double batches = 0;         // leasehold_store_batches_total (fsyncs)
  double entries = 0;         // leasehold_store_entries_total
  double commit_seconds = 0;  // leasehold_store_commit_seconds_total

  StoreCounters operator-(const StoreCounters& earlier) const {
    return {batches - earlier.batches, entries - earlier.entries,
            commit_seconds - earlier.commit_seconds};
  }
};

// The counters in a /metrics page; nullopt when any is missing.
std::optional<StoreCounters> ParseStoreCounters(std::string_view metrics);

// GET /metrics on `connection`; nullopt when it does not answer 200 with
// the counters (e.g. metrics are off). Never counted as a bench error.
boost::asio::awaitable<std::optional<StoreCounters>> ReadStoreCounters(
    http::Connection& connection);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_STORE_COUNTERS_H_
