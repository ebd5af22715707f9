/* score — framework scoring: the method (criteria, scales, categories, weights, tiers; loaded from
 * scoring/method.json), raw criterion values per framework, and the arithmetic that turns them into
 * normalised criteria (0-100), category means, an overall score and a tier. Method v1 leaves a missing
 * criterion out of its category's mean; v2 gives every category and the overall score a range (missing
 * criteria at 0 and at 100), so a missing value never raises the lower bound the ranking uses. */
#ifndef SD_SCORE_H
#define SD_SCORE_H

#include <stddef.h>
#include <stdint.h>

#define SCORE_MAX_CAT    8
#define SCORE_MAX_CRIT   24
#define SCORE_MAX_PARTS  6
#define SCORE_MAX_TIERS  8
#define SCORE_ID_LEN     32
#define SCORE_NAME_LEN   64
#define SCORE_WHY_LEN    256

typedef enum score_scale_kind {
    SCORE_SCALE_FIXED,   /* normalised = 100 * raw / max */
    SCORE_SCALE_BEST,    /* normalised = 100 * raw / (largest raw among frameworks with data) */
    SCORE_SCALE_CAPPED,  /* normalised = 100 * min(raw, max) / max: independent of other frameworks */
    SCORE_SCALE_DECAY,   /* normalised = 100 * max(0, 1 - raw / max): raw is an age, 0 is best */
} score_scale_kind;

typedef struct score_scale {
    score_scale_kind kind;
    double min, max;     /* FIXED only: raw must lie in [min, max], max > 0 */
} score_scale;

/* How a criterion's raw value is made from the inputs (score_inputs.c). */
typedef enum score_formula {
    SCORE_F_VALUE,        /* a qualitative input's value */
    SCORE_F_ACTIVITY,     /* 1 / max(weeks since last commit, weeks_min) + PRs merged in the window */
    SCORE_F_LOG_SUM,      /* sum over inputs of log10(1 + n); missing if any input is missing */
    SCORE_F_PARTS_MEAN,   /* mean of the normalised parts that have data */
    SCORE_F_OPS_SUM,      /* sum of op presence (scoring/ops.json) */
    SCORE_F_WEIGHTED_SUM, /* sum of maturities (languages) */
    SCORE_F_COUNT,        /* number of entries (OS list) */
} score_formula;

typedef struct score_criterion {
    char id[SCORE_ID_LEN], name[SCORE_NAME_LEN];
    char about[512];                   /* what it measures, for the report's glossary ("" if not given) */
    char input[SCORE_ID_LEN];          /* input key (VALUE, WEIGHTED_SUM, COUNT, PARTS_MEAN) */
    int category;                      /* index into score_method.cat */
    double weight;                     /* >= 0 */
    score_formula formula;
    score_scale scale;                 /* unused for PARTS_MEAN */
    int nparts;
    char part_id[SCORE_MAX_PARTS][SCORE_ID_LEN];
    char part_input[SCORE_MAX_PARTS][SCORE_ID_LEN];   /* v2 "git:main:METRIC" / "git:numerics:METRIC", else "" */
    score_scale part_scale[SCORE_MAX_PARTS];
} score_criterion;

/* Activity status thresholds (method v2): active needs both minimums, maintenance either. */
typedef struct score_status_rule {
    long active_weeks_13, active_authors_90;
    long maintenance_weeks_13, maintenance_releases_365;
} score_status_rule;

typedef struct score_category {
    char id[SCORE_ID_LEN], name[SCORE_NAME_LEN];
    double weight;
} score_category;

