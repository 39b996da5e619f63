#include "common/log.h"

#include <unistd.h>
#include <cstdio>

namespace leasehold::log {
namespace {

struct Settings {
  Level level = Level::kInfo;
  Format format = Format::kText;
};
Settings settings;
std::mutex write_mu;
std::function<void(std::string_view)> sink;  // empty: stderr

// The length of the valid UTF-8 sequence at s[i], or 0 if there is none.
std::size_t Utf8Length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) {
    return static_cast<unsigned char>(s[i + k]);
  };
  const unsigned char c = b(0);
  std::size_t n = c < 0x80           ? 1
                  : (c >> 5) == 0x6  ? 2
                  : (c >> 4) == 0xE  ? 3
                  : (c >> 3) == 0x1E ? 4
                                     : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms, surrogates and code points past U+10FFFF.
  if (n == 2 && c < 0xC2) return 0;
  if (n == 3 && ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) >= 0xA0)))
    return 0;
  if (n == 4 &&
      ((c == 0xF0 && b(1) < 0x90) || c > 0xF4 || (c == 0xF4 && b(1) >= 0x90)))
    return 0;
  return n;
}

// `s` with invalid UTF-8 replaced by U+FFFD; in JSON, also escaped.
void Append(std::string& out, std::string_view s, bool json) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = Utf8Length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const char c = s[i];
    if (json && (c == '"' || c == '\\')) {
      out += '\\';
      out += c;
    } else if (json && static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else if (!json && c == '\n') {
      out += "\\n";  // one event, one line
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
}

// A text field's value, quoted when it has spaces, quotes or is empty.
void AppendTextValue(std::string& out, std::string_view v) {
  const bool quote =
      v.empty() || v.find_first_of(" \"=\t") != std::string_view::npos;
  if (!quote) return Append(out, v, false);
  out += '"';
  Append(out, v, true);
  out += '"';
}

}  // namespace

Result<Level> ParseLevel(std::string_view text) {
  if (text == "debug") return Level::kDebug;
  if (text == "info") return Level::kInfo;
  if (text == "warn") return Level::kWarn;
  if (text == "error") return Level::kError;
  return leasehold::Error(StatusCode::kBadRequest,
                          "the log level must be debug, info, warn or error");
}

Result<Format> ParseFormat(std::string_view text) {
  if (text == "text") return Format::kText;
  if (text == "json") return Format::kJson;
  return leasehold::Error(StatusCode::kBadRequest,
                          "the log format must be text or json");
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

void Configure(Level level, Format format) {
  std::lock_guard lock(write_mu);
  settings = {level, format};
}

void SetSink(std::function<void(std::string_view line)> to) {
  std::lock_guard lock(write_mu);
  sink = std::move(to);
}

std::string FormatLine(Time at, Level level, Format format,
                       std::string_view message, const Fields& fields) {
  std::string out;
  if (format == Format::kText) {
    out = FormatTime(at) + " " + std::string(LevelName(level)) + " leasehold: ";
    Append(out, message, false);
    for (const auto& [key, value] : fields) {
      out += ' ';
      Append(out, key, false);
      out += '=';
      AppendTextValue(out, value);
    }
  } else {
    out = "{\"ts\":\"" + FormatTime(at) + "\",\"level\":\"" +
          std::string(LevelName(level)) + "\",\"msg\":\"";
    Append(out, message, true);
    out += "\",\"fields\":{";
    bool first = true;
    for (const auto& [key, value] : fields) {
      out += first ? "\"" : ",\"";
      first = false;
      Append(out, key, true);
      out += "\":\"";
      Append(out, value, true);
      out += '"';
    }
    out += "}}";
  }
  out += '\n';
  return out;
}

void Write(Level level, std::string_view message, const Fields& fields) {
  const auto now =
      std::chrono::floor<Time::duration>(std::chrono::system_clock::now());
  std::lock_guard lock(write_mu);
  if (level < settings.level) return;
  const std::string line =
      FormatLine(now, level, settings.format, message, fields);
  if (sink) return sink(line);
  // One write: a line is never split by another thread's.
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n =
        ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) return;  // nowhere to log to: nothing better to do
    done += static_cast<std::size_t>(n);
  }
}

std::optional<std::uint64_t> BurstCounter::Count(
    std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  ++pending_;
  if (last_report_ && now - *last_report_ < period_) return std::nullopt;
  last_report_ = now;
  return std::exchange(pending_, 0);
}

}  // namespace leasehold::log
