#include "race/tally.h"

#include <fmt/format.h>

#include <algorithm>

namespace leasehold::race {

int Tally::DocumentsWithWinners(int winners) const {
  const auto it = documents_by_winners.find(winners);
  return it == documents_by_winners.end() ? 0 : it->second;
}

int Tally::SharedDocuments() const {
  int shared = 0;
  for (const auto& [winners, docs] : documents_by_winners) {
    if (winners >= 2) shared += docs;
  }
  return shared;
}

int Tally::TotalGrants() const {
  int total = 0;
  for (const auto& [name, grants] : grants_by_session) total += grants;
  return total;
}

bool Tally::OneWinnerEach() const {
  return DocumentsWithWinners(1) == documents;
}

bool Tally::EverySessionWon() const {
  return std::ranges::all_of(grants_by_session,
                             [](const auto& s) { return s.second > 0; });
}

std::string Tally::Verdict() const {
  std::string verdict;
  if (OneWinnerEach()) {
    verdict = fmt::format(
        "every one of the {} documents had exactly one winner", documents);
  } else if (SharedDocuments() > 0) {
    verdict = fmt::format(
        "{} of {} documents had more than one winner: {} grants for {} "
        "documents, so sessions believed they owned the same rows",
        SharedDocuments(), documents, TotalGrants(), documents);
  } else {
    verdict = fmt::format("{} of {} documents had no winner",
                          DocumentsWithWinners(0), documents);
  }
  if (!EverySessionWon()) {
    verdict += "; a session won nothing, so the sessions barely overlapped";
  }
  return verdict;
}

Tally CountGrants(int documents, const std::vector<SessionGrants>& sessions) {
  Tally tally;
  tally.documents = documents;
  const int most = std::max(2, static_cast<int>(sessions.size()));
  for (int w = 0; w <= most; ++w) tally.documents_by_winners[w] = 0;
  std::vector<int> winners(static_cast<std::size_t>(documents), 0);
  for (const auto& s : sessions) {
    int won = 0;
    for (std::size_t d = 0; d < winners.size() && d < s.granted.size(); ++d) {
      if (s.granted[d]) {
        ++winners[d];
        ++won;
      }
    }
    tally.grants_by_session[s.name] += won;
  }
  for (int w : winners) ++tally.documents_by_winners[w];
  return tally;
}

}  // namespace leasehold::race
