// LeaseholdTarget: the race and the walkthroughs against a leasehold server
// through the C++ client. The server decides every checkout in one step of
// its engine (one decision at a time), so only the atomic design exists here.
// Each Prepare uses a fresh namespace ("race-" and random hex), so leases
// from earlier runs never get in the way.
#ifndef LEASEHOLD_RACE_LEASEHOLD_TARGET_H_
#define LEASEHOLD_RACE_LEASEHOLD_TARGET_H_

#include <memory>
#include <string>

#include "race/target.h"

namespace leasehold::race {

// `url` is "http://HOST:PORT"; `token` the bearer token, if any.
std::unique_ptr<Target> MakeLeaseholdTarget(std::string url, std::string token);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_LEASEHOLD_TARGET_H_
