#include "cli/command_table.h"

int main(int argc, char** argv) { return cgov::cli::Main(argc, argv); }
