/* nightly — the cron job behind `showdown nightly` (bench/nightly.c). */
#ifndef SD_BENCH_NIGHTLY_H
#define SD_BENCH_NIGHTLY_H

typedef struct sd_nightly_cfg {
    const char *workloads, *backends, *data, *out, *db, *workloads_dir;
    long long epochs, batches, repeat, keep;
    double threshold;   /* percent */
} sd_nightly_cfg;

/* One nightly run as configured. *exit_code gets the night's outcome (0, 6 on a regression, bench's code when some
 * cells failed, 1 when the report step failed, 130/143 when interrupted); the return is an SD_E* status when the run
 * itself could not go on (the lock held: SD_EBUSY), its message set. */
int sd_nightly_run(sd_nightly_cfg *c, int *exit_code);

#endif
