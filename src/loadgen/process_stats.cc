#include "loadgen/process_stats.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_set>

namespace leasehold::loadgen {

namespace fs = std::filesystem;

std::optional<std::uint64_t> ResidentBytes(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("VmRSS:")) continue;
    std::istringstream fields(line.substr(6));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

std::optional<std::chrono::nanoseconds> CpuTime(int pid) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/stat")
                            : "/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // Field 2 (comm) may hold spaces; fields 14 and 15 (utime, stime) follow
  // its closing parenthesis as the 12th and 13th.
  const std::size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 1));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;
  long long user = 0, system = 0;
  if (!(fields >> user >> system)) return std::nullopt;
  const long ticks = sysconf(_SC_CLK_TCK);
  if (ticks <= 0) return std::nullopt;
  return std::chrono::nanoseconds((user + system) * 1'000'000'000LL / ticks);
}

namespace {

constexpr int kListenState = 0x0A;

// The inodes of sockets listening on `port`, from /proc/net/tcp or tcp6.
void ListeningInodes(const char* table, std::uint16_t port,
                     std::unordered_set<std::string>& inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when
    // retrnsmt uid timeout inode
    std::istringstream f(line);
    std::string sl, local, remote, state, queues, timer, retransmits, uid,
        timeout, inode;
    if (!(f >> sl >> local >> remote >> state >> queues >> timer >>
          retransmits >> uid >> timeout >> inode)) {
      continue;
    }
    const std::size_t colon = local.rfind(':');
    if (colon == std::string::npos) continue;
    const unsigned long local_port =
        std::stoul(local.substr(colon + 1), nullptr, 16);
    if (local_port == port && std::stoi(state, nullptr, 16) == kListenState) {
      inodes.insert("socket:[" + inode + "]");
    }
  }
}

}  // namespace

int FindListeningProcess(std::uint16_t port) {
  std::unordered_set<std::string> inodes;
  ListeningInodes("/proc/net/tcp", port, inodes);
  ListeningInodes("/proc/net/tcp6", port, inodes);
  if (inodes.empty()) return 0;
  std::error_code ec;
  for (const auto& proc : fs::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != name.npos) {
      continue;
    }
    std::error_code fd_ec;
    for (const auto& fd : fs::directory_iterator(proc.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      const fs::path target = fs::read_symlink(fd.path(), link_ec);
      if (!link_ec && inodes.contains(target.string())) return std::stoi(name);
    }
  }
  return 0;
}

}  // namespace leasehold::loadgen
