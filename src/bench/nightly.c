/* nightly — the cron job behind `showdown nightly`: takes a lock (a second run gets SD_EBUSY, exit 7), makes
 * OUT/YYYY-MM-DD/ (a -2, -3 ... suffix for later runs the same day) and OUT/latest, logs to nightly.log there, runs
 * bench, then score and report, as child processes, stores the run in the database as kind "nightly", compares with
 * the previous complete nightly run (bench/regress.c) and flags a regression (exit 6). Keeps the newest N runs
 * (database rows and directories). SIGINT/SIGTERM are forwarded to the running child, waited for; OUT/latest goes
 * back to the run before and the exit is 130/143. */
#define _XOPEN_SOURCE 700
#include "bench/nightly.h"
#include "bench/regress.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "core/util.h"
#include "db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static FILE *g_log;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...) {
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    va_list ap;
    va_start(ap, fmt);
    if (g_log) {
        fprintf(g_log, "%s ", when);
        va_list ap2;
        va_copy(ap2, ap);
        vfprintf(g_log, fmt, ap2);
        va_end(ap2);
        fputc('\n', g_log);
        fflush(g_log);
    }
    printf("nightly: ");
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

/* Delete an old run's directory, but only one that nightly made (it holds nightly.log) inside the output
 * directory user (a path read back from the database is not trusted). */
static void prune_dir(const char *dir, void *user) {
    if (sd_path_within((const char *)user, dir) < 0) { logf_("not removing %s: %s", dir, sd_errmsg()); return; }
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/nightly.log", dir);
    if (access(probe, F_OK) != 0) return;
    if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0) logf_("removed old run %s", dir);
    else logf_("could not remove %s: %s", dir, strerror(errno));
}

static void log_line(void *user, const char *line) {
    (void)user;
    logf_("%s", line);
}

/* Run `showdown CMD ...` (score, report): a failure is logged and the night goes on (a usage error, exit 2, is
 * named as one); *failed says whether it failed. Only an interruption (SD_EINTR) is returned. */
static int optional_step(const char *cmd, char **argv, const char *log_path, int *failed) {
    int code = 0;
    int rc = sd_run_self(argv, log_path, &code);
    *failed = rc != 0 || (code != 0 && code != SD_EXIT_NET);
    if (rc == SD_EINTR) return rc;
    if (rc != 0) { logf_("%s: could not start: %s", cmd, sd_errmsg()); return 0; }
    if (code == 0) logf_("%s: done", cmd);
    else if (code == SD_EXIT_USAGE) logf_("%s: usage error (exit %d, see the log); continuing", cmd, code);
    else if (code == SD_EXIT_NET) logf_("%s: no network (exit %d): done from the snapshot's dated values; continuing", cmd, code);
    else logf_("%s: failed (exit %d, see the log); continuing", cmd, code);
    return 0;
}

