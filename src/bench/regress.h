/* regress — nightly's regression check: each successful run of tonight's results against the same workload ×
 * implementation × back-end of a previous results document, by the epoch time both have (sd_run_epoch_time). */
#ifndef SD_BENCH_REGRESS_H
#define SD_BENCH_REGRESS_H

#include <jansson.h>

/* One line per comparison ("mnist_cnn/native/dnnl steady_epoch_s: 1.2 s (was 1.0 s, max 1.05): +20.0%  REGRESSION"),
 * for the caller's log. */
typedef void (*sd_regress_note)(void *user, const char *line);

/* A regression: the median slower than the previous median by more than threshold_pct and above the previous
 * maximum. Each is appended to regs as an object (workload, implementation, backend, metric, median,
 * previous_median, previous_max, slower_pct, threshold_pct: the "showdown-regressions/1" entries). Returns how many. */
int sd_regress_compare(const json_t *cur, const json_t *prev, double threshold_pct, json_t *regs, sd_regress_note note,
                       void *user);

#endif
