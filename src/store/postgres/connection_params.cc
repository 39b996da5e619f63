#include "store/postgres/connection_params.h"

#include <algorithm>
#include <memory>

namespace leasehold::postgres {
namespace {

constexpr std::pair<const char*, const char*> kDefaults[] = {
    {"connect_timeout", "5"},          {"keepalives", "1"},
    {"keepalives_idle", "10"},         {"keepalives_interval", "5"},
    {"keepalives_count", "3"},         {"tcp_user_timeout", "20000"},
    {"application_name", "leasehold"},
};

// What Describe() shows: where the data is, nothing secret.
constexpr const char* kDescribed[] = {
    "host",    "hostaddr",
    "port",    "dbname",
    "user",    "target_session_attrs",
    "sslmode", "application_name",
};

void IgnoreNotice(void*, const char*) {}

struct OptionsFreer {
  void operator()(PQconninfoOption* o) const { PQconninfoFree(o); }
};

}  // namespace

Result<ConnectionParams> ConnectionParams::Parse(const std::string& url) {
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, OptionsFreer> parsed(
      PQconninfoParse(url.c_str(), &error));
  if (parsed == nullptr) {
    std::string why = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Error(StatusCode::kBadRequest,
                 "not a PostgreSQL connection URL: " + why);
  }
  ConnectionParams params;
  for (const PQconninfoOption* o = parsed.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr && o->val[0] != '\0') {
      params.options_.emplace_back(o->keyword, o->val);
    }
  }
  for (const auto& option : kDefaults) {
    const std::string keyword = option.first;
    const bool given = std::any_of(
        params.options_.begin(), params.options_.end(),
        [&keyword](const auto& set) { return set.first == keyword; });
    if (!given) params.options_.emplace_back(keyword, option.second);
  }
  return params;
}

Result<pg::Connection> ConnectionParams::Connect() const {
  std::vector<const char*> keywords, values;
  for (const auto& [keyword, value] : options_) {
    keywords.push_back(keyword.c_str());
    values.push_back(value.c_str());
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  pg::Connection conn(
      PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/0));
  if (conn == nullptr || PQstatus(conn.get()) != CONNECTION_OK) {
    return std::unexpected(pg::Failure(conn.get(), "connect"));
  }
  PQsetNoticeProcessor(conn.get(), &IgnoreNotice, nullptr);
  return conn;
}

std::string ConnectionParams::Describe() const {
  std::string out = "postgresql:";
  const char* separator = "";
  for (const char* keyword : kDescribed) {
    for (const auto& [k, v] : options_) {
      if (k != keyword) continue;
      out += separator + k + "=" + v;
      separator = " ";
    }
  }
  return out;
}

}  // namespace leasehold::postgres
