// `cgov doctor`: what this machine offers Cost Governor, what is missing, and how to fix it.
#ifndef CGOV_CLI_DOCTOR_H_
#define CGOV_CLI_DOCTOR_H_

namespace cgov::cli {

// The subcommand: parses flags, builds, prints. argv[0] is "doctor".
int RunDoctor(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_DOCTOR_H_
