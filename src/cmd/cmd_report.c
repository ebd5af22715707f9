/* cmd_report — `showdown report`: not built yet; says so with the usage exit code. */
#include "cmd/cli.h"

int cmd_report(int argc, char **argv) {
    return sd_cmd_not_built(argc, argv, "[--results FILE...] [--scores FILE] [--out DIR]", "Render the showdown report (PDF, SVG, Markdown).");
}
