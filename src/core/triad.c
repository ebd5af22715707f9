/* triad — STREAM's triad, in process: the bandwidth figure the roofline divides bytes by. The arrays are
 * first touched by the threads that use them, so each thread's pages sit where it runs. */
#include "core/triad.h"

#include "core/err.h"

#include <omp.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int sd_triad_bandwidth(int threads, size_t elems, int repeat, double *bytes_per_s) {
    if (elems < 1024 || repeat < 1) return sd_err(SD_EUSAGE, "triad: %zu elements, %d repeats", elems, repeat);
    if (threads <= 0) threads = omp_get_max_threads();
    size_t bytes = (elems * sizeof(float) + 63) / 64 * 64;
    float *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes), *c = aligned_alloc(64, bytes);
    int rc = 0;
    if (!a || !b || !c) { rc = sd_err(SD_ENOMEM, "triad: out of memory for 3 x %zu bytes", bytes); goto done; }
    const long n = (long)elems;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 0.0f; b[i] = 1.0f; c[i] = 2.0f; }
    const float s = 3.0f;
    double best = 0;
    for (int r = 0; r <= repeat; r++) {   /* pass 0 is the untimed warm-up */
        double t0 = now_s();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        double t = now_s() - t0;
        if (r > 0 && t > 0 && (best == 0 || t < best)) best = t;
    }
    /* the stores are read back, so the loop is kept and its result checked */
    if (a[0] != 7.0f || a[n / 2] != 7.0f || a[n - 1] != 7.0f) { rc = sd_err(SD_ERROR, "triad: wrong result"); goto done; }
    *bytes_per_s = 3.0 * sizeof(float) * (double)elems / best;
done:
    free(a);
    free(b);
    free(c);
    return rc;
}
