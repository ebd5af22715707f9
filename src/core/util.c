/* util — comma lists, the project's directories, the process's peak memory (core/util.h). */
#include "core/util.h"
#include "core/clock.h"

#include <libgen.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sd_split_list(char *s, char **out, int max) {
    int n = 0;
    for (char *p = s; p && *p && n < max;) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        if (*p) out[n++] = p;
        p = c ? c + 1 : NULL;
    }
    return n;
}

int sd_in_list(const char *csv, const char *name) {
    if (!csv) return 1;
    size_t n = strlen(name);
    for (const char *p = csv;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!e) return 0;
        p = e + 1;
    }
}

static int path_exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

void sd_default_dir(char *buf, size_t n, const char *name, const char *probe) {
    if (path_exists(probe)) { snprintf(buf, n, "%s", name); return; }
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        snprintf(buf, n, "%s/%s", dirname(exe), name);
        if (path_exists(buf)) return;
    }
    snprintf(buf, n, "%s", name);
}

int sd_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sd_median_inplace(double *v, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) v[k++] = v[i];
    if (k == 0) return NAN;
    qsort(v, (size_t)k, sizeof *v, sd_cmp_double);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

int sd_rss_peak_reset(void) {
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

long long sd_rss_peak_bytes(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", &kib) == 1) break;
    fclose(f);
    return kib > 0 ? kib * 1024 : 0;
}

int sd_rounds_run(const sd_rounds *r) {
    const double t0 = sd_now();
    size_t done = 0;
    for (long k = 1; k <= r->repeat; k++) {
        for (size_t i = 0; i < r->n; i++) {
            const long have = r->have(r->ctx, i);
            if (have < 0 || have >= k) continue;
            if (!r->quiet) {
                char what[256], tail[96] = "";
                r->label(r->ctx, i, what, sizeof what);
                const double so_far = sd_now() - t0;
                if (done > 0 && r->total > done)
                    snprintf(tail, sizeof tail, " · %.0f min so far, about %.0f min left", so_far / 60,
                             so_far / (double)done * (double)(r->total - done) / 60);
                fprintf(stderr, "%s: round %ld of %ld [%zu/%zu]: %s%s\n", r->who, k, r->repeat, done + 1, r->total, what,
                        tail);
            }
            const int rc = r->step(r->ctx, i, k);
            if (rc) return rc;
            done++;
        }
    }
    return 0;
}
