/* test_gitact — real git repositories made here with the git CLI at fixed dates (merges, squash
 * subjects, authors differing in case, a .mailmap), analysed by git_activity_analyse; every metric is
 * checked exactly against the counts worked out in the comments. Also mirror clone + fetch (local). */
#include "testutil.h"
#include "gitact/gitact.h"
#include "core/err.h"

#include <time.h>

/* libgit2 1.5 leaks PCRE2 match data inside git_remote_create_* (a config regex miss); not ours.
 * The suppression needs the slow unwinder: libgit2 and PCRE2 are built without frame pointers. */
const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void) { return "fast_unwind_on_malloc=0"; }
const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void) {
    return "leak:git_remote_create_with_opts\n";
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...) {
    char cmd[4096];
    va_list ap; va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    cr_assert_eq(rc, 0, "command failed (%d): %s", rc, cmd);
}

/* exported: every git of a && chain needs it (an annotated tag needs a committer even where none is configured) */
#define GITENV "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_COMMITTER_NAME=CI GIT_COMMITTER_EMAIL=ci@x.org GIT_AUTHOR_NAME=CI GIT_AUTHOR_EMAIL=ci@x.org;"

/* One commit by NAME <EMAIL> at DATE (author and committer date), subject S. */
static void commit(const char *dir, const char *name, const char *email, const char *date, const char *subject) {
    sh("cd '%s' && " GITENV " GIT_AUTHOR_NAME='%s' GIT_AUTHOR_EMAIL='%s' GIT_AUTHOR_DATE='%s' GIT_COMMITTER_DATE='%s' "
       "git commit -q --allow-empty -m '%s'", dir, name, email, date, date, subject);
}

static void merge(const char *dir, const char *branch, const char *date, const char *subject) {
    sh("cd '%s' && " GITENV " GIT_AUTHOR_NAME=Maint GIT_AUTHOR_EMAIL=maint@x.org GIT_AUTHOR_DATE='%s' "
       "GIT_COMMITTER_DATE='%s' git merge -q --no-ff '%s' -m '%s'", dir, date, date, branch, subject);
}

static int64_t utc(int y, int mo, int d) {
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d};
    return (int64_t)timegm(&tm);
}

/* History (committer dates, noon UTC):
 *   c1 2023-11-01 Old <old@x.org>               "init"  (adds .mailmap: robert@home.example -> bob@work.example)
 *   c2 2024-01-10 Alice <Alice@Example.com>      "first (#1)"
 *   c3 2024-03-05 alice <alice@example.COM>      "Fix bug (#12)"
 *   c4 2024-03-10 Bob <bob@work.example>         "topic work"           (branch topic)
 *   m1 2024-03-12 Maint <maint@x.org>            "Merge pull request #15 from bob/topic"
 *   c5 2024-03-20 Robert <robert@home.example>   "Docs"
 *   c6 2024-03-24 Carol <carol@x.org>            "sync work"            (branch sync)
 *   m2 2024-03-25 Maint <maint@x.org>            "Merge branch 'sync'"  (no PR number: not a PR)
 *   c7 2024-03-28 ALICE <ALICE@EXAMPLE.COM>      "Add feature (#20)  "  (trailing blanks)
 *   c8 2024-04-05 Dave <dave@x.org>              "Later (#30)"          (after the as-of instant)
 * As of 2024-04-01T00:00Z (T): 9 commits before T; last = c7; 90-day window starts 2024-01-02:
 * c2..c7 = 8 commits; 30-day window starts 2024-03-02: c3..c7 = 7 commits; PRs #12 #15 #20 = 3;
 * authors in 90 days: alice (3 spellings), bob (+robert via .mailmap), carol, maint = 4. */
