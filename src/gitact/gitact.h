/* git_activity — what a repository's own history says about its activity, read with libgit2 from a
 * local clone or bare mirror, as of an instant: last commit, commits in 30/90 days, pull requests
 * merged in 30 days, distinct authors in 90 days. Exact for the history it reads; no network except
 * git_activity_mirror, which clones or fetches a bare mirror. */
#ifndef SD_GITACT_H
#define SD_GITACT_H

#include <stddef.h>
#include <stdint.h>

/* Counting rules (documented in scoring/README.md):
 * - history = every commit reachable from HEAD (the default branch), dated by committer time;
 * - "as of T": commits with committer time >= T are ignored; windows are [T - days*86400, T);
 * - a merged pull request is a distinct number N taken from a merge commit whose subject starts
 *   "Merge pull request #N" or from any commit whose subject ends "(#N)" (GitHub squash merges);
 *   merges without a PR number are not pull requests;
 * - authors are author e-mails after .mailmap (from HEAD), ASCII case-folded;
 * - maintenance metrics (OpenSSF Scorecard "Maintained", CHAOSS): weeks_active_13 counts the 7-day windows
 *   [T - 7(k+1) d, T - 7k d), k = 0..12, holding at least one commit; bus_factor_365 is the fewest authors
 *   whose commits make at least half of the commits in [T - 365 d, T);
 * - a release is a tag under refs/tags/ whose name holds a digit, dated by its tagger (annotated) or its
 *   commit (lightweight); releases_365 counts those in [T - 365 d, T), last_release is the newest before T. */
typedef struct git_activity {
    int64_t as_of;            /* the instant T (exclusive end), seconds since the epoch, UTC */
    int has_commits;          /* 0: no commit before T (other fields 0) */
    int64_t last_commit;      /* newest committer time before T */
    int64_t newest_commit;    /* newest committer time in the whole history (may be >= T) */
    long commits_total;       /* commits before T */
    long commits_30, commits_90;
    long prs_merged_30;
    long authors_90;
    long weeks_active_13;     /* of the last 13 weeks, how many hold a commit */
    long commits_365;
    long bus_factor_365;      /* 0 when no commit in 365 days */
    long releases_365;
    int64_t last_release;     /* 0: no release tag before T */
    char head[41];            /* HEAD commit id (hex) */
} git_activity;

/* Process-wide libgit2 setup (idempotent; also disables owner validation: mirrors are often owned by
 * another user). */
int git_activity_init(void);

/* Analyse the repository at path (bare or not) as of the instant as_of. */
int git_activity_analyse(const char *path, int64_t as_of, git_activity *out);

/* Committer time of HEAD's commit (0 for an empty repository). */
int git_activity_head_time(const char *path, int64_t *out);

/* Find a mirror of owner/name under dir: "<owner>+<name>.git", "<name>.git", "<owner>+<name>",
 * "<name>" (first that exists). Returns 0 and the path, or SD_EIO with a message naming the tries. */
int git_activity_find_mirror(const char *dir, const char *owner, const char *name, char *out, size_t len);

/* Bring a bare mirror of url into cache_dir/<owner>+<name>.git: clone if absent, else fetch
 * (every refs/heads/ branch mirrored, HEAD set to the remote's default branch). Path written to out. */
int git_activity_mirror(const char *url, const char *cache_dir, const char *owner, const char *name, char *out,
                        size_t len);

#endif
