/* cmd_nightly — `showdown nightly`: not built yet; says so with the usage exit code. */
#include "cmd/cli.h"

int cmd_nightly(int argc, char **argv) {
    return sd_cmd_not_built(argc, argv, "[--config FILE]", "Run bench + score + report, keep history and flag regressions.");
}