static void make_repo(const char *dir) {
    sh("mkdir -p '%s' && cd '%s' && " GITENV " git init -q -b main . && "
       "printf 'Bob <bob@work.example> <robert@home.example>\\n' > .mailmap && git add .mailmap", dir, dir);
    commit(dir, "Old", "old@x.org", "2023-11-01T12:00:00+0000", "init");
    commit(dir, "Alice", "Alice@Example.com", "2024-01-10T12:00:00+0000", "first (#1)");
    commit(dir, "alice", "alice@example.COM", "2024-03-05T12:00:00+0000", "Fix bug (#12)");
    sh("cd '%s' && git checkout -q -b topic", dir);
    commit(dir, "Bob", "bob@work.example", "2024-03-10T12:00:00+0000", "topic work");
    sh("cd '%s' && git checkout -q main", dir);
    merge(dir, "topic", "2024-03-12T12:00:00+0000", "Merge pull request #15 from bob/topic");
    commit(dir, "Robert", "robert@home.example", "2024-03-20T12:00:00+0000", "Docs");
    sh("cd '%s' && git checkout -q -b sync", dir);
    commit(dir, "Carol", "carol@x.org", "2024-03-24T12:00:00+0000", "sync work");
    sh("cd '%s' && git checkout -q main", dir);
    merge(dir, "sync", "2024-03-25T12:00:00+0000", "Merge branch 'sync'");
    commit(dir, "ALICE", "ALICE@EXAMPLE.COM", "2024-03-28T12:00:00+0000", "Add feature (#20)  ");
    commit(dir, "Dave", "dave@x.org", "2024-04-05T12:00:00+0000", "Later (#30)");
}

