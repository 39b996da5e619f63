// SpawnChild: starts a crash test's writer process (argv[0] its path) with
// this environment; its pid, or -1 (and a test failure) if it cannot start.
#ifndef LEASEHOLD_TESTS_STORE_SPAWN_CHILD_H_
#define LEASEHOLD_TESTS_STORE_SPAWN_CHILD_H_

#include <gtest/gtest.h>
#include <spawn.h>

#include <string>
#include <vector>

extern char** environ;

namespace leasehold {

inline pid_t SpawnChild(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ),
            0);
  return pid;
}

}  // namespace leasehold

#endif  // LEASEHOLD_TESTS_STORE_SPAWN_CHILD_H_
