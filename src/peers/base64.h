// Base64 (RFC 4648, with padding), as etcd's JSON gateway wants keys and
// values.
#ifndef LEASEHOLD_PEERS_BASE64_H_
#define LEASEHOLD_PEERS_BASE64_H_

#include <string>
#include <string_view>

namespace leasehold::peers {

std::string Base64(std::string_view bytes);

}  // namespace leasehold::peers

#endif  // LEASEHOLD_PEERS_BASE64_H_
