/* cmd_nightly — `showdown nightly`: the cron job (bench/nightly.c does the work). Reads the options and the config
 * file, then runs bench, score and report into OUT/YYYY-MM-DD/ with history and regression flags. */
#include "bench/nightly.h"
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

#include <stdio.h>

/* The config file (JSON, every key optional): positioned errors for wrong keys or types. */
static int load_config(sd_nightly_cfg *c, const char *path, jv_doc **keep) {
    static const char *const keys[] = {"workloads", "backends", "data", "epochs", "batches", "repeat", "keep",
                                       "threshold_pct", "out", "db", "workloads_dir", NULL};
    jv_doc *d = NULL;
    SD_TRY(jv_load(&d, path));
    const jv *r = jv_root(d);
    int rc = jv_expect(d, r, JV_OBJECT, "nightly config");
    if (!rc) rc = jv_check_keys(d, r, "nightly config", keys);
    if (!rc) rc = jv_get_str(d, r, "workloads", "nightly config", 0, &c->workloads);
    if (!rc) rc = jv_get_str(d, r, "backends", "nightly config", 0, &c->backends);
    if (!rc) rc = jv_get_str(d, r, "data", "nightly config", 0, &c->data);
    if (!rc) rc = jv_get_str(d, r, "out", "nightly config", 0, &c->out);
    if (!rc) rc = jv_get_str(d, r, "db", "nightly config", 0, &c->db);
    if (!rc) rc = jv_get_str(d, r, "workloads_dir", "nightly config", 0, &c->workloads_dir);
    if (!rc) rc = jv_get_int(d, r, "epochs", "nightly config", 0, 1, 100000, &c->epochs);
    if (!rc) rc = jv_get_int(d, r, "batches", "nightly config", 0, 0, 100000000, &c->batches);
    if (!rc) rc = jv_get_int(d, r, "repeat", "nightly config", 0, 1, 1000, &c->repeat);
    if (!rc) rc = jv_get_int(d, r, "keep", "nightly config", 0, 1, 100000, &c->keep);
    if (!rc) rc = jv_get_num(d, r, "threshold_pct", "nightly config", 0, 0, 1000, &c->threshold);
    if (rc) { jv_doc_free(d); return rc; }
    *keep = d;   /* strings point into it */
    return 0;
}

int cmd_nightly(int argc, char **argv) {
    sd_nightly_cfg c = {.workloads = "mnist_mlp,mnist_cnn,cifar10_vgg", .backends = "all", .data = "auto", .out = "out",
                     .epochs = 2, .batches = 20, .repeat = 3, .keep = 30, .threshold = 7};
    const char *config = NULL, *out = NULL, *dbp = NULL;
    long keep = 0;
    double thr = -1;
    const sd_opt opts[] = {
        {"config", SD_OPT_STR, &config, "FILE", "JSON config: workloads, backends, data, epochs, batches, repeat, keep, threshold_pct, out, db, workloads_dir", 0, 0},
        {"out", SD_OPT_STR, &out, "DIR", "output root (default out): DIR/YYYY-MM-DD/, DIR/latest, DIR/nightly.lock", 0, 0},
        {"db", SD_OPT_STR, &dbp, "FILE", "results database (default OUT/showdown.db)", 0, 0},
        {"keep", SD_OPT_INT, &keep, "N", "keep the newest N nightly runs (default 30)", 1, 100000},
        {"threshold", SD_OPT_DOUBLE, &thr, "PCT", "regression threshold in percent (default 7)", 0, 1000},
        {0},
    };
    int code = sd_cli_parse("nightly", "[--config FILE]",
                      "Run bench, score and report into OUT/YYYY-MM-DD/, keep history in the database and\n"
                      "flag regressions: a median slower than the previous nightly run's by more than the threshold and\n"
                      "above its max. Exit 6 on a regression, 7 when another nightly run holds the lock.\n"
                      "Test only: SHOWDOWN_TEST_SLOWDOWN=MS makes training sleep MS ms per batch.",
                      opts, argc, argv);
    if (code >= 0) return code;
    int rc = 0;
    jv_doc *cfgdoc = NULL;
    if (config && (rc = load_config(&c, config, &cfgdoc)) != 0) return sd_cli_fail("nightly", rc);
    if (out) c.out = out;
    if (dbp) c.db = dbp;
    /* "" would be the root directory: OUT/2026-01-01/, /latest and the lock at the top of the file system */
    if ((rc = sd_out_path_ok(c.out, out ? "--out" : "nightly config: out")) != 0 ||
        (c.db && (rc = sd_out_path_ok(c.db, dbp ? "--db" : "nightly config: db")) != 0)) {
        if (!out && config) sd_err_prefix(rc, "%s", config);
        jv_doc_free(cfgdoc);
        return sd_cli_fail("nightly", rc);
    }
    if (keep > 0) c.keep = keep;
    if (thr >= 0) c.threshold = thr;

    code = SD_EXIT_OK;
    rc = sd_nightly_run(&c, &code);
    jv_doc_free(cfgdoc);
    return rc ? sd_cli_fail("nightly", rc) : code;
}
