// The HTTP connection over real sockets: oversized headers, the read
// timeout, the connection limit, pipelining, lingering after a refused body,
// bounded read-ahead and large answers to slow readers.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/api_contract_fixture.h"

namespace leasehold::testing {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

// What every connection gets, whatever it asks for.
class HttpApiTest : public ApiContractTest {};

class SlowClientTest : public ApiContractTest {
 protected:
  std::string Config() const override {
    return R"({"request_timeout_ms":300})";
  }
};

class ConnectionLimitTest : public ApiContractTest {
 protected:
  std::string Config() const override { return R"({"max_connections":3})"; }
};

class LargeAnswerTest : public ApiContractTest {
 protected:
  std::string Config() const override {
    return R"({"max_body_bytes":9000000,"http_body_limit":10000000})";
  }
};

TEST_F(HttpApiTest, OversizedHeadersAreRefusedWith400) {
  RawSocket raw(port());
  ASSERT_TRUE(raw.connected());
  raw.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
           std::string(64 << 10, 'a') + "\r\n\r\n");
  const std::string answer = raw.ReadFor(milliseconds(5000), true).bytes;
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400")) << answer.substr(0, 200);
  HttpClient still(port());
  EXPECT_EQ(still.Request("GET", "/healthz").status, 200u);
}

// The limit is on the header section as a whole: many small headers count
// together (they were once accepted up to about twice the limit).
TEST_F(HttpApiTest, TheHeaderLimitCountsAllHeadersTogether) {
  auto request = [](std::size_t header_bytes) {
    std::string r = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (int i = 0; r.size() + 100 <= header_bytes; ++i) {
      std::string line = "X-Small-" + std::to_string(i) + ": ";
      line += std::string(98 - line.size(), 'a') + "\r\n";
      r += line;
    }
    return r + "\r\n";
  };
  const std::string fits = request(16 << 10);
  ASSERT_LE(fits.size(), 16u << 10);
  RawSocket ok(port());
  ok.Send(fits);
  EXPECT_TRUE(
      ok.ReadFor(milliseconds(5000), true).bytes.starts_with("HTTP/1.1 200"));
  for (std::size_t total : {(16u << 10) + 200, 24u << 10, 31u << 10}) {
    RawSocket raw(port());
    raw.Send(request(total));
    const std::string answer = raw.ReadFor(milliseconds(5000), true).bytes;
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 400"))
        << total << ": " << answer.substr(0, 200);
    EXPECT_NE(answer.find("larger than 16384 bytes in all"), std::string::npos)
        << answer;
  }
}

