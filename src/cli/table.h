// Table: columns padded to their widest cell, for people. Scripts use
// --json instead.
#ifndef LEASEHOLD_CLI_TABLE_H_
#define LEASEHOLD_CLI_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace leasehold::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> headers);
  void AddRow(std::vector<std::string> cells);
  // Prints the header and rows; "(none)" under the header when empty.
  void Print(std::ostream& out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace leasehold::cli

#endif  // LEASEHOLD_CLI_TABLE_H_
