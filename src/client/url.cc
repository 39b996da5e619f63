#include "client/url.h"

#include <charconv>

namespace leasehold::client::detail {
namespace {

std::unexpected<Error> BadUrl(std::string_view url, std::string_view why) {
  return std::unexpected(
      Error{"bad_url",
            "client URL \"" + std::string(url) + "\" " + std::string(why) +
                "; expected http://HOST:PORT, e.g. http://127.0.0.1:7070",
            0});
}

}  // namespace

Result<Endpoint> ParseUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) return BadUrl(url, "does not start http://");
  std::string_view rest = url.substr(kScheme.size());
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos) {
    return BadUrl(url, "has a path, query or user info");
  }
  Endpoint e;
  std::string_view port = "80";
  if (rest.starts_with('[')) {  // [IPv6]:port
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return BadUrl(url, "lacks a ']'");
    e.host = std::string(rest.substr(1, close - 1));
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return BadUrl(url, "has junk after ']'");
      port = after.substr(1);
    }
  } else {
    const std::size_t colon = rest.find(':');
    e.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (e.host.empty()) return BadUrl(url, "has no host");
  unsigned value = 0;
  const auto [end, ec] =
      std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return BadUrl(url, "has no valid port (1 to 65535)");
  }
  e.port = std::string(port);
  e.host_header = std::string(rest);
  return e;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                       c == '.' || c == '~' || c == ':';
    if (plain) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string JoinPath(std::initializer_list<std::string_view> segments) {
  std::string out;
  for (const std::string_view s : segments) {
    out.push_back('/');
    out += PercentEncode(s);
  }
  return out;
}

void AddQuery(std::string& target, std::string_view key,
              std::string_view value) {
  target.push_back(target.find('?') == std::string::npos ? '?' : '&');
  target += PercentEncode(key);
  target.push_back('=');
  target += PercentEncode(value);
}

}  // namespace leasehold::client::detail
