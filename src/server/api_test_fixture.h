// ApiTest: Api::Handle over a real engine service and SQLite file in a
// temporary directory, with a helper to call it and read the answer.
#ifndef LEASEHOLD_SERVER_API_TEST_FIXTURE_H_
#define LEASEHOLD_SERVER_API_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/json.hpp>
#include <future>
#include <thread>

#include "common/real_clock.h"
#include "server/api.h"
#include "store/sqlite/sqlite_store.h"
#include "tests/testing/temp_dir.h"

namespace leasehold::server {

namespace asio = boost::asio;

class ApiTest : public ::testing::Test {
 protected:
  explicit ApiTest(ApiOptions options = {})
      : work_(asio::make_work_guard(io_)) {
    auto store = OpenSqliteStore(dir_.File("l.db"));
    service_ =
        std::move(*EngineService::Open(io_, std::move(*store), {}, clock_));
    api_ = std::make_unique<Api>(*service_, std::move(options));
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ApiTest() override {
    service_->Shutdown();
    work_.reset();
    io_.stop();
    thread_.join();
  }

  struct Answer {
    unsigned status;
    boost::json::value body;
    std::string code() const {
      const auto* e =
          body.is_object() ? body.as_object().if_contains("error") : nullptr;
      return e ? std::string(e->at("code").as_string()) : "";
    }
  };

  Answer Call(std::string method, std::string target, std::string body = "",
              std::string authorization = "") {
    std::promise<ApiResponse> p;
    api_->Handle({std::move(method), std::move(target), std::move(body),
                  std::move(authorization), nullptr},
                 [&](ApiResponse r) { p.set_value(std::move(r)); });
    ApiResponse r = p.get_future().get();
    return {r.status,
            r.body.empty() ? boost::json::value() : boost::json::parse(r.body)};
  }

  std::string OpenSession(const std::string& name,
                          const std::string& authorization = "") {
    auto a =
        Call("POST", "/v1/sessions",
             R"({"name":")" + name + R"(","ttl_ms":60000})", authorization);
    EXPECT_EQ(a.status, 201u);
    return std::string(a.body.at("id").as_string());
  }

  testing::TempDir dir_;
  RealClock clock_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_;
  std::unique_ptr<EngineService> service_;
  std::unique_ptr<Api> api_;
  std::thread thread_;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_API_TEST_FIXTURE_H_
