/* host — whether this machine runs at its speed now. The hosts of small VMs slow both vCPUs in spells that neither
 * the load nor steal time shows, of seconds and of minutes; they slow small cache-bound training steps most. The
 * canary is such a step: mnist_mlp training on the native engine for a fifth of a second. A cell starts once the
 * canary is within SD_HOST_SLOW of the reference, and is measured again when the canary after it was not.
 *
 * The reference is the tenth fastest canary of this process and of this machine's recent runs (the third while
 * few are known), kept in a small file for HOST_REF_KEEP_S: a spell of minutes covers a whole bench process, whose
 * own canaries alone would take the slow speed for the machine's, and a report measured in one would not reproduce
 * an hour later. */
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

/* The machine's recent canaries: the fastest KEEP, with when they ran (a file of lines "key\tunix time\timages/s";
 * the key names the CPU, the threads, the canary's back-end and the build, whose speeds differ). This file is read
 * and written here only; bench-cpu's canaries go through `showdown perf --host-ref`. */
#define KEEP SD_HOST_REF_KEEP   /* the reference is the tenth fastest: over days of canaries the third is a lucky one's speed */
#define FEW 30    /* with fewer canaries known (no history, a young process), the third fastest */
static sd_canary g_fast[KEEP];   /* this process's and the file's fastest, descending */
static int g_loaded, g_file_n;   /* whether the file was read, and the canaries it held */
static char g_key[600];

static void put(sd_canary *f, double v, double t) {
    for (int i = 0; i < KEEP; i++)
        if (v > f[i].v) {
            for (int j = KEEP - 1; j > i; j--) f[j] = f[j - 1];
            f[i] = (sd_canary){.t = t, .v = v};
            return;
        }
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
    char model[256] = "unknown", line[1024];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n\t")] = 0;
            break;
        }
    if (f) fclose(f);
#if defined(__SANITIZE_ADDRESS__)
    const char *build = "asan";
#else
    const char *build = "release";
#endif
    long threads = o->threads > 0 ? o->threads : sysconf(_SC_NPROCESSORS_ONLN);   /* 0: the back-end's default, all */
    snprintf(g_key, sizeof g_key, "%s|%ld threads|%s|%s", model, threads, g_canary_backend, build);
}

int sd_host_ref_load(const char *key, sd_canary *out) {
    char path[PATH_MAX], line[1024];
    sd_canary f[KEEP] = {{0}};
    FILE *in = ref_file(path, sizeof path) ? fopen(path, "r") : NULL;
    double now = (double)time(NULL);
    while (in && fgets(line, sizeof line, in)) {
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2) continue;
        *t1 = 0;
        double t = strtod(t1 + 1, NULL), v = strtod(t2 + 1, NULL);
        if (strcmp(line, key) == 0 && isfinite(v) && v > 0 && now - t < HOST_REF_KEEP_S) put(f, v, t);
    }
    if (in) fclose(in);
    int n = 0;
    for (; n < KEEP && f[n].v > 0; n++) out[n] = f[n];
    return n;
}

void sd_host_ref_save(const char *key, const sd_canary *c, int n) {
    char path[PATH_MAX], tmp[PATH_MAX + 32], line[1024];
    if (!ref_file(path, sizeof path) || sd_mkdir_p(path, 1) != 0) { sd_err_clear(); return; }
    sd_canary f[KEEP] = {{0}};
    for (int i = 0; i < n; i++)
        if (isfinite(c[i].v) && c[i].v > 0) put(f, c[i].v, c[i].t);
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
    for (int i = 0; out && i < KEEP; i++)
        if (f[i].v > 0) fprintf(out, "%s\t%.0f\t%.1f\n", key, f[i].t, f[i].v);
    if (in) fclose(in);
    if (out && fclose(out) == 0) {
        if (rename(tmp, path) != 0) unlink(tmp);
    } else unlink(tmp);
}

static void load_ref(void) {
    sd_canary f[KEEP];
    g_file_n = sd_host_ref_load(g_key, f);
    for (int i = 0; i < g_file_n; i++) put(g_fast, f[i].v, f[i].t);
}

static void keep(sd_host *h, double v) {
    if (!isfinite(v)) return;
    h->canaries++;
    put(g_fast, v, (double)time(NULL));
}

/* The reference: the tenth fastest canary of this process and the machine's recent runs, the third while few are
 * known (fewer: the slowest), so that one lucky canary cannot make every cell wait nor a slow one be the
 * reference. */
static sd_host g_host;

static double reference(void) {
    int rank = g_file_n >= KEEP || g_host.canaries >= FEW ? KEEP : 3;
    for (int i = rank - 1; i >= 0; i--)
        if (g_fast[i].v > 0) return g_fast[i].v;
    return 0;
}

/* One state per process (g_host): a verify rerun measures its cells one matrix at a time against the same
 * reference. */

const sd_host *sd_host_state(void) { return &g_host; }

double sd_host_reference(void) { return reference(); }

double sd_host_settle(const sd_bench_opts *o, volatile sig_atomic_t *stop) {
    sd_host *h = &g_host;
    if (h->canaries == 0) {   /* the run's first references, then the machine's */
        for (int i = 0; i < 3; i++) keep(h, canary(o));
        if (!g_loaded) {
            g_loaded = 1;
            make_key(o);
            load_ref();
        }
    }
    double v = canary(o), t0 = sd_now();
    keep(h, v);
    while (isfinite(v) && v < SD_HOST_SLOW * reference() && sd_now() - t0 < o->host_wait_s &&
           h->waited_s + (sd_now() - t0) < o->host_wait_total_s && !(stop && *stop)) {
        struct timespec ts = {0, (long)(WAIT_STEP_S * 1e9)};
        nanosleep(&ts, NULL);
        v = canary(o);
        keep(h, v);
    }
    double waited = sd_now() - t0;
    h->waited_s += waited;
    if (waited > WAIT_STEP_S / 2) h->waits++;
    if (g_key[0]) sd_host_ref_save(g_key, g_fast, KEEP);
    double ref = reference(), ratio = isfinite(v) && ref > 0 ? v / ref : NAN;
    if (isfinite(ratio) && ratio < SD_HOST_SLOW) h->slow++;
    return ratio;
}

double sd_host_after(const sd_bench_opts *o, double before) {
    /* After a runner's process this one's threads have slept and its caches went cold: the first canary then
     * runs about 15% slow on a host at its speed (measured after every framework cell of a report). The faster
     * of two counts. */
    double v0 = canary(o), v = canary(o), ref = reference();
    if (isfinite(v0) && !(v >= v0)) v = v0;
    keep(&g_host, v);
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
