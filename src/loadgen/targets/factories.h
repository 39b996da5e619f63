// The target implementations, one file each; MakeTarget (target.h) picks
// one by the URL's scheme. Nothing is connected until Prepare or Connect.
#ifndef LEASEHOLD_LOADGEN_TARGETS_FACTORIES_H_
#define LEASEHOLD_LOADGEN_TARGETS_FACTORIES_H_

#include <memory>
#include <string>

#include "loadgen/targets/target.h"
#include "loadgen/transport.h"

namespace leasehold::loadgen {

// A leasehold server over HTTP: session-owned application locks and record
// checkouts in namespace `ns`.
std::unique_ptr<Target> MakeLeaseholdTarget(ServerAddress address,
                                            std::string ns);
// Redis: SET NX PX to acquire, a compare-and-delete script to release.
std::unique_ptr<Target> MakeRedisTarget(std::string host, int port);
// PostgreSQL at libpq URI `url`; `mode` "advisory", "update" or "" (see
// target.h).
std::unique_ptr<Target> MakePostgresTarget(std::string url, std::string mode);
// A SQLite file: the one-UPDATE on a lease table, synchronous=FULL.
std::unique_ptr<Target> MakeSqliteTarget(std::string path);
// etcd's v3 JSON gateway: a lease per client, a create-revision txn.
std::unique_ptr<Target> MakeEtcdTarget(ServerAddress address);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_TARGETS_FACTORIES_H_
