#include "fuzz/fuzz_server.h"

#include <boost/json.hpp>
#include <string>

#include "engine/lock_types.h"
#include "store/sqlite/sqlite_store.h"

namespace leasehold::fuzz {

namespace json = boost::json;
using server::ApiRequest;
using server::ApiResponse;

namespace {

// A store that keeps nothing: the engine's journal is accepted as if
// durable. SQLite's own statements are the sqlite_store target's; here
// every input pays only for the engine.
class NullStore final : public Store {
 public:
  Result<Reservations> Load(const Visitors&) override { return Reservations{}; }
  Status Append(const JournalBatch&) override { return Status::Ok(); }
  std::string Describe() const override { return "null"; }
};

server::ApiOptions Options(Auth auth) {
  server::ApiOptions options;
  if (auth == Auth::kOff) return options;
  using server::Role;
  auto grants = server::Authenticator::Create({
      {std::string(kAdminToken), "root", {"*"}, Role::kAdmin},
      {std::string(kWriterToken), "asha", {"app"}, Role::kWrite},
      {std::string(kReaderToken), "ravi", {"app", "docs"}, Role::kRead},
  });
  if (!grants)
    Violated("the fuzz tokens are refused", grants.error().message());
  options.auth = std::move(*grants);
  return options;
}

// Whether `code` is an error code of the API, answered with `status`.
bool IsCodeOfStatus(std::string_view code, unsigned status) {
  for (int i = static_cast<int>(StatusCode::kBadJson);
       i <= static_cast<int>(StatusCode::kInternal); ++i) {
    const auto c = static_cast<StatusCode>(i);
    if (StatusCodeName(c) == code) return server::HttpStatusFor(c) == status;
  }
  return false;
}

void CheckError(const json::object& body, unsigned status) {
  const json::value* error = body.if_contains("error");
  if (error == nullptr) {
    // Refusals that belong to a normal flow carry their own JSON.
    if (status == 409 || status == 412 || status == 423) return;
    Violated("an error answer without \"error\"", json::serialize(body));
  }
  const json::object* e = error->if_object();
  const json::value* code = e == nullptr ? nullptr : e->if_contains("code");
  const json::value* message =
      e == nullptr ? nullptr : e->if_contains("message");
  if (code == nullptr || !code->is_string() || message == nullptr ||
      !message->is_string()) {
    Violated("an error without a code and message", json::serialize(body));
  }
  if (!IsCodeOfStatus(code->get_string(), status)) {
    Violated("an error code that is not its status's",
             std::to_string(status) + " " + json::serialize(body));
  }
}

}  // namespace

void CheckAnswer(const ApiResponse& r) {
  if (r.status < 200 || r.status > 599) {
    Violated("a status out of range", std::to_string(r.status));
  }
  if (r.status == 204) {
    if (!r.body.empty()) Violated("a 204 with a body", r.body);
    return;
  }
  if (!IsValidUtf8(r.body)) Violated("an answer that is not UTF-8", r.body);
  if (r.content_type != "application/json") return;
  boost::system::error_code ec;
  const json::value v = json::parse(r.body, ec);
  if (ec || !v.is_object())
    Violated("an answer that is no JSON object", r.body);
  if (r.status >= 400) CheckError(v.get_object(), r.status);
}

void CheckEventFrame(std::string_view frame) {
  if (!IsValidUtf8(frame)) Violated("an event frame that is not UTF-8", frame);
  constexpr std::string_view kEvent = "event: ", kData = "\ndata: ";
  const std::size_t data = frame.find(kData);
  if (!frame.starts_with(kEvent) || data == std::string_view::npos ||
      !frame.ends_with("\n\n")) {
    Violated("an event frame out of shape", frame);
  }
  const std::string_view json_text = frame.substr(
      data + kData.size(), frame.size() - 2 - (data + kData.size()));
  boost::system::error_code ec;
  const json::value v = json::parse(json_text, ec);
  if (ec || !v.is_object()) Violated("an event's data is no object", frame);
}

FuzzServer::FuzzServer(Auth auth, const std::string& store_path)
    : work_(boost::asio::make_work_guard(io_)) {
  // In memory, SQLite runs the same statements as on disk, with no file
  // and no fsync.
  auto store =
      store_path.empty()
          ? Result<std::unique_ptr<Store>>(std::make_unique<NullStore>())
          : OpenSqliteStore(store_path, {.synchronous = "NORMAL",
                                         .create_if_missing = true,
                                         .verify_on_open = false});
  if (!store) Violated("cannot open the store", store.error().message());
  auto service =
      EngineService::Open(io_, std::move(*store), EngineOptions{}, clock_);
  if (!service) Violated("cannot open the service", service.error().message());
  service_ = std::move(*service);
  service_->SetEventListener([this](const std::vector<OwnedEvent>& events) {
    metrics_.OnEvents(events);
    history_.OnEvents(events);
    hub_.Publish(events);
  });
  // Every event is serialized (the hub does so only for a subscriber) and
  // checked.
  hub_.Subscribe("",
                 [](const server::EventHub::Frame& f) { CheckEventFrame(*f); });
  api_ = std::make_unique<server::Api>(*service_, Options(auth), &metrics_);
  api_->SetHistory(&history_);
}

FuzzServer::~FuzzServer() {
  Finish();
  // The service goes first (its committer writes what is queued); the
  // handlers still queued on io_ are dropped with it, never run.
  api_.reset();
  service_.reset();
}

template <typename Done>
void FuzzServer::RunUntil(Done done) {
  while (!done()) io_.run_one();
}

const ApiResponse* FuzzServer::Send(ApiRequest request) {
  slots_.push_back(std::make_unique<Slot>());
  Slot* slot = slots_.back().get();
  request.on_parked = [slot](WaitId wait) { slot->waits.push_back(wait); };
  api_->Handle(std::move(request), [slot](ApiResponse r) {
    if (++slot->answers == 1) slot->response = std::move(r);
  });
  RunUntil([slot] { return slot->answers > 0 || !slot->waits.empty(); });
  if (slot->answers == 0) return nullptr;
  CheckAnswer(slot->response);
  return &slot->response;
}

void FuzzServer::Finish() {
  if (finished_) return;
  finished_ = true;
  // As a client that hangs up: each wait still parked is cancelled (-2),
  // which may grant others meanwhile.
  for (const auto& slot : slots_) {
    if (slot->answers > 0) continue;
    for (WaitId wait : slot->waits) service_->CancelWait(wait);
    RunUntil([&] { return slot->answers > 0; });
  }
  for (const auto& slot : slots_) {
    if (slot->answers != 1) {
      Violated("a request answered more than once", slot->response.body);
    }
    CheckAnswer(slot->response);
  }
}

}  // namespace leasehold::fuzz
