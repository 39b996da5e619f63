// GET /v1/admin/backup: a consistent copy of the durable state, taken while
// the server serves (EngineService::Backup), sent from a scratch file that
// is removed as soon as it is written.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "server/backup_scratch.h"
#include "server/handlers.h"

namespace leasehold::server {
namespace {

// mkstemp's template: the prefix and six characters it chooses.
constexpr std::string_view kScratchPrefix = ".leasehold-backup-";
constexpr std::size_t kScratchRandom = 6;

}  // namespace

int RemoveBackupScratch(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != kScratchPrefix.size() + kScratchRandom ||
        !name.starts_with(kScratchPrefix) || !entry.is_regular_file(ec)) {
      continue;
    }
    if (std::filesystem::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

// A backup holds every namespace: only an administrator of all of them may
// take one (the route asks for the admin role).
void ServeBackup(Call& c) {
  if (c.caller != nullptr && !c.caller->AllNamespaces()) {
    return c.Fail(Status(StatusCode::kForbidden,
                         "a backup holds every namespace: it needs an admin "
                         "token for namespace \"*\""));
  }
  std::error_code ignored;
  const std::string dir =
      c.options.backup_dir.empty()
          ? std::filesystem::temp_directory_path(ignored).string()
          : c.options.backup_dir;
  std::string path = dir + "/" + std::string(kScratchPrefix) +
                     std::string(kScratchRandom, 'X');
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    return c.Fail(Status(StatusCode::kUnavailable,
                         "cannot create the backup's scratch file in " + dir +
                             ": " + std::strerror(errno)));
  }
  const auto started = std::chrono::steady_clock::now();
  c.service.Backup(path, [respond = c.respond, metrics = c.metrics, path, fd,
                          started](Status st) {
    // Nothing but the open descriptor keeps the copy from here on.
    ::unlink(path.c_str());
    struct stat written {};
    if (st.ok() && ::fstat(fd, &written) != 0) {
      st = Status(StatusCode::kUnavailable,
                  "cannot read the backup's scratch file: " +
                      std::string(std::strerror(errno)));
    }
    if (metrics != nullptr) {
      const std::chrono::duration<double> took =
          std::chrono::steady_clock::now() - started;
      metrics->OnBackup(
          st.ok(), took.count(),
          st.ok() ? static_cast<std::uint64_t>(written.st_size) : 0);
    }
    if (!st.ok()) {
      ::close(fd);
      return respond(ErrorResponse(st));
    }
    ApiResponse answer{200, "", "application/vnd.sqlite3"};
    answer.file = std::make_shared<const FileBody>(
        fd, static_cast<std::uint64_t>(written.st_size));
    respond(std::move(answer));
  });
}

}  // namespace leasehold::server
