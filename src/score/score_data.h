/* score_data — the inputs of scoring as read from scoring/: framework files (qualitative values with
 * source and date), the op sample, and the dated snapshot of measured inputs (git activity, GitHub and
 * StackOverflow counts); and score_build, which turns them into raw criterion values (score.h).
 * Every reader names file:line:col on bad input (jv). */
#ifndef SD_SCORE_DATA_H
#define SD_SCORE_DATA_H

#include "score/score.h"
#include "gitact/gitact.h"

#define SCORE_MAX_FW     64
#define SCORE_MAX_QUAL   16
#define SCORE_MAX_NAMES  8
#define SCORE_MAX_REPOS  128
#define SCORE_MAX_COUNTS 128
#define SCORE_REPO_LEN   160

/* A number with provenance: present, or missing with the reason. */
typedef struct score_num {
    int present;
    double value;
    int stale;
    char date[32];                    /* when measured / fetched */
    char why[SCORE_WHY_LEN];          /* reason when missing (or why stale) */
} score_num;

typedef struct score_qual {
    char key[SCORE_ID_LEN];           /* sponsor, documentation, graph_building, scalability, cloud, onnx,
                                         languages (sum of maturity), os (count), numerics.maturity,
                                         numerics.ease, ops (sum of presence) */
    score_num v;
} score_qual;

typedef struct score_framework {
    char id[SCORE_ID_LEN], name[SCORE_NAME_LEN];
    int in_2018;
    char status[32];                  /* active, maintenance, inactive, archived, retired */
    char repo[SCORE_REPO_LEN];        /* main repository "host/owner/name" */
    char numerics_repo[SCORE_REPO_LEN];   /* "" when none */
    char numerics_repo_why[SCORE_WHY_LEN];
    char numerics_lib[96];
    int numerics_shared;              /* the numerics library serves other projects too (NumPy, Eigen, XLA...) */
    int ntags, nterms;
    char tags[SCORE_MAX_NAMES][64];   /* StackOverflow tags */
    char terms[SCORE_MAX_NAMES][64];  /* GitHub search terms */
    int nqual;
    score_qual qual[SCORE_MAX_QUAL];
} score_framework;

/* Git activity of one repository in the snapshot. */
typedef struct score_git {
    char repo[SCORE_REPO_LEN];
    int present;
    git_activity a;
    char why[SCORE_WHY_LEN];
    char mirror[64];                  /* mirror directory name it was read from */
    int has_maint;                    /* the maintenance metrics (weeks_active_13 ...) were recorded */
    char source[16];                  /* "" git history of a mirror; "github-stats": GitHub's REST statistics
                                         (weeks, commits, authors, bus factor; no dates, no tags) */
    char fetched[32];                 /* when the statistics or the mirror were fetched; "": not recorded */
} score_git;

typedef struct score_named {
    char name[SCORE_REPO_LEN];
    score_num v;
} score_named;

typedef struct score_snapshot {
    char date[32];                    /* when the snapshot was made (YYYY-MM-DD) */
    int64_t as_of;                    /* instant the measured inputs refer to */
    char note[512];
    int ngit, nrepo_counts, nso;
    score_git git[SCORE_MAX_REPOS];
    score_named repo_counts[SCORE_MAX_COUNTS];   /* GitHub repository search total_count per term */
    score_named so[SCORE_MAX_COUNTS];            /* StackOverflow questions per tag */
} score_snapshot;

typedef struct score_inputs {
    int nfw;
    score_framework fw[SCORE_MAX_FW];
} score_inputs;

/* Dates: "YYYY-MM-DD" (end_of_day: the instant the next day starts, else its start) or
 * "YYYY-MM-DDTHH:MM:SSZ". */
int score_date_parse(const char *s, int end_of_day, int64_t *out);
void score_date_iso(int64_t t, char *buf, size_t len);   /* "YYYY-MM-DDTHH:MM:SSZ" */
/* When the git mirror at path was last fetched (its FETCH_HEAD, else its refs from the clone), ISO into buf. */
int score_mirror_fetched(const char *mirror, char *buf, size_t len);
void score_date_day(int64_t t, char *buf, size_t len);   /* "YYYY-MM-DD" */

/* Split "https://github.com/owner/name" into key "github.com/owner/name", owner and name; owner and name
 * must be safe names (sd_safe_name: they become mirror directory names), parts too long are SD_ELIMIT. */
int score_repo_key(const char *url, char *key, size_t klen, char *owner, size_t olen, char *name, size_t nlen);

/* Read scoring/frameworks/ *.json (sorted by file name) and scoring/ops.json. */
int score_inputs_load(score_inputs *in, const char *frameworks_dir, const char *ops_path);
int score_snapshot_load(score_snapshot *s, const char *path);
/* The same from memory, and one framework file from memory (the fuzzers' entry points). */
int score_snapshot_parse(score_snapshot *s, const char *name, const char *text, size_t len);
int score_framework_parse(score_framework *f, const char *name, const char *text, size_t len);
/* Write the snapshot (deterministic JSON, atomic). */
int score_snapshot_write(const score_snapshot *s, const char *path);

score_git *score_snapshot_git(score_snapshot *s, const char *repo, int create);
score_named *score_snapshot_named(score_named *arr, int *n, const char *name, int create);

/* Raw criterion values for every framework from inputs + snapshot (fw must hold in->nfw entries).
 * Call score_compute afterwards. */
int score_build(const score_method *m, const score_inputs *in, const score_snapshot *s, score_fw *fw);

#endif
