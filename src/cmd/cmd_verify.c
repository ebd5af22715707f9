/* cmd_verify — `showdown verify PUBLISHED.json`: re-check a published results file cell by cell.
 * Each cell's published environment is compared with this machine's (device, CPU, precision, batch,
 * epochs, data); a comparable cell is compared with a measurement (a --rerun through the bench layer, a
 * --results file, or the newest complete bench run in the database) and gets one verdict:
 * REPRODUCED, SLOWER, FASTER, ACCURACY-DIFFERS, NOT-COMPARABLE (naming the differences) or MISSING.
 * Exit 0 only when every cell reproduced; 5 when a comparable cell did not; 9 when some could not be checked. */
#include "bench/bench.h"
#include "bench/frameworks.h"
#include "bench/results.h"
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "core/jv.h"
#include "db/db.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct verify_args {
    const char *json, *results, *db, *workloads;
    double tolerance, acc_tolerance;
    long repeat, batches;
    int rerun, quiet;
} verify_args;

/* Time metrics in order of preference; lower is better. train_total_s = the sum of an epoch series. */
#define time_keys sd_published_time_keys

static const char *js(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

/* Environment of a published cell: the document's, overridden key by key by the run's. */
static json_t *merged_env(const json_t *doc, const json_t *run) {
    json_t *e = json_deep_copy(json_object_get(doc, "environment"));
    if (!e) e = json_object();
    json_t *r = json_object_get(run, "environment");
    if (json_is_object(r)) json_object_update_recursive(e, r);
    return e;
}

static const char *gpu_name(const json_t *env) {
    const json_t *g = json_object_get(env, "gpu");
    return js(g, "name");
}

/* "CPU Intel Xeon ... (2 cores)", "Tesla K80 (GPU)", "4x Tesla V100 (GPU)" or "GPU (model not stated)" */
static void device_str(char *buf, size_t n, const json_t *env, int is_gpu) {
    const char *g = gpu_name(env);
    json_int_t count = json_integer_value(json_object_get(json_object_get(env, "gpu"), "count"));
    if (g && count > 1) { snprintf(buf, n, "%lldx %s (GPU)", (long long)count, g); return; }
    if (g) { snprintf(buf, n, "%s (GPU)", g); return; }
    if (is_gpu) { snprintf(buf, n, "GPU (model not stated)"); return; }
    json_int_t cores = json_integer_value(json_object_get(env, "cores"));
    const char *cpu = js(env, "cpu_model");
    if (cores > 0) snprintf(buf, n, "CPU %s (%lld cores)", cpu ? cpu : "unknown", (long long)cores);
    else snprintf(buf, n, "CPU %s", cpu ? cpu : "unknown");
}

static void addf(char *buf, size_t n, const char *fmt, const char *a, const char *b) {
    size_t l = strlen(buf);
    if (l && l + 2 < n) { strncat(buf, "; ", n - l - 1); l += 2; }
    if (l < n) snprintf(buf + l, n - l, fmt, a, b);
}

/* Environment differences that make a published cell not comparable with this machine. */
static void env_diff(char *why, size_t n, const json_t *pub, const json_t *here, const char *pub_backend) {
    char a[320], b[320];
    const char *pg = gpu_name(pub), *hg = gpu_name(here);
    int pub_gpu = pg || (pub_backend && strcmp(pub_backend, "cudnn") == 0);
    device_str(a, sizeof a, pub, pub_gpu);
    device_str(b, sizeof b, here, hg != NULL);
    json_int_t pgc = json_integer_value(json_object_get(json_object_get(pub, "gpu"), "count"));
    json_int_t hgc = json_integer_value(json_object_get(json_object_get(here, "gpu"), "count"));
    if (pub_gpu != (hg != NULL) || (pg && hg && strcasecmp(pg, hg) != 0) || (pub_gpu && !pg) ||
        (pgc > 0 && hgc > 0 && pgc != hgc)) {
        if (!hg) {
            const char *note = js(json_object_get(here, "gpu"), "note");
            if (note) { size_t l = strlen(b); snprintf(b + l, sizeof b - l, "; no GPU: %s", note); }
        }
        addf(why, n, "device: published %s, here %s", a, b);
        return;
    }
    if (!pub_gpu) {
        const char *pc = js(pub, "cpu_model"), *hc = js(here, "cpu_model");
        if (pc && hc && strcmp(pc, hc) != 0) addf(why, n, "cpu: published %s, here %s", pc, hc);
        json_int_t pn = json_integer_value(json_object_get(pub, "cores")), hn = json_integer_value(json_object_get(here, "cores"));
        if (pn && hn && pn != hn) {
            snprintf(a, sizeof a, "%lld", (long long)pn);
            snprintf(b, sizeof b, "%lld", (long long)hn);
            addf(why, n, "cores: published %s, here %s", a, b);
        }
    }
}

/* Settings differences between the published cell and a measurement. */
static void settings_diff(char *why, size_t n, const json_t *pub, const json_t *meas, const char *metric) {
    const json_t *ps = json_object_get(pub, "settings"), *ms = json_object_get(meas, "settings");
    const char *keys[] = {"batch", "precision", "max_batches", "epochs", NULL};
    for (int i = 0; keys[i]; i++) {
        if (strcmp(keys[i], "epochs") == 0 && strcmp(metric, "train_total_s") != 0) continue;
        const json_t *p = json_object_get(ps, keys[i]), *m = json_object_get(ms, keys[i]);
        if (!p && strcmp(keys[i], "max_batches") != 0) continue;   /* not published: not compared */
        if (!p) p = json_null();
        if (!m) m = json_null();
        if (!json_equal(p, m)) {
            char *a = json_dumps(p, JSON_ENCODE_ANY), *b = json_dumps(m, JSON_ENCODE_ANY);
            char msg[96];
            snprintf(msg, sizeof msg, "%s: published %%s, here %%s", keys[i]);
            addf(why, n, msg, a ? a : "?", b ? b : "?");
            free(a); free(b);
        }
    }
    const char *pk = js(json_object_get(pub, "data"), "kind"), *mk = js(json_object_get(meas, "data"), "kind");
    if (pk && mk && strcmp(pk, mk) != 0) addf(why, n, "data: published %s, here %s", pk, mk);
}

/* The measured statistic for metric: summary[metric], or for train_total_s the sums of each sample's
 * epoch times. */
static int measured_stat(const json_t *run, const char *metric, sd_stat *out) {
    const json_t *s = json_object_get(json_object_get(run, "summary"), metric);
    if (json_is_object(s)) {
        out->median = json_number_value(json_object_get(s, "median"));
        out->min = json_number_value(json_object_get(s, "min"));
        out->max = json_number_value(json_object_get(s, "max"));
        out->n = (int)json_integer_value(json_object_get(s, "n"));
        return 1;
    }
    if (strcmp(metric, "train_total_s") != 0) return 0;
    const json_t *samples = json_object_get(run, "samples");
    size_t ns = json_array_size(samples), i;
    if (!ns) return 0;
    double *v = calloc(ns, sizeof *v);
    if (!v) return 0;
    const json_t *smp;
    json_array_foreach(samples, i, smp) {
        size_t j;
        const json_t *ep;
        json_array_foreach(json_object_get(smp, "epochs"), j, ep) v[i] += json_number_value(json_object_get(ep, "train_s"));
    }
    *out = sd_stat_of(v, (int)ns);
    free(v);
    return 1;
}

/* A framework runner's results name its device ("cuda", "cpu") where a published cell names a back-end. */
static const char *runner_device(const char *pub_backend) {
    return pub_backend && strcmp(pub_backend, "cudnn") == 0 ? "cuda" : "cpu";
}

static const json_t *find_run(const json_t *doc, const char *w, const char *impl, const char *be) {
    if (strcmp(impl, "native") != 0) be = runner_device(be);
    size_t i;
    const json_t *r;
    sd_results_foreach(doc, i, r)
        if (!strcmp(js(r, "workload") ? js(r, "workload") : "", w) && !strcmp(js(r, "implementation") ? js(r, "implementation") : "", impl) &&
            !strcmp(js(r, "backend") ? js(r, "backend") : "", be) && !strcmp(js(r, "status") ? js(r, "status") : "", "ok"))
            return r;
    return NULL;
}

/* Why a rerun's cell failed, from its results: the failed run's error, or the framework's equivalence check. */
static const char *rerun_error(const json_t *doc) {
    size_t i;
    const json_t *r;
    sd_results_foreach(doc, i, r) {
        if (js(r, "error")) return js(r, "error");
        const char *eq = js(json_object_get(r, "equivalence"), "status");
        if (eq && strcmp(eq, "failed") == 0) return "the equivalence check failed";
    }
    return "a run failed";
}

/* Rerun one cell through the bench layer with the published settings; *doc gets its results, or stays NULL with
 * why saying what went wrong. Only an interruption is returned. */
static int rerun(const verify_args *a, const json_t *pub, json_t **doc, char *why, size_t n) {
    const json_t *st = json_object_get(pub, "settings");
    sd_bench_opts o;
    sd_bench_opts_default(&o);
    sd_bench_cell cell = {.workload = js(pub, "workload"), .implementation = js(pub, "implementation"),
                          .backend = js(pub, "backend")};
    if (strcmp(cell.implementation, "native") != 0)   /* a framework runner on the published kind of device */
        cell.backend = o.device = runner_device(cell.backend);
    const char *kind = js(json_object_get(pub, "data"), "kind");
    o.data = kind && strcmp(kind, "synthetic") == 0 ? "synthetic" : "auto";
    if (json_integer_value(json_object_get(st, "epochs")) > 0) o.epochs = (long)json_integer_value(json_object_get(st, "epochs"));
    if (json_integer_value(json_object_get(st, "batch")) > 0) o.batch = (long)json_integer_value(json_object_get(st, "batch"));
    long mb = a->batches > 0 ? a->batches : (long)json_integer_value(json_object_get(st, "max_batches"));
    if (mb > 0) o.batches = mb;
    if (js(st, "precision")) o.precision = js(st, "precision");
    o.repeat = a->repeat < 3 ? 3 : a->repeat;
    o.workloads_dir = a->workloads;
    o.quiet = 1;
    if (!a->quiet) fprintf(stderr, "verify: rerunning %s/%s (%ld repetitions)\n", js(pub, "workload"), js(pub, "backend"), o.repeat);
    sd_bench_outcome out;
    int rc = sd_bench_matrix_run(&o, &cell, 1, NULL, doc, &out);
    if (rc == SD_EINTR) return rc;
    if (rc) {
        snprintf(why, n, "rerun failed: %s", sd_errmsg());
    } else if (out.failed) {   /* like a bench that exits non-zero: no measurement to compare */
        snprintf(why, n, "rerun failed: %s", rerun_error(*doc));
        json_decref(*doc);
        *doc = NULL;
    }
    return 0;
}

typedef struct counts { int reproduced, slower, faster, accuracy, notcomp, missing; } counts;

int cmd_verify(int argc, char **argv) {
    verify_args a = {.tolerance = 10, .acc_tolerance = 0.02, .repeat = 3};
    const char *path = NULL;
    const sd_opt opts[] = {
        {"PUBLISHED.json", SD_OPT_ARG, &path, NULL, "the published results file to re-check", 0, 0},
        {"rerun", SD_OPT_FLAG, &a.rerun, NULL, "measure every comparable cell now, through bench (>= 3 repetitions)", 0, 0},
        {"tolerance", SD_OPT_DOUBLE, &a.tolerance, "PCT", "a time within PCT % of the published figure (or a published figure inside the measured min-max) reproduces (default 10)", 0, 1e9},
        {"acc-tolerance", SD_OPT_DOUBLE, &a.acc_tolerance, "A", "largest absolute accuracy difference that still reproduces (default 0.02)", 0, 1},
        {"repeat", SD_OPT_INT, &a.repeat, "R", "repetitions of a rerun (default and minimum 3)", 3, 1000},
        {"batches", SD_OPT_INT, &a.batches, "N", "cap batches per epoch of a rerun (the comparison then says max_batches differs unless published so)", 1, 100000000},
        {"results", SD_OPT_STR, &a.results, "FILE", "compare with this results file instead of the database", 0, 0},
        {"db", SD_OPT_STR, &a.db, "FILE", "results database for earlier measurements (default " DB_DEFAULT_PATH ")", 0, 0},
        {"workloads", SD_OPT_STR, &a.workloads, "DIR", "workload specs for a rerun (default ./workloads)", 0, 0},
        {"json", SD_OPT_STR, &a.json, "FILE", "write the verdicts (showdown-verify/1) to FILE for the report", 0, 0},
        {"quiet", SD_OPT_FLAG, &a.quiet, NULL, "no notes on stderr", 0, 0},
        {0},
    };
    int help = 0;
    int rc = sd_opts_parse(opts, argc, argv, NULL, 0, NULL, &help);
    if (rc) return sd_cli_fail("verify", rc);
    if (help) {
        sd_opts_usage(stdout, "verify", "PUBLISHED.json [--rerun] [--tolerance PCT] [--json FILE]",
                      "Re-check a published results file cell by cell. Verdicts: REPRODUCED, SLOWER, FASTER,\n"
                      "ACCURACY-DIFFERS, NOT-COMPARABLE (with the environment differences), MISSING (no measurement).\n"
                      "Exit 0: every cell reproduced; 5: a comparable cell did not; 9: some cells could not be checked.",
                      opts);
        return SD_EXIT_OK;
    }
    if (a.json && (rc = sd_out_file_check(a.json, "--json")) != 0) return sd_cli_fail("verify", rc);
    sd_sig_install_immediate();
    json_t *pubdoc = NULL;
    if ((rc = sd_published_load(&pubdoc, path)) != 0) return sd_cli_fail("verify", rc);
    json_error_t je;

    /* earlier measurements: --results FILE, else the newest complete bench run in the database */
    json_t *measured = NULL;
    char msource[512] = "";
    if (a.results) {
        if ((rc = sd_results_check_file(a.results)) != 0) { json_decref(pubdoc); return sd_cli_fail("verify", rc); }
        measured = json_load_file(a.results, 0, &je);
        if (!measured) {
            json_decref(pubdoc);
            sd_err(SD_EINPUT, "%s:%d:%d: %s", a.results, je.line, je.column, je.text);
            return sd_cli_fail("verify", SD_EINPUT);
        }
        snprintf(msource, sizeof msource, "results %s", a.results);
    } else if (!a.rerun) {
        const char *dbp = a.db ? a.db : DB_DEFAULT_PATH;
        if (a.db || access(dbp, F_OK) == 0) {
            db *d = NULL;
            int64_t id;
            int n = 0;
            if ((rc = db_open(&d, dbp)) != 0 || (rc = db_runs_complete(d, "bench", 0, &id, 1, &n)) != 0 ||
                (n && (rc = sd_results_load(d, id, &measured)) != 0)) {
                db_close(d);
                json_decref(pubdoc);
                return sd_cli_fail("verify", rc);
            }
            db_close(d);
            if (n) snprintf(msource, sizeof msource, "database %s run %lld", dbp, (long long)id);
        }
    }
    json_t *here = measured && json_object_get(measured, "environment") ? json_incref(json_object_get(measured, "environment"))
                                                                         : sd_env_fingerprint();

    const json_t *pinfo = json_object_get(pubdoc, "published");
    json_t *out = json_pack("{s:s,s:s,s:s?,s:s?,s:f,s:f,s:s?,s:O,s:[]}", "schema", "showdown-verify/1", "published_file", path,
                            "title", js(pinfo, "title"), "source", js(pinfo, "source"), "tolerance_pct", a.tolerance,
                            "accuracy_tolerance", a.acc_tolerance, "measured_from", a.rerun ? "rerun" : (msource[0] ? msource : NULL),
                            "environment_here", here, "cells");
    counts c = {0};
    json_t *pchecks = json_array();   /* lines printed after the table */
    printf("%-14s %-11s %-7s %-15s %12s %-26s %-16s %s\n", "workload", "impl", "backend", "metric", "published",
           "measured median [min-max]", "verdict", "why");
    size_t i;
    json_t *pub;
    sd_results_foreach(pubdoc, i, pub) {
        const char *w = js(pub, "workload"), *impl = js(pub, "implementation"), *be = js(pub, "backend");
        const json_t *psum = json_object_get(pub, "summary");
        const char *metric = NULL;
        for (int k = 0; time_keys[k] && !metric; k++)
            if (json_is_object(json_object_get(psum, time_keys[k]))) metric = time_keys[k];
        double pv = json_number_value(json_object_get(json_object_get(psum, metric), "median"));
        const json_t *pacc = json_object_get(json_object_get(psum, "accuracy"), "median");
        json_t *penv = merged_env(pubdoc, pub);
        char why[1024] = "", pdev[320];
        device_str(pdev, sizeof pdev, penv, gpu_name(penv) || (be && strcmp(be, "cudnn") == 0));
        const char *verdict = NULL;
        json_t *rerun_doc = NULL;
        const json_t *m = NULL;
        sd_stat ms = {0};
        env_diff(why, sizeof why, penv, here, be);
        if (why[0]) verdict = "NOT-COMPARABLE";
        if (!verdict && !sd_bench_impl_known(impl)) {
            snprintf(why, sizeof why, "no %s runner in showdown (bench --impl runs native and the runners of "
                                      "workloads/runners/)", impl);
            verdict = "MISSING";
        }
        if (!verdict && a.rerun) {
            if ((rc = rerun(&a, pub, &rerun_doc, why, sizeof why)) != 0) break;
            m = rerun_doc ? find_run(rerun_doc, w, impl, be) : NULL;
        } else if (!verdict && measured) {
            m = find_run(measured, w, impl, be);
        }
        if (!verdict && !m) {
            if (!why[0]) snprintf(why, sizeof why, "no measurement of %s/%s/%s in %s", w, impl,
                                  strcmp(impl, "native") ? runner_device(be) : be,
                                  msource[0] ? msource : "the database (run bench, or verify --rerun)");
            verdict = "MISSING";
        }
        if (!verdict) {
            settings_diff(why, sizeof why, pub, m, metric);
            if (why[0]) verdict = "NOT-COMPARABLE";
            else if (!measured_stat(m, metric, &ms)) {
                snprintf(why, sizeof why, "the measurement has no %s", metric);
                verdict = "MISSING";
            }
        }
        double macc = NAN;
        if (!verdict) {
            const json_t *ma = json_object_get(json_object_get(json_object_get(m, "summary"), "accuracy"), "median");
            if (ma) macc = json_number_value(ma);
            double tol = a.tolerance / 100.0 * pv;
            if (pacc && ma && fabs(json_number_value(pacc) - macc) > a.acc_tolerance) {
                snprintf(why, sizeof why, "accuracy: published %.4f, measured %.4f (tolerance %.4f)", json_number_value(pacc),
                         macc, a.acc_tolerance);
                verdict = "ACCURACY-DIFFERS";
            } else if (fabs(ms.median - pv) <= tol || (pv >= ms.min && pv <= ms.max)) {
                snprintf(why, sizeof why, "within %.3g%% or inside the measured spread", a.tolerance);
                verdict = "REPRODUCED";
            } else {
                snprintf(why, sizeof why, "%.1f%% %s than published, outside the tolerance and the spread",
                         fabs(ms.median - pv) / pv * 100, ms.median > pv ? "slower" : "faster");
                verdict = ms.median > pv ? "SLOWER" : "FASTER";
            }
        }
        if (!strcmp(verdict, "REPRODUCED")) c.reproduced++;
        else if (!strcmp(verdict, "SLOWER")) c.slower++;
        else if (!strcmp(verdict, "FASTER")) c.faster++;
        else if (!strcmp(verdict, "ACCURACY-DIFFERS")) c.accuracy++;
        else if (!strcmp(verdict, "NOT-COMPARABLE")) c.notcomp++;
        else c.missing++;
        char mstr[64] = "-";
        if (ms.n > 1) snprintf(mstr, sizeof mstr, "%.4g [%.4g-%.4g]", ms.median, ms.min, ms.max);
        else if (ms.n == 1) snprintf(mstr, sizeof mstr, "%.4g", ms.median);
        printf("%-14s %-11s %-7s %-15s %12.4g %-26s %-16s %s\n", w, impl, be, metric, pv, mstr, verdict, why);
        json_t *cell = json_pack("{s:s,s:s,s:s,s:s,s:s,s:f,s:s,s:s,s:o}", "workload", w, "implementation", impl, "backend", be,
                                 "device_published", pdev, "metric", metric, "published", pv, "verdict", verdict, "why", why,
                                 "environment_published", penv);
        if (ms.n) json_object_set_new(cell, "measured", json_pack("{s:f,s:f,s:f,s:i}", "median", ms.median, "min", ms.min,
                                                                  "max", ms.max, "n", ms.n));
        if (pacc) json_object_set_new(cell, "accuracy_published", json_copy((json_t *)pacc));
        if (!isnan(macc)) json_object_set_new(cell, "accuracy_measured", json_real(macc));
        if (js(pub, "note")) json_object_set_new(cell, "note", json_string(js(pub, "note")));
        /* Where the publication disagrees with its own evidence (scripts/published_dlf.py): shown, not judged. */
        const json_t *pc = json_object_get(pub, "published_check"), *pcv;
        size_t k;
        json_array_foreach(pc, k, pcv) {
            const char *t = json_string_value(pcv);
            if (!t || strncmp(t, "not checked", 11) == 0) continue;
            if (!json_object_get(cell, "published_check")) json_object_set_new(cell, "published_check", json_array());
            json_array_append_new(json_object_get(cell, "published_check"), json_string(t));
            char line[600];
            snprintf(line, sizeof line, "  published-check %s/%s on %s: %s", w, impl, pdev, t);
            json_array_append_new(pchecks, json_string(line));
        }
        json_array_append_new(json_object_get(out, "cells"), cell);
        json_decref(rerun_doc);
    }
    int code = SD_EXIT_OK;
    if (c.slower + c.faster + c.accuracy) code = SD_EXIT_MISMATCH;
    else if (c.notcomp + c.missing) code = SD_EXIT_NOTCOMPARABLE;
    if (rc == 0 && json_array_size(pchecks)) {
        printf("\nWhere the publication disagrees with its own evidence (not a verdict on this machine):\n");
        size_t k;
        json_t *l;
        json_array_foreach(pchecks, k, l) printf("%s\n", json_string_value(l));
    }
    json_decref(pchecks);
    if (rc == 0) {
        printf("\n%d cell(s): %d reproduced, %d slower, %d faster, %d accuracy differs, %d not comparable, %d missing\n",
               c.reproduced + c.slower + c.faster + c.accuracy + c.notcomp + c.missing, c.reproduced, c.slower, c.faster,
               c.accuracy, c.notcomp, c.missing);
        json_object_set_new(out, "counts", json_pack("{s:i,s:i,s:i,s:i,s:i,s:i}", "REPRODUCED", c.reproduced, "SLOWER", c.slower,
                                                     "FASTER", c.faster, "ACCURACY-DIFFERS", c.accuracy, "NOT-COMPARABLE",
                                                     c.notcomp, "MISSING", c.missing));
        json_object_set_new(out, "exit_code", json_integer(code));
        if (a.json) rc = sd_json_write_atomic(out, a.json);
    }
    json_decref(out);
    json_decref(here);
    json_decref(measured);
    json_decref(pubdoc);
    if (rc) return sd_cli_fail("verify", rc);
    return code;
}