Test(gitact, metrics_exact) {
    char tmp[256], dir[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/repo", tmp);
    make_repo(dir);
    git_activity a;
    cr_assert_eq(git_activity_analyse(dir, utc(2024, 4, 1), &a), 0, "%s", sd_errmsg());
    cr_assert(a.has_commits);
    cr_assert_eq(a.commits_total, 9);
    cr_assert_eq(a.last_commit, utc(2024, 3, 28) + 12 * 3600);
    cr_assert_eq(a.newest_commit, utc(2024, 4, 5) + 12 * 3600);
    cr_assert_eq(a.commits_90, 8);
    cr_assert_eq(a.commits_30, 7);
    cr_assert_eq(a.prs_merged_30, 3);
    cr_assert_eq(a.authors_90, 4);
    cr_assert_eq(strlen(a.head), 40);
}

/* As of 2024-03-16T00:00Z: before T are c1 c2 c3 c4 m1 (5); last = m1 (03-12); 30 days from 02-15:
 * c3 c4 m1 = 3; PRs #12 #15 = 2; 90 days from 2023-12-17: c2 c3 c4 m1 -> alice, bob, maint = 3. */
Test(gitact, metrics_earlier_as_of) {
    char tmp[256], dir[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/repo", tmp);
    make_repo(dir);
    git_activity a;
    cr_assert_eq(git_activity_analyse(dir, utc(2024, 3, 16), &a), 0, "%s", sd_errmsg());
    cr_assert_eq(a.commits_total, 5);
    cr_assert_eq(a.last_commit, utc(2024, 3, 12) + 12 * 3600);
    cr_assert_eq(a.commits_30, 3);
    cr_assert_eq(a.commits_90, 4);
    cr_assert_eq(a.prs_merged_30, 2);
    cr_assert_eq(a.authors_90, 3);
}

/* Maintenance metrics as of 2024-04-01T00:00Z (T). Week k holds t when floor((T - t - 1 s) / 7 d) = k:
 * c7 3.5 d and m2 6.5 d -> week 0; c6 7.5 d, c5 11.5 d -> 1; m1 19.5 d -> 2; c4 21.5 d, c3 26.5 d -> 3;
 * c2 81.5 d -> 11; c1 152 d -> outside: 5 weeks of 13. 365 days hold all 9 commits: alice 3 (c2 c3 c7),
 * bob 2 (c4, c5 via .mailmap), maint 2, old 1, carol 1; half is 4.5, alice + bob = 5 -> bus factor 2.
 * Tags: v0.1 on c1 (2023-11-01), v1.0 on c2 (2024-01-10), annotated v1.1 on c5 tagged 2024-03-21,
 * "nightly" on c7 (no digit: not a release), v2.0 on c8 (after T): releases 3, last 2024-03-21 12:00. */
Test(gitact, maintenance_metrics_exact) {
    char tmp[256], dir[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/repo", tmp);
    make_repo(dir);
    sh("cd '%s' && " GITENV " git tag v0.1 ':/^init' && git tag v1.0 ':/^first' && git tag nightly ':/^Add feature' && "
       "git tag v2.0 ':/^Later' && GIT_COMMITTER_DATE='2024-03-21T12:00:00+0000' git tag -a v1.1 -m r ':/^Docs'", dir);
    git_activity a;
    cr_assert_eq(git_activity_analyse(dir, utc(2024, 4, 1), &a), 0, "%s", sd_errmsg());
    cr_assert_eq(a.weeks_active_13, 5);
    cr_assert_eq(a.commits_365, 9);
    cr_assert_eq(a.bus_factor_365, 2);
    cr_assert_eq(a.releases_365, 3);
    cr_assert_eq(a.last_release, utc(2024, 3, 21) + 12 * 3600);
    /* As of 2024-03-16: v1.1 is in the future (2 releases, last v1.0); weeks: m1 3.5 d -> 0, c4 5.5 d -> 0,
     * c3 10.5 d -> 1, c2 65.5 d -> 9: 3 weeks; 5 commits: alice 2, bob 1, maint 1, old 1 -> 2 authors. */
    cr_assert_eq(git_activity_analyse(dir, utc(2024, 3, 16), &a), 0, "%s", sd_errmsg());
    cr_assert_eq(a.releases_365, 2);
    cr_assert_eq(a.last_release, utc(2024, 1, 10) + 12 * 3600);
    cr_assert_eq(a.weeks_active_13, 3);
    cr_assert_eq(a.bus_factor_365, 2);
}

/* Before the first commit: no commits, no error. An empty repository likewise. */
Test(gitact, before_history_and_empty) {
    char tmp[256], dir[512], empty[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/repo", tmp);
    make_repo(dir);
    git_activity a;
    cr_assert_eq(git_activity_analyse(dir, utc(2020, 1, 1), &a), 0, "%s", sd_errmsg());
    cr_assert(!a.has_commits);
    cr_assert_eq(a.commits_total, 0);
    snprintf(empty, sizeof empty, "%s/empty", tmp);
    sh("git init -q --bare '%s'", empty);
    cr_assert_eq(git_activity_analyse(empty, utc(2024, 1, 1), &a), 0, "%s", sd_errmsg());
    cr_assert(!a.has_commits);
}

Test(gitact, not_a_repository) {
    char tmp[256];
    tu_tmpdir(tmp, sizeof tmp);
    git_activity a;
    cr_assert_eq(git_activity_analyse(tmp, utc(2024, 1, 1), &a), SD_EIO);
    cr_assert(strstr(sd_errmsg(), tmp), "%s", sd_errmsg());
}

/* Mirror: clone a bare mirror from a local path, analyse it (same numbers as the source), add a
 * commit to the source, mirror again (fetch) and see it. find_mirror finds "<owner>+<name>.git". */
Test(gitact, mirror_clone_then_fetch) {
    char tmp[256], src[512], cache[512], path[1024], found[1024];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(src, sizeof src, "%s/src", tmp);
    snprintf(cache, sizeof cache, "%s/cache", tmp);
    make_repo(src);
    sh("mkdir -p '%s'", cache);
    cr_assert_eq(git_activity_mirror(src, cache, "acme", "proj", path, sizeof path), 0, "%s", sd_errmsg());
    git_activity a;
    cr_assert_eq(git_activity_analyse(path, utc(2024, 4, 1), &a), 0, "%s", sd_errmsg());
    cr_assert_eq(a.commits_30, 7);
    cr_assert_eq(a.prs_merged_30, 3);
    cr_assert_eq(a.authors_90, 4);   /* .mailmap read from HEAD of the bare mirror */
    commit(src, "Eve", "eve@x.org", "2024-03-30T12:00:00+0000", "More (#21)");
    cr_assert_eq(git_activity_mirror(src, cache, "acme", "proj", path, sizeof path), 0, "%s", sd_errmsg());
    cr_assert_eq(git_activity_analyse(path, utc(2024, 4, 1), &a), 0, "%s", sd_errmsg());
    cr_assert_eq(a.commits_30, 8);
    cr_assert_eq(a.prs_merged_30, 4);
    cr_assert_eq(a.authors_90, 5);
    cr_assert_eq(git_activity_find_mirror(cache, "acme", "proj", found, sizeof found), 0, "%s", sd_errmsg());
    cr_assert_str_eq(found, path);
    sh("mv '%s' '%s/proj.git'", path, cache);
    cr_assert_eq(git_activity_find_mirror(cache, "acme", "proj", found, sizeof found), 0);
    cr_assert(strstr(found, "/proj.git"));
    cr_assert_eq(git_activity_find_mirror(cache, "acme", "other", found, sizeof found), SD_EIO);
}
