/* util — small helpers every layer may use: this binary as a child process, comma lists, the project's
 * directories found from the working directory or beside the executable, the one median, the process's
 * peak resident memory. */
#ifndef SD_UTIL_H
#define SD_UTIL_H

#include <stddef.h>

/* Run this binary with argv (argv[0] = "showdown", then the command and options) as a child process,
 * stdout and stderr appended to log_path (NULL: discarded). *exit_code gets its exit status. */
int sd_run_self(char *const argv[], const char *log_path, int *exit_code);

/* Split "a,b,c" in place into at most max non-empty entries; returns the count. */
int sd_split_list(char *s, char **out, int max);
/* 1 when name is an entry of the comma list csv (a NULL list holds every name), else 0. */
int sd_in_list(const char *csv, const char *name);
/* The project directory `name` (workloads, scoring, ...): ./name when ./probe exists, else name beside the
 * executable when that exists, else ./name. probe is a path relative to the current directory. */
void sd_default_dir(char *buf, size_t n, const char *name, const char *probe);

/* qsort comparator of doubles, ascending (NaN compares equal to everything: drop NaNs first). */
int sd_cmp_double(const void *a, const void *b);
/* The median of the non-NaN values of v[0..n) (mean of the middle two for an even count), NAN when there are
 * none. Reorders v. */
double sd_median_inplace(double *v, int n);

/* Processes in rounds over n items (best settings' commands, bench cells): round r runs one process of each item
 * that has fewer than r (have(ctx, i) < r; below 0: none run), so that an item's processes span the whole pass and a
 * drift of the host over it lands in every item's spread alike. Progress on stderr unless quiet, total being the
 * processes the pass will run: "WHO: round r of R [k/total]: LABEL · M min so far, about E min left". A step that
 * returns other than 0 ends the rounds with that value. */
typedef struct sd_rounds {
    size_t n, total;
    long repeat;
    const char *who;
    int quiet;
    void *ctx;
    long (*have)(void *ctx, size_t i);
    int (*step)(void *ctx, size_t i, long round);
    void (*label)(void *ctx, size_t i, char *buf, size_t len);
} sd_rounds;
int sd_rounds_run(const sd_rounds *r);

/* This process's peak resident memory (VmHWM) starts again from its present size (Linux 4.0+, clear_refs "5"):
 * 0, or -1 where the kernel cannot (the peak then spans the process's life). */
int sd_rss_peak_reset(void);
/* This process's peak resident memory in bytes since it started or the last reset (VmHWM); 0 when unknown. */
long long sd_rss_peak_bytes(void);

#endif
