/* matrix — a benchmark run as a whole: the workload × implementation × back-end lists expanded into cells in run
 * order, and the cells run one after another into one results document that goes into the database as it is
 * measured (sd_results_store, the one way a run is stored). A failed cell is recorded and the others go on. */
#include "bench/bench.h"
#include "bench/frameworks.h"
#include "bench/results.h"
#include "bench/verify.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/sig.h"
#include "core/util.h"
#include "db/db.h"
#include "nn/backend.h"
#include "nn/train.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sd_bench_opts_default(sd_bench_opts *o) {
    *o = (sd_bench_opts){.impl = "native", .backend = "auto", .data = "auto", .precision = "fp32", .autotune = "on",
                         .device = "auto", .repeat = 1, .seed = 42, .gpus = 1, .runner_timeout = 300,
                         .runner_limit = 86400, .host_wait_total_s = 600, .again = 1};
}

/* Split the comma list s (modified in place) into *names, malloc'd; the count, or a negative status. */
static int split(char *s, char ***names) {
    int max = 1;
    for (const char *p = s; *p; p++) max += *p == ',';
    *names = calloc((size_t)max, sizeof **names);
    if (!*names) return sd_err(SD_ENOMEM, "out of memory");
    return sd_split_list(s, *names, max);
}

int sd_bench_matrix_new(sd_bench_matrix *m, const sd_bench_opts *o) {
    memset(m, 0, sizeof *m);
    const char *backends = strcmp(o->backend, "all") == 0 ? nn_backend_list() : o->backend;
    int all = strcmp(o->impl, "all") == 0;
    size_t li = all ? strlen("native") + 1 : strlen(o->impl) + 1, lw = strlen(o->workload) + 1, lb = strlen(backends) + 1;
    for (int i = 0; all && i < sd_framework_count(); i++) li += strlen(sd_framework_at(i)->name) + 1;
    m->names = malloc(li + lw + lb);
    if (!m->names) return sd_err(SD_ENOMEM, "out of memory");
    char *il = m->names, *wl = il + li, *bl = wl + lw;
    if (all) {   /* native, then every framework in the table's order */
        size_t len = (size_t)snprintf(il, li, "native");
        for (int i = 0; i < sd_framework_count(); i++)
            len += (size_t)snprintf(il + len, li - len, ",%s", sd_framework_at(i)->name);
    } else {
        memcpy(il, o->impl, li);
    }
    memcpy(wl, o->workload, lw);
    memcpy(bl, backends, lb);

    char **inames = NULL, **wnames = NULL, **bnames = NULL;
    int ni = split(il, &inames), nw = 0, nb = 0, native = 0, rc = ni < 0 ? ni : 0;
    for (int i = 0; rc == 0 && i < ni; i++) {
        if (strcmp(inames[i], "native") == 0) native = 1;
        else if (!sd_bench_impl_known(inames[i]))
            rc = sd_err(SD_EUSAGE, "--impl: unknown implementation '%s' (expected native, all, or a framework: see "
                        "--help)", inames[i]);
    }
    if (rc == 0 && ni == 0) rc = sd_err(SD_EUSAGE, "--impl needs at least one name");
    if (rc == 0 && (nw = split(wl, &wnames)) < 0) rc = nw;
    if (rc == 0 && (nb = split(bl, &bnames)) < 0) rc = nb;
    if (rc == 0 && (nw == 0 || nb == 0)) rc = sd_err(SD_EUSAGE, "--workload and --backend need at least one name");
    if (rc == 0 && !(m->cells = calloc((size_t)nw * (size_t)(nb + ni), sizeof *m->cells)))
        rc = sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < nw; i++) {
        for (int j = 0; j < nb && native; j++)
            m->cells[m->ncells++] = (sd_bench_cell){.workload = wnames[i], .implementation = "native", .backend = bnames[j]};
        for (int k = 0; k < ni; k++)
            if (strcmp(inames[k], "native") != 0)
                m->cells[m->ncells++] = (sd_bench_cell){.workload = wnames[i], .implementation = inames[k],
                                                        .backend = o->device};
    }
    if (rc == 0) {
        m->workloads = (const char **)wnames;
        m->nworkloads = nw;
        wnames = NULL;
    }
    free(inames);
    free(wnames);
    free(bnames);
    return rc;
}

