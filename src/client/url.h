// Parsing ClientOptions::url into the host and port to connect to (the
// paths of the API are api_codec.h's).
#ifndef LEASEHOLD_SRC_CLIENT_URL_H_
#define LEASEHOLD_SRC_CLIENT_URL_H_

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

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_URL_H_
