// The server's log: one levelled, timestamped line per event on stderr, as
// text ("2026-12-05T11:02:03.123Z info leasehold: serving … key=value") or
// as one JSON object per line ({"ts", "level", "msg", "fields"}) for log
// shippers. Process-wide: `serve` configures it once, before its threads
// start; any thread may then write. A line is written whole (one write
// under a mutex), so lines of several threads never interleave.
// Secrets (bearer tokens) must never be handed to it.
#ifndef LEASEHOLD_COMMON_LOG_H_
#define LEASEHOLD_COMMON_LOG_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace leasehold::log {

// Ordered: a configured level shows itself and those after it.
enum class Level { kDebug, kInfo, kWarn, kError };
enum class Format { kText, kJson };

// "debug", "info", "warn", "error"; kBadRequest naming them otherwise.
Result<Level> ParseLevel(std::string_view text);
// "text", "json"; kBadRequest naming them otherwise.
Result<Format> ParseFormat(std::string_view text);
std::string_view LevelName(Level level);

// Named values that go with a line: key=value in text, "fields" in JSON.
using Fields = std::vector<std::pair<std::string, std::string>>;

// Lines below `level` are dropped. Call before other threads log.
void Configure(Level level, Format format);

// Where whole lines go: stderr, or `sink` while it is set (a test that
// reads what was logged; empty: stderr again). Called under the log's
// mutex: it must not log.
void SetSink(std::function<void(std::string_view line)> sink);

// One line, or nothing when `level` is below the configured one.
void Write(Level level, std::string_view message, const Fields& fields = {});
inline void Debug(std::string_view m, const Fields& f = {}) {
  Write(Level::kDebug, m, f);
}
inline void Info(std::string_view m, const Fields& f = {}) {
  Write(Level::kInfo, m, f);
}
inline void Warn(std::string_view m, const Fields& f = {}) {
  Write(Level::kWarn, m, f);
}
inline void Error(std::string_view m, const Fields& f = {}) {
  Write(Level::kError, m, f);
}

// The line Write writes at `at` (with its "\n"). Invalid UTF-8 in the
// message or fields becomes U+FFFD, so a JSON line always parses.
std::string FormatLine(Time at, Level level, Format format,
                       std::string_view message, const Fields& fields);

// Rate-limits a log line about something that may happen in bursts
// (refused connections): Count() says when to write, and how many
// happened since the last line. The first of a burst is reported at once;
// the rest are summed and reported by the first Count() at least `period`
// after the last report. Thread-safe.
class BurstCounter {
 public:
  explicit BurstCounter(std::chrono::steady_clock::duration period)
      : period_(period) {}
  // Counts one; returns how many to report now, or nullopt to stay quiet.
  std::optional<std::uint64_t> Count(std::chrono::steady_clock::time_point now);

 private:
  std::mutex mu_;
  std::chrono::steady_clock::duration period_;
  std::optional<std::chrono::steady_clock::time_point> last_report_;
  std::uint64_t pending_ = 0;
};

}  // namespace leasehold::log

#endif  // LEASEHOLD_COMMON_LOG_H_
