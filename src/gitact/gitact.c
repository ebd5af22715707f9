/* git_activity — libgit2 walk of HEAD's history computing the activity metrics of gitact.h, and the
 * bare-mirror clone/fetch. Every libgit2 failure is reported once with libgit2's own message. */
#include "gitact/gitact.h"
#include "core/err.h"

#include <git2.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DAY 86400

static int gerr(int rc, const char *what, const char *path) {
    const git_error *e = git_error_last();
    return sd_err(SD_EIO, "git %s %s: libgit2 error %d: %s", what, path ? path : "", rc,
                  e && e->message ? e->message : "unknown");
}

int git_activity_init(void) {
    static int done;
    if (done) return 0;
    int rc = git_libgit2_init();
    if (rc < 0) return gerr(rc, "init", NULL);
    rc = git_libgit2_opts(GIT_OPT_SET_OWNER_VALIDATION, 0);
    if (rc < 0) return gerr(rc, "set owner validation", NULL);
    done = 1;
    return 0;
}

/* PR number of a subject: "Merge pull request #N ..." on a merge, or a trailing "(#N)". 0 if none. */
static long pr_number(const char *subject, int is_merge) {
    static const char prefix[] = "Merge pull request #";
    if (!subject) return 0;
    if (is_merge && strncmp(subject, prefix, sizeof prefix - 1) == 0) {
        const char *p = subject + sizeof prefix - 1;
        char *end;
        long n = strtol(p, &end, 10);
        if (end != p && n > 0) return n;
    }
    size_t len = strlen(subject);
    while (len > 0 && isspace((unsigned char)subject[len - 1])) len--;
    if (len < 4 || subject[len - 1] != ')') return 0;
    size_t i = len - 1;   /* at ')' */
    size_t digits_end = i;
    while (i > 0 && isdigit((unsigned char)subject[i - 1])) i--;
    if (i == digits_end || i < 2 || subject[i - 1] != '#' || subject[i - 2] != '(') return 0;
    long n = 0;
    for (size_t k = i; k < digits_end; k++) {
        if (n > 100000000L) return 0;
        n = n * 10 + (subject[k] - '0');
    }
    return n;
}

typedef struct strset { char **v; size_t n, cap; } strset;

static int strset_add(strset *s, const char *str) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **v = realloc(s->v, cap * sizeof *v);
        SD_ALLOC_CHECK(v);
        s->v = v; s->cap = cap;
    }
    char *c = strdup(str);
    SD_ALLOC_CHECK(c);
    for (char *p = c; *p; p++) *p = (char)tolower((unsigned char)*p);
    s->v[s->n++] = c;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long strset_distinct(strset *s) {
    if (!s->n) return 0;
    qsort(s->v, s->n, sizeof *s->v, cmp_str);
    long d = 1;
    for (size_t i = 1; i < s->n; i++) d += strcmp(s->v[i], s->v[i - 1]) != 0;
    return d;
}

/* Fewest distinct strings covering at least half of the entries (sorts s). */
static long strset_bus_factor(strset *s) {
    if (!s->n) return 0;
    qsort(s->v, s->n, sizeof *s->v, cmp_str);
    long *runs = malloc(s->n * sizeof *runs), nr = 0;
    if (!runs) return -1;
    for (size_t i = 0, j; i < s->n; i = j) {
        for (j = i + 1; j < s->n && strcmp(s->v[j], s->v[i]) == 0; j++) {}
        runs[nr++] = (long)(j - i);
    }
    qsort(runs, (size_t)nr, sizeof *runs, cmp_long);
    long covered = 0, k = 0;
    for (long i = nr - 1; i >= 0 && 2 * covered < (long)s->n; i--) { covered += runs[i]; k++; }
    free(runs);
    return k;
}

typedef struct tag_walk { git_repository *repo; int64_t as_of, from365; git_activity *out; int rc; } tag_walk;

/* One tag: a release when its name holds a digit; dated by its tagger, else by the commit it names. */
static int on_tag(const char *name, git_oid *oid, void *payload) {
    tag_walk *w = payload;
    if (!strpbrk(name + (strncmp(name, "refs/tags/", 10) == 0 ? 10 : 0), "0123456789")) return 0;
    git_object *o = NULL, *peeled = NULL;
    int64_t t = -1;
    if (git_object_lookup(&o, w->repo, oid, GIT_OBJECT_ANY) < 0) return 0;   /* dangling tag: not a release */
    if (git_object_type(o) == GIT_OBJECT_TAG && git_tag_tagger((git_tag *)o))
        t = (int64_t)git_tag_tagger((git_tag *)o)->when.time;
    else if (git_object_peel(&peeled, o, GIT_OBJECT_COMMIT) == 0)
        t = (int64_t)git_commit_time((git_commit *)peeled);
    git_object_free(peeled);
    git_object_free(o);
    if (t < 0 || t >= w->as_of) return 0;
    if (t > w->out->last_release) w->out->last_release = t;
    if (t >= w->from365) w->out->releases_365++;
    return 0;
}

