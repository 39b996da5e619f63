// MakePeer: one parser for every system's URL; nothing is connected.
#include "peers/peer.h"

#include <gtest/gtest.h>

namespace leasehold::peers {
namespace {

std::string KindOf(std::string_view url) {
  auto peer = MakePeer(url);
  return peer ? std::string((*peer)->Kind())
              : "error: " + peer.error().message();
}

TEST(MakePeer, EverySchemeNamesItsSystem) {
  EXPECT_EQ(KindOf("http://127.0.0.1:7070"), "leasehold");
  EXPECT_EQ(KindOf("http://localhost"), "leasehold");
  EXPECT_EQ(KindOf("sqlite:/tmp/x.db"), "sqlite");
  EXPECT_EQ(KindOf("postgresql://u@127.0.0.1:5432/db"), "postgresql");
  EXPECT_EQ(KindOf("postgres://u@h/db?mode=update"), "postgresql");
  EXPECT_EQ(KindOf("redis://127.0.0.1:6379"), "redis");
  EXPECT_EQ(KindOf("etcd://[::1]:2379"), "etcd");
  EXPECT_EQ(KindOf("etcd+http://127.0.0.1"), "etcd");
}

TEST(MakePeer, BadUrlsSayWhatIsWrong) {
  EXPECT_EQ(KindOf("mysql://h/db"),
            "error: unknown target 'mysql://h/db': use the http:// URL of a "
            "leasehold server, sqlite:PATH, a postgresql:// URL, "
            "redis://HOST:PORT or etcd://HOST:PORT");
  EXPECT_EQ(KindOf("sqlite:"),
            "error: sqlite: needs a file path, e.g. sqlite:race.db");
  EXPECT_EQ(KindOf("redis://127.0.0.1:port"),
            "error: bad port in target: port");
  EXPECT_EQ(KindOf("postgresql://h/db?mode=row"),
            "error: mode must be advisory or update, not row");
  EXPECT_EQ(KindOf("etcd://:2379"), "error: no host in target");
}

TEST(MakePeer, OnlySystemsWithDocumentsRace) {
  for (std::string_view url : {"http://127.0.0.1:1", "sqlite:/tmp/x.db",
                               "postgresql://u@127.0.0.1:1/db"}) {
    EXPECT_TRUE((*MakePeer(url))->HasDocuments()) << url;
  }
  auto redis = MakePeer("redis://127.0.0.1:1");
  ASSERT_TRUE(redis);
  EXPECT_FALSE((*redis)->HasDocuments());
  const Status st = (*redis)->PrepareDocuments(2);
  EXPECT_EQ(st.code(), StatusCode::kBadRequest);
  EXPECT_NE(st.message().find("Redis holds no documents"), std::string::npos)
      << st.message();
  EXPECT_FALSE((*MakePeer("etcd://127.0.0.1:1"))->OpenDocumentSession("Asha"));
}

}  // namespace
}  // namespace leasehold::peers
