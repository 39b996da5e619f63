// checkout-editor: the shape of a program that edits a shared document
// safely with leasehold. It opens a session (kept alive in the background),
// takes an application lock to serialize editors and uses the lock's fence,
// then checks the document out, saves it and checks it in.
//
//   checkout-editor [--url http://127.0.0.1:7070] [--key notes/today]
#include <cstdio>
#include <string>
#include <string_view>

#include "leasehold/client.h"

namespace lh = leasehold::client;
using std::chrono::milliseconds;

namespace {

int Fail(std::string_view what, const lh::Error& e) {
  std::fprintf(stderr, "checkout-editor: %.*s: %s (%s)\n",
               static_cast<int>(what.size()), what.data(), e.message.c_str(),
               e.code.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  lh::ClientOptions options;
  std::string key = "notes/today";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    if (flag == "--url") options.url = argv[i + 1];
    if (flag == "--key") key = argv[i + 1];
  }

  // One Client per program; copies share its connections across threads.
  auto client = lh::Client::Create(options);
  if (!client) return Fail("client", client.error());

  // The session ends (and its locks go) when `session` is destroyed, or if
  // this process dies and stops sending keepalives.
  auto session = client->StartSession(
      "checkout-editor", milliseconds(10'000), [](const lh::Error& e) {
        std::fprintf(stderr, "session lost: %s\n", e.message.c_str());
      });
  if (!session) return Fail("session", session.error());

  // Wait up to 5 s for other editors. Pass the fence to any storage that
  // can refuse a writer older than the last one it saw.
  lh::AcquireOptions exclusive;
  exclusive.timeout = milliseconds(5'000);
  auto lock = session->Lock("editor", "document:" + key, exclusive);
  if (!lock) return Fail("lock", lock.error());
  std::printf("lock held, fence %llu\n",
              static_cast<unsigned long long>(lock->fence()));

  // The record must exist before it can be saved; "exists" is fine.
  if (auto put = client->Put("docs", key, "(empty)");
      !put && put.error().code != "exists") {
    return Fail("create", put.error());
  }

  // The checkout renews itself and is checked in when `doc` goes.
  lh::CheckoutOptions checkout;
  checkout.owner = "checkout-editor";
  checkout.ttl = milliseconds(30'000);
  auto doc = client->CheckoutKey("docs", key, checkout, [](const lh::Error& e) {
    std::fprintf(stderr, "checkout lost: %s\n", e.message.c_str());
  });
  if (!doc) return Fail("checkout", doc.error());

  auto current = client->Get("docs", key);
  if (!current) return Fail("read", current.error());
  const std::string edited = current->body.value_or("") + "\nedited";
  auto saved = doc->Save(edited, current->version);
  if (!saved) return Fail("save", saved.error());
  if (!saved->done) {
    std::fprintf(stderr, "save refused: %s\n", saved->reason.c_str());
    return 1;
  }
  std::printf("saved %s as version %lld, checkout fence %llu\n", key.c_str(),
              static_cast<long long>(saved->version),
              static_cast<unsigned long long>(doc->fence()));
  return 0;  // doc, lock and session end here, in that order
}