TEST_F(SlowClientTest, HalfARequestIsDisconnectedAfterTheReadTimeout) {
  for (const std::string& half :
       {std::string("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
        std::string("POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    "Content-Length: 40\r\n\r\n{\"name\":")}) {
    RawSocket raw(port());
    ASSERT_TRUE(raw.Send(half));
    const auto start = Steady::now();
    const RawSocket::Read r = raw.ReadFor(milliseconds(10'000), false);
    const auto took = Steady::now() - start;
    EXPECT_TRUE(r.closed) << "still open after 10 s";
    EXPECT_GE(took, milliseconds(200)) << "closed before the timeout";
    EXPECT_LT(took, milliseconds(5000));
    EXPECT_EQ(r.bytes.find("201"), std::string::npos) << r.bytes;
  }
  // Trickling a byte every 50 ms does not keep a request alive: the
  // timeout is for the whole request, not for each read.
  RawSocket trickle(port());
  ASSERT_TRUE(trickle.Send("GET /healthz HTTP/1.1\r\nX-Slow: "));
  const auto start = Steady::now();
  bool closed = false;
  while (!closed && Steady::now() - start < milliseconds(5000)) {
    closed =
        !trickle.Send("a") || trickle.ReadFor(milliseconds(50), false).closed;
  }
  EXPECT_TRUE(closed) << "a trickling client kept its connection for 5 s";
  // A client that is quick is served.
  HttpClient quick(port());
  EXPECT_EQ(quick.Request("GET", "/healthz").status, 200u);
}

TEST_F(ConnectionLimitTest, ExtraConnectionsAreClosedAndEarlierOnesWork) {
  auto first = std::make_unique<HttpClient>(port());
  HttpClient second(port()), third(port());
  for (HttpClient* c : {first.get(), &second, &third}) {
    ASSERT_EQ(c->Request("GET", "/healthz").status, 200u);
  }
  {
    RawSocket extra(port());
    // The kernel may accept the TCP connection; the server then closes it
    // without answering.
    if (extra.connected() &&
        extra.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")) {
      const RawSocket::Read r = extra.ReadFor(milliseconds(5000), true);
      EXPECT_TRUE(r.closed) << "the extra connection stayed open";
      EXPECT_EQ(r.bytes.find("200 OK"), std::string::npos) << r.bytes;
    }
  }
  for (HttpClient* c : {first.get(), &second, &third}) {
    EXPECT_EQ(c->Request("GET", "/healthz").status, 200u)
        << "earlier connections keep working";
  }
  // A closed connection frees its place.
  first.reset();
  bool served = false;
  const auto deadline = Steady::now() + milliseconds(5000);
  while (!served && Steady::now() < deadline) {
    RawSocket next(port());
    served = next.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") &&
             next.ReadFor(milliseconds(1000), true)
                 .bytes.starts_with("HTTP/1.1 200");
    if (!served) std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(served) << "a freed place was not given to a new connection";
}

// Requests sent back to back in one write are each answered, in order —
// also when the first one waits for its lock and the others arrive while
// it waits (they must neither be lost nor be taken for a hang-up).
TEST_F(HttpApiTest, PipelinedRequestsAreAnsweredInOrder) {
  HttpClient c(port());
  const auto [holder, s] = HolderOfBusyAnd(c, "pipeliner");

  RawSocket raw(port());
  ASSERT_TRUE(raw.connected());
  const std::string burst =
      RawRequest("POST", "/v1/applocks/app/acquire",
                 AcquireBody(s, "free", "Exclusive")) +
      RawRequest("POST", "/v1/applocks/app/acquire",
                 AcquireBody(s, "busy", "Exclusive", "Session", 300)) +
      RawRequest(
          "POST", "/v1/applocks/app/release",
          J({{"session", s}, {"resource", "free"}, {"owner", "Session"}})) +
      RawRequest("GET", "/healthz", "");
  const auto start = Steady::now();
  ASSERT_TRUE(raw.Send(burst));
  std::string bytes;
  std::vector<RawAnswer> answers;
  while (answers.size() < 4 && Steady::now() - start < milliseconds(10'000)) {
    const RawSocket::Read r = raw.ReadFor(milliseconds(100), false);
    bytes += r.bytes;
    answers = SplitAnswers(bytes);
    if (r.closed) break;
  }
  ASSERT_EQ(answers.size(), 4u) << bytes;
  EXPECT_EQ(answers[0].status, 200u) << answers[0].body;  // granted
  EXPECT_NE(answers[0].body.find("\"fence\""), std::string::npos);
  EXPECT_EQ(answers[1].status, 409u) << answers[1].body;  // waited 300 ms
  EXPECT_NE(answers[1].body.find("\"result\":-1"), std::string::npos)
      << answers[1].body;
  EXPECT_GE(Steady::now() - start, milliseconds(250)) << "did not wait";
  EXPECT_EQ(answers[2].status, 200u) << answers[2].body;  // released
  EXPECT_EQ(answers[3].status, 200u) << answers[3].body;  // healthz
  EXPECT_EQ(ModeOf(c, s, "free"), "NoLock");
}

// After refusing a body that is too large the server stops writing, reads
// and drops what the client still sends for a moment (so that the client
// can read the answer instead of a reset), and then closes: in about 2 s,
// not after the 30 s request timeout.
TEST_F(HttpApiTest, AfterRefusingABodyTheConnectionClosesWithinSeconds) {
  RawSocket raw(port());
  ASSERT_TRUE(raw.Send(
      "POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: 900000\r\n\r\n" +
      std::string(70'000, ' ')));
  const RawSocket::Read answer = raw.ReadFor(milliseconds(5000), true);
  ASSERT_TRUE(answer.bytes.starts_with("HTTP/1.1 413")) << answer.bytes;
  // The rest of the body trickles on; once the server has closed, a send
  // is refused (reset, then broken pipe).
  const auto start = Steady::now();
  bool refused = false;
  while (!refused && Steady::now() - start < milliseconds(10'000)) {
    refused = !raw.Send(std::string(100, ' '));
    std::this_thread::sleep_for(milliseconds(50));
  }
  const auto took = Steady::now() - start;
  EXPECT_TRUE(refused) << "the server still read 10 s after its answer";
  EXPECT_GE(took, milliseconds(1000)) << "closed without lingering";
  EXPECT_LT(took, milliseconds(6000));
}

// A client whose lock request waits may pipeline what follows, but not
// without end: past one request's worth of bytes (headers + body limit) the
// wait is cancelled (-2), answered, and the connection closed.
TEST_F(HttpApiTest, ReadingAheadOfAWaitingRequestIsBounded) {
  HttpClient c(port());
  const auto [holder, s] = HolderOfBusyAnd(c, "flooder");
  RawSocket raw(port());
  ASSERT_TRUE(raw.Send(RawRequest("POST", "/v1/applocks/app/acquire",
                                  AcquireBody(s, "busy", "Exclusive"))));
  // Parked: wait until the server lists it, then flood.
  const auto parked_by = Steady::now() + milliseconds(5000);
  while (Waiting(c) == 0 && Steady::now() < parked_by) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(Waiting(c), 1u);
  const std::string junk = RawRequest("GET", "/healthz", "");
  std::string flood;
  while (flood.size() < 200'000) flood += junk;  // > 64 KiB + 16 KiB
  raw.Send(flood);  // may fail part-way once the server closes
  std::string bytes;
  std::vector<RawAnswer> answers;
  const auto start = Steady::now();
  bool closed = false;
  while (!closed && Steady::now() - start < milliseconds(10'000)) {
    const RawSocket::Read r = raw.ReadFor(milliseconds(100), false);
    bytes += r.bytes;
    closed = r.closed;
  }
  answers = SplitAnswers(bytes);
  EXPECT_TRUE(closed) << "still open after 10 s";
  ASSERT_GE(answers.size(), 1u) << bytes.substr(0, 300);
  EXPECT_EQ(answers[0].status, 409u) << answers[0].body;
  EXPECT_NE(answers[0].body.find("\"result\":-2"), std::string::npos)
      << answers[0].body;
  EXPECT_EQ(Waiting(c), 0u);
  EXPECT_EQ(ModeOf(c, holder, "busy"), "Exclusive");
}

// An answer larger than the socket takes at once (8 MB: more than the
// kernel's largest send buffer, 4 MB here, and the unread receive window
// together) is written in parts, in order, to a client that starts reading
// late and reads slowly.
TEST_F(LargeAnswerTest, ALargeAnswerArrivesWholeAtASlowReader) {
  HttpClient c(port());
  std::string big(8'000'000, 'x');
  for (std::size_t i = 0; i < big.size(); i += 1000) {
    big[i] = static_cast<char>('a' + (i / 1000) % 26);  // not all alike
  }
  const auto put = c.Request("PUT", "/v1/records/docs/big", J({{"body", big}}));
  ASSERT_EQ(put.status, 201u) << put.body.substr(0, 200);

  RawSocket raw(port());
  ASSERT_TRUE(raw.Send(RawRequest("GET", "/v1/records/docs/big", "")));
  std::this_thread::sleep_for(milliseconds(300));  // let the server block
  std::string bytes;
  std::vector<RawAnswer> answers;
  const auto start = Steady::now();
  while (answers.empty() && Steady::now() - start < milliseconds(20'000)) {
    const RawSocket::Read r = raw.ReadFor(milliseconds(5), false);
    bytes += r.bytes;
    answers = SplitAnswers(bytes);
    if (r.closed) break;
  }
  ASSERT_EQ(answers.size(), 1u) << bytes.size() << " bytes read";
  EXPECT_EQ(answers[0].status, 200u);
  const auto json = boost::json::parse(answers[0].body);
  EXPECT_EQ(json.at("body").as_string(), big);
  // The connection is still good for the next request.
  ASSERT_TRUE(raw.Send(RawRequest("GET", "/healthz", "")));
  EXPECT_TRUE(
      raw.ReadFor(milliseconds(5000), true).bytes.starts_with("HTTP/1.1 200"));
}

}  // namespace
}  // namespace leasehold::testing
