/* host — whether this machine runs at its speed now. The hosts of small VMs slow both vCPUs in spells that neither
 * the load nor steal time shows, of seconds and of minutes; they slow small cache-bound training steps most. The
 * canary is such a step: mnist_mlp training on the native engine for a fifth of a second. A cell starts once the
 * canary is within SD_HOST_SLOW of the reference, and is measured again when the canary after it was not.
 *
 * The reference is the machine's usual speed: the upper quartile of its recent canaries (this process's and its
 * runs' of the last HOST_REF_KEEP_S, kept in a small file), the third fastest at least. A spell of minutes covers
 * a whole bench process, whose own canaries alone would take the slow speed for the machine's; and a few lucky
 * canaries a day (a Zen 2 here: 44k images/s against its usual 38k) must not make every cell a slow spell's. */
#include "bench/bench.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/util.h"
#include "data/data.h"
#include "nn/backend.h"
#include "nn/train.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CANARY_BATCHES 12       /* about 0.2 s of mnist_mlp training on 2 cores of an EPYC */
#define WAIT_STEP_S 0.5
#define HOST_REF_KEEP_S (3 * 86400.0)   /* a machine's canaries older than this no longer count */

static const char *g_canary_backend = "ref";   /* the back-end the canaries ran on: part of the reference's key */

/* mnist_mlp training images/s over CANARY_BATCHES batches of synthetic data, on dnnl where it is built; NAN when
 * the workload or a back-end is missing. $SHOWDOWN_HOST_CANARY, a number, stands for every canary: a test of what
 * the passes do with a spread must not take the other path when the host slows during it. */
static double canary(const sd_bench_opts *o) {
    const char *fixed = getenv("SHOWDOWN_HOST_CANARY");
    if (fixed && *fixed) {
        char *end;
        double v = strtod(fixed, &end);
        if (*end == 0 && isfinite(v) && v > 0) return v;
    }
    sd_workload w;
    char wdir[PATH_MAX];
    if (o->workloads_dir) snprintf(wdir, sizeof wdir, "%s", o->workloads_dir);
    else sd_default_dir(wdir, sizeof wdir, "workloads", "workloads");
    if (sd_workload_load(&w, wdir, "mnist_mlp") != 0) { sd_err_clear(); return NAN; }
    nn_backend *be = NULL;
    nn_backend_opts bo = {.threads = (int)o->threads, .precision = "fp32", .quiet = 1};
    sd_dataset train = {0}, test = {0};
    nn_train_result r = {0};
    double ips = NAN;
    int n = CANARY_BATCHES * w.batch;
    int made = nn_backend_new(&be, "dnnl", &bo, NULL, 0) == 0;
    g_canary_backend = made ? "dnnl" : "ref";
    if ((made || nn_backend_new(&be, "ref", &bo, NULL, 0) == 0) &&
        sd_data_synthetic(&train, n, w.in_c, w.in_h, w.in_w, w.classes, 7, 0) == 0 &&
        sd_data_synthetic(&test, w.batch, w.in_c, w.in_h, w.in_w, w.classes, 7, 1) == 0) {
        nn_train_opts t = {.epochs = 1, .batch = w.batch, .max_batches = CANARY_BATCHES, .seed = 7};
        if (nn_train(&w, be, &train, &test, &t, &r) == 0 && r.nepochs == 1 && r.epochs[0].train_s > 0)
            ips = (double)r.epochs[0].train_images / r.epochs[0].train_s;
        nn_train_result_free(&r);
    }
    sd_err_clear();
    sd_dataset_free(&train);
    sd_dataset_free(&test);
    nn_backend_free(be);
    sd_workload_free(&w);
    return ips;
}

/* The machine's recent canaries: the last KEEP, with when they ran (a file of lines "key\tunix time\timages/s";
 * the key names the CPU, the threads, the canary's back-end and the build, whose speeds differ). Only canaries
 * taken whatever the host's state count: not those of a wait for a spell to end, which would weigh spells as
 * many times as they are waited out. This file is read and written here only; bench-cpu's canaries go through
 * `showdown perf --host-ref`. */
#define KEEP SD_HOST_REF_KEEP
static sd_canary g_recent[KEEP];   /* this process's and the file's, oldest first */
static int g_n, g_loaded;
static char g_key[600];

static int by_time(const void *a, const void *b) {
    const double x = ((const sd_canary *)a)->t, y = ((const sd_canary *)b)->t;
    return (x > y) - (x < y);
}

