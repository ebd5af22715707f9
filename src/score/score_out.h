/* score_out — printing and the "showdown-scores/1" JSON file (scoring/README.md) for a scoring run. */
#ifndef SD_SCORE_OUT_H
#define SD_SCORE_OUT_H

#include "score/score_data.h"
#include <stdio.h>

typedef struct score_run {
    const score_method *method;
    const score_inputs *inputs;
    const score_snapshot *snapshot;   /* the inputs actually used (embedded snapshot, updated online) */
    const char *method_path, *snapshot_path;
    const char *mode;                 /* "offline" or "online" */
    int64_t as_of;                    /* the run's as-of instant */
} score_run;

/* Frameworks by overall score, highest first (missing overall last, then by id). */
void score_rank(score_fw *fw, int n, const score_fw **order);
void score_print(FILE *f, const score_run *r, score_fw *fw, int n);
int score_write_json(const char *path, const score_run *r, score_fw *fw, int n);

#endif
