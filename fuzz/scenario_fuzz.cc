// Fuzz target scenario: the text of a `*.scenario` file
// (tests/scenarios/README.md), read by ParseScenario; a scenario it accepts
// is run by RunScenario against a fresh engine, so that the engine sees
// whatever sequence of lock calls, times and sessions the text describes.
// A scenario whose expectations fail is no finding; a crash, a sanitizer
// report or a hang is.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "tests/scenarios/scenario_parser.h"
#include "tests/scenarios/scenario_runner.h"

namespace {

// Longer scenarios add little but time.
constexpr std::size_t kMaxSteps = 256;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace leasehold::scenarios;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto scenario = ParseScenario(text);
  if (!scenario) {
    if (scenario.error().message.empty()) {
      leasehold::fuzz::Violated("a refusal without a message", text);
    }
    return 0;
  }
  if (scenario->steps.size() > kMaxSteps) return 0;
  (void)RunScenario(*scenario);
  return 0;
}
