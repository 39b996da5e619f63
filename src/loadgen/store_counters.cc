#include "loadgen/store_counters.h"

#include <charconv>
#include <string>

namespace leasehold::loadgen {

namespace {

// The value of the sample line `name value` (no labels), or nullopt.
std::optional<double> Sample(std::string_view text, std::string_view name) {
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(name) || line.size() <= name.size() ||
        line[name.size()] != ' ') {
      continue;
    }
    const std::string_view number = line.substr(name.size() + 1);
    double value = 0;
    auto [ptr, ec] =
        std::from_chars(number.data(), number.data() + number.size(), value);
    if (ec == std::errc()) return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<StoreCounters> ParseStoreCounters(std::string_view metrics) {
  const auto batches = Sample(metrics, "leasehold_store_batches_total");
  const auto entries = Sample(metrics, "leasehold_store_entries_total");
  const auto seconds = Sample(metrics, "leasehold_store_commit_seconds_total");
  if (!batches || !entries || !seconds) return std::nullopt;
  return StoreCounters{*batches, *entries, *seconds};
}

boost::asio::awaitable<std::optional<StoreCounters>> ReadStoreCounters(
    http::Connection& connection) {
  const http::Answer answer =
      co_await connection.AsyncRequest(http::Method::kGet, "/metrics", "");
  if (answer.error || answer.status != 200) co_return std::nullopt;
  co_return ParseStoreCounters(answer.body);
}

}  // namespace leasehold::loadgen
