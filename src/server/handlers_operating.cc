// GET /healthz and GET /metrics, for whoever operates the server; and
// GET /v1/events when there is no event hub to stream from.
#include "server/handlers.h"

namespace leasehold::server {

void Health(Call& c) {
  const Status failure = c.service.StoreFailure();
  failure.ok() ? c.Reply(200, boost::json::object{{"status", "ok"}})
               : c.Fail(failure);
}

// Counts only, no names: any authenticated caller may read them.
void ServeMetrics(Call& c) {
  if (c.metrics == nullptr) return c.Fail(NoRoute(c.method, c.raw_path));
  c.service.ReadStats(
      [&service = c.service, metrics = c.metrics, respond = c.respond](
          EngineStats engine, std::size_t parked, Time now) {
        const Metrics::StoreReport store{service.CommitStats(),
                                         service.Recoveries(),
                                         service.StoreFailure().ok()};
        respond(ApiResponse{200, metrics->Render(engine, parked, store, now),
                            "text/plain; version=0.0.4"});
      });
}

// The HTTP layer serves the stream itself (event_stream.h) when it has an
// event hub; without one the endpoint does not exist.
void EventsWithoutHub(Call& c) { c.Fail(NoRoute(c.method, c.raw_path)); }

}  // namespace leasehold::server
