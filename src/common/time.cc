#include <chrono>
#include <cstdio>

#include "leasehold/clock.h"

namespace leasehold {

std::string FormatTime(Time t) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(t);
  const auto day = floor<days>(ms);
  const year_month_day ymd{day};
  const hh_mm_ss hms{ms - day};
  char buf[32];
  std::snprintf(
      buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
      static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
      static_cast<unsigned>(ymd.day()), static_cast<int>(hms.hours().count()),
      static_cast<int>(hms.minutes().count()),
      static_cast<int>(hms.seconds().count()),
      static_cast<int>(hms.subseconds().count()));
  return buf;
}

}  // namespace leasehold
