/* setting — a framework's best-setting figure measured again: the command the run recorded (make bench-cpu's
 * cell script, scripts/<framework>_perf.py, with its arguments and environment) under the recorded interpreter,
 * in processes of their own. A process's figure per phase is its fastest timed window, as bench-cpu counts it. */
#include "bench/bench.h"
#include "bench/results.h"
#include "bench/verify.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/proc.h"
#include "core/sig.h"
#include "core/util.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETTING_TIMEOUT_S 900.0   /* a cell script's process at most (bench-cpu's own default) */
#define MAX_ARGS 64

/* images/s at the fastest window: the script's median rate scaled by median / fastest seconds per call. */
static double fastest_rate(const json_t *line, const char *phase) {
    char k[64];
    snprintf(k, sizeof k, "%s_images_per_s", phase);
    double ips = json_number_value(json_object_get(line, k));
    snprintf(k, sizeof k, "%s_windows_s", phase);
    const json_t *w = json_object_get(line, k);
    size_t n = json_array_size(w);
    if (!(ips > 0) || n == 0) return ips > 0 ? ips : NAN;
    double *t = calloc(n, sizeof *t);
    if (!t) return NAN;
    for (size_t i = 0; i < n; i++) t[i] = json_number_value(json_array_get(w, i));
    qsort(t, n, sizeof *t, sd_cmp_double);
    double r = t[0] > 0 ? ips * t[n / 2] / t[0] : NAN;
    free(t);
    return r;
}

/* The output line of the setting asked for, parsed (NULL when there is none). */
static json_t *line_of(char *out, const char *setting) {
    json_t *found = NULL;
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
        if (*l != '{') continue;
        json_t *j = json_loads(l, 0, NULL);
        const char *s = json_string_value(json_object_get(j, "setting"));
        if (j && s && strcmp(s, setting) == 0) {
            json_decref(found);
            found = j;
        } else {
            json_decref(j);
        }
    }
    return found;
}

/* The outputs of the commands run so far: a command measures all of a framework's candidates of a workload (bench-cpu
 * ran them in one process), and each of its best runs takes its own line from the same processes. */
#define CACHE_N 16
static struct cached {
    char *key;
    size_t klen;
    char **outs;
    long n;
    double speed;   /* the median of the processes' host speeds, as the figure is the median of theirs; each
                     * process's the lower of its canaries before and after (NAN: none ran) */
} cache[CACHE_N];

static void cache_drop(struct cached *c) {
    free(c->key);
    for (long i = 0; i < c->n; i++) free(c->outs[i]);
    free(c->outs);
    *c = (struct cached){0};
}

static void cache_put(char *key, size_t klen, char **outs, long n, double speed) {
    static int next;
    struct cached *c = &cache[next++ % CACHE_N];
    cache_drop(c);
    *c = (struct cached){key, klen, outs, n, speed};
}

void sd_bench_setting_forget(void) {
    for (int i = 0; i < CACHE_N; i++) cache_drop(&cache[i]);
}

static const struct cached *cache_get(const char *key, size_t klen, long n) {
    for (int i = 0; i < CACHE_N; i++)
        if (cache[i].key && cache[i].n == n && cache[i].klen == klen && memcmp(cache[i].key, key, klen) == 0)
            return &cache[i];
    return NULL;
}

/* The command as one key of *len bytes: its arguments and environment, NUL-separated. */
static char *key_of(char *const *argv, const char *const *env, size_t *len) {
    size_t n = 2;
    for (int i = 0; argv[i]; i++) n += strlen(argv[i]) + 1;
    for (int i = 0; env[i]; i++) n += strlen(env[i]) + 1;
    char *k = malloc(n), *p = k;
    if (!k) return NULL;
    for (int i = 0; argv[i]; i++) { size_t l = strlen(argv[i]) + 1; memcpy(p, argv[i], l); p += l; }
    *p++ = 0;
    for (int i = 0; env[i]; i++) { size_t l = strlen(env[i]) + 1; memcpy(p, env[i], l); p += l; }
    *p++ = 0;
    *len = (size_t)(p - k);
    return k;
}