typedef struct score_method {
    int version;                       /* 1: missing left out of means; 2: ranges */
    int ncat, ncrit;
    score_category cat[SCORE_MAX_CAT];
    score_criterion crit[SCORE_MAX_CRIT];
    double weeks_min;                  /* activity: weeks below this count as this */
    int window_days;                   /* activity: PR window */
    int ntiers;                        /* cut points, in decreasing min */
    double tier_min[SCORE_MAX_TIERS];
    int tier_id[SCORE_MAX_TIERS];
    int tier_last;                     /* tier below the last cut point */
    double stale_days;                 /* v2: a mirror older than as_of minus this is stale */
    double min_measured;               /* v2: a category below this fraction measured is insufficient */
    score_status_rule status;          /* v2 */
} score_method;

/* One raw value and what became of it. */
typedef struct score_value {
    int present;
    double raw;                        /* formula output */
    double norm;                       /* 0-100, valid when present (after score_compute) */
    double lo, hi;                     /* v2: norm when present, else the scale's worst and best (0, 100) */
    int measured;                      /* from git or the network, not hand-entered */
    int stale;                         /* v2: raw read from a stale mirror: shown, not scored */
    double stale_raw;
    char why[SCORE_WHY_LEN];           /* reason when !present */
    char src[SCORE_WHY_LEN];           /* v2: where a measured value came from, when it is worth saying */
} score_value;

typedef struct score_fw {
    char id[SCORE_ID_LEN], name[SCORE_NAME_LEN];
    score_value crit[SCORE_MAX_CRIT];
    score_value part[SCORE_MAX_CRIT][SCORE_MAX_PARTS];   /* PARTS_MEAN criteria only */
    int cat_present[SCORE_MAX_CAT];
    double cat[SCORE_MAX_CAT];
    int overall_present;
    double overall;                    /* v2: the midpoint of [overall_lo, overall_hi] */
    int tier;                          /* 0 when overall is missing or (v2) a category is insufficient */
    double cat_lo[SCORE_MAX_CAT], cat_hi[SCORE_MAX_CAT];
    int cat_measured[SCORE_MAX_CAT], cat_ncrit[SCORE_MAX_CAT];   /* criteria with data / in the category */
    int cat_insufficient[SCORE_MAX_CAT];
    double overall_lo, overall_hi;
    double rank_key;                   /* v1 overall, v2 overall_lo: what the ranking sorts on */
    int cover_measured, cover_hand, cover_missing;   /* leaf inputs (criteria and parts) */
    char status[32];                   /* v2 derived: active, maintenance, inactive, archived, unknown */
    char status_why[SCORE_WHY_LEN];
} score_fw;

/* Load and check scoring/method.json (positioned errors "file:line:col: ..."). */
int score_method_load(score_method *m, const char *path);
/* The same from memory (the fuzzers' entry point); name is used in messages. */
int score_method_parse(score_method *m, const char *name, const char *text, size_t len);
int score_criterion_index(const score_method *m, const char *id);

/* Git metrics a v2 part can read ("git:main:METRIC" or "git:numerics:METRIC"). */
#define SCORE_GIT_METRICS "weeks_active_13, authors_90, bus_factor_365, releases_365, days_since_release"
int score_git_input_valid(const char *input);

/* Normalise every present raw value, then category means, overall and tier, for n frameworks
 * compared with each other (BEST scales). PARTS_MEAN criteria get raw = norm = mean of present parts,
 * and are missing only when every part is. Returns SD_EINPUT if a FIXED raw lies outside its scale. */
int score_compute(const score_method *m, score_fw *fw, size_t n);
int score_tier(const score_method *m, double overall);

/* Status from activity (method v2 thresholds); archived is typed (git cannot see it). */
const char *score_status_from(const score_status_rule *r, long weeks_13, long authors_90, long releases_365);

/* Activity formula (method-independent part): 1 / max(weeks, weeks_min) + prs. */
double score_activity(int64_t as_of, int64_t last_commit, long prs, double weeks_min);

/* Missing-data list of one framework: calls fn once per missing criterion or part with a label
 * ("activity" or "numerics.activity") and the reason. Returns the number of entries. */
int score_missing(const score_method *m, const score_fw *f,
                  void (*fn)(void *ctx, const char *label, const char *why), void *ctx);

#endif
