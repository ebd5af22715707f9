/* cmd_verify — `showdown verify`: not built yet; says so with the usage exit code. */
#include "cmd/cli.h"

int cmd_verify(int argc, char **argv) {
    return sd_cmd_not_built(argc, argv, "PUBLISHED.json [--rerun] [--tolerance PCT] [--json FILE]", "Re-check a published results file cell by cell.");
}