/* Run the command repeat times (each once the host runs at its speed), or take the outputs of an earlier call. */
static int outputs(char *const *argv, const char *const *env, long repeat, double host_wait_s, const char *script,
                   int quiet, const struct cached **got) {
    size_t klen = 0;
    char *key = key_of(argv, env, &klen);
    if (!key) return sd_err(SD_ENOMEM, "out of memory");
    if ((*got = cache_get(key, klen, repeat)) != NULL) { free(key); return 0; }
    char **outs = calloc((size_t)repeat, sizeof *outs);
    char *buf = malloc(1 << 20);
    int rc = outs && buf ? 0 : sd_err(SD_ENOMEM, "out of memory");
    sd_bench_opts host;   /* the host canary's settings: as bench's */
    sd_bench_opts_default(&host);
    host.host_wait_s = host_wait_s;
    /* The median, not the lowest: the figure published is the median of the processes', so one process in a
     * spell does not move it; the lowest of a run's six canaries read below 90% on 35 of a report's 41 best
     * settings, and each was measured again */
    double *speeds = calloc((size_t)repeat, sizeof *speeds);
    int nspeed = 0;
    if (!speeds) rc = sd_err(SD_ENOMEM, "out of memory");
    for (long r = 0, again = 0; rc == 0 && r < repeat; r++) {
        double speed = host_wait_s > 0 ? sd_host_settle(&host, sd_sig_flag()) : NAN, t0 = sd_now();
        if (sd_sig_pending()) { rc = SD_EINTR; break; }
        sd_proc_opts po = {.argv = argv, .env_add = env[0] ? env : NULL, .out = SD_PROC_PIPE, .err = SD_PROC_NULL};
        int st = 0, c = sd_proc_capture(&po, SETTING_TIMEOUT_S, buf, 1 << 20, &st);
        if (c < 0) rc = c;
        else if (c == 1) rc = sd_err(SD_ERROR, "%s timed out after %.0f s", script, SETTING_TIMEOUT_S);
        else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            rc = sd_err(SD_ERROR, "%s exited with status %d", script, sd_proc_exit_code(st));
        else if (host_wait_s > 0) {
            /* a spell that began while the process ran: this repetition runs once more */
            double after = sd_host_after(&host, speed);
            if (!again && sd_host_retry(&host, after, sd_now() - t0)) {
                if (!quiet)
                    fprintf(stderr, "bench: %s process %ld of %ld ran while the host was at %.0f%% of its speed: run "
                            "once more\n", script, r + 1, repeat, 100 * after);
                again = 1;
                r--;
                continue;
            }
            if (isfinite(after)) speeds[nspeed++] = after;
        }
        if (rc == 0 && !(outs[r] = strdup(buf))) rc = sd_err(SD_ENOMEM, "out of memory");
        again = 0;
    }
    free(buf);
    double speed = nspeed ? sd_median_inplace(speeds, nspeed) : NAN;
    free(speeds);
    if (rc) {
        for (long r = 0; outs && r < repeat; r++) free(outs[r]);
        free(outs);
        free(key);
        return rc;
    }
    cache_put(key, klen, outs, repeat, speed);
    *got = cache_get(key, klen, repeat);
    return 0;
}

