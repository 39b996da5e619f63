// The peer backends, one file each; MakePeer (peer.h) picks one by the
// URL's scheme. Nothing is connected until a call needs it.
#ifndef LEASEHOLD_PEERS_FACTORIES_H_
#define LEASEHOLD_PEERS_FACTORIES_H_

#include <memory>
#include <string>

#include "http/connection.h"
#include "peers/peer.h"

namespace leasehold::peers {

// A leasehold server over HTTP (`url` as given, `address` parsed from it):
// the race through the C++ client in a fresh namespace, the benchmarks'
// session-owned application locks and record checkouts in namespace `ns`.
std::unique_ptr<Peer> MakeLeaseholdPeer(std::string url, http::Address address,
                                        std::string ns);
// A SQLite file: the reference article's one-UPDATE on a table.
std::unique_ptr<Peer> MakeSqlitePeer(std::string path);
// PostgreSQL at libpq URI `url`; `mode` "advisory", "update" or "" (see
// peer.h).
std::unique_ptr<Peer> MakePostgresPeer(std::string url, std::string mode);
// Redis: SET NX PX to acquire, a compare-and-delete script to release.
std::unique_ptr<Peer> MakeRedisPeer(std::string host, int port);
// etcd's v3 JSON gateway: a lease per client, a create-revision txn.
std::unique_ptr<Peer> MakeEtcdPeer(http::Address address);

}  // namespace leasehold::peers

#endif  // LEASEHOLD_PEERS_FACTORIES_H_
