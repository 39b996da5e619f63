#include "peers/peer.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "peers/factories.h"

namespace leasehold::peers {

namespace {

// "HOST:PORT[/…]" with a numeric IPv4 host, "localhost" or "[IPv6]".
Result<http::Address> ParseHostPort(std::string_view rest,
                                    std::uint16_t default_port) {
  rest = rest.substr(0, rest.find('/'));
  http::Address a;
  a.port = default_port;
  const std::size_t colon = rest.rfind(':');
  std::string_view host = rest;
  if (colon != std::string_view::npos && !rest.ends_with(']')) {
    host = rest.substr(0, colon);
    const std::string_view p = rest.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), a.port);
    if (ec != std::errc() || end != p.data() + p.size()) {
      return Error(StatusCode::kBadRequest,
                   "bad port in target: " + std::string(p));
    }
  }
  if (host.size() > 2 && host.front() == '[') {
    host = host.substr(1, host.size() - 2);
  }
  a.host = host == "localhost" ? "127.0.0.1" : std::string(host);
  if (a.host.empty()) {
    return Error(StatusCode::kBadRequest, "no host in target");
  }
  return a;
}

// Removes "mode=…" from the URI's query (libpq refuses unknown
// parameters) and returns its value ("" when absent).
std::string TakeMode(std::string& url) {
  const std::size_t q = url.find('?');
  if (q == std::string::npos) return "";
  std::string query = url.substr(q + 1), kept, mode;
  std::size_t start = 0;
  while (start <= query.size()) {
    const std::size_t end = std::min(query.find('&', start), query.size());
    const std::string part = query.substr(start, end - start);
    if (part.starts_with("mode=")) {
      mode = part.substr(5);
    } else if (!part.empty()) {
      kept += (kept.empty() ? "" : "&") + part;
    }
    start = end + 1;
  }
  url = url.substr(0, q) + (kept.empty() ? "" : "?" + kept);
  return mode;
}

Status NoDocuments(const Peer& peer) {
  return Status(StatusCode::kBadRequest,
                fmt::format("{} holds no documents to race on: the race runs "
                            "on sqlite:PATH, a postgresql:// URL or a "
                            "leasehold server's http:// URL",
                            peer.Name()));
}

}  // namespace

std::string_view VariantName(Variant variant) {
  return variant == Variant::kNaive ? "naive" : "atomic";
}

Status Peer::PrepareDocuments(int) { return NoDocuments(*this); }

Result<std::unique_ptr<DocumentSession>> Peer::OpenDocumentSession(
    const std::string&) {
  return std::unexpected(NoDocuments(*this));
}

Result<std::optional<RaceLog>> Peer::CountRaceLog() {
  return std::unexpected(NoDocuments(*this));
}

Result<std::unique_ptr<Peer>> MakePeer(std::string_view url,
                                       PeerOptions options) {
  auto after =
      [url](std::string_view scheme) -> std::optional<std::string_view> {
    if (!url.starts_with(scheme)) return std::nullopt;
    return url.substr(scheme.size());
  };
  if (auto rest = after("http://")) {
    auto a = ParseHostPort(*rest, 80);
    if (!a) return std::unexpected(a.error());
    a->token = std::move(options.token);
    return MakeLeaseholdPeer(std::string(url), *a, std::move(options.ns));
  }
  if (auto rest = after("redis://")) {
    auto a = ParseHostPort(*rest, 6379);
    if (!a) return std::unexpected(a.error());
    return MakeRedisPeer(a->host, a->port);
  }
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    std::string uri(url);
    std::string mode = TakeMode(uri);
    if (!mode.empty() && mode != "advisory" && mode != "update") {
      return Error(StatusCode::kBadRequest,
                   "mode must be advisory or update, not " + mode);
    }
    return MakePostgresPeer(std::move(uri), std::move(mode));
  }
  if (auto rest = after("sqlite:")) {
    if (rest->empty()) {
      return Error(StatusCode::kBadRequest,
                   "sqlite: needs a file path, e.g. sqlite:race.db");
    }
    return MakeSqlitePeer(std::string(*rest));
  }
  for (std::string_view scheme : {"etcd://", "etcd+http://"}) {
    if (auto rest = after(scheme)) {
      auto a = ParseHostPort(*rest, 2379);
      if (!a) return std::unexpected(a.error());
      return MakeEtcdPeer(*a);
    }
  }
  return Error(StatusCode::kBadRequest,
               fmt::format("unknown target '{}': use the http:// URL of a "
                           "leasehold server, sqlite:PATH, a postgresql:// "
                           "URL, redis://HOST:PORT or etcd://HOST:PORT",
                           url));
}

}  // namespace leasehold::peers
