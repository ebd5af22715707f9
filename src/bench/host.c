/* host — whether this machine runs at its speed now. The hosts of small VMs slow both vCPUs in spells of seconds
 * that neither the load nor steal time shows; they slow small cache-bound training steps most. The canary is such
 * a step: mnist_mlp training on the native engine for a fifth of a second. A cell starts once the canary is within
 * HOST_SLOW of the run's reference (its third fastest canary, so one lucky canary cannot make every cell wait). */
#include "bench/bench.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/util.h"
#include "data/data.h"
#include "nn/backend.h"
#include "nn/train.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define HOST_SLOW 0.80          /* a canary below this fraction of the reference ran in a slow spell */
#define CANARY_BATCHES 12       /* about 0.2 s of mnist_mlp training on 2 cores of an EPYC */
#define WAIT_STEP_S 0.5

/* mnist_mlp training images/s over CANARY_BATCHES batches of synthetic data, on dnnl where it is built; NAN when
 * the workload or a back-end is missing. */
static double canary(const sd_bench_opts *o) {
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
    if ((nn_backend_new(&be, "dnnl", &bo, NULL, 0) == 0 || nn_backend_new(&be, "ref", &bo, NULL, 0) == 0) &&
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

static void keep(sd_host *h, double v) {
    if (!isfinite(v)) return;
    h->canaries++;
    for (int i = 0; i < 3; i++)   /* the three fastest, descending */
        if (v > h->top[i]) {
            for (int j = 2; j > i; j--) h->top[j] = h->top[j - 1];
            h->top[i] = v;
            break;
        }
}

/* The reference: the third fastest canary so far (fewer so far: the slowest of them). */
static double reference(const sd_host *h) {
    for (int i = 2; i >= 0; i--)
        if (h->top[i] > 0) return h->top[i];
    return 0;
}

/* One state per process: a verify rerun measures its cells one matrix at a time against the same reference. */
static sd_host g_host;

const sd_host *sd_host_state(void) { return &g_host; }

double sd_host_settle(const sd_bench_opts *o, volatile sig_atomic_t *stop) {
    sd_host *h = &g_host;
    if (h->canaries == 0)   /* the run's first references */
        for (int i = 0; i < 3; i++) keep(h, canary(o));
    double v = canary(o), t0 = sd_now();
    keep(h, v);
    while (isfinite(v) && v < HOST_SLOW * reference(h) && sd_now() - t0 < o->host_wait_s &&
           h->waited_s + (sd_now() - t0) < o->host_wait_total_s && !(stop && *stop)) {
        struct timespec ts = {0, (long)(WAIT_STEP_S * 1e9)};
        nanosleep(&ts, NULL);
        v = canary(o);
        keep(h, v);
    }
    double waited = sd_now() - t0;
    h->waited_s += waited;
    if (waited > WAIT_STEP_S / 2) h->waits++;
    double ref = reference(h), ratio = isfinite(v) && ref > 0 ? v / ref : NAN;
    if (isfinite(ratio) && ratio < HOST_SLOW) h->slow++;
    return ratio;
}
