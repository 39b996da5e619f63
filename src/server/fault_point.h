// Fault injection for crash tests. A server started with the environment
// variable LEASEHOLD_FAULT=NAME kills itself with SIGKILL the first time it
// reaches the point called NAME, so a test can crash it at an exact step
// (e.g. after a commit is on disk and before its answer is sent). Without
// the variable every point is a no-op: one cached check.
#ifndef LEASEHOLD_SERVER_FAULT_POINT_H_
#define LEASEHOLD_SERVER_FAULT_POINT_H_

#include <string_view>

namespace leasehold::server {

// The commit's writes are durable; its answer has not been written.
inline constexpr std::string_view kFaultCommitDurable = "commit.durable";
// A waiter's grant (an acquire's, or an acquire-all call's whole grant) is
// durable; its answer has not been written.
inline constexpr std::string_view kFaultWaitGrantDurable = "wait_grant.durable";

// SIGKILLs this process when LEASEHOLD_FAULT names `point`.
void FaultPoint(std::string_view point);

}  // namespace leasehold::server

#endif  // LEASEHOLD_SERVER_FAULT_POINT_H_
