#include "race/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <string>
#include <vector>

namespace leasehold::race {
namespace {

namespace json = boost::json;
using Rows = std::vector<std::vector<std::string>>;

// Prints `rows` (the first is the header) in columns padded to fit.
void PrintColumns(const Rows& rows, std::ostream& out) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += " " + row[c];
      if (c + 1 < row.size())
        line += std::string(width[c] - row[c].size(), ' ');
      if (c + 1 < row.size()) line += " ";
    }
    while (line.ends_with(' ')) line.pop_back();
    out << line << "\n";
  }
}

}  // namespace

void PrintRace(const RaceResult& r, std::ostream& out) {
  const auto& o = r.options;
  out << fmt::format(
      "Race: {} checkout on {}, {} sessions, {} documents{}, {} ms\n\n",
      VariantName(o.variant), r.engine, o.sessions, o.rows,
      o.variant == Variant::kNaive && o.gap.count() > 0
          ? fmt::format(", {} us between read and write", o.gap.count())
          : "",
      r.elapsed.count());
  Rows winners{{"Winners", "Documents"}};
  for (const auto& [w, docs] : r.tally.documents_by_winners) {
    winners.push_back({std::to_string(w), std::to_string(docs)});
  }
  PrintColumns(winners, out);
  out << "\n";
  Rows won{{"Session", "DocumentsWon"}};
  for (const auto& name : r.sessions) {
    const auto it = r.tally.grants_by_session.find(name);
    won.push_back({name, std::to_string(it == r.tally.grants_by_session.end()
                                            ? 0
                                            : it->second)});
  }
  PrintColumns(won, out);
  out << "\nVerdict: " << r.tally.Verdict() << ".\n";
}

json::object RaceJson(const RaceResult& r) {
  json::object by_winners;
  for (const auto& [w, docs] : r.tally.documents_by_winners) {
    by_winners[std::to_string(w)] = docs;
  }
  json::object by_session;
  for (const auto& [name, grants] : r.tally.grants_by_session) {
    by_session[name] = grants;
  }
  return {{"engine", r.engine},
          {"variant", VariantName(r.options.variant)},
          {"sessions", r.options.sessions},
          {"rows", r.options.rows},
          {"ttl_ms", r.options.ttl.count()},
          {"gap_us", r.options.gap.count()},
          {"elapsed_ms", r.elapsed.count()},
          {"documents_by_winners", std::move(by_winners)},
          {"grants_by_session", std::move(by_session)},
          {"shared_documents", r.tally.SharedDocuments()},
          {"one_winner_each", r.tally.OneWinnerEach()},
          {"every_session_won", r.tally.EverySessionWon()},
          {"counted_from_log", r.from_log},
          {"verdict", r.tally.Verdict()}};
}

void PrintWalkthrough(const Walkthrough& w, std::ostream& out) {
  out << fmt::format("Walkthrough '{}' on {}\n\n", w.name, w.engine);
  Rows rows{{"Step", "Result", "Expected"}};
  for (const auto& s : w.steps) {
    rows.push_back({s.what, s.result,
                    s.ok() ? s.expected : s.expected + "  <-- UNEXPECTED"});
  }
  PrintColumns(rows, out);
  out << (w.ok() ? "\nEvery step answered as the article shows.\n"
                 : "\nSome steps did NOT answer as the article shows.\n");
}

json::object WalkthroughJson(const Walkthrough& w) {
  json::array steps;
  for (const auto& s : w.steps) {
    steps.push_back({{"step", s.what},
                     {"result", s.result},
                     {"expected", s.expected},
                     {"ok", s.ok()}});
  }
  return {{"walkthrough", w.name},
          {"engine", w.engine},
          {"ok", w.ok()},
          {"steps", std::move(steps)}};
}

}  // namespace leasehold::race
