// Time in leasehold is an input. The engine takes `now` as an argument of
// every command; everything else that needs the time is handed a Clock&.
// Only src/common/real_clock.cc reads the system clock.
#ifndef LEASEHOLD_COMMON_CLOCK_H_
#define LEASEHOLD_COMMON_CLOCK_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace leasehold {

// An instant in UTC with microsecond resolution.
using Time = std::chrono::sys_time<std::chrono::microseconds>;
using Duration = std::chrono::microseconds;

// RFC 3339 UTC with milliseconds, e.g. "2026-11-30T03:24:53.123Z".
std::string FormatTime(Time t);
// The inverse of FormatTime: "YYYY-MM-DDTHH:MM:SS[.fff]Z" only; nullopt for
// anything else.
std::optional<Time> ParseTime(std::string_view text);

class Clock {
 public:
  virtual ~Clock() = default;
  // The current instant. Successive calls never go backwards.
  // Thread-safe in every implementation.
  virtual Time Now() const = 0;
};

}  // namespace leasehold

#endif  // LEASEHOLD_COMMON_CLOCK_H_
