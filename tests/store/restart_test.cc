// A restart gives back exactly the state that was acknowledged.
#include <gtest/gtest.h>

#include "common/real_clock.h"
#include "store/durable_engine.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"

namespace leasehold {
namespace {

using std::chrono::seconds;

std::unique_ptr<DurableEngine> OpenAt(const std::string& path,
                                      const Clock& clock) {
  auto store = OpenSqliteStore(path);
  EXPECT_TRUE(store.has_value()) << store.error().ToString();
  auto engine = DurableEngine::Open(std::move(*store), {}, clock);
  EXPECT_TRUE(engine.has_value()) << engine.error().ToString();
  return std::move(*engine);
}

std::vector<RecordView> Everything(DurableEngine& e, std::string_view ns) {
  std::vector<RecordView> out;
  ListRecordsQuery q{.ns = ns, .limit = 1000};
  std::string after;
  while (true) {
    q.after = after;
    auto page =
        e.Run([&](Engine& en, Time now) { return en.ListRecords(now, q); });
    for (const auto& r : page->value().records) {
      auto full = e.Run([&](Engine& en, Time now) {
        return en.GetRecord(now, {ns, r.key});
      });
      out.push_back(full->value());
    }
    if (!page->value().next) return out;
    after = *page->value().next;
  }
}

bool SameRecord(const RecordView& a, const RecordView& b) {
  return a.key == b.key && a.has_record == b.has_record && a.body == b.body &&
         a.version == b.version && a.locked_by == b.locked_by &&
         a.lock_expires_at == b.lock_expires_at && a.state == b.state &&
         a.fence == b.fence;
}

TEST(Restart, StateIsIdenticalAndFencesContinue) {
  testing::TempDir dir;
  const std::string path = dir.File("leasehold.db");
  RealClock clock;
  std::vector<RecordView> before;
  Fence last_fence = 0;
  {
    auto e = OpenAt(path, clock);
    for (int i = 0; i < 300; ++i) {
      const std::string key = "note:" + std::to_string(i);
      ASSERT_TRUE(e->Run([&](Engine& en, Time now) {
                     return en.InsertRecord(now, {"docs", key}, "draft " + key);
                   })->has_value());
      if (i % 3 == 0) {
        auto c = e->Run([&](Engine& en, Time now) {
          return en.Checkout(
              now, {{"docs", key}, "Asha", seconds(600), "tok" + key, true});
        });
        ASSERT_TRUE(c->value().granted);
        last_fence = std::max(last_fence, c->value().fence);
      }
      if (i % 6 == 0) {
        ASSERT_TRUE(e->Run([&](Engine& en, Time now) {
                       return en.Save(now, {"docs", key}, {"", "tok" + key},
                                      "edited", std::nullopt);
                     })
                        ->value()
                        .done);
      }
      if (i % 9 == 0) {
        ASSERT_TRUE(e->Run([&](Engine& en, Time now) {
                       return en.Checkin(now, {"docs", key}, {"Asha", ""});
                     })
                        ->value()
                        .done);
      }
      if (i % 10 == 5 && i % 3 != 0) {  // keys nobody holds
        ASSERT_TRUE(
            e->Run([&](Engine& en, Time now) {
               return en.Checkout(
                   now, {{"docs", key}, "Ravi", seconds(600), "r" + key, true});
             })
                ->value()
                .granted);
        ASSERT_TRUE(e->Run([&](Engine& en, Time now) {
                       return en.DeleteRecord(now, {"docs", key}, {"Ravi", ""});
                     })
                        ->value()
                        .done);
      }
    }
    ASSERT_TRUE(
        e->Run([&](Engine& en, Time now) {
           return en.Checkout(
               now, {{"docs", "lease-only"}, "Mei", seconds(600), "m", true});
         })
            ->value()
            .granted);
    before = Everything(*e, "docs");
  }
  auto e = OpenAt(path, clock);
  const std::vector<RecordView> after = Everything(*e, "docs");
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(SameRecord(before[i], after[i])) << before[i].key;
  }
  auto fresh = e->Run([&](Engine& en, Time now) {
    return en.Checkout(
        now, {{"docs", "after-restart"}, "Omar", seconds(1), "o", true});
  });
  EXPECT_GT(fresh->value().fence, last_fence);
}

}  // namespace
}  // namespace leasehold