void sd_bench_matrix_free(sd_bench_matrix *m) {
    if (!m) return;
    free(m->cells);
    free(m->workloads);
    free(m->names);
    memset(m, 0, sizeof *m);
}

/* The settings a run can take, whoever filled them in (the command line checks them too; a published file does not). */
static int check_opts(const sd_bench_opts *o) {
    if (strcmp(o->precision, "fp32") != 0 && strcmp(o->precision, "tf32") != 0 && strcmp(o->precision, "bf16") != 0 &&
        strcmp(o->precision, "fp16") != 0)
        return sd_err(SD_EUSAGE, "precision '%s': expected fp32, tf32, bf16 or fp16", o->precision);
    if (o->epochs < 0 || o->epochs > SD_BENCH_MAX_EPOCHS)
        return sd_err(SD_EUSAGE, "%ld epochs: at most %d", o->epochs, SD_BENCH_MAX_EPOCHS);
    if (o->batch < 0 || o->batch > SD_BENCH_MAX_BATCH)
        return sd_err(SD_EUSAGE, "batch %ld: at most %d", o->batch, SD_BENCH_MAX_BATCH);
    if (o->batches < 0 || o->batches > SD_BENCH_MAX_BATCHES)
        return sd_err(SD_EUSAGE, "%ld batches: at most %d", o->batches, SD_BENCH_MAX_BATCHES);
    if (o->repeat < 1 || o->repeat > SD_BENCH_MAX_REPEAT)
        return sd_err(SD_EUSAGE, "%ld repeats: between 1 and %d", o->repeat, SD_BENCH_MAX_REPEAT);
    return 0;
}

/* One line per cell as it ends, steps numbered: `[17/120] resnet18_cifar · jax · train · 48.3 img/s · ETA 9 min`
 * (its status and reason when it did not measure; head before it: a round of spread cells); the ETA assumes the
 * cells left take the mean so far. */
static void progress(const char *head, const json_t *doc, size_t from, size_t to, int done, int n, double elapsed_s) {
    for (size_t i = from; i < to && i < sd_results_count(doc); i++) {
        sd_run_view v;
        sd_run_view_of(sd_results_run(doc, i), &v);
        const char *st = json_string_value(v.status), *impl = json_string_value(v.implementation);
        char fig[160];
        const char *why = json_string_value(v.error) ? json_string_value(v.error) : "no reason recorded";
        size_t sl = st ? strlen(st) : 0;
        if (st && strncmp(why, st, sl) == 0 && why[sl] == ':') why += sl + 1 + (why[sl + 1] == ' ');
        if (st && strcmp(st, "ok") != 0)   /* the reason up to its parenthesis (a path, a hint): said in full above */
            snprintf(fig, sizeof fig, "%s: %.*s", st, (int)(strstr(why, " (") ? strstr(why, " (") - why : 120), why);
        else if (isfinite(v.train_images_per_s.median))
            snprintf(fig, sizeof fig, "train · %.1f img/s", v.train_images_per_s.median);
        else if (isfinite(v.inference_s_per_1000.median) && v.inference_s_per_1000.median > 0)
            snprintf(fig, sizeof fig, "inference · %.1f img/s", 1000.0 / v.inference_s_per_1000.median);
        else snprintf(fig, sizeof fig, "measured");
        size_t len = strlen(fig);
        if (v.batches_asked) {   /* a runner's time cap trained fewer batches than asked: said here */
            char asked[24] = "all";
            if (v.batches_asked > 0) snprintf(asked, sizeof asked, "%d", v.batches_asked);
            snprintf(fig + len, sizeof fig - len, " (%d of %s batches: time cap)", v.max_batches, asked);
        }
        double eta = done < n ? elapsed_s / done * (n - done) : 0;
        fprintf(stderr, "%s[%d/%d] %s · %s%s%s · %s · ETA %.0f min\n", head, done, n, json_string_value(v.workload),
                impl ? impl : "?", impl && strcmp(impl, "native") == 0 ? " " : "",
                impl && strcmp(impl, "native") == 0 ? json_string_value(v.backend) : "", fig, ceil(eta / 60));
    }
}