int sd_bench_setting_rerun(const sd_run_view *p, long repeat, double host_wait_s, int quiet, json_t **doc) {
    *doc = NULL;
    if (!p->rerun_python || !p->rerun_script || !p->rerun_args || !p->setting)
        return sd_err(SD_ENODEV, "the published run records no command to measure its setting again");
    if (access(p->rerun_python, X_OK) != 0)
        return sd_err(SD_ENODEV, "its interpreter %s is not here", p->rerun_python);
    char script[PATH_MAX], self[PATH_MAX];
    sd_default_dir(script, sizeof script, p->rerun_script, p->rerun_script);
    if (access(script, R_OK) != 0) return sd_err(SD_ENODEV, "its cell script %s is not here", p->rerun_script);
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k <= 0) return sd_err(SD_EIO, "cannot tell where this showdown is (/proc/self/exe)");
    self[k] = 0;
    size_t na = json_array_size(p->rerun_args), ne = json_array_size(p->rerun_env);
    if (na + 5 > MAX_ARGS || ne + 1 > MAX_ARGS) return sd_err(SD_EINPUT, "the recorded command is too long");
    char *argv[MAX_ARGS];
    const char *env[MAX_ARGS];
    int ac = 0;
    argv[ac++] = (char *)p->rerun_python;
    argv[ac++] = script;
    for (size_t i = 0; i < na; i++) {
        const char *a = json_string_value(json_array_get(p->rerun_args, i));
        if (!a) return sd_err(SD_EINPUT, "the recorded command's argument %zu is not a string", i + 1);
        argv[ac++] = (char *)a;
    }
    argv[ac++] = "--showdown";
    argv[ac++] = self;
    argv[ac] = NULL;
    for (size_t i = 0; i < ne; i++) env[i] = json_string_value(json_array_get(p->rerun_env, i));
    env[ne] = NULL;
    for (size_t i = 0; i < ne; i++)
        if (!env[i] || !strchr(env[i], '=')) return sd_err(SD_EINPUT, "the recorded environment is not NAME=VALUE");

    const struct cached *got = NULL;
    int rc = outputs(argv, env, repeat, host_wait_s, p->rerun_script, quiet, &got);
    if (rc) return rc;
    double *train = calloc((size_t)repeat, sizeof *train), *infer = calloc((size_t)repeat, sizeof *infer);
    long long *peak = calloc((size_t)repeat, sizeof *peak);
    char *out = NULL;
    char version[64] = "";
    int nt = 0, ni = 0;
    if (!train || !infer || !peak) rc = sd_err(SD_ENOMEM, "out of memory");
    for (long r = 0; rc == 0 && r < repeat; r++) {
        free(out);
        if (!(out = strdup(got->outs[r]))) { rc = sd_err(SD_ENOMEM, "out of memory"); break; }
        json_t *line = line_of(out, p->setting);
        if (!line) { rc = sd_err(SD_ERROR, "%s printed no figure for setting %s", p->rerun_script, p->setting); break; }
        const char *err = json_string_value(json_object_get(line, "error"));
        if (err) rc = sd_err(SD_ERROR, "setting %s failed: %s", p->setting, err);
        double t = fastest_rate(line, "train"), i = fastest_rate(line, "infer");
        if (isfinite(t)) train[nt++] = t;
        if (isfinite(i)) infer[ni++] = i;
        double mib = json_number_value(json_object_get(line, "peak_rss_mib"));
        peak[r] = mib > 0 ? (long long)(mib * 1048576) : 0;
        const char *v = json_string_value(json_object_get(line, "version"));
        if (!v) v = json_string_value(json_object_get(line, "torch"));
        if (v) snprintf(version, sizeof version, "%s", v);
        json_decref(line);
    }
    if (rc == 0) {
        *doc = sd_results_new();
        sd_setting_run s = {.workload = json_string_value(p->workload), .implementation = json_string_value(p->implementation),
                            .python = p->rerun_python, .version = version, .published = p,
                            .train = sd_stat_of(train, nt), .infer = sd_stat_of(infer, ni), .peak_rss_bytes = peak,
                            .nrepeats = (int)repeat};
        if (!*doc || sd_results_add_setting_run(*doc, &s) != 0) {
            json_decref(*doc);
            *doc = NULL;
            rc = sd_err(SD_ENOMEM, "out of memory");
        } else if (isfinite(got->speed)) {
            sd_results_note_host(*doc, 0, got->speed);
        }
    }
    free(train);
    free(infer);
    free(peak);
    free(out);
    return rc;
}

/* The phases of run's summary that m measured take m's figures; the rest stay as they were. */
static void adopt(json_t *run, const json_t *m) {
    json_t *sum = json_object_get(run, "summary");
    const json_t *msum = json_object_get(m, "summary");
    const char *k;
    json_t *v;
    json_object_foreach(sum, k, v) {
        json_t *mv = json_object_get(msum, k);
        if (mv) json_object_set(sum, k, mv);
    }
    json_object_set(run, "samples", json_object_get(m, "samples"));
    json_object_set(run, "backend_env", json_object_get(m, "backend_env"));
    json_t *speed = json_object_get(m, "host_speed");
    if (speed) json_object_set(run, "host_speed", speed);
    else json_object_del(run, "host_speed");
}

static int is_best(const json_t *run) {
    const char *src = json_string_value(json_object_get(run, "source"));
    return src && strcmp(src, "bench-cpu") == 0 && json_object_get(run, "rerun");
}

static double host_speed_of(const json_t *run) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    return v.host_speed;
}

static double spread_of(const json_t *run) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    return sd_run_judged_spread_pct(&v);
}

/* Measured again after the others: a run from a slow spell, or whose processes disagree by more than verify's
 * tolerance (a reader's rerun could not reproduce its median). */
