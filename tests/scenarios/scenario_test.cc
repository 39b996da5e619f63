// Runs every tests/scenarios/*.scenario file as its own test case, named
// after the file: ScenarioFiles/ScenarioTest.Run/relaxed_fifo runs
// relaxed_fifo.scenario. A failure points at the scenario's file and line.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/scenarios/scenario_parser.h"
#include "tests/scenarios/scenario_runner.h"

#ifndef LEASEHOLD_SCENARIO_DIR
#error "LEASEHOLD_SCENARIO_DIR must name the directory of the *.scenario files"
#endif

namespace leasehold::scenarios {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> ScenarioFiles() {
  std::vector<fs::path> files;
  std::error_code error;
  for (const auto& entry :
       fs::directory_iterator(LEASEHOLD_SCENARIO_DIR, error)) {
    if (entry.path().extension() == ".scenario") files.push_back(entry.path());
  }
  std::ranges::sort(files);
  return files;
}

// A gtest name may hold only letters, digits and _.
std::string TestName(const fs::path& file) {
  std::string name = file.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class ScenarioTest : public ::testing::TestWithParam<fs::path> {};

TEST_P(ScenarioTest, Run) {
  const fs::path& file = GetParam();
  const std::string path = file.string();
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();

  auto scenario = ParseScenario(text.str());
  if (!scenario) {
    ADD_FAILURE_AT(path.c_str(), scenario.error().line)
        << "parse error: " << scenario.error().message;
    return;
  }
  if (auto failure = RunScenario(*scenario)) {
    ADD_FAILURE_AT(path.c_str(), failure->line) << failure->message;
  }
}

INSTANTIATE_TEST_SUITE_P(ScenarioFiles, ScenarioTest,
                         ::testing::ValuesIn(ScenarioFiles()),
                         [](const ::testing::TestParamInfo<fs::path>& param) {
                           return TestName(param.param);
                         });

TEST(ScenarioFiles, TheDirectoryHasScenarios) {
  EXPECT_FALSE(ScenarioFiles().empty())
      << "no *.scenario files in " << LEASEHOLD_SCENARIO_DIR;
}

TEST(ScenarioFiles, NamesAreUnique) {
  std::vector<std::string> names;
  for (const fs::path& file : ScenarioFiles()) names.push_back(TestName(file));
  std::ranges::sort(names);
  EXPECT_EQ(std::ranges::adjacent_find(names), names.end())
      << "two scenario files map to the same test name; use snake_case";
}

}  // namespace
}  // namespace leasehold::scenarios
