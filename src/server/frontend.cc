#include "server/frontend.h"

namespace leasehold::server {

Frontend::Frontend(boost::asio::io_context& io, EngineService& service,
                   ApiOptions api_options, HttpOptions http_options)
    : api_(service, std::move(api_options), &metrics_),
      http_(io, api_, std::move(http_options), &hub_) {
  service.SetEventListener([this](const std::vector<OwnedEvent>& events) {
    metrics_.OnEvents(events);
    history_.OnEvents(events);
    hub_.Publish(events);
  });
  api_.SetHistory(&history_);
  if (auto tls = http_.tls()) metrics_.SetTlsExpiry(tls->expiry());
}

void Frontend::SetTls(std::shared_ptr<const ServerTls> tls) {
  metrics_.SetTlsExpiry(tls->expiry());
  http_.SetTls(std::move(tls));
}

}  // namespace leasehold::server
