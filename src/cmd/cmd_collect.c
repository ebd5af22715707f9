/* cmd_collect — `showdown collect DIR`: merge the cells of a Slurm job array (bench --executor slurm) into
 * one run of the results database and DIR/merged.json; report failed, timed-out and missing cells and the
 * command that resubmits only those (sd_cli_collect, which bench --executor slurm --wait calls too). */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/sig.h"
#include "db/db.h"
#include "slurm/slurm.h"

#include <stdio.h>

int sd_cli_collect(const char *cmd, const char *dir, int wait, double poll, const sd_slurm_collect_opts *co) {
    int nbad = 0, rc = wait ? sd_slurm_wait(dir, poll, co->quiet) : 0;
    if (rc == 0) rc = sd_slurm_collect(dir, co, stdout, &nbad);
    if (rc) return sd_cli_fail(cmd, rc);
    return nbad ? SD_EXIT_FAIL : SD_EXIT_OK;
}

int cmd_collect(int argc, char **argv) {
    sd_slurm_collect_opts co = {0};
    int wait = 0;
    double poll = 5;
    const char *dir = NULL;
    const sd_opt opts[] = {
        {"DIR", SD_OPT_ARG, &dir, NULL, "the results directory written by bench --executor slurm", 0, 0},
        {"wait", SD_OPT_FLAG, &wait, NULL, "poll until no task of the array is pending or running, then collect", 0, 0},
        {"poll", SD_OPT_DOUBLE, &poll, "S", "seconds between polls with --wait (default 5)", 0.1, 3600},
        {"db", SD_OPT_STR, &co.db, "FILE", "store the merged run in this database (default " DB_DEFAULT_PATH ")", 0, 0},
        {"no-db", SD_OPT_FLAG, &co.no_db, NULL, "do not store the merged run in a database", 0, 0},
        {"json", SD_OPT_STR, &co.json, "FILE", "write the merged results here (default DIR/merged.json)", 0, 0},
        {"quiet", SD_OPT_FLAG, &co.quiet, NULL, "no notes on stderr", 0, 0},
        {0},
    };
    int code = sd_cli_parse("collect", "DIR [--wait] [--db FILE|--no-db] [--json FILE]",
                      "Merge the cells of a results directory written by `bench --executor slurm` into one run (each\n"
                      "result keeps the environment fingerprint of the node that ran it). Prints every cell's state\n"
                      "(ok, failed, timeout, cancelled, missing; from sacct, else scontrol, else the results files\n"
                      "and task logs) and the command that resubmits only the cells that are not ok.\n"
                      "Exit 0 when every cell is ok, 1 when some are not, 7 while tasks are still pending or running.",
                      opts, argc, argv);
    if (code >= 0) return code;
    sd_sig_install_immediate();
    return sd_cli_collect("collect", dir, wait, poll, &co);
}
