// Parsing ClientOptions::url into the host and port to connect to.
#ifndef LEASEHOLD_SRC_CLIENT_URL_H_
#define LEASEHOLD_SRC_CLIENT_URL_H_

#include <initializer_list>
#include <string>
#include <string_view>

#include "leasehold/client.h"

namespace leasehold::client::detail {

struct Endpoint {
  std::string host;  // without brackets for IPv6 literals
  std::string port;
  std::string host_header;  // as the Host header carries it
};

// Accepts "http://HOST[:PORT][/]"; the port defaults to 80. Error "bad_url"
// for any other scheme, a path, user info, or a port outside 1..65535.
Result<Endpoint> ParseUrl(std::string_view url);

// Percent-encodes `text` for use as one path segment or query value.
std::string PercentEncode(std::string_view text);

// "/a/b/c" from the segments, each percent-encoded.
std::string JoinPath(std::initializer_list<std::string_view> segments);

// Appends "?key=value" or "&key=value" (value percent-encoded) to `target`.
void AddQuery(std::string& target, std::string_view key,
              std::string_view value);

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_URL_H_
