#include "cli/client_flags.h"

#include <boost/json.hpp>
#include <charconv>
#include <cstdlib>
#include <iostream>

#include "common/clock.h"
#include "common/real_clock.h"

namespace leasehold::cli {

namespace json = boost::json;
using std::chrono::milliseconds;

void AddClientFlags(CLI::App* command, ClientFlags& flags) {
  // Environment defaults are read here rather than with CLI11's envname,
  // which skips them when `--` ends the options (lock NAME -- COMMAND).
  auto from_env = [](const char* name, std::string& out) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') out = v;
  };
  from_env("LEASEHOLD_URL", flags.url);
  from_env("LEASEHOLD_TOKEN", flags.token);
  from_env("LEASEHOLD_NS", flags.ns);
  from_env("LEASEHOLD_CA_FILE", flags.ca_file);
  from_env("LEASEHOLD_CERT", flags.cert_file);
  from_env("LEASEHOLD_KEY", flags.key_file);
  command
      ->add_option("--url", flags.url,
                   "server address, http://HOST:PORT or https://HOST[:PORT] "
                   "(TLS, port 443 by default); for a cluster, its nodes "
                   "separated by commas (https://a:7443,https://b:7443): "
                   "calls go to the leader and ride through a failover (env "
                   "LEASEHOLD_URL)")
      ->capture_default_str();
  command->add_option("--auth-token", flags.token,
                      "bearer token, when the server requires one (env "
                      "LEASEHOLD_TOKEN)");
  command->add_option("--ns", flags.ns, "namespace (env LEASEHOLD_NS)")
      ->capture_default_str();
  command->add_option("--ca-file", flags.ca_file,
                      "PEM file of the CA certificates that sign the "
                      "server's certificate, for https:// (default: the "
                      "system's trusted CAs; env LEASEHOLD_CA_FILE)");
  command->add_option("--cert", flags.cert_file,
                      "PEM file of this client's certificate, presented to "
                      "a server that asks for one (mutual TLS; env "
                      "LEASEHOLD_CERT)");
  command->add_option("--key", flags.key_file,
                      "PEM file of the private key of --cert (default: in "
                      "the --cert file; env LEASEHOLD_KEY)");
  command->add_flag("--json", flags.json,
                    "print the server's JSON answer instead of a table");
}

std::optional<client::Client> Connect(const ClientFlags& flags) {
  client::ClientOptions options;
  options.url = flags.url;
  options.token = flags.token;
  options.ca_file = flags.ca_file;
  options.cert_file = flags.cert_file;
  options.key_file = flags.key_file;
  auto c = client::Client::Create(options);
  if (!c) {
    ReportError(c.error(), flags);
    return std::nullopt;
  }
  return std::move(*c);
}

int ReportError(const client::Error& error, const ClientFlags& flags) {
  if (flags.json) {
    std::cerr << json::serialize(json::object{
                     {"error", json::object{{"code", error.code},
                                            {"message", error.message}}}})
              << "\n";
  } else {
    std::cerr << "leasehold: " << error.code << ": " << error.message << "\n";
  }
  const bool refusal = error.code == "exists" || error.code == "not_found" ||
                       error.code == "not_held" || error.code == "stale_fence";
  return refusal ? kExitRefused : kExitFailed;
}

void PrintJson(const json::value& value) {
  std::cout << json::serialize(value) << "\n";
}

std::optional<milliseconds> ParseDuration(std::string_view text) {
  if (text == "-1") return milliseconds(-1);
  long long n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || n < 0 || end == text.data()) return std::nullopt;
  const std::string_view unit(end, text.data() + text.size() - end);
  long long scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else {
    return std::nullopt;
  }
  if (n > (1LL << 50) / scale) return std::nullopt;
  return milliseconds(n * scale);
}

CLI::Validator DurationValidator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return ParseDuration(text)
                   ? ""
                   : "\"" + text +
                         "\" is not a duration (e.g. 250ms, 10s, "
                         "5m, 1h; plain numbers are milliseconds)";
      },
      "DURATION");
}

namespace {

std::string Clock(long long seconds) {
  const long long h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60;
  char buf[48];
  if (h > 0) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", m, s);
  }
  return buf;
}

}  // namespace

Time ServerNow(client::Client& c) {
  const auto who = c.Call("GET", "/v1/whoami");
  const json::value* now =
      who && who->is_object() ? who->as_object().if_contains("now") : nullptr;
  if (now != nullptr && now->is_string()) {
    if (const auto t = ParseTime(std::string_view(now->as_string()))) return *t;
  }
  return RealClock().Now();
}

std::string TimeLeft(std::string_view at, Time now) {
  const auto when = ParseTime(at);
  if (!when) return "";
  const auto left =
      std::chrono::duration_cast<std::chrono::seconds>(*when - now);
  if (left.count() > 0) return Clock(left.count()) + " left";
  return "expired " + Clock(-left.count()) + " ago";
}

}  // namespace leasehold::cli
