// Fuzz target client_answer: what the C++ client makes of a server's
// answer. The input is the status on its first line, then the body:
//   409
//   {"result":-1,"status":"timeout"}
// It goes through InterpretAnswer (src/client/answer_conventions.h) as
// every call's answer does, then, when the body is JSON, through every
// answer parser of src/client/api_codec.h, and, as text, through the URL
// parsers that read a redirect's Location. Each must give a value or an
// Error with a code, whatever the server sent.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/answer_conventions.h"
#include "client/api_codec.h"
#include "client/url.h"
#include "fuzz/fuzz_check.h"

namespace {

namespace api = leasehold::client::api;
using leasehold::client::Result;
using leasehold::fuzz::Violated;

template <typename T>
void Expect(const Result<T>& r, std::string_view parser) {
  if (!r && r.error().code.empty()) Violated("an Error without a code", parser);
}

void ParseEvery(const boost::json::value& v) {
  Expect(api::ParseSession(v, "fuzz"), "ParseSession");
  Expect(api::ParseSessions(v), "ParseSessions");
  Expect(api::ParseKeepaliveAnswer(v), "ParseKeepaliveAnswer");
  Expect(api::ParseCancelAnswer(v), "ParseCancelAnswer");
  Expect(api::ParseTransactionAnswer(v), "ParseTransactionAnswer");
  Expect(api::ParseAcquireAnswer(v), "ParseAcquireAnswer");
  Expect(api::ParseAcquireAllAnswer(v), "ParseAcquireAllAnswer");
  Expect(api::ParseModeAnswer(v), "ParseModeAnswer");
  Expect(api::ParseTestAnswer(v), "ParseTestAnswer");
  Expect(api::ParseLocks(v), "ParseLocks");
  Expect(api::ParsePutAnswer(v), "ParsePutAnswer");
  Expect(api::ParseRecord(v), "ParseRecord");
  Expect(api::ParseRecordPage(v), "ParseRecordPage");
  Expect(api::ParseCheckoutAnswer(v, "fuzz"), "ParseCheckoutAnswer");
  Expect(api::ParseSaveAnswer(v), "ParseSaveAnswer");
  Expect(api::ParseCheckinAnswer(v), "ParseCheckinAnswer");
  Expect(api::ParseDeleteAnswer(v), "ParseDeleteAnswer");
  Expect(api::ParsePurgeAnswer(v), "ParsePurgeAnswer");
  Expect(api::ParseBreakAnswer(v), "ParseBreakAnswer");
  Expect(api::ParseOperationStatus(v), "ParseOperationStatus");
  Expect(api::ParseEnqueueAnswer(v), "ParseEnqueueAnswer");
  Expect(api::ParseClaimAnswer(v), "ParseClaimAnswer");
  Expect(api::ParseAckAnswer(v), "ParseAckAnswer");
  Expect(api::ParseOutboxCounts(v), "ParseOutboxCounts");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t eol = input.find('\n');
  if (eol == input.npos) return -1;  // not an input of this shape
  unsigned status = 0;
  const auto [end, ec] =
      std::from_chars(input.data(), input.data() + eol, status);
  if (ec != std::errc() || end != input.data() + eol) return -1;

  leasehold::http::Answer answer;
  answer.status = status;
  answer.body = std::string(input.substr(eol + 1));
  for (const auto& accepted :
       {std::vector<unsigned>{}, std::vector<unsigned>{409, 412, 423}}) {
    auto r =
        leasehold::client::InterpretAnswer("POST", "/fuzz", answer, accepted);
    if (!r) {
      if (r.error().code.empty()) Violated("an Error without a code", "");
      continue;
    }
    ParseEvery(*r);
  }
  (void)leasehold::client::IsUnavailableAnswer(answer);
  Expect(leasehold::client::detail::ParseUrls(answer.body), "ParseUrls");
  for (bool from_tls : {false, true})
    Expect(leasehold::client::detail::ParseLocation(answer.body, from_tls),
           "ParseLocation");
  return 0;
}
