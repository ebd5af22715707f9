/* cmd_bench — placeholder until the engine lands. */
#include "cmd/cli.h"
int cmd_bench(int argc, char **argv) { return sd_cmd_not_built(argc, argv, "--workload NAME", "Run a workload."); }
