// FileBody: an answer's body that is a file, sent in chunks rather than
// held in memory whole (GET /v1/admin/backup's snapshot, which may be as
// large as the database).
#ifndef LEASEHOLD_SERVER_FILE_BODY_H_
#define LEASEHOLD_SERVER_FILE_BODY_H_

#include <cstdint>

namespace leasehold::server {

class FileBody {
 public:
  // Takes `fd`, open for reading, whose first `size` bytes are the body;
  // closes it when destroyed.
  FileBody(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  ~FileBody();
  FileBody(const FileBody&) = delete;
  FileBody& operator=(const FileBody&) = delete;

  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }

 private:
  int fd_;
  std::uint64_t size_;
};

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_FILE_BODY_H_
