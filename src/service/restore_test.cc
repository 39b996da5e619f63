// RestoreEngine: what a load brings back, as of when.
#include "service/restore.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "common/manual_clock.h"
#include "store/memory/memory_store.h"

namespace leasehold {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A store whose load takes `load_time` on `clock`, as a load of a million
// locks takes seconds.
class SlowLoadStore final : public Store {
 public:
  SlowLoadStore(std::shared_ptr<MemoryStoreData> data, ManualClock& clock,
                Duration load_time)
      : inner_(OpenMemoryStore(std::move(data))),
        clock_(clock),
        load_time_(load_time) {}

  Result<Reservations> Load(const Visitors& visit) override {
    auto loaded = inner_->Load(visit);
    (void)clock_.Advance(load_time_);
    return loaded;
  }
  Status Append(const JournalBatch& batch) override {
    return inner_->Append(batch);
  }
  std::string Describe() const override { return "a slow store"; }

 private:
  std::unique_ptr<Store> inner_;
  ManualClock& clock_;
  Duration load_time_;
};

class RestoreTest : public ::testing::Test {
 protected:
  // A session of `ttl` opened on an engine journaling into data_.
  SessionId OpenSession(milliseconds ttl) {
    auto store = OpenMemoryStore(data_);
    Engine engine;
    auto opened = engine.OpenSession(clock_.Now(), {"Asha", ttl, 0, ""});
    EXPECT_TRUE(opened.has_value());
    EXPECT_TRUE(store->Append(engine.TakeJournal()).ok());
    return opened ? opened->id : 0;
  }

  std::shared_ptr<MemoryStoreData> data_ = std::make_shared<MemoryStoreData>();
  ManualClock clock_;
};

TEST_F(RestoreTest, ASessionsFreshTtlStartsWhenTheLoadIsDone) {
  const SessionId id = OpenSession(milliseconds(5000));
  ASSERT_NE(id, 0u);
  SlowLoadStore store(data_, clock_, seconds(3));

  auto engine = RestoreEngine(store, {}, clock_);
  ASSERT_TRUE(engine.has_value()) << engine.error().ToString();
  // The clock is now 3 s past the start of the load; the whole ttl is left.
  auto info = (*engine)->GetSession(clock_.Now(), id);
  ASSERT_TRUE(info.has_value()) << info.error().ToString();
  EXPECT_EQ(info->expires_at, clock_.Now() + milliseconds(5000));
  ASSERT_TRUE(clock_.Advance(milliseconds(4999)).has_value());
  EXPECT_TRUE((*engine)->GetSession(clock_.Now(), id).has_value());
  ASSERT_TRUE(clock_.Advance(milliseconds(1)).has_value());
  EXPECT_EQ((*engine)->GetSession(clock_.Now(), id).error().code(),
            StatusCode::kSessionNotFound);
}

TEST_F(RestoreTest, TheGraceOfATakeoverIsAddedAfterTheLoad) {
  const SessionId id = OpenSession(milliseconds(2000));
  ASSERT_NE(id, 0u);
  SlowLoadStore store(data_, clock_, seconds(3));

  auto engine = RestoreEngine(store, {}, clock_, seconds(10));
  ASSERT_TRUE(engine.has_value()) << engine.error().ToString();
  auto info = (*engine)->GetSession(clock_.Now(), id);
  ASSERT_TRUE(info.has_value()) << info.error().ToString();
  EXPECT_EQ(info->expires_at, clock_.Now() + seconds(10) + milliseconds(2000));
}

TEST_F(RestoreTest, SessionsCannotBeStartedAgainOnceTheEngineRuns) {
  Engine engine;
  ASSERT_TRUE(
      engine.OpenSession(clock_.Now(), {"Bo", milliseconds(1000), 0, ""})
          .has_value());
  EXPECT_EQ(engine.RestartRestoredSessions(clock_.Now()).code(),
            StatusCode::kBadRequest);
}

}  // namespace
}  // namespace leasehold
