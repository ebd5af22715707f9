/* cmd_verify — `showdown verify PUBLISHED.json`: parse the options and re-check the file (bench/verify.h). */
#include "bench/verify.h"
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "db/db.h"

#include <stdio.h>

int cmd_verify(int argc, char **argv) {
    sd_verify_opts a = {.tolerance_pct = SD_VERIFY_TOLERANCE_PCT, .acc_tolerance = 0.02, .repeat = 3, .host_wait_s = 20};
    const sd_opt opts[] = {
        {"PUBLISHED.json", SD_OPT_ARG, &a.published, NULL, "the published results file to re-check", 0, 0},
        {"rerun", SD_OPT_FLAG, &a.rerun, NULL, "measure every comparable cell now, through bench (>= 3 repetitions)", 0, 0},
        {"tolerance", SD_OPT_DOUBLE, &a.tolerance_pct, "PCT", "a time within PCT % of the published figure (or inside a measured min-max narrower than PCT %) reproduces (default 10)", 0, 1e9},
        {"acc-tolerance", SD_OPT_DOUBLE, &a.acc_tolerance, "A", "largest absolute accuracy difference that still reproduces (default 0.02)", 0, 1},
        {"repeat", SD_OPT_INT, &a.repeat, "R", "repetitions of a rerun (default and minimum 3)", 3, 1000},
        {"host-wait", SD_OPT_DOUBLE, &a.host_wait_s, "S", "a rerun's cell waits up to S seconds for this host to run at "
                                                        "its speed (default 20; 0: start at once)", 0, 3600},
        {"batches", SD_OPT_INT, &a.batches, "N", "cap batches per epoch of a rerun (the comparison then says max_batches differs unless published so)", 1, 100000000},
        {"workload", SD_OPT_STR, &a.only_workloads, "W[,W]", "check only these workloads' cells", 0, 0},
        {"impl", SD_OPT_STR, &a.only_impls, "I[,I]", "check only these implementations' cells (native, pytorch, ...)", 0, 0},
        {"results", SD_OPT_STR, &a.results, "FILE", "compare with this results file instead of the database", 0, 0},
        {"db", SD_OPT_STR, &a.db, "FILE", "results database for earlier measurements (default " DB_DEFAULT_PATH ")", 0, 0},
        {"workloads", SD_OPT_STR, &a.workloads, "DIR", "workload specs for a rerun (default ./workloads)", 0, 0},
        {"json", SD_OPT_OUT, &a.json, "FILE", "write the verdicts (showdown-verify/1) to FILE for the report", 0, 0},
        {"quiet", SD_OPT_FLAG, &a.quiet, NULL, "no notes on stderr", 0, 0},
        {0},
    };
    int code = sd_cli_parse("verify", "PUBLISHED.json [--rerun] [--tolerance PCT] [--json FILE]",
                      "Re-check a published results file cell by cell. Verdicts: REPRODUCED, SLOWER, FASTER,\n"
                      "ACCURACY-DIFFERS, UNVERIFIABLE (the published spread is wider than the tolerance),\n"
                      "NOT-COMPARABLE (naming the machine, implementation or settings differences), MISSING (no\n"
                      "measurement). A run the publication never measured (unavailable, failed) is shown as such.\n"
                      "Exit 0: every measured cell reproduced; 5: a comparable cell did not; 9: some cells could not\n"
                      "be checked, or none was measured; 3: a bad or empty published file; 130: a rerun interrupted\n"
                      "(the cells checked before the signal are printed, and written with --json).",
                      opts, argc, argv);
    if (code >= 0) return code;
    /* a rerun stops at its next check and keeps the verdicts so far (hours of measurement); a second signal exits */
    if (a.rerun) sd_sig_install();
    else sd_sig_install_immediate();
    int rc = sd_verify(&a, stdout);
    return rc < 0 ? sd_cli_fail("verify", rc) : rc;
}
