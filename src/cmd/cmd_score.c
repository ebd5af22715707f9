/* cmd_score — `showdown score`: not built yet; says so with the usage exit code. */
#include "cmd/cli.h"

int cmd_score(int argc, char **argv) {
    return sd_cmd_not_built(argc, argv, "[--offline] [--json FILE]", "Score frameworks on Support & Community, API & Internals and Platform.");
}
