#include <chrono>
#include <cstdio>

#include "common/clock.h"

namespace leasehold {

namespace {
// Writes `value` as exactly `width` decimal digits ending at out[width-1].
void PutDigits(char* out, int width, unsigned value) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
}
}  // namespace

std::string FormatTime(Time t) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(t);
  const auto day = floor<days>(ms);
  const year_month_day ymd{day};
  const hh_mm_ss hms{ms - day};
  const int year = static_cast<int>(ymd.year());
  if (year < 0 || year > 9999) {  // never in practice; keep it exact anyway
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", year,
                  static_cast<unsigned>(ymd.month()),
                  static_cast<unsigned>(ymd.day()),
                  static_cast<int>(hms.hours().count()),
                  static_cast<int>(hms.minutes().count()),
                  static_cast<int>(hms.seconds().count()),
                  static_cast<int>(hms.subseconds().count()));
    return buf;
  }
  // "YYYY-MM-DDTHH:MM:SS.mmmZ", by hand: snprintf cost about 5% of the
  // server's instructions for a checkout, whose answer carries a time.
  std::string out = "0000-00-00T00:00:00.000Z";
  PutDigits(&out[0], 4, static_cast<unsigned>(year));
  PutDigits(&out[5], 2, static_cast<unsigned>(ymd.month()));
  PutDigits(&out[8], 2, static_cast<unsigned>(ymd.day()));
  PutDigits(&out[11], 2, static_cast<unsigned>(hms.hours().count()));
  PutDigits(&out[14], 2, static_cast<unsigned>(hms.minutes().count()));
  PutDigits(&out[17], 2, static_cast<unsigned>(hms.seconds().count()));
  PutDigits(&out[20], 3, static_cast<unsigned>(hms.subseconds().count()));
  return out;
}

std::optional<Time> ParseTime(std::string_view text) {
  using namespace std::chrono;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, consumed = 0;
  const std::string s(text);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi,
                  &sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(19);
  long long micros = 0;
  if (!rest.empty() && rest.front() == '.') {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      if (digits < 6) micros = micros * 10 + (rest.front() - '0');
      ++digits;
      rest.remove_prefix(1);
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 6; ++digits) micros *= 10;
  }
  if (rest != "Z") return std::nullopt;
  const year_month_day ymd{year(y), month(static_cast<unsigned>(mo)),
                           day(static_cast<unsigned>(d))};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  return Time(sys_days(ymd).time_since_epoch() + hours(h) + minutes(mi) +
              seconds(sec) + microseconds(micros));
}

}  // namespace leasehold
