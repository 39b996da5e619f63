// Client::Backup: GET /v1/admin/backup streamed to a file that appears
// whole or not at all (written beside it, fsynced, renamed).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "client/answer_conventions.h"
#include "client/client_impl.h"

namespace leasehold::client {

namespace {

constexpr std::string_view kBackupTarget = "/v1/admin/backup";
// An error's JSON is small; more than this is not one.
constexpr std::size_t kMaxErrorBody = 64 << 10;

Error FileError(const std::string& what, const std::string& path) {
  return Error{"file", what + " " + path + ": " + std::strerror(errno), 0};
}

// Writes all of `data` to `fd`.
bool WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The directory entry of a rename is durable once its directory is synced.
bool SyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  return synced;
}

}  // namespace

Result<std::uint64_t> Client::Backup(const std::string& path,
                                     const BackupOptions& options) {
  if (path.empty()) {
    return std::unexpected(
        Error{"file", "no file named to write the backup to", 0});
  }
  std::error_code ec;
  if (!options.overwrite && std::filesystem::exists(path, ec)) {
    return std::unexpected(Error{
        "exists", path + " exists; not overwritten (--force replaces it)", 0});
  }
  const Milliseconds io = impl_->options().io_timeout;
  auto stream = impl_->StartStream(std::string(kBackupTarget), io);
  if (!stream) return std::unexpected(stream.error());
  http::Connection& connection = *stream->connection;
  std::vector<char> buffer(256 << 10);
  if (stream->started.status != 200) {
    http::Answer answer = stream->started;
    while (answer.body.size() < kMaxErrorBody) {
      const auto n =
          connection.ReadBody(buffer.data(), buffer.size(), DeadlineAfter(io));
      if (n.error || n.size == 0) break;
      answer.body.append(buffer.data(), n.size);
    }
    auto parsed = InterpretAnswer("GET", kBackupTarget, answer, {});
    if (!parsed) return std::unexpected(parsed.error());
    return std::unexpected(Error{
        "bad_response",
        "GET /v1/admin/backup answered HTTP " + std::to_string(answer.status),
        answer.status});
  }
  const std::string partial = path + ".tmp";
  const int fd =
      ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return std::unexpected(FileError("cannot create", partial));
  auto fail = [&](Error e) -> Result<std::uint64_t> {
    ::close(fd);
    ::unlink(partial.c_str());
    return std::unexpected(std::move(e));
  };
  std::uint64_t written = 0;
  while (true) {
    const auto n =
        connection.ReadBody(buffer.data(), buffer.size(), DeadlineAfter(io));
    if (n.error) {
      return fail(Error{http::IsTimeout(n.error) ? "timeout" : "unreachable",
                        "the backup broke off after " +
                            std::to_string(written) + " bytes from " +
                            connection.address().host + ":" +
                            std::to_string(connection.address().port) + ": " +
                            n.error.message(),
                        0});
    }
    if (n.size == 0) break;  // the whole Content-Length arrived
    if (!WriteAll(fd, buffer.data(), n.size)) {
      return fail(FileError("cannot write", partial));
    }
    written += n.size;
  }
  if (::fsync(fd) != 0) return fail(FileError("cannot sync", partial));
  if (::close(fd) != 0) {
    ::unlink(partial.c_str());
    return std::unexpected(FileError("cannot close", partial));
  }
  if (::rename(partial.c_str(), path.c_str()) != 0) {
    Error e = FileError("cannot rename " + partial + " to", path);
    ::unlink(partial.c_str());
    return std::unexpected(std::move(e));
  }
  if (!SyncDirectoryOf(path))
    return std::unexpected(FileError("cannot sync the directory of", path));
  return written;
}

}  // namespace leasehold::client
