// A lock's acquire through EngineService::ExecuteParkable, for the
// service's tests: the request's names live in the command.
#ifndef LEASEHOLD_SERVICE_ACQUIRE_FOR_TEST_H_
#define LEASEHOLD_SERVICE_ACQUIRE_FOR_TEST_H_

#include <chrono>
#include <functional>
#include <string>

#include "service/engine_service.h"

namespace leasehold {

struct TestLockRequest {
  SessionId session = 0;
  std::string ns;
  std::string principal = "public";
  std::string resource;
  LockMode mode = LockMode::kExclusive;
  LockOwner owner = LockOwner::kTransaction;
  std::chrono::milliseconds timeout = kWaitForever;
};

inline void AcquireVia(EngineService& service, TestLockRequest r,
                       std::function<void(Result<AcquireOutcome>)> started,
                       WaitDone finished) {
  service.ExecuteParkable<AcquireOutcome>(
      [r = std::move(r)](Engine& e, Time now) {
        return e.Acquire(now, {r.session,
                               {r.ns, r.principal, r.resource},
                               r.mode,
                               r.owner,
                               r.timeout});
      },
      std::move(started), std::move(finished));
}

}  // namespace leasehold

#endif  // LEASEHOLD_SERVICE_ACQUIRE_FOR_TEST_H_
