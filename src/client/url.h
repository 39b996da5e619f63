// Parsing ClientOptions::url into the hosts and ports to connect to, and a
// redirect's Location into the node it names (the paths of the API are
// api_codec.h's).
#ifndef LEASEHOLD_SRC_CLIENT_URL_H_
#define LEASEHOLD_SRC_CLIENT_URL_H_

#include <string>
#include <string_view>
#include <vector>

#include "leasehold/client.h"

namespace leasehold::client::detail {

struct Endpoint {
  std::string host;  // without brackets for IPv6 literals
  std::string port;
  std::string host_header;  // as the Host header carries it
  bool tls = false;         // https://
  // "http://" or "https://" and the host header: the node's name in
  // messages, and what tells two nodes apart.
  std::string Origin() const;
};

// Accepts "http://HOST[:PORT][/]" (the port defaults to 80) and
// "https://HOST[:PORT][/]" (443). Error "bad_url" for any other scheme, a
// path, user info, or a port outside 1..65535.
Result<Endpoint> ParseUrl(std::string_view url);

// ClientOptions::url: one URL or several separated by commas (blanks
// around them ignored), each as ParseUrl takes it, http:// and https://
// mixed as they come; a node named twice is kept once. Error "bad_url" for
// an empty list or item.
Result<std::vector<Endpoint>> ParseUrls(std::string_view list);

// The node a redirect's Location names: its origin (the path and query
// after it are left out). https:// always; http:// only when the redirect
// came from an http:// node (`from_tls` false), never down from TLS to
// cleartext. Error "bad_url" naming why for anything else.
Result<Endpoint> ParseLocation(std::string_view location, bool from_tls);

}  // namespace leasehold::client::detail

#endif  // LEASEHOLD_SRC_CLIENT_URL_H_
