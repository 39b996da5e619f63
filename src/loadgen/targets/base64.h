// Base64 (RFC 4648, with padding), as etcd's JSON gateway wants keys and
// values.
#ifndef LEASEHOLD_LOADGEN_TARGETS_BASE64_H_
#define LEASEHOLD_LOADGEN_TARGETS_BASE64_H_

#include <string>
#include <string_view>

namespace leasehold::loadgen {

std::string Base64(std::string_view bytes);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_TARGETS_BASE64_H_
