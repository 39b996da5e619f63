// Fenced record writes over the API (docs/api.md, "Fenced writes"): the
// "fence" field of PUT, save and DELETE, direct and staged, its refusals
// and what GET shows.
#include "server/api_test_fixture.h"

namespace leasehold::server {
namespace {

class ApiFencedWritesTest : public ApiTest {
 protected:
  // The fence of an Exclusive grant of `resource` to a new session, which
  // then ends (so the next holder's fence is higher).
  std::uint64_t HolderFence(const std::string& resource) {
    const std::string s = OpenSession("holder");
    auto g =
        Call("POST", "/v1/applocks/app/acquire",
             R"({"session":")" + s + R"(","resource":")" + resource +
                 R"(","mode":"Exclusive","owner":"Session","timeout_ms":0})");
    EXPECT_EQ(g.status, 200u);
    EXPECT_EQ(Call("DELETE", "/v1/sessions/" + s).status, 204u);
    return g.body.at("fence").to_number<std::uint64_t>();
  }
  static std::string Fence(std::uint64_t f) {
    return R"("fence":)" + std::to_string(f);
  }
};

TEST_F(ApiFencedWritesTest, AStaleFenceIsRefusedNamingBothFences) {
  const std::uint64_t old_holder = HolderFence("job");
  const std::uint64_t new_holder = HolderFence("job");
  ASSERT_LT(old_holder, new_holder);
  auto put = Call("PUT", "/v1/records/docs/17",
                  R"({"body":"draft",)" + Fence(old_holder) + "}");
  EXPECT_EQ(put.status, 201u);
  auto saved = Call("POST", "/v1/records/docs/17/save",
                    R"({"body":"successor",)" + Fence(new_holder) + "}");
  EXPECT_EQ(saved.status, 200u);
  EXPECT_EQ(saved.body.at("version").to_number<int>(), 2);

  auto stale = Call("POST", "/v1/records/docs/17/save",
                    R"({"body":"stale",)" + Fence(old_holder) + "}");
  EXPECT_EQ(stale.status, 409u);
  EXPECT_EQ(stale.code(), "stale_fence");
  const std::string message(stale.body.at("error").at("message").as_string());
  EXPECT_NE(message.find("fence " + std::to_string(old_holder)),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("fence " + std::to_string(new_holder)),
            std::string::npos)
      << message;
  EXPECT_EQ(Call("DELETE", "/v1/records/docs/17", "{" + Fence(old_holder) + "}")
                .code(),
            "stale_fence");

  auto get = Call("GET", "/v1/records/docs/17");
  EXPECT_EQ(get.body.at("body").as_string(), "successor");
  EXPECT_EQ(get.body.at("write_fence").to_number<std::uint64_t>(), new_holder);
  auto list = Call("GET", "/v1/records/docs");
  EXPECT_EQ(list.body.at("records")
                .at(0)
                .at("write_fence")
                .to_number<std::uint64_t>(),
            new_holder);
}

TEST_F(ApiFencedWritesTest, AFencedDeleteKeepsTheFenceForTheKey) {
  const std::uint64_t old_holder = HolderFence("job");
  const std::uint64_t new_holder = HolderFence("job");
  ASSERT_EQ(Call("PUT", "/v1/records/docs/a",
                 R"({"body":"v1",)" + Fence(old_holder) + "}")
                .status,
            201u);
  auto deleted =
      Call("DELETE", "/v1/records/docs/a", "{" + Fence(new_holder) + "}");
  EXPECT_EQ(deleted.status, 200u);
  EXPECT_TRUE(deleted.body.at("deleted").as_bool());
  auto tomb = Call("GET", "/v1/records/docs/a");
  EXPECT_EQ(tomb.status, 200u);
  EXPECT_FALSE(tomb.body.at("has_record").as_bool());
  EXPECT_TRUE(tomb.body.at("body").is_null());
  EXPECT_EQ(tomb.body.at("write_fence").to_number<std::uint64_t>(), new_holder);
  EXPECT_EQ(Call("PUT", "/v1/records/docs/a",
                 R"({"body":"back",)" + Fence(old_holder) + "}")
                .code(),
            "stale_fence");
  EXPECT_EQ(Call("PUT", "/v1/records/docs/a",
                 R"({"body":"anew",)" + Fence(new_holder) + "}")
                .status,
            201u);
}

