#include "server/frontend.h"

namespace leasehold::server {

Frontend::Frontend(boost::asio::io_context& io, EngineService& service,
                   ApiOptions api_options, HttpOptions http_options)
    : api_(service, std::move(api_options), &metrics_),
      http_(io, api_, service, std::move(http_options), &hub_) {
  service.SetEventListener([this](const std::vector<OwnedEvent>& events) {
    metrics_.OnEvents(events);
    history_.OnEvents(events);
    hub_.Publish(events);
  });
  api_.SetHistory(&history_);
}

}  // namespace leasehold::server