/* OUT/latest -> target (relative), replaced atomically; target "" removes it. */
static int point_latest(const char *out, const char *target) {
    char tmp[4200], path[4200];
    snprintf(tmp, sizeof tmp, "%s/latest.tmp.%ld", out, (long)getpid());
    snprintf(path, sizeof path, "%s/latest", out);
    if (!target[0]) return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

/* OUT/nightly.lock, held for the run: a symlink or anything but a regular file there is refused, never written
 * through; a second run gets SD_EBUSY naming the holder's pid. */
static int take_lock(const char *out, int *lockfd) {
    char path[4096];
    snprintf(path, sizeof path, "%s/nightly.lock", out);
    SD_TRY(sd_mkdir_p(path, 1));
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    *lockfd = fd;
    struct stat lst;
    if (fd < 0 || fstat(fd, &lst) != 0 || !S_ISREG(lst.st_mode))
        return sd_err(SD_EIO, "cannot use %s as the lock: %s", path,
                      fd >= 0 ? "not a regular file" : errno == ELOOP ? "a symlink (not following it)" : strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        if (n > 0) pid[n] = 0;
        pid[strcspn(pid, "\n")] = 0;
        return sd_err(SD_EBUSY, "another nightly run holds %s (pid %s); not starting a second one", path,
                      pid[0] ? pid : "?");
    }
    if (ftruncate(fd, 0) == 0) dprintf(fd, "%ld\n", (long)getpid());
    return 0;
}

/* This run's directory OUT/YYYY-MM-DD[-k] (made exclusively) and its log. */
static int make_run_dir(const char *out, char *dir, size_t ndir, char *logp, size_t nlog) {
    char day[32];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    snprintf(dir, ndir, "%s/%s", out, day);
    for (int k = 2; mkdir(dir, 0755) != 0; k++) {
        if (errno != EEXIST || k > 999) return sd_err(SD_EIO, "cannot create %s: %s", dir, strerror(errno));
        snprintf(dir, ndir, "%s/%s-%d", out, day, k);
    }
    snprintf(logp, nlog, "%s/nightly.log", dir);
    g_log = fopen(logp, "a");
    if (!g_log) return sd_err(SD_EIO, "cannot write %s: %s", logp, strerror(errno));
    return 0;
}

/* bench as a child, through the same code path as `showdown bench`: a back-end that crashes, or hangs until the
 * child is killed, takes only the child down; the run is begun in the database first and its results stored. */
static int run_bench(const sd_nightly_cfg *c, db *d, const char *dir, const char *logp, int64_t *run_id, int *bcode,
                     json_t **cur) {
    char bjson[4096], ep[32], bt[32], rp[32];
    snprintf(bjson, sizeof bjson, "%s/bench.json", dir);
    snprintf(ep, sizeof ep, "%lld", c->epochs);
    snprintf(bt, sizeof bt, "%lld", c->batches);
    snprintf(rp, sizeof rp, "%lld", c->repeat);
    char *bargv[32];
    int k = 0;
    bargv[k++] = "showdown"; bargv[k++] = "bench";
    bargv[k++] = "--workload"; bargv[k++] = (char *)c->workloads;
    bargv[k++] = "--backend"; bargv[k++] = (char *)c->backends;
    bargv[k++] = "--data"; bargv[k++] = (char *)c->data;
    bargv[k++] = "--epochs"; bargv[k++] = ep;
    if (c->batches > 0) { bargv[k++] = "--batches"; bargv[k++] = bt; }
    bargv[k++] = "--repeat"; bargv[k++] = rp;
    if (c->workloads_dir) { bargv[k++] = "--workloads"; bargv[k++] = (char *)c->workloads_dir; }
    bargv[k++] = "--json"; bargv[k++] = bjson;
    bargv[k++] = "--no-db"; bargv[k++] = "--quiet";
    bargv[k] = NULL;
    json_t *hdr = sd_results_new();
    int rc = sd_results_db_begin(d, hdr, "nightly", dir, run_id);
    json_decref(hdr);
    SD_TRY(rc);
    logf_("bench: started (database %s, run %lld)", c->db, (long long)*run_id);
    SD_TRY(sd_run_self(bargv, logp, bcode));
    if (sd_sig_pending()) return sd_err(SD_EINTR, "interrupted");
    json_error_t je;
    *cur = json_load_file(bjson, 0, &je);
    if (!*cur) {
        logf_("bench: failed (exit %d), no results; the run stays incomplete in the database", *bcode);
        return sd_err(SD_ERROR, "nightly bench failed (exit %d); see %s", *bcode, logp);
    }
    logf_("bench: %s (exit %d), results in %s", *bcode ? "some runs failed" : "done", *bcode, bjson);
    return sd_results_store(d, *run_id, *cur, 0, 1);
}

/* score, the comparison with the previous complete nightly run (regressions.json) and the report; *nreg gets the
 * regressions, *report_failed whether the report step failed. */
static int score_compare_report(const sd_nightly_cfg *c, db *d, const char *dir, const char *logp, int64_t run_id,
                                const json_t *cur, json_t **prev, int *nreg, int *report_failed) {
    char sjson[4096], rdir[4096], rjson[4096], bjson[4096];
    snprintf(bjson, sizeof bjson, "%s/bench.json", dir);
    snprintf(sjson, sizeof sjson, "%s/scores.json", dir);
    char *sargv[] = {"showdown", "score", "--json", sjson, NULL};
    int score_failed = 0;   /* scores may be missing from a night's report; the report may not */
    SD_TRY(optional_step("score", sargv, logp, &score_failed));
    int64_t pid_ = 0;
    int np = 0, rc = 0;
    SD_TRY(db_runs_complete(d, "nightly", run_id, &pid_, 1, &np));
    json_t *regs = json_array();
    if (np == 0) logf_("no previous nightly run to compare with");
    else if ((rc = sd_results_load(d, pid_, prev)) == 0) {
        logf_("comparing with nightly run %lld", (long long)pid_);
        *nreg = sd_regress_compare(cur, *prev, c->threshold, regs, log_line, NULL);
    }
    snprintf(rjson, sizeof rjson, "%s/regressions.json", dir);
    json_t *rdoc = json_pack("{s:s,s:I,s:I,s:f,s:o}", "schema", "showdown-regressions/1", "run", (json_int_t)run_id,
                             "previous_run", (json_int_t)(np ? pid_ : 0), "threshold_pct", c->threshold, "regressions", regs);
    if (rc == 0) rc = sd_json_write_atomic(rdoc, rjson);   /* else the previous run's load failed */
    json_decref(rdoc);
    SD_TRY(rc);
    snprintf(rdir, sizeof rdir, "%s/report", dir);
    /* the report reads this run's results, its scores when the score step wrote them, the comparison with the
     * previous run (so regressions appear in it) and the history */
    struct stat sst;
    int have_scores = stat(sjson, &sst) == 0;
    char *rargv[] = {"showdown", "report", "--results", bjson, "--db", (char *)c->db, "--out", rdir, "--regressions",
                     rjson, have_scores ? "--scores" : NULL, sjson, NULL};
    return optional_step("report", rargv, logp, report_failed);
}

int sd_nightly_run(sd_nightly_cfg *c, int *exit_code) {
    char path[4096], dir[4096] = "", logp[4096], dbbuf[4096], prev_latest[4096] = "";
    int lockfd = -1, code = SD_EXIT_OK, latest_moved = 0, rc, bcode = 0, nreg = 0, report_failed = 0;
    db *d = NULL;
    json_t *cur = NULL, *prev = NULL;
    int64_t run_id = 0;
    if ((rc = take_lock(c->out, &lockfd)) != 0) goto done;
    if ((rc = make_run_dir(c->out, dir, sizeof dir, logp, sizeof logp)) != 0) goto done;
    sd_sig_install();   /* from here on a signal is forwarded to the child and the run wound up */
    {   /* OUT/latest -> the new directory; what it was is kept to put back if this run is interrupted */
        snprintf(path, sizeof path, "%s/latest", c->out);
        ssize_t n = readlink(path, prev_latest, sizeof prev_latest - 1);
        prev_latest[n > 0 ? n : 0] = 0;
        if (point_latest(c->out, strrchr(dir, '/') + 1) != 0) logf_("warning: cannot update %s: %s", path, strerror(errno));
        else latest_moved = 1;
    }
    logf_("run in %s (workloads %s, backends %s, %lld epoch(s), %lld batches, %lld repeat(s), threshold %.3g%%, keep %lld)",
          dir, c->workloads, c->backends, c->epochs, c->batches, c->repeat, c->threshold, c->keep);
    if (!c->db) { snprintf(dbbuf, sizeof dbbuf, "%s/showdown.db", c->out); c->db = dbbuf; }
    if ((rc = db_open(&d, c->db)) != 0) goto done;
    if ((rc = run_bench(c, d, dir, logp, &run_id, &bcode, &cur)) != 0) goto done;
    if ((rc = score_compare_report(c, d, dir, logp, run_id, cur, &prev, &nreg, &report_failed)) != 0) goto done;
    if (nreg) {
        logf_("%d regression(s); see %s/regressions.json", nreg, dir);
        code = SD_EXIT_REGRESSION;
    } else {
        logf_("no regression");
        if (bcode) code = bcode;
        else if (report_failed) code = SD_EXIT_FAIL;
    }
    if (report_failed) logf_("the report step failed: this night's report is missing (exit %d)", code);
    rc = db_runs_prune(d, "nightly", (int)c->keep, prune_dir, (void *)c->out);
done:
    if (rc == SD_EINTR || (rc == 0 && sd_sig_pending())) {
        int sig = sd_sig_pending();
        if (latest_moved) {
            snprintf(path, sizeof path, "%s/latest", c->out);
            if (point_latest(c->out, prev_latest) != 0) logf_("warning: cannot repair %s: %s", path, strerror(errno));
        }
        logf_("interrupted by %s: the child was stopped and waited for%s; the run stays incomplete in the database",
              sig == SIGTERM ? "SIGTERM" : "SIGINT",
              !latest_moved ? "" : prev_latest[0] ? "; latest points to the run before" : "; latest removed");
        code = sd_sig_exit_code();
        rc = 0;
    }
    if (rc && g_log) logf_("error: %s", sd_errmsg());
    if (g_log) { fclose(g_log); g_log = NULL; }
    json_decref(cur);
    json_decref(prev);
    db_close(d);
    if (lockfd >= 0) close(lockfd);
    *exit_code = code;
    return rc;
}