TEST_F(ApiFencedWritesTest, StagedWritesCarryTheFenceToTheCommit) {
  const std::uint64_t mine = HolderFence("job");
  ASSERT_EQ(
      Call("PUT", "/v1/records/docs/a", R"({"body":"v1",)" + Fence(mine) + "}")
          .status,
      201u);
  const std::string s = OpenSession("writer");
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction").status, 201u);
  auto staged =
      Call("POST", "/v1/records/docs/a/save",
           R"({"session":")" + s + R"(","body":"mine",)" + Fence(mine) + "}");
  EXPECT_EQ(staged.status, 202u);
  const std::uint64_t theirs = HolderFence("job");
  ASSERT_EQ(Call("POST", "/v1/records/docs/a/save",
                 R"({"body":"theirs",)" + Fence(theirs) + "}")
                .status,
            200u);
  auto commit = Call("POST", "/v1/sessions/" + s + "/transaction/commit");
  EXPECT_EQ(commit.status, 409u);
  EXPECT_EQ(commit.code(), "transaction_aborted");
  EXPECT_NE(std::string(commit.body.at("error").at("message").as_string())
                .find("stale_fence"),
            std::string::npos);
  // Staging with a fence already stale is refused at once.
  ASSERT_EQ(Call("POST", "/v1/sessions/" + s + "/transaction").status, 201u);
  EXPECT_EQ(
      Call("POST", "/v1/records/docs/a/save",
           R"({"session":")" + s + R"(","body":"mine",)" + Fence(mine) + "}")
          .code(),
      "stale_fence");
  EXPECT_EQ(Call("GET", "/v1/records/docs/a").body.at("body").as_string(),
            "theirs");
}

TEST_F(ApiFencedWritesTest, BadFencesAndProofsAreClearErrors) {
  const std::uint64_t f = HolderFence("job");
  ASSERT_EQ(Call("PUT", "/v1/records/docs/a", R"({"body":"v1"})").status, 201u);
  for (const char* bad :
       {R"("fence":0)", R"("fence":-3)", R"("fence":"7")", R"("fence":1.5)"}) {
    auto a = Call("POST", "/v1/records/docs/a/save",
                  std::string(R"({"body":"x",)") + bad + "}");
    EXPECT_EQ(a.status, 400u) << bad;
    EXPECT_EQ(a.code(), "bad_request") << bad;
  }
  auto future = Call("POST", "/v1/records/docs/a/save",
                     R"({"body":"x",)" + Fence(f + 1'000'000'000) + "}");
  EXPECT_EQ(future.code(), "bad_request");
  EXPECT_NE(std::string(future.body.at("error").at("message").as_string())
                .find("never handed out"),
            std::string::npos);
  // Neither owner, token nor fence.
  EXPECT_EQ(Call("POST", "/v1/records/docs/a/save", R"({"body":"x"})").code(),
            "bad_request");
  // A fence-only save may not pass a checkout.
  ASSERT_EQ(Call("POST", "/v1/records/docs/a/checkout",
                 R"({"owner":"Asha","ttl_ms":60000})")
                .status,
            200u);
  auto held = Call("POST", "/v1/records/docs/a/save",
                   R"({"body":"x",)" + Fence(f) + "}");
  EXPECT_EQ(held.status, 423u);
  EXPECT_EQ(held.body.at("reason").as_string(), "not_owner");
  // With the lease's proof, both are checked and both pass.
  EXPECT_EQ(Call("POST", "/v1/records/docs/a/save",
                 R"({"owner":"Asha","body":"y",)" + Fence(f) + "}")
                .status,
            200u);
}

}  // namespace
}  // namespace leasehold::server
