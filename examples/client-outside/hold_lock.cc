// hold-lock: a program built outside the leasehold tree, against the
// installed C++ client (docs/client.md, "Building outside this tree"). It
// takes an Exclusive lock in one session, shows that a second session
// cannot have it meanwhile, releases it, and shows that the second can.
//
//   hold-lock URL RESOURCE
//
// Prints one line per step and exits 0, or names the failed step on stderr
// and exits 1.
#include <chrono>
#include <cstdio>
#include <string>

#include <leasehold/client.h>

namespace lh = leasehold::client;

namespace {

int Fail(const char* step, const lh::Error& e) {
  std::fprintf(stderr, "hold-lock: %s: %s (%s)\n", step, e.message.c_str(),
               e.code.c_str());
  return 1;
}

unsigned long long Fence(const lh::LockGuard& lock) {
  return static_cast<unsigned long long>(lock.fence());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: hold-lock URL RESOURCE\n");
    return 2;
  }
  lh::ClientOptions options;
  options.url = argv[1];
  const std::string resource = argv[2];
  auto client = lh::Client::Create(options);
  if (!client) return Fail("client", client.error());

  auto first = client->StartSession("hold-lock", std::chrono::seconds(10));
  if (!first) return Fail("first session", first.error());
  auto second = client->StartSession("hold-lock-2", std::chrono::seconds(10));
  if (!second) return Fail("second session", second.error());

  auto lock = first->Lock("outside", resource);
  if (!lock) return Fail("acquire", lock.error());
  std::printf("acquired %s fence %llu\n", resource.c_str(), Fence(*lock));

  lh::AcquireOptions no_wait;
  no_wait.timeout = std::chrono::milliseconds(0);
  auto refused = second->Lock("outside", resource, no_wait);
  if (refused) {
    std::fprintf(stderr, "hold-lock: a second session got a held lock\n");
    return 1;
  }
  std::printf("second session refused: %s\n", refused.error().code.c_str());

  if (auto released = lock->Release(); !released) {
    return Fail("release", released.error());
  }
  std::printf("released %s\n", resource.c_str());

  auto next = second->Lock("outside", resource, no_wait);
  if (!next) return Fail("acquire after release", next.error());
  std::printf("second session acquired %s fence %llu\n", resource.c_str(),
              Fence(*next));
  return 0;  // next is released and both sessions end here
}
