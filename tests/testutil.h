/* testutil — small helpers shared by the Criterion test suites: temporary directories, writing
 * files, and the "skipped: <reason>" convention scripts/run-tests.sh reports. */
#ifndef SD_TESTUTIL_H
#define SD_TESTUTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest absolute difference of got from ref over n values, relative to ref's largest magnitude (at least
 * 1e-6); a NaN anywhere makes it NaN, which fails every "<" tolerance. */
static inline double tu_rel_err(const float *got, const float *ref, size_t n) {
    double maxdiff = 0, maxref = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)ref[i]);
        if (!(d <= maxdiff)) maxdiff = d;
        if (fabs(ref[i]) > maxref) maxref = fabs(ref[i]);
    }
    return maxdiff / (maxref > 1e-6 ? maxref : 1e-6);
}

/* A fresh directory under $TMPDIR for one test; path written to buf. */
static inline const char *tu_tmpdir(char *buf, size_t len) {
    const char *t = getenv("TMPDIR");
    snprintf(buf, len, "%s/showdown-test-XXXXXX", t ? t : "/tmp");
    cr_assert_not_null(mkdtemp(buf), "mkdtemp failed");
    return buf;
}

static inline void tu_write(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

static inline void tu_write_str(const char *path, const char *s) { tu_write(path, s, strlen(s)); }

/* Report a skip in the form run-tests.sh collects, then skip. */
#define TU_SKIP(...) do { printf("skipped: " __VA_ARGS__); printf("\n"); fflush(stdout); \
                          cr_skip_test(__VA_ARGS__); } while (0)

#endif
