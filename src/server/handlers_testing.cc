// GET and POST /v1/testing/clock: the manual clock of a server started
// with `serve --store memory --clock manual` (docs/testing.md). Without a
// manual clock the endpoint does not exist (404, as for any unknown path).
#include "server/handlers.h"

namespace leasehold::server {
namespace {

namespace json = boost::json;

// The longest single move: 100 years. Anything longer is surely a mistake,
// and this keeps milliseconds far from overflowing a microsecond Time.
constexpr std::int64_t kLongestAdvanceMs = 100LL * 366 * 24 * 3'600'000;

Result<std::chrono::milliseconds> AdvanceField(const json::object& body) {
  auto ms = Fields(body).OptionalInt(wire::kAdvanceMs);
  if (!ms) return std::unexpected(ms.error());
  if (!*ms) {
    return Error(StatusCode::kBadRequest,
                 "field \"advance_ms\" is required: how many milliseconds "
                 "to move the clock forward");
  }
  if (**ms < 0 || **ms > kLongestAdvanceMs) {
    return Error(StatusCode::kBadRequest,
                 "field \"advance_ms\" must be 0.." +
                     std::to_string(kLongestAdvanceMs) +
                     " (the clock only moves forward, at most 100 years "
                     "at once)");
  }
  return std::chrono::milliseconds(**ms);
}

}  // namespace

void ReadTestingClock(Call& c) {
  const std::optional<Time> now = c.service.ManualTime();
  if (!now) return c.Fail(NoRoute(c.method, c.raw_path));
  c.Reply(200, json::object{{wire::kNow, TimeJson(*now)}});
}

// Answers once every deadline up to the new time has been applied and its
// events published: a test may look at /v1/events right after.
void AdvanceTestingClock(Call& c) {
  if (!c.service.ManualTime()) return c.Fail(NoRoute(c.method, c.raw_path));
  auto by = AdvanceField(c.body);
  if (!by) return c.Fail(by.error());
  c.service.AdvanceClock(*by, [respond = c.respond](Result<Time> now) {
    respond(now ? JsonResponse(200, json::object{{wire::kNow, TimeJson(*now)}})
                : ErrorResponse(now.error()));
  });
}

}  // namespace leasehold::server
