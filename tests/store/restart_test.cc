// A restart gives back exactly the state that was acknowledged through the
// server's write path (EngineService), on every store backend.
#include <gtest/gtest.h>

#include "common/real_clock.h"
#include "tests/store/backends.h"

namespace leasehold {
namespace {

using std::chrono::seconds;

std::unique_ptr<testing::RunningService> OpenAt(const std::string& where,
                                                const Clock& clock) {
  auto running = OpenServiceAt(where, clock);
  EXPECT_TRUE(running.has_value()) << running.error().ToString();
  return running ? std::move(*running) : nullptr;
}

class Restart : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { ASSERT_FALSE(location_.where().empty()); }

  StoreLocation location_{GetParam()};
};

std::vector<RecordView> Everything(EngineService& e, std::string_view ns) {
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

TEST_P(Restart, StateIsIdenticalAndFencesContinue) {
  const std::string& path = location_.where();
  RealClock clock;
  std::vector<RecordView> before;
  Fence last_fence = 0;
  {
    auto running = OpenAt(path, clock);
    ASSERT_NE(running, nullptr);
    EngineService& e = running->service();
    for (int i = 0; i < 300; ++i) {
      const std::string key = "note:" + std::to_string(i);
      ASSERT_TRUE(e.Run([&](Engine& en, Time now) {
                     return en.InsertRecord(now, {"docs", key}, "draft " + key);
                   })->has_value());
      if (i % 3 == 0) {
        auto c = e.Run([&](Engine& en, Time now) {
          return en.Checkout(
              now, {{"docs", key}, "Asha", seconds(600), "tok" + key, true});
        });
        ASSERT_TRUE(c->value().granted);
        last_fence = std::max(last_fence, c->value().fence);
      }
      if (i % 6 == 0) {
        ASSERT_TRUE(e.Run([&](Engine& en, Time now) {
                       return en.Save(now, {"docs", key}, {"", "tok" + key},
                                      "edited", std::nullopt);
                     })
                        ->value()
                        .done);
      }
      if (i % 9 == 0) {
        ASSERT_TRUE(e.Run([&](Engine& en, Time now) {
                       return en.Checkin(now, {"docs", key}, {"Asha", ""});
                     })
                        ->value()
                        .done);
      }
      if (i % 10 == 5 && i % 3 != 0) {  // keys nobody holds
        ASSERT_TRUE(
            e.Run([&](Engine& en, Time now) {
               return en.Checkout(
                   now, {{"docs", key}, "Ravi", seconds(600), "r" + key, true});
             })
                ->value()
                .granted);
        ASSERT_TRUE(e.Run([&](Engine& en, Time now) {
                       return en.DeleteRecord(now, {"docs", key}, {"Ravi", ""});
                     })
                        ->value()
                        .done);
      }
    }
    ASSERT_TRUE(
        e.Run([&](Engine& en, Time now) {
           return en.Checkout(
               now, {{"docs", "lease-only"}, "Mei", seconds(600), "m", true});
         })
            ->value()
            .granted);
    before = Everything(e, "docs");
  }
  auto running = OpenAt(path, clock);
  ASSERT_NE(running, nullptr);
  EngineService& e = running->service();
  const std::vector<RecordView> after = Everything(e, "docs");
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(SameRecord(before[i], after[i])) << before[i].key;
  }
  auto fresh = e.Run([&](Engine& en, Time now) {
    return en.Checkout(
        now, {{"docs", "after-restart"}, "Omar", seconds(1), "o", true});
  });
  EXPECT_GT(fresh->value().fence, last_fence);
}

// Completed operations, outbox messages, their claims and acks come back
// exactly; a restart loses nothing a commit applied and nothing staged but
// uncommitted appears.
TEST_P(Restart, OperationsAndTheOutboxSurvive) {
  const std::string& path = location_.where();
  RealClock clock;
  std::string token;
  MessageId receipt = 0, dropped = 0;
  {
    auto running = OpenAt(path, clock);
    ASSERT_NE(running, nullptr);
    EngineService& e = running->service();
    auto r = e.Run([&](Engine& en, Time now) -> Status {
      auto s = en.OpenSession(now, {"w", seconds(60), 0, ""});
      if (!s) return s.error();
      if (auto t = en.BeginTransaction(now, s->id); !t) return t.error();
      auto c = en.CompleteOperation(now, s->id, {"pay", "inv-1"}, "{\"n\":1}");
      if (!c) return c.error();
      auto m = en.Enqueue(now, {"pay", "mail", "receipt", "{}", s->id});
      if (!m) return m.error();
      receipt = m->id;
      if (Status st = en.Commit(now, s->id); !st.ok()) return st;
      // Staged and never committed: gone after the restart.
      if (auto t = en.BeginTransaction(now, s->id); !t) return t.error();
      auto d = en.Enqueue(now, {"pay", "mail", "dropped", "{}", s->id});
      if (!d) return d.error();
      dropped = d->id;
      auto c2 = en.CompleteOperation(now, s->id, {"pay", "inv-2"}, "{}");
      return c2 ? Status::Ok() : c2.error();
    });
    ASSERT_TRUE(r.has_value() && r->ok());
    auto claimed = e.Run([&](Engine& en, Time now) {
      return en.Claim(now, {"pay", "mail", "c", 10, seconds(600), "tok"});
    });
    ASSERT_TRUE(claimed.has_value() && claimed->has_value());
    ASSERT_EQ(claimed->value().size(), 1u);
    token = claimed->value()[0].claim_token;
  }
  auto running = OpenAt(path, clock);
  ASSERT_NE(running, nullptr);
  EngineService& e = running->service();
  auto r = e.Run([&](Engine& en, Time now) -> Status {
    auto s = en.OpenSession(now, {"w", seconds(60), 0, ""});
    if (!s) return s.error();
    if (auto t = en.BeginTransaction(now, s->id); !t) return t.error();
    auto one = en.BeginOperation(now, s->id, {"pay", "inv-1"});
    EXPECT_EQ(one->state, OperationState::kCompleted);
    EXPECT_EQ(one->outcome, "{\"n\":1}");
    auto two = en.BeginOperation(now, s->id, {"pay", "inv-2"});
    EXPECT_EQ(two->state, OperationState::kNew);
    auto sum = en.GetOutbox(now, "pay", "mail");
    EXPECT_EQ(sum->claimed, 1u);
    EXPECT_EQ(sum->pending, 0u);
    EXPECT_TRUE(en.Ack(now, "pay", "mail", receipt, token)->acked);
    auto again = en.Enqueue(now, {"pay", "mail", "dropped", "{}"});
    EXPECT_FALSE(again->duplicate);
    EXPECT_NE(again->id, receipt);
    (void)dropped;  // its id may be handed out again: it never existed
    return Status::Ok();
  });
  ASSERT_TRUE(r.has_value() && r->ok());
}

INSTANTIATE_TEST_SUITE_P(AllStores, Restart,
                         ::testing::Values(Backend::kSqlite,
                                           Backend::kPostgres),
                         BackendTestName);

}  // namespace
}  // namespace leasehold