static int again_slow(const json_t *run) { return is_best(run) && host_speed_of(run) < SD_HOST_SLOW; }
static int again_wide(const json_t *run) { return is_best(run) && spread_of(run) > SD_VERIFY_TOLERANCE_PCT; }

enum pass { FIRST, AGAIN_SLOW, AGAIN_WIDE };

/* One best run measured and adopted; measured again: only when its host ran faster than the first time (a slow
 * spell), or its processes agree better than the first time's and the host ran no slower (a wide spread). */
static int publish_one(json_t *run, long repeat, double host_wait_s, int quiet, enum pass pass, size_t k,
                       size_t todo, int *kept) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    char what[160];
    snprintf(what, sizeof what, "%s/%s setting %s", json_string_value(v.workload), json_string_value(v.implementation),
             v.setting ? v.setting : "?");
    if (!quiet) fprintf(stderr, "bench: %s %zu/%zu: %s (%ld processes)\n", pass == FIRST ? "best setting" : "again",
                        k, todo, what, repeat);
    json_t *m = NULL;
    const double first = host_speed_of(run), spread = spread_of(run);
    int rc = sd_bench_setting_rerun(&v, repeat, host_wait_s, quiet, &m);
    if (rc == SD_EINTR) return rc;
    if (rc) {   /* the figure it has stays: the choosing pass's (n 1), or the first pass's */
        fprintf(stderr, "bench: %s: kept the figure %s: %s\n", what,
                pass != FIRST ? "of the first measurement" : "of the pass that chose it", sd_errmsg());
        *kept += pass == FIRST;
        return 0;
    }
    const json_t *mr = sd_results_run(m, 0);
    const double now = host_speed_of(mr), spread_now = spread_of(mr);
    const int take = pass == FIRST || (pass == AGAIN_SLOW && now > first) ||
                     (pass == AGAIN_WIDE && sd_host_steadier(spread_now, spread, now, first));
    if (take) adopt(run, mr);
    if (pass == AGAIN_SLOW && !quiet)
        fprintf(stderr, "bench: %s: host at %.0f%% (first %.0f%%): %s\n", what, 100 * now, 100 * first,
                take ? "this measurement published" : "the first kept");
    if (pass == AGAIN_WIDE && !quiet)
        fprintf(stderr, "bench: %s: spread %.1f%% (first %.1f%%), host at %.0f%%: %s\n", what, spread_now, spread,
                100 * now, take ? "this measurement published" : "the first kept");
    json_decref(m);
    return 0;
}

/* The second pass over the runs that pick(): each measured once more with a longer wait for a quiet host. */
static int again(json_t *doc, long repeat, double host_wait_s, int quiet, enum pass pass, int (*pick)(const json_t *),
                 int *kept) {
    size_t i, todo = 0, k = 0;
    json_t *run;
    int rc = 0;
    sd_results_foreach(doc, i, run) todo += pick(run);
    if (!todo) return 0;
    if (!quiet)
        fprintf(stderr, pass == AGAIN_SLOW ? "bench: %zu best setting(s) ran while this host was slow: measuring them "
                                             "again\n"
                                           : "bench: %zu best setting(s) spread wider than verify's tolerance over "
                                             "their processes: measuring them again\n", todo);
    sd_host_budget_renew();
    sd_bench_setting_forget();
    sd_results_foreach(doc, i, run) {
        if (!pick(run)) continue;
        if ((rc = publish_one(run, repeat, host_wait_s * SD_HOST_AGAIN_WAIT, quiet, pass, ++k, todo, kept)) != 0) break;
    }
    return rc;
}

int sd_bench_settings_publish(json_t *doc, long repeat, double host_wait_s, int quiet, int *kept) {
    size_t i, todo = 0, k = 0;
    json_t *run;
    int rc = 0;
    *kept = 0;
    sd_results_foreach(doc, i, run) todo += is_best(run);
    sd_results_foreach(doc, i, run) {
        if (!is_best(run)) continue;
        if ((rc = publish_one(run, repeat, host_wait_s, quiet, FIRST, ++k, todo, kept)) != 0) break;
    }
    if (rc == 0 && host_wait_s > 0) rc = again(doc, repeat, host_wait_s, quiet, AGAIN_SLOW, again_slow, kept);
    if (rc == 0 && host_wait_s > 0) rc = again(doc, repeat, host_wait_s, quiet, AGAIN_WIDE, again_wide, kept);
    sd_bench_setting_forget();
    return rc;
}
