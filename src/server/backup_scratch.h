// The scratch copy of a backup (GET /v1/admin/backup, handlers_backup.cc):
// a file in the data directory that the backup unlinks once written. A
// server that dies mid-backup leaves it behind; the next one removes it.
#ifndef LEASEHOLD_SERVER_BACKUP_SCRATCH_H_
#define LEASEHOLD_SERVER_BACKUP_SCRATCH_H_

#include <string>

namespace leasehold::server {

// Removes the scratch copies left in `dir` (only files named as a backup
// names them: nothing else is touched); returns how many. For a server
// that has just taken its data directory, before it serves: no backup of
// its own is running yet.
int RemoveBackupScratch(const std::string& dir);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_BACKUP_SCRATCH_H_
