// The load generator's names for the one client transport (src/http): the
// scenarios drive Connection's awaitable calls, the `--target` clients its
// blocking ones.
#ifndef LEASEHOLD_LOADGEN_TRANSPORT_H_
#define LEASEHOLD_LOADGEN_TRANSPORT_H_

#include "http/connection.h"

namespace leasehold::loadgen {

using ServerAddress = http::Address;
using Method = http::Method;
using HttpAnswer = http::Answer;
using HttpConnection = http::Connection;
// A Connection made without an executor: for a thread that owns it.
using BlockingHttpConnection = http::Connection;

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_TRANSPORT_H_
