// Tally: the article's two counts of a race — documents by number of
// winners, and documents won per session — and the verdict they support.
#ifndef LEASEHOLD_RACE_TALLY_H_
#define LEASEHOLD_RACE_TALLY_H_

#include <map>
#include <string>
#include <vector>

namespace leasehold::race {

struct Tally {
  int documents = 0;
  // Number of winners -> documents with that many; every count from 0 to
  // the number of sessions is present, even when zero.
  std::map<int, int> documents_by_winners;
  // Session name -> documents it was granted.
  std::map<std::string, int> grants_by_session;

  int DocumentsWithWinners(int winners) const;
  // Documents granted to two or more sessions at once.
  int SharedDocuments() const;
  int TotalGrants() const;
  // Every document has exactly one winner.
  bool OneWinnerEach() const;
  // Every session won at least one document (the sessions really raced).
  bool EverySessionWon() const;
  // One line: what the counts show.
  std::string Verdict() const;

  friend bool operator==(const Tally&, const Tally&) = default;
};

// One session's answers, in document order (index 0 is document 1).
struct SessionGrants {
  std::string name;
  std::vector<bool> granted;
};

// Counts `sessions`' answers over documents 1..documents.
Tally CountGrants(int documents, const std::vector<SessionGrants>& sessions);

}  // namespace leasehold::race

#endif  // LEASEHOLD_RACE_TALLY_H_
