// How a race and a walkthrough are shown: the article's tables for people,
// one JSON object for scripts (docs/api.md, "Command line").
#ifndef LEASEHOLD_RACE_REPORT_H_
#define LEASEHOLD_RACE_REPORT_H_

#include <boost/json/object.hpp>
#include <ostream>

#include "race/race.h"
#include "race/walkthrough.h"

namespace leasehold::race {

// A heading, the two tables (documents by number of winners; documents won
// per session) and a verdict line.
void PrintRace(const RaceResult& result, std::ostream& out);
// {"engine","variant","sessions","rows","ttl_ms","gap_us","elapsed_ms",
//  "documents_by_winners":{"0":n,"1":n,"2":n,…},"grants_by_session":{…},
//  "shared_documents","one_winner_each","every_session_won",
//  "counted_from_log","verdict"}
boost::json::object RaceJson(const RaceResult& result);

// A heading, the step table and a last line saying whether every step
// answered as the article shows.
void PrintWalkthrough(const Walkthrough& walkthrough, std::ostream& out);
// {"walkthrough","engine","ok","steps":[{"step","result","expected","ok"}]}
boost::json::object WalkthroughJson(const Walkthrough& walkthrough);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_REPORT_H_