static int by_speed_desc(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* c[0..n) sorted by time, its last KEEP moved to its front; their count. */
static int last_keep(sd_canary *c, int n) {
    qsort(c, (size_t)n, sizeof *c, by_time);
    if (n <= KEEP) return n;
    memmove(c, c + (n - KEEP), KEEP * sizeof *c);
    return KEEP;
}

/* $SHOWDOWN_HOST_REF (empty: keep none), else the user's cache directory. */
static const char *ref_file(char *buf, size_t n) {
    const char *e = getenv("SHOWDOWN_HOST_REF"), *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (e) snprintf(buf, n, "%s", e);
    else if (x && *x) snprintf(buf, n, "%s/showdown/host-canary", x);
    else if (home && *home) snprintf(buf, n, "%s/.cache/showdown/host-canary", home);
    else buf[0] = 0;
    return buf[0] ? buf : NULL;
}

static void make_key(const sd_bench_opts *o) {
    /* the model name and its family and model numbers: "AMD EPYC" names a Zen 2 and a Zen 4 alike */
    char model[256] = "unknown", family[32] = "?", number[32] = "?", line[1024];
    FILE *f = fopen("/proc/cpuinfo", "r");
    int cpus = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':'), *field = line;
        if (!colon) continue;
        if (strncmp(line, "processor", 9) == 0 && ++cpus > 1) break;   /* the first CPU's lines only */
        *colon = 0;
        char *v = colon + (colon[1] == ' ' ? 2 : 1);
        v[strcspn(v, "\n\t")] = 0;
        field[strcspn(field, "\t")] = 0;
        if (strcmp(field, "model name") == 0) snprintf(model, sizeof model, "%s", v);
        else if (strcmp(field, "cpu family") == 0) snprintf(family, sizeof family, "%s", v);
        else if (strcmp(field, "model") == 0) snprintf(number, sizeof number, "%s", v);
    }
    if (f) fclose(f);
#if defined(__SANITIZE_ADDRESS__)
    const char *build = "asan";
#else
    const char *build = "release";
#endif
    long threads = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);   /* 0: the back-end's default, all */
    snprintf(g_key, sizeof g_key, "%s (family %s model %s)|%ld threads|%s|%s", model, family, number, threads,
             g_canary_backend, build);
}

int sd_host_ref_load(const char *key, sd_canary *out) {
    char path[PATH_MAX], line[1024];
    sd_canary f[2 * KEEP];
    int n = 0;
    FILE *in = ref_file(path, sizeof path) ? fopen(path, "r") : NULL;
    double now = (double)time(NULL);
    while (in && fgets(line, sizeof line, in)) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2) continue;
        *t1 = 0;
        double t = strtod(t1 + 1, NULL), v = strtod(t2 + 1, NULL);
        if (strcmp(line, key) != 0 || !isfinite(v) || v <= 0 || !(now - t < HOST_REF_KEEP_S)) continue;
        if (n == 2 * KEEP) n = last_keep(f, n);   /* a file written by hand may hold more */
        f[n++] = (sd_canary){.t = t, .v = v};
    }
    if (in) fclose(in);
    n = last_keep(f, n);
    memcpy(out, f, (size_t)n * sizeof *f);
    return n;
}

void sd_host_ref_save(const char *key, const sd_canary *c, int n) {
    char path[PATH_MAX], tmp[PATH_MAX + 32], line[1024];
    if (!ref_file(path, sizeof path) || sd_mkdir_p(path, 1) != 0) { sd_err_clear(); return; }
    sd_canary *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    int m = 0;
    if (!f) return;
    for (int i = 0; i < n; i++)
        if (isfinite(c[i].v) && c[i].v > 0) f[m++] = c[i];
    m = last_keep(f, m);
    /* written aside and renamed, so that a bench killed meanwhile, or two at once, leave a whole file */
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    FILE *in = fopen(path, "r"), *out = fopen(tmp, "w");
    double now = (double)time(NULL);
    size_t klen = strlen(key);
    while (out && in && fgets(line, sizeof line, in)) {
        char *t1 = strchr(line, '\t');
        if (!t1 || strchr(line, '\n') == NULL) continue;
        if ((size_t)(t1 - line) == klen && strncmp(line, key, klen) == 0) continue;
        if (now - strtod(t1 + 1, NULL) < HOST_REF_KEEP_S) fputs(line, out);
    }
    for (int i = 0; out && i < m; i++) fprintf(out, "%s\t%.0f\t%.1f\n", key, f[i].t, f[i].v);
    free(f);
    if (in) fclose(in);
    if (out && fclose(out) == 0) {
        if (rename(tmp, path) != 0) unlink(tmp);
    } else unlink(tmp);
}

