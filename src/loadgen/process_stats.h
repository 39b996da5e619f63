// Facts about a server process on this machine, read from /proc (Linux).
#ifndef LEASEHOLD_LOADGEN_PROCESS_STATS_H_
#define LEASEHOLD_LOADGEN_PROCESS_STATS_H_

#include <chrono>
#include <cstdint>
#include <optional>

namespace leasehold::loadgen {

// The resident set size (VmRSS) of process `pid` in bytes, or nullopt when
// it cannot be read (no such process, not Linux).
std::optional<std::uint64_t> ResidentBytes(int pid);

// CPU time (user + system, all threads) used so far by process `pid`
// (0: this process), to 10 ms; nullopt when it cannot be read.
std::optional<std::chrono::nanoseconds> CpuTime(int pid);

// The process that listens on TCP `port` (IPv4 or IPv6), or 0 when none is
// found among the processes this user may inspect.
int FindListeningProcess(std::uint16_t port);

}  // namespace leasehold::loadgen

#endif  // LEASEHOLD_LOADGEN_PROCESS_STATS_H_