/* Whether the runs [from, to) of a cell all measured (a failed or unsupported cell is not measured again). */
static int all_ok_run(const json_t *doc, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        if (!sd_results_run_ok(sd_results_run(doc, i))) return 0;
    }
    return to > from && to <= sd_results_count(doc);
}

/* Whether every run a cell added, from `from` on, measured. */
static int all_ok(const json_t *doc, size_t from) { return all_ok_run(doc, from, sd_results_count(doc)); }

/* Whether the cells' repeats are spread over the run, with --spread: a framework's processes, and native's repeats as
 * well (three back to back take two seconds on mnist_mlp, which a slow spell between the canaries can hold whole: a
 * report published 0.068 s for an epoch that two reruns measured at 0.037). */
static int spread_rounds(const sd_bench_opts *o) { return o->spread && o->repeat > 1; }

/* Whether a run of the document failed, or failed its equivalence check (a runner's output against native's). */
static int any_failed(const json_t *doc) {
    for (size_t i = 0; i < sd_results_count(doc); i++) {
        sd_run_view v;
        sd_run_view_of(sd_results_run(doc, i), &v);
        const char *st = json_string_value(v.status), *eq = v.equivalence_status;
        if ((st && strcmp(st, "failed") == 0) || (eq && strcmp(eq, "failed") == 0)) return 1;
    }
    return 0;
}

/* A database call failed: keep its message, say so now, and go on without the database. */
static void db_lost(db **dbh, sd_bench_outcome *out) {
    snprintf(out->db_error, sizeof out->db_error, "%s", sd_errmsg());
    fprintf(stderr, "showdown bench: database: %s; measuring goes on, results not stored\n", out->db_error);
    db_close(*dbh);
    *dbh = NULL;
}

/* Whether a cell's runs [a, b) all ran in a slow spell (their host_speed, the cell's canaries' lower; below
 * SD_HOST_QUIET for a native cell) and measured, or were killed past their time bound: a spell that halves the
 * host's speed takes a runner past it. */
static int slowed(const json_t *doc, size_t a, size_t b, const sd_bench_cell *c) {
    if (b <= a || sd_results_count(doc) < b) return 0;
    const double slow = strcmp(c->implementation, "native") == 0 ? SD_HOST_QUIET : SD_HOST_SLOW;
    for (size_t k = a; k < b; k++) {
        sd_run_view v;
        sd_run_view_of(sd_results_run(doc, k), &v);
        const char *st = json_string_value(v.status);
        const int ran = st && (strcmp(st, "ok") == 0 || v.timed_out);
        if (!ran || !(v.host_speed < slow)) return 0;
    }
    return 1;
}

/* The widest spread over its processes (repeats) of a figure verify judges, among a cell's runs [a, b) that all
 * measured; 0 when none spreads. Wider than verify's tolerance, a reader's rerun cannot reproduce its median. */
static double widest(const json_t *doc, size_t a, size_t b) {
    double w = 0;
    if (b <= a || sd_results_count(doc) < b) return 0;
    for (size_t k = a; k < b; k++) {
        if (!sd_results_run_ok(sd_results_run(doc, k))) return 0;
        sd_run_view v;
        sd_run_view_of(sd_results_run(doc, k), &v);
        const double s = sd_run_judged_spread_pct(&v);
        if (s > w) w = s;
    }
    return w;
}

static int wide(const json_t *doc, size_t a, size_t b) { return widest(doc, a, b) > SD_VERIFY_TOLERANCE_PCT; }

/* The cells a slow spell still slowed after the matrix (first[i] is cell i's first run, first[ncells] the end),
 * measured once more with a longer wait: the spells last minutes; and the cells whose processes disagree by more
 * than verify's tolerance (a short framework cell moves 10-25% between processes, a few a report). The runs kept
 * are those of the faster host, or of the processes that agree better, in the document and in the database rows
 * the first ones were stored in. */
