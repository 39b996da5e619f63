#include "client/url.h"

#include <algorithm>
#include <charconv>

namespace leasehold::client::detail {
namespace {

std::unexpected<Error> BadUrl(std::string_view url, std::string_view why) {
  return std::unexpected(
      Error{"bad_url",
            "client URL \"" + std::string(url) + "\" " + std::string(why) +
                "; expected http://HOST:PORT or https://HOST[:PORT], e.g. "
                "http://127.0.0.1:7070",
            0});
}

constexpr std::string_view kHttp = "http://";
constexpr std::string_view kHttps = "https://";

}  // namespace

std::string Endpoint::Origin() const {
  return std::string(tls ? kHttps : kHttp) + host_header;
}

Result<Endpoint> ParseUrl(std::string_view url) {
  Endpoint e;
  e.tls = url.starts_with(kHttps);
  if (!e.tls && !url.starts_with(kHttp)) {
    return BadUrl(url, "does not start http:// or https://");
  }
  std::string_view rest = url.substr((e.tls ? kHttps : kHttp).size());
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos) {
    return BadUrl(url, "has a path, query or user info");
  }
  std::string_view port = e.tls ? "443" : "80";
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

Result<std::vector<Endpoint>> ParseUrls(std::string_view list) {
  std::vector<Endpoint> nodes;
  std::string_view rest = list;
  while (true) {
    const std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) {
      return BadUrl(list, "has an empty entry between commas");
    }
    auto node = ParseUrl(item);
    if (!node) return std::unexpected(node.error());
    if (std::ranges::find(nodes, node->Origin(), &Endpoint::Origin) ==
        nodes.end()) {
      nodes.push_back(std::move(*node));
    }
    if (comma == std::string_view::npos) return nodes;
    rest.remove_prefix(comma + 1);
  }
}

Result<Endpoint> ParseLocation(std::string_view location, bool from_tls) {
  const bool tls = location.starts_with(kHttps);
  if (!tls && !location.starts_with(kHttp)) {
    return BadUrl(location, "is not an http:// or https:// redirect");
  }
  if (from_tls && !tls) {
    return std::unexpected(
        Error{"bad_url",
              "a redirect from https:// down to cleartext http:// is never "
              "followed: it would send the request and its token unencrypted",
              0});
  }
  const std::size_t end =
      location.find_first_of("/?#", (tls ? kHttps : kHttp).size());
  return ParseUrl(location.substr(0, end));
}

}  // namespace leasehold::client::detail
