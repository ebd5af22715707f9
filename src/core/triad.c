/* triad — STREAM's triad, in process: the bandwidth figure the roofline divides bytes by. The arrays are
 * first touched by the threads that use them, so each thread's pages sit where it runs. */
#include "core/triad.h"

#include "core/err.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

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

/* sysfs writes a cache's size as "32768K" (or "M"). */
static double sysfs_size(int index) {
    char path[96], buf[32], type[32] = "";
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int ok = fgets(type, sizeof type, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    if (type[0] == 'I') return 0;          /* an instruction cache */
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    if (!(f = fopen(path, "r"))) return 0;
    ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!ok) return 0;
    char *end;
    double v = strtod(buf, &end);
    if (end == buf || v < 0) return 0;
    return v * (*end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : 1.0);
}

double sd_llc_bytes(void) {
    double best = 0;
    for (int i = 0; i < 8; i++) {
        double v = sysfs_size(i);
        if (v < 0) break;
        if (v > best) best = v;
    }
    if (best > 0) return best;
    long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0) v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? (double)v : 0;
}
