// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with its
// contents when the object goes.
#ifndef LEASEHOLD_TESTS_TESTING_TEMP_DIR_H_
#define LEASEHOLD_TESTS_TESTING_TEMP_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace leasehold::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr ? base : "/tmp") + "/leasehold-test-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace leasehold::testing

#endif  // LEASEHOLD_TESTS_TESTING_TEMP_DIR_H_
