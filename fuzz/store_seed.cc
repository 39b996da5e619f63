// store_seed OUT: writes the sqlite_store target's seed, a data file with
// one of everything a store holds (sessions, Session- and
// Transaction-owned locks, a record under checkout, a completed
// operation, outbox messages pending and claimed), by sending the requests
// of the API tests to a FuzzServer whose store is the file OUT. Run by
// fuzz/seed-corpus; not a fuzz target.
#include <cstdio>
#include <filesystem>
#include <string>

#include "fuzz/fuzz_server.h"

int main(int argc, char** argv) {
  using leasehold::fuzz::Auth;
  using leasehold::fuzz::FuzzServer;
  using leasehold::server::ApiRequest;
  if (argc != 2) {
    std::fprintf(stderr, "usage: store_seed OUT\n");
    return 2;
  }
  const std::string out = argv[1];
  std::filesystem::remove(out);
  {
    FuzzServer server(Auth::kOff, out);
    auto send = [&](std::string method, std::string target, std::string body) {
      const auto* a = server.Send(ApiRequest{
          std::move(method), std::move(target), std::move(body), "", nullptr});
      if (a == nullptr || a->status >= 300) {
        std::fprintf(stderr, "store_seed: %s\n",
                     a ? a->body.c_str() : "parked");
        std::exit(1);
      }
    };
    send("POST", "/v1/sessions", R"({"name":"Asha","ttl_ms":60000})");
    send("POST", "/v1/sessions",
         R"({"name":"Ravi","ttl_ms":30000,"deadlock_priority":-3})");
    send("POST", "/v1/applocks/app/acquire",
         R"({"session":"1","resource":"invoice:481","mode":"Exclusive",)"
         R"("owner":"Session"})");
    send("POST", "/v1/applocks/app/acquire",
         R"({"session":"2","resource":"report","mode":"Shared",)"
         R"("owner":"Session","principal":"dbo"})");
    send("POST", "/v1/sessions/2/transaction", "");
    send("POST", "/v1/applocks/app/acquire",
         R"({"session":"2","resource":"ledger","mode":"Update"})");
    send("PUT", "/v1/records/docs/17", R"({"body":"Garden note 17"})");
    send("PUT", "/v1/records/docs/18", R"({"body":"Garden note 18"})");
    send("POST", "/v1/records/docs/17/checkout",
         R"({"owner":"Asha","ttl_ms":240000})");
    send("POST", "/v1/sessions/1/transaction", "");
    send("POST", "/v1/operations/app/op-1/begin", R"({"session":"1"})");
    send("POST", "/v1/operations/app/op-1/complete",
         R"({"session":"1","outcome":{"invoice":481}})");
    send("POST", "/v1/sessions/1/transaction/commit", "");
    send("POST", "/v1/outbox/app/mail",
         R"({"key":"m-1","payload":{"to":"asha"}})");
    send("POST", "/v1/outbox/app/mail",
         R"({"key":"m-2","payload":{"to":"ravi"}})");
    send("POST", "/v1/outbox/app/mail/claim",
         R"({"consumer":"mailer","max":1,"lease_ms":30000})");
    server.Finish();
  }
  std::printf("store_seed: wrote %s (%ju bytes)\n", out.c_str(),
              static_cast<std::uintmax_t>(std::filesystem::file_size(out)));
  return 0;
}