static int measure_again(const sd_bench_opts *o, const sd_bench_cell *cells, int ncells, const size_t *first,
                         json_t *doc, db **dbh, sd_bench_outcome *out) {
    int todo = 0, k = 0, nslow = 0;
    const int rounds = spread_rounds(o);
    for (int i = 0; i < ncells; i++) {
        const int s = slowed(doc, first[i], first[i + 1], &cells[i]);
        nslow += s;
        todo += s || (!rounds && wide(doc, first[i], first[i + 1]));
    }
    if (!todo) return 0;
    if (!o->quiet) {
        char slow[64] = "", wide_[96] = "";
        if (nslow) snprintf(slow, sizeof slow, "%d cell(s) ran while this host was slow", nslow);
        if (todo > nslow)
            snprintf(wide_, sizeof wide_, "%s%d %sspread wider than %.0f%% over their processes", nslow ? ", " : "",
                     todo - nslow, nslow ? "" : "cell(s) ", SD_VERIFY_TOLERANCE_PCT);
        fprintf(stderr, "host: %s%s: measuring them again\n", slow, wide_);
    }
    sd_host_budget_renew();
    sd_bench_opts again = *o;
    again.host_wait_s *= SD_HOST_AGAIN_WAIT;
    for (int i = 0; i < ncells; i++) {
        const int slow = slowed(doc, first[i], first[i + 1], &cells[i]);
        /* a spread cell's processes ran minutes apart: their spread is the host's, published as it is */
        const double spread = rounds ? 0 : widest(doc, first[i], first[i + 1]);
        if (!slow && !(spread > SD_VERIFY_TOLERANCE_PCT)) continue;
        const size_t end = sd_results_count(doc), n = first[i + 1] - first[i];
        sd_run_view v;
        sd_run_view_of(sd_results_run(doc, first[i]), &v);
        const double was = v.host_speed;
        const int timed_out = v.timed_out;
        double speed = sd_host_settle(&again, sd_sig_flag());
        int failed = 0, rc = sd_bench_cell_run(&again, &cells[i], doc, &failed);
        if (rc == SD_EINTR) {
            sd_results_truncate(doc, end);
            return rc;
        }
        const double now = rc == 0 ? sd_host_after(&again, speed) : NAN;
        const int ok = rc == 0 && !failed && all_ok(doc, end) && sd_results_count(doc) - end == n;
        const double spread_now = ok ? widest(doc, end, sd_results_count(doc)) : NAN;
        /* slowed: a measurement at any speed rather than none; spread: the processes that agree better, unless
         * the host ran slow this time */
        const int take = ok && (slow ? now > was || timed_out
                                     : sd_host_steadier(spread_now, spread, now, was));
        for (size_t j = 0; take && j < n; j++) {   /* the new run's members in the first's object, in place */
            json_t *dst = sd_results_run(doc, first[i] + j);
            json_object_clear(dst);
            json_object_update(dst, sd_results_run(doc, end + j));
            json_object_set_new(dst, "host_speed", json_real(now));
        }
        sd_results_truncate(doc, end);
        if (!o->quiet) {
            char why[96];
            if (slow)
                snprintf(why, sizeof why, "host at %.0f%% (first %.0f%%%s)", 100 * now, 100 * was,
                         timed_out ? ", timed out" : "");
            else
                snprintf(why, sizeof why, "spread %.1f%% (first %.1f%%), host at %.0f%%", spread_now, spread,
                         100 * now);
            fprintf(stderr, "host: again %d/%d: %s · %s: %s: %s\n", ++k, todo, cells[i].workload,
                    cells[i].implementation, why,
                    take ? "this measurement published" : rc ? "the first kept (this one failed)" : "the first kept");
        }
        if (take && *dbh && (out->db_status = sd_results_store_again(*dbh, out->run_id, doc, first[i], first[i + 1])))
            db_lost(dbh, out);
    }
    if (out->failed && !any_failed(doc)) out->failed = 0;   /* the cells that timed out measured this time */
    return 0;
}

