#include "cli/bench_command.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <filesystem>
#include <iostream>

#include "client/url.h"
#include "common/status.h"
#include "http/spawned_server.h"
#include "http/tls_client.h"
#include "loadgen/bench.h"
#include "loadgen/bench_flags.h"

namespace leasehold::cli {
namespace {

struct BenchFlags {
  loadgen::BenchFlags bench;
  std::string url = "http://127.0.0.1:7070";
  std::string target;  // only to say where peer targets went
  int threads = 1;
  bool spawn = false;
  bool new_connection_per_request = false;
  http::TlsFiles tls;  // for an https:// --url
};

// The client's own URL parser (http://HOST[:PORT][/], https://…) into an
// address; for https://, with the TLS files loaded.
Status ParseUrl(const std::string& url, const http::TlsFiles& files,
                http::Address& out) {
  auto endpoint = client::detail::ParseUrl(url);
  if (!endpoint) {
    return Status(StatusCode::kBadRequest,
                  "--url: " + endpoint.error().message);
  }
  std::uint16_t port = 0;
  const std::string& p = endpoint->port;
  std::from_chars(p.data(), p.data() + p.size(), port);  // checked: 1..65535
  // Plaintext connects to 127.0.0.1 without a lookup; TLS keeps the name
  // the certificate is checked against.
  out.host = endpoint->host == "localhost" && !endpoint->tls ? "127.0.0.1"
                                                             : endpoint->host;
  out.port = port;
  if (endpoint->tls) {
    auto tls = http::TlsClientContext::Create(files);
    if (!tls) return Status(StatusCode::kBadRequest, tls.error());
    out.tls = std::move(*tls);
  }
  return Status::Ok();
}

int RunBenchCommand(const BenchFlags& flags) {
  if (!flags.target.empty()) {
    std::cerr << "leasehold bench: --target drives other systems, which the "
                 "server binary does not link; run `leasehold-peers bench "
                 "--target "
              << flags.target << " …` (the same flags)\n";
    return 2;
  }
  auto options = loadgen::ToOptions(flags.bench);
  if (!options) {
    std::cerr << "leasehold bench: " << options.error().message() << "\n";
    return 2;
  }
  options->io_threads = flags.threads;
  options->new_connection_per_request = flags.new_connection_per_request;
  if (!flags.spawn) {
    if (Status st = ParseUrl(flags.url, flags.tls, options->server); !st.ok()) {
      std::cerr << "leasehold bench: " << st.message() << "\n";
      return 2;
    }
  }
  std::unique_ptr<http::SpawnedServer> server;
  if (flags.spawn) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    auto spawned = http::SpawnedServer::Start(
        {.binary = ec ? "leasehold" : self.string(),
         .data_dir = "",  // a fresh one, removed at the end
         .config = "",
         .store = "",
         .env = {},
         .log_to_file = true});
    if (!spawned) {
      std::cerr << "leasehold bench: " << spawned.error() << "\n";
      return 1;
    }
    server = std::move(*spawned);
    options->server.host = "127.0.0.1";
    options->server.port = server->port();
    options->server_pid = server->pid();
  }
  loadgen::BenchReport report =
      loadgen::RunBench(*options, /*keep_idle=*/server != nullptr);
  report.spawned = server != nullptr;
  return loadgen::PrintReport(report, flags.bench.json);
}

}  // namespace

void AddBenchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  auto* bench = app.add_subcommand(
      "bench",
      "Load a leasehold server over HTTP (closed loop, keep-alive) and "
      "report pairs/s, requests/s and latency percentiles; exit 1 on any "
      "unexpected answer (other systems: `leasehold-peers bench --target`)");
  bench
      ->add_option("--url", flags->url,
                   "server to load: http://HOST:PORT or https://HOST[:PORT] "
                   "(TLS)")
      ->capture_default_str();
  bench->add_option("--ca-file", flags->tls.ca_file,
                    "for https://: PEM file of the CA certificates that sign "
                    "the server's certificate (default: the system's)");
  bench->add_option("--cert", flags->tls.cert_file,
                    "for https://: PEM file of the certificate to present "
                    "(mutual TLS)");
  bench->add_option("--key", flags->tls.key_file,
                    "PEM file of the private key of --cert (default: in the "
                    "--cert file)");
  bench->add_flag("--new-connection-per-request",
                  flags->new_connection_per_request,
                  "close each connection after its request and open (and, "
                  "for https://, shake hands) anew for the next: measures "
                  "connections (handshakes) per second");
  bench->add_flag("--spawn", flags->spawn,
                  "start a private `leasehold serve` on a free port in a "
                  "temporary directory, load it, report its RSS, stop it "
                  "(--url is ignored)");
  bench->add_option("--threads", flags->threads, "I/O threads of the client")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  bench->add_option("--target", flags->target,
                    "moved: other systems are loaded by `leasehold-peers "
                    "bench --target URL`");
  loadgen::AddBenchFlags(bench, flags->bench);
  bench->callback([flags, &exit_code] { exit_code = RunBenchCommand(*flags); });
}

}  // namespace leasehold::cli
