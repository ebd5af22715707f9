/* verify — re-check a published results file cell by cell (`showdown verify`). A cell is comparable when the
 * machine (device, CPU, cores), the data and the implementation's identity (framework and version, interpreter,
 * back-end library versions, precision, threads, batch ...) match; a comparable cell is compared with a
 * measurement (a rerun through the bench layer with the published settings, a results file, or the newest
 * complete bench run in the database) and gets one verdict: REPRODUCED, SLOWER, FASTER, ACCURACY-DIFFERS,
 * UNVERIFIABLE (its published spread is wider than the tolerance), NOT-COMPARABLE (naming every difference) or
 * MISSING. A published run that was never measured (unavailable, failed, unsupported, no time figure) is shown as
 * such and is no verdict. */
#ifndef SD_BENCH_VERIFY_H
#define SD_BENCH_VERIFY_H

#include <stdio.h>

/* The default tolerance, %: what a reader's rerun must land within (the report marks figures whose own spread is
 * wider, which no rerun can be checked against) */
#define SD_VERIFY_TOLERANCE_PCT 10.0

typedef struct sd_verify_opts {
    const char *published;         /* the published results file */
    const char *results;           /* compare with this results file (NULL: the database, or the rerun) */
    const char *db;                /* database for earlier measurements (NULL: the default, when it exists) */
    const char *workloads;         /* workload specs for a rerun (NULL: ./workloads) */
    const char *json;              /* write the verdicts ("showdown-verify/1") here, or NULL */
    const char *only_workloads;    /* comma lists: check only these workloads / implementations (NULL: all) */
    const char *only_impls;
    double tolerance_pct, acc_tolerance;
    long repeat, batches;          /* a rerun's repetitions (at least 3) and batch cap (0: the published one) */
    double host_wait_s;            /* a rerun's cells wait up to this long for the host to run at its speed (0: not) */
    int rerun, quiet;
} sd_verify_opts;

/* Check every cell of o->published, printing the table and the counts to out. Returns the exit code: 0 every
 * checked cell reproduced, SD_EXIT_MISMATCH a comparable cell did not, SD_EXIT_NOTCOMPARABLE some could not be
 * checked (or none was measured); or a negative status (a bad or empty published file, SD_EINTR). */
int sd_verify(const sd_verify_opts *o, FILE *out);

#endif