/* One cell into doc, once the host runs at its speed (o->host_wait_s), measured again when a spell began while it
 * ran; its host speed noted, a failure outside its own record recorded. Only SD_EINTR and SD_EUSAGE return. */
static int measure_cell(const sd_bench_opts *o, const sd_bench_cell *c, json_t *doc, sd_bench_outcome *out) {
    size_t before = sd_results_count(doc);
    double speed = o->host_wait_s > 0 ? sd_host_settle(o, sd_sig_flag()) : NAN, tc = sd_now();
    int rc = sd_bench_cell_run(o, c, doc, &out->failed);
    if (o->host_wait_s > 0 && rc == 0 && all_ok(doc, before)) {
        /* a spell that began while the cell ran: the canary after it says so; measured once more then */
        double low = sd_host_after(o, speed);
        if (sd_host_retry(o, low, sd_now() - tc) && !sd_sig_pending()) {
            if (!o->quiet)
                fprintf(stderr, "host: %s · %s ran while the host was at %.0f%% of its speed: measured again\n",
                        c->workload, c->implementation, 100 * low);
            sd_results_truncate(doc, before);
            speed = sd_host_settle(o, sd_sig_flag());
            rc = sd_bench_cell_run(o, c, doc, &out->failed);
            low = rc == 0 ? sd_host_after(o, speed) : speed;
        }
        speed = low;
    }
    if (isfinite(speed)) sd_results_note_host(doc, before, speed);
    if (rc && rc != SD_EINTR) {   /* failed outside its own record: recorded here, the measured cells kept */
        fprintf(stderr, "showdown bench: %s through %s on %s failed: %s\n", c->workload, c->implementation,
                c->backend, sd_errmsg());
        sd_results_add_failure(doc, c->workload, c->implementation, c->backend, sd_errmsg());
        sd_results_note_precision(doc, o->precision);
        if (!out->failed) out->failed = rc;
        rc = 0;
    }
    return rc;
}

/* Whether the process recorded at run k was stopped past its time bound. */
static int timed_out(const json_t *doc, size_t k) {
    if (sd_results_count(doc) <= k) return 0;
    sd_run_view v;
    sd_run_view_of(sd_results_run(doc, k), &v);
    return v.timed_out;
}

/* Round r of the spread cells (--spread): each cell whose earlier processes measured runs one process more (the
 * length the first trained under a time cap, uncapped), which joins its run (sd_results_merge_run) in the document
 * and in the database; a process that fails takes the cell's place with its failure (one that timed out, after a
 * second try). */
static int spread_round(const sd_bench_opts *o, const sd_bench_cell *cells, int ncells, const size_t *first, long r,
                        json_t *doc, db **dbh, sd_bench_outcome *out) {
    int n = 0, k = 0;
    for (int i = 0; i < ncells; i++) n += all_ok_run(doc, first[i], first[i + 1]);
    double t0 = sd_now();
    for (int i = 0; i < ncells; i++) {
        if (!all_ok_run(doc, first[i], first[i + 1])) continue;
        json_t *run = sd_results_run(doc, first[i]);
        sd_run_view v;
        sd_run_view_of(run, &v);
        sd_bench_opts oc = *o;
        oc.repeat = 1;
        if (v.time_cap_s > 0)
            oc.fixed_batches = v.max_batches > 0 ? v.max_batches : -1;
        const size_t end = sd_results_count(doc);
        const int failed_before = out->failed;
        int rc = measure_cell(&oc, &cells[i], doc, out);
        if (rc == 0 && oc.runner_limit > 0 && timed_out(doc, end)) {
            /* the cell's first process ran within the limit at this length: a later one past it met a slow spell
             * or a slow start (MindSpore's import), so once more at twice the limit before the processes measured
             * give way to a failure */
            if (!o->quiet)
                fprintf(stderr, "round %ld/%ld: %s · %s timed out: once more, with a limit of %ld s\n", r, o->repeat,
                        cells[i].workload, cells[i].implementation, 2 * oc.runner_limit);
            sd_results_truncate(doc, end);
            out->failed = failed_before;
            oc.runner_limit *= 2;
            rc = measure_cell(&oc, &cells[i], doc, out);
        }
        if (rc) {
            sd_results_truncate(doc, end);
            return rc;
        }
        if (all_ok(doc, end) && sd_results_count(doc) == end + 1) {
            rc = sd_results_merge_run(run, sd_results_run(doc, end));
        } else if (sd_results_count(doc) > end) {   /* the cell is what its failed process says */
            json_object_clear(run);
            json_object_update(run, sd_results_run(doc, end));
            if (!out->failed) out->failed = SD_ERROR;
        }
        sd_results_truncate(doc, end);
        if (rc) return rc;
        if (!o->quiet) {
            char head[64];
            snprintf(head, sizeof head, "round %ld/%ld: ", r, o->repeat);
            progress(head, doc, first[i], first[i + 1], ++k, n, sd_now() - t0);
        }
        if (*dbh && (out->db_status = sd_results_store_again(*dbh, out->run_id, doc, first[i], first[i + 1])))
            db_lost(dbh, out);
    }
    return 0;
}

