// Lease tokens: 128 random bits as 32 lowercase hex characters.
#ifndef LEASEHOLD_COMMON_TOKEN_H_
#define LEASEHOLD_COMMON_TOKEN_H_

#include <string>

namespace leasehold {

// A new token from the operating system's random source (getrandom(2),
// fetched 4 KiB at a time per thread), so that nobody can guess the token
// of a lease they do not hold. Thread-safe.
std::string NewLeaseToken();

}  // namespace leasehold

#endif  // LEASEHOLD_COMMON_TOKEN_H_
