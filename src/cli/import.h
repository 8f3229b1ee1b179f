// `cgov import gpu-usage-audit SOURCE.db --db PATH`: brings a gpu-usage-audit history into a
// Cost Governor history database. Idempotent: importing the same data twice adds nothing.
#ifndef CGOV_CLI_IMPORT_H_
#define CGOV_CLI_IMPORT_H_

namespace cgov::cli {

int RunImport(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_IMPORT_H_
