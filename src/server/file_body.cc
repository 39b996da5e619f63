#include "server/file_body.h"

#include <unistd.h>

namespace leasehold::server {

FileBody::~FileBody() { ::close(fd_); }

}  // namespace leasehold::server