int sd_bench_matrix_run(const sd_bench_opts *o, const sd_bench_cell *cells, int ncells, const char *db_path,
                        json_t **doc_out, sd_bench_outcome *out) {
    memset(out, 0, sizeof *out);
    *doc_out = NULL;
    SD_TRY(check_opts(o));
    SD_TRY(sd_bench_cells_check(o, cells, ncells));   /* a typo late in a list must not cost the cells before it */
    /* The run goes into the database as it is measured: inserted incomplete, each result in its own
     * transaction, and marked complete (db_run_finish) only after the last. A killed bench leaves it incomplete. */
    db *dbh = NULL;
    int rc = 0;
    if (db_path) SD_TRY(db_open(&dbh, db_path));
    json_t *doc = sd_results_new();
    if (dbh && (rc = sd_results_db_begin(dbh, doc, "bench", NULL, &out->run_id)) != 0) {
        json_decref(doc);
        db_close(dbh);
        return rc;
    }
    /* A database that fails (corrupt page, full disk) is dropped: measuring goes on and the results still reach
     * the document. */
    double t0 = sd_now();
    size_t *first = calloc((size_t)ncells + 1, sizeof *first);   /* each cell's first run, then the end */
    if (!first) rc = sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; i < ncells && rc == 0; i++) {
        size_t before = sd_results_count(doc);
        first[i] = before;
        sd_bench_opts oc = *o;
        if (spread_rounds(o)) oc.repeat = 1;   /* its other processes in the rounds after this one */
        rc = measure_cell(&oc, &cells[i], doc, out);
        if (rc == 0 && !o->quiet) progress("", doc, before, sd_results_count(doc), i + 1, ncells, sd_now() - t0);
        if (rc == 0 && dbh && (out->db_status = sd_results_store(dbh, out->run_id, doc, before, 0)) != 0)
            db_lost(&dbh, out);
    }
    if (rc == 0) first[ncells] = sd_results_count(doc);
    for (long r = 2; rc == 0 && o->spread && r <= o->repeat; r++)
        rc = spread_round(o, cells, ncells, first, r, doc, &dbh, out);
    if (rc == 0 && o->host_wait_s > 0 && o->again) rc = measure_again(o, cells, ncells, first, doc, &dbh, out);
    free(first);
    sd_bench_inputs_drop();
    const sd_host *h = sd_host_state();
    if (o->host_wait_s > 0 && !o->quiet && h->canaries)
        fprintf(stderr, "host: %d canaries (mnist_mlp training, reference %.0f images/s); %d cell(s) waited %.0f s in all "
                "for a slow spell to end, %d started in one all the same (host_speed < 0.9 in the results); %d "
                "measured again (a spell began while they ran)\n",
                h->canaries, sd_host_reference(), h->waits, h->waited_s, h->slow, h->retries);
    if (rc == 0 && dbh && (out->db_status = sd_results_store(dbh, out->run_id, doc, sd_results_count(doc), 1)) != 0)
        db_lost(&dbh, out);
    db_close(dbh);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *doc_out = doc;
    return 0;
}
