#include "race/tally.h"

#include <gtest/gtest.h>

namespace leasehold::race {
namespace {

TEST(TallyTest, CountsWinnersPerDocumentAndGrantsPerSession) {
  const Tally t = CountGrants(4, {{"Asha", {true, true, false, false}},
                                  {"Ravi", {false, true, true, false}}});
  EXPECT_EQ(t.documents_by_winners,
            (std::map<int, int>{{0, 1}, {1, 2}, {2, 1}}));
  EXPECT_EQ(t.grants_by_session,
            (std::map<std::string, int>{{"Asha", 2}, {"Ravi", 2}}));
  EXPECT_EQ(t.SharedDocuments(), 1);
  EXPECT_EQ(t.TotalGrants(), 4);
  EXPECT_FALSE(t.OneWinnerEach());
  EXPECT_TRUE(t.EverySessionWon());
  EXPECT_NE(t.Verdict().find("1 of 4 documents had more than one winner"),
            std::string::npos)
      << t.Verdict();
}

TEST(TallyTest, OneWinnerEachAndASessionThatWonNothing) {
  const Tally t = CountGrants(
      3, {{"Asha", {true, true, true}}, {"Ravi", {false, false, false}}});
  EXPECT_TRUE(t.OneWinnerEach());
  EXPECT_FALSE(t.EverySessionWon());
  EXPECT_EQ(t.documents_by_winners.at(2), 0);
  EXPECT_NE(t.Verdict().find("exactly one winner"), std::string::npos);
  EXPECT_NE(t.Verdict().find("won nothing"), std::string::npos);
}

TEST(TallyTest, ListsEveryWinnerCountUpToTheSessions) {
  const Tally t = CountGrants(1, {{"A", {true}}, {"B", {true}}, {"C", {true}}});
  EXPECT_EQ(t.documents_by_winners,
            (std::map<int, int>{{0, 0}, {1, 0}, {2, 0}, {3, 1}}));
  EXPECT_EQ(t.SharedDocuments(), 1);
}

}  // namespace
}  // namespace leasehold::race