static void strset_free(strset *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

int git_activity_analyse(const char *path, int64_t as_of, git_activity *out) {
    SD_TRY(git_activity_init());
    memset(out, 0, sizeof *out);
    out->as_of = as_of;
    git_repository *repo = NULL;
    git_revwalk *walk = NULL;
    git_mailmap *mm = NULL;
    strset authors = {0}, authors365 = {0};
    int week_seen[13] = {0};
    long *prs = NULL;
    size_t nprs = 0, capprs = 0;
    int rc = git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
    if (rc < 0) { rc = gerr(rc, "open", path); goto done; }
    if (git_repository_is_empty(repo) == 1) { rc = 0; goto done; }
    const git_oid *head_oid = NULL;
    git_oid head;
    if ((rc = git_reference_name_to_id(&head, repo, "HEAD")) < 0) { rc = gerr(rc, "resolve HEAD in", path); goto done; }
    head_oid = &head;
    git_oid_tostr(out->head, sizeof out->head, head_oid);
    if ((rc = git_mailmap_from_repository(&mm, repo)) < 0) { rc = gerr(rc, "read .mailmap of", path); goto done; }
    if ((rc = git_revwalk_new(&walk, repo)) < 0) { rc = gerr(rc, "revwalk", path); goto done; }
    git_revwalk_sorting(walk, GIT_SORT_TIME);
    if ((rc = git_revwalk_push(walk, head_oid)) < 0) { rc = gerr(rc, "revwalk push HEAD", path); goto done; }
    const int64_t from30 = as_of - 30 * (int64_t)DAY, from90 = as_of - 90 * (int64_t)DAY;
    const int64_t from365 = as_of - 365 * (int64_t)DAY;
    git_oid oid;
    while ((rc = git_revwalk_next(&oid, walk)) == 0) {
        git_commit *c = NULL;
        if ((rc = git_commit_lookup(&c, repo, &oid)) < 0) { rc = gerr(rc, "read commit in", path); goto done; }
        int64_t t = (int64_t)git_commit_time(c);
        if (t > out->newest_commit) out->newest_commit = t;
        if (t >= as_of) { git_commit_free(c); continue; }
        out->has_commits = 1;
        out->commits_total++;
        if (t > out->last_commit) out->last_commit = t;
        if (t >= from365) {
            const git_signature *a = git_commit_author(c);
            const char *name = NULL, *email = NULL;
            if ((rc = git_mailmap_resolve(&name, &email, mm, a->name, a->email)) < 0) {
                git_commit_free(c);
                rc = gerr(rc, "mailmap in", path);
                goto done;
            }
            out->commits_365++;
            if ((rc = strset_add(&authors365, email)) < 0) { git_commit_free(c); goto done; }
            if (t >= from90) {
                out->commits_90++;
                if ((rc = strset_add(&authors, email)) < 0) { git_commit_free(c); goto done; }
            }
            int64_t wk = (as_of - 1 - t) / (7 * (int64_t)DAY);
            if (wk < 13) week_seen[wk] = 1;
        }
        if (t >= from30) {
            out->commits_30++;
            long n = pr_number(git_commit_summary(c), git_commit_parentcount(c) >= 2);
            if (n > 0) {
                if (nprs == capprs) {
                    size_t cap = capprs ? capprs * 2 : 64;
                    long *v = realloc(prs, cap * sizeof *v);
                    if (!v) { git_commit_free(c); rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
                    prs = v; capprs = cap;
                }
                prs[nprs++] = n;
            }
        }
        git_commit_free(c);
    }
    if (rc != GIT_ITEROVER) { rc = gerr(rc, "revwalk", path); goto done; }
    rc = 0;
    out->authors_90 = strset_distinct(&authors);
    for (int k = 0; k < 13; k++) out->weeks_active_13 += week_seen[k];
    out->bus_factor_365 = strset_bus_factor(&authors365);
    if (out->bus_factor_365 < 0) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    tag_walk tw = {repo, as_of, from365, out, 0};
    if ((rc = git_tag_foreach(repo, on_tag, &tw)) < 0) { rc = gerr(rc, "list tags of", path); goto done; }
    if (nprs) {
        qsort(prs, nprs, sizeof *prs, cmp_long);
        out->prs_merged_30 = 1;
        for (size_t i = 1; i < nprs; i++) out->prs_merged_30 += prs[i] != prs[i - 1];
    }
done:
    free(prs);
    strset_free(&authors);
    strset_free(&authors365);
    git_mailmap_free(mm);
    git_revwalk_free(walk);
    git_repository_free(repo);
    return rc;
}

int git_activity_head_time(const char *path, int64_t *out) {
    SD_TRY(git_activity_init());
    *out = 0;
    git_repository *repo = NULL;
    git_commit *c = NULL;
    git_oid oid;
    int rc = git_repository_open_ext(&repo, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
    if (rc < 0) return gerr(rc, "open", path);
    if (git_repository_is_empty(repo) == 1) { git_repository_free(repo); return 0; }
    rc = git_reference_name_to_id(&oid, repo, "HEAD");
    if (rc == 0) rc = git_commit_lookup(&c, repo, &oid);
    if (rc < 0) rc = gerr(rc, "read HEAD of", path);
    else *out = (int64_t)git_commit_time(c);
    git_commit_free(c);
    git_repository_free(repo);
    return rc;
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int git_activity_find_mirror(const char *dir, const char *owner, const char *name, char *out, size_t len) {
    const char *fmt[] = {"%s/%s+%s.git", "%s/%s.git", "%s/%s+%s", "%s/%s"};
    for (int i = 0; i < 4; i++) {
        int two = i == 0 || i == 2;
        if (two) snprintf(out, len, fmt[i], dir, owner, name);
        else snprintf(out, len, fmt[i], dir, name);
        if (is_dir(out)) return 0;
    }
    out[0] = 0;
    return sd_err(SD_EIO, "no mirror of %s/%s under %s (tried %s+%s.git, %s.git, %s+%s, %s)", owner, name, dir, owner,
                  name, name, owner, name, name);
}

int git_activity_mirror(const char *url, const char *cache_dir, const char *owner, const char *name, char *out,
                        size_t len) {
    SD_TRY(git_activity_init());
    git_repository *repo = NULL;
    git_remote *remote = NULL;
    git_buf branch = {0};
    int rc;
    snprintf(out, len, "%s/%s+%s.git", cache_dir, owner, name);
    if (is_dir(out)) {
        if ((rc = git_repository_open_bare(&repo, out)) < 0) { rc = gerr(rc, "open mirror", out); goto done; }
    } else {
        if ((rc = git_repository_init(&repo, out, 1)) < 0) { rc = gerr(rc, "init mirror", out); goto done; }
    }
    /* An anonymous remote with an explicit refspec: the URL is given on every call, so nothing is
     * written to the mirror's config. (libgit2 1.5 leaks PCRE2 match data when it creates any remote;
     * tests/test_gitact.c suppresses that one library leak.) */
    if ((rc = git_remote_create_anonymous(&remote, repo, url)) < 0) { rc = gerr(rc, "remote for", url); goto done; }
    git_remote_callbacks cb;
    git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
    if ((rc = git_remote_connect(remote, GIT_DIRECTION_FETCH, &cb, NULL, NULL)) < 0) { rc = gerr(rc, "connect to", url); goto done; }
    if ((rc = git_remote_default_branch(&branch, remote)) < 0) { rc = gerr(rc, "default branch of", url); goto done; }
    git_fetch_options fo;
    git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
    char *spec = "+refs/heads/*:refs/heads/*";
    git_strarray specs = {&spec, 1};
    if ((rc = git_remote_download(remote, &specs, &fo)) < 0) { rc = gerr(rc, "fetch", url); goto done; }
    rc = git_remote_update_tips(remote, &cb, 0, GIT_REMOTE_DOWNLOAD_TAGS_NONE, "showdown mirror");
    if (rc < 0) { rc = gerr(rc, "update refs from", url); goto done; }
    git_remote_disconnect(remote);
    if ((rc = git_repository_set_head(repo, branch.ptr)) < 0) { rc = gerr(rc, "set HEAD of", out); goto done; }
    rc = 0;
done:
    git_buf_dispose(&branch);
    git_remote_free(remote);
    git_repository_free(repo);
    return rc;
}