double sd_host_ref_usual(const sd_canary *c, int n) {
    sd_canary *last = malloc((size_t)(n > 0 ? n : 1) * sizeof *last);
    double v[KEEP];
    int m = 0;
    if (!last) return 0;
    for (int i = 0; i < n; i++)
        if (isfinite(c[i].v) && c[i].v > 0) last[m++] = c[i];
    m = last_keep(last, m);
    for (int i = 0; i < m; i++) v[i] = last[i].v;
    free(last);
    if (m == 0) return 0;
    qsort(v, (size_t)m, sizeof *v, by_speed_desc);
    int rank = m / 4, third = (m < 3 ? m : 3) - 1;
    return v[rank > third ? rank : third];
}

/* The file's canaries before this process's (which ran first: the key names the back-end they ran on). */
static void load_ref(void) {
    sd_canary f[2 * KEEP];
    int n = sd_host_ref_load(g_key, f);
    memcpy(f + n, g_recent, (size_t)g_n * sizeof *f);
    g_n = last_keep(f, n + g_n);
    memcpy(g_recent, f, (size_t)g_n * sizeof *f);
}

/* A canary taken whatever the host's state: one of the machine's recent ones. */
static void sample(double v) {
    if (!isfinite(v)) return;
    if (g_n == KEEP) memmove(g_recent, g_recent + 1, (KEEP - 1) * sizeof *g_recent);
    else g_n++;
    g_recent[g_n - 1] = (sd_canary){.t = (double)time(NULL), .v = v};
}

static sd_host g_host;

static double counted(double v) {
    if (isfinite(v)) g_host.canaries++;
    return v;
}

static double reference(void) { return sd_host_ref_usual(g_recent, g_n); }

/* One state per process (g_host): a verify rerun measures its cells one matrix at a time against the same
 * reference. */

const sd_host *sd_host_state(void) { return &g_host; }

double sd_host_reference(void) { return reference(); }

double sd_host_settle(const sd_bench_opts *o, volatile sig_atomic_t *stop) {
    sd_host *h = &g_host;
    if (h->canaries == 0) {   /* the run's first references, then the machine's */
        for (int i = 0; i < 3; i++) sample(counted(canary(o)));
        if (!g_loaded) {
            g_loaded = 1;
            make_key(o);
            load_ref();
        }
    }
    double v = counted(canary(o)), t0 = sd_now();
    sample(v);
    while (isfinite(v) && v < SD_HOST_SLOW * reference() && sd_now() - t0 < o->host_wait_s &&
           h->waited_s + (sd_now() - t0) < o->host_wait_total_s && !(stop && *stop)) {
        struct timespec ts = {0, (long)(WAIT_STEP_S * 1e9)};
        nanosleep(&ts, NULL);
        v = counted(canary(o));
    }
    double waited = sd_now() - t0;
    h->waited_s += waited;
    if (waited > WAIT_STEP_S / 2) h->waits++;
    if (g_key[0]) sd_host_ref_save(g_key, g_recent, g_n);
    double ref = reference(), ratio = isfinite(v) && ref > 0 ? v / ref : NAN;
    if (isfinite(ratio) && ratio < SD_HOST_SLOW) h->slow++;
    return ratio;
}

double sd_host_after(const sd_bench_opts *o, double before) {
    /* After a runner's process this one's threads have slept and its caches went cold: the first canary then
     * runs about 15% slow on a host at its speed (measured after every framework cell of a report). The faster
     * of two counts. */
    double v0 = counted(canary(o)), v = counted(canary(o)), ref = reference();
    if (isfinite(v0) && !(v >= v0)) v = v0;
    sample(v);
    if (g_key[0]) sd_host_ref_save(g_key, g_recent, g_n);
    double after = isfinite(v) && ref > 0 ? v / ref : NAN;
    return isfinite(after) && !(after >= before) ? after : before;
}

void sd_host_budget_renew(void) { g_host.waited_s = g_host.retried_s = 0; }

int sd_host_retry(const sd_bench_opts *o, double speed, double cell_s) {
    sd_host *h = &g_host;
    if (!(isfinite(speed) && speed < SD_HOST_SLOW) || h->waited_s + h->retried_s + cell_s > o->host_wait_total_s)
        return 0;
    h->retries++;
    h->retried_s += cell_s;
    return 1;
}

int sd_host_steadier(double spread_now, double spread, double now, double was) {
    return spread_now < spread && !(now < was && now < SD_HOST_SLOW);
}
