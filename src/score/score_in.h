/* score_in — the scores file read back ("showdown-scores/1", score_out.c writes it), for the report: categories
 * and criteria in the scorer's order (the method's, then any a framework names), and each framework's values.
 * Read once and bounded; also accepts the hand-written shape of older files and the tests' fixtures (categories
 * at the top with their criteria inside, a category as {"score": x}, a tier as text). Absent reads NAN / NULL. */
#ifndef SD_SCORE_IN_H
#define SD_SCORE_IN_H

#include <jansson.h>

#define SCORE_IN_MAX_IDS 256   /* categories, and criteria, in one file */

typedef struct score_in_fw {
    const char *name, *tier;          /* tier as text ("1", "Tier 1"); NULL when absent */
    const char *status, *status_typed;   /* as written; NULL when absent */
    int archived;
    double overall, overall_lo, overall_hi;
    double cat[SCORE_IN_MAX_IDS], cat_lo[SCORE_IN_MAX_IDS], cat_hi[SCORE_IN_MAX_IDS];
    int cat_insufficient[SCORE_IN_MAX_IDS];
    double crit[SCORE_IN_MAX_IDS], crit_raw[SCORE_IN_MAX_IDS], crit_lo[SCORE_IN_MAX_IDS], crit_hi[SCORE_IN_MAX_IDS];
    const char *crit_why[SCORE_IN_MAX_IDS];   /* why a value is missing, or NULL */
    int cov_measured, cov_hand, cov_missing;  /* -1 when absent */
    char tier_buf[32];
} score_in_fw;

typedef struct score_in {
    json_t *doc;                      /* the file; every string above points into it */
    const char *mode, *snapshot_date; /* NULL when absent */
    int ncat, ncrit, nfw;
    const char *cat_id[SCORE_IN_MAX_IDS], *cat_name[SCORE_IN_MAX_IDS];
    const char *crit_id[SCORE_IN_MAX_IDS], *crit_name[SCORE_IN_MAX_IDS], *crit_about[SCORE_IN_MAX_IDS];
    int crit_cat[SCORE_IN_MAX_IDS];   /* category index of each criterion, -1 when none */
    score_in_fw *fw;                  /* nfw, in the file's order */
} score_in;

/* Read path into *s (schema showdown-scores/1, a "frameworks" list); free with score_in_free (also after an error). */
int score_in_load(score_in *s, const char *path);
void score_in_free(score_in *s);

#endif
