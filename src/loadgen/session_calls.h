// The session calls the scenarios share: open one (POST /v1/sessions) and
// end one (DELETE /v1/sessions/{id}), through a Worker so that failures are
// counted as errors.
#ifndef LEASEHOLD_LOADGEN_SESSION_CALLS_H_
#define LEASEHOLD_LOADGEN_SESSION_CALLS_H_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "loadgen/phase.h"

namespace leasehold::loadgen {

// Opens a session named `name` that lives `ttl` without keepalive; returns
// its id, or nullopt (the error is counted).
boost::asio::awaitable<std::optional<std::string>> OpenSession(
    Worker& w, std::string name, std::chrono::milliseconds ttl);

// Ends session `id` (releasing what it holds); failures are counted.
boost::asio::awaitable<void> EndSession(Worker& w, const std::string& id);

// A session TTL that outlives a timed phase: warmup + duration + 1 minute.
std::chrono::milliseconds TtlForPhase(const BenchOptions& o);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_SESSION_CALLS_H_
