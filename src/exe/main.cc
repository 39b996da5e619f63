#include "cli/cli.h"

int main(int argc, char** argv) { return leasehold::cli::Main(argc, argv); }
