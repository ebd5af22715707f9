/* cmd_score — `showdown score`: score the frameworks of scoring/ from the dated snapshot (--offline),
 * or refresh the measured inputs first (git mirrors via --mirror-dir/--fetch, GitHub and StackExchange
 * counts over the network), optionally writing them back as the snapshot (--update-snapshot). Prints
 * the table with the snapshot's date; --json writes "showdown-scores/1". */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "gitact/gitact.h"
#include "http/http.h"
#include "score/score_data.h"
#include "score/score_out.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct score_args {
    const char *json, *as_of, *mirror_dir, *api_base, *se_api_base, *scoring_dir, *cache_dir, *snapshot, *method;
    int offline, update, fetch, quiet, no_stats;
    long timeout_s;
} score_args;

static int exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

/* Every repository whose git history is an input: main repositories and numerics libraries. */
static int collect_repos(const score_inputs *in, char (*repos)[SCORE_REPO_LEN], int max) {
    int n = 0;
    for (int i = 0; i < in->nfw; i++) {
        const char *cand[2] = {in->fw[i].repo, in->fw[i].numerics_repo};
        for (int k = 0; k < 2; k++) {
            if (!cand[k][0]) continue;
            int seen = 0;
            for (int j = 0; j < n; j++) seen |= strcmp(repos[j], cand[k]) == 0;
            if (!seen && n < max) snprintf(repos[n++], SCORE_REPO_LEN, "%s", cand[k]);
        }
    }
    return n;
}

static void net_opts(const score_args *a, const char *cache, http_opts *o) {
    memset(o, 0, sizeof *o);
    o->cache_path = cache;
    o->token = getenv("GITHUB_TOKEN");
    o->token_base = a->api_base;
    o->timeout_ms = a->timeout_s * 1000;
    o->max_retries = 2;
    o->backoff_s = 1;
    o->max_wait_s = 120;
    o->max_parallel = 4;
    o->log = a->quiet ? NULL : stderr;
}

/* GitHub repositories without a mirror: the maintenance figures from GitHub's REST statistics, as of the
 * run's instant (release tags are not there: those parts stay missing). Nothing to do when all are mirrored. */
static int refresh_stats(const score_args *a, score_snapshot *s, char (*repos)[SCORE_REPO_LEN], int n, int64_t as_of,
                         const char *cache_dir) {
    http_client *c = NULL;
    char cache[PATH_MAX];   /* the client keeps this path until it is freed */
    snprintf(cache, sizeof cache, "%s/http-cache.json", cache_dir);
    for (int i = 0; i < n; i++) {
        score_git *g = score_snapshot_git(s, repos[i], 0);
        if (!g || g->present || strncmp(repos[i], "github.com/", 11) != 0) continue;
        char key[SCORE_REPO_LEN], owner[64], name[96], url[SCORE_REPO_LEN + 16], why[SCORE_WHY_LEN];
        snprintf(url, sizeof url, "https://%s", repos[i]);
        SD_TRY(score_repo_key(url, key, sizeof key, owner, sizeof owner, name, sizeof name));
        if (!c) {
            http_opts o;
            net_opts(a, cache, &o);
            SD_TRY(http_client_new(&c, &o));
        }
        http_stats st;
        if (http_github_stats(c, a->api_base, owner, name, as_of, 4, 15, &st) < 0 || !st.present) {
            snprintf(why, sizeof why, "%s; GitHub statistics: %s", g->why, st.why[0] ? st.why : sd_errmsg());
            snprintf(g->why, sizeof g->why, "%s", why);
            continue;
        }
        memset(&g->a, 0, sizeof g->a);
        g->a.as_of = as_of;
        g->a.weeks_active_13 = st.weeks_active_13;
        g->a.commits_365 = st.commits_365;
        g->a.authors_90 = st.authors_90;
        g->a.bus_factor_365 = st.bus_factor_365;
        g->present = g->has_maint = 1;
        g->why[0] = g->mirror[0] = 0;
        snprintf(g->source, sizeof g->source, "github-stats");
        snprintf(g->fetched, sizeof g->fetched, "%s", st.fetched);
    }
    http_client_free(c);
    return 0;
}

/* Git inputs from mirrors: find (or clone/fetch) each repository's mirror and analyse it as of the run's
 * instant; without --as-of that instant is the end of the UTC day of the newest HEAD commit among them. */
static int refresh_git(const score_args *a, const score_inputs *in, score_snapshot *s, int64_t *as_of, int have_as_of,
                       const char *cache_dir) {
    static char repos[SCORE_MAX_REPOS][SCORE_REPO_LEN];
    static char paths[SCORE_MAX_REPOS][PATH_MAX];
    int n = collect_repos(in, repos, SCORE_MAX_REPOS);
    char mdir[PATH_MAX];
    if (a->mirror_dir) snprintf(mdir, sizeof mdir, "%s", a->mirror_dir);
    else snprintf(mdir, sizeof mdir, "%s/mirrors", cache_dir);
    int64_t newest = 0;
    int found = 0;
    for (int i = 0; i < n; i++) {
        char key[SCORE_REPO_LEN], owner[64], name[96], url[SCORE_REPO_LEN + 16];
        snprintf(url, sizeof url, "https://%s", repos[i]);
        SD_TRY(score_repo_key(url, key, sizeof key, owner, sizeof owner, name, sizeof name));
        score_git *g = score_snapshot_git(s, repos[i], 1);
        if (!g) return sd_err(SD_ELIMIT, "too many repositories");
        paths[i][0] = 0;
        int rc;
        if (a->fetch) {
            char p[PATH_MAX];
            if (sd_mkdir_p(mdir, 0) < 0) return sd_err_prefix(SD_EIO, "mirror directory");
            fprintf(stderr, "score: mirroring %s into %s ...\n", url, mdir);
            rc = git_activity_mirror(url, mdir, owner, name, p, sizeof p);
            if (rc == 0) snprintf(paths[i], sizeof paths[i], "%s", p);
        } else {
            rc = git_activity_find_mirror(mdir, owner, name, paths[i], sizeof paths[i]);
        }
        if (rc < 0) {
            memset(&g->a, 0, sizeof g->a);
            g->present = 0;
            g->source[0] = 0;
            snprintf(g->why, sizeof g->why, "not analysed: %s", sd_errmsg());
            paths[i][0] = 0;
            continue;
        }
        g->source[0] = 0;
        int64_t t;
        if (git_activity_head_time(paths[i], &t) < 0) {
            g->present = 0;
            snprintf(g->why, sizeof g->why, "not analysed: %s", sd_errmsg());
            paths[i][0] = 0;
            continue;
        }
        if (t > newest) newest = t;
        found++;
    }
    if (!have_as_of && found) *as_of = newest - newest % 86400 + 86400;
    for (int i = 0; i < n; i++) {
        if (!paths[i][0]) continue;
        score_git *g = score_snapshot_git(s, repos[i], 0);
        fprintf(stderr, "score: analysing %s ...\n", paths[i]);
        if (git_activity_analyse(paths[i], *as_of, &g->a) < 0) {
            g->present = 0;
            snprintf(g->why, sizeof g->why, "analysis failed: %s", sd_errmsg());
            continue;
        }
        g->present = 1;
        g->has_maint = 1;
        g->why[0] = 0;
        if (score_mirror_fetched(paths[i], g->fetched, sizeof g->fetched) < 0) g->fetched[0] = 0;   /* then: unknown */
        const char *base = strrchr(paths[i], '/');
        snprintf(g->mirror, sizeof g->mirror, "%s", base ? base + 1 : paths[i]);
    }
    return a->no_stats ? 0 : refresh_stats(a, s, repos, n, *as_of, cache_dir);
}

static void keep_or_missing(score_named *e, const http_value *v, int rc) {
    if (rc == 0 && v->present) {
        e->v.present = 1;
        e->v.value = v->value;
        e->v.stale = v->stale;
        snprintf(e->v.date, sizeof e->v.date, "%s", v->fetched);
        snprintf(e->v.why, sizeof e->v.why, "%s", v->stale ? v->why : "");
        return;
    }
    if (e->v.present) return;   /* keep the snapshot's dated value */
    char today[16];
    score_date_day((int64_t)time(NULL), today, sizeof today);
    snprintf(e->v.why, sizeof e->v.why, "not fetched (tried %s): %s", today, v->why[0] ? v->why : sd_errmsg());
}

/* Network inputs: GitHub repository counts per search term, StackOverflow questions per tag. */
/* *unreachable: how many queries got no answer from the network at all (0 when any was answered). */
static int refresh_network(const score_args *a, const score_inputs *in, score_snapshot *s, const char *cache_dir,
                           int *unreachable, char *why, size_t nwhy) {
    char cache[PATH_MAX];
    snprintf(cache, sizeof cache, "%s/http-cache.json", cache_dir);
    http_opts o;
    net_opts(a, cache, &o);
    /* One concurrent batch (at most max_parallel transfers): every search term, then every tag. */
    enum { MAXQ = 2 * SCORE_MAX_COUNTS };
    static char urls[MAXQ][1024];
    static const char *uptr[MAXQ];
    static http_response rs[MAXQ];
    score_named *dst[MAXQ];
    int se[MAXQ], n = 0;
    for (int i = 0; i < in->nfw; i++) {
        const score_framework *f = &in->fw[i];
        for (int k = 0; k < f->nterms + f->ntags && n < MAXQ; k++) {
            int is_se = k >= f->nterms;
            const char *name = is_se ? f->tags[k - f->nterms] : f->terms[k];
            score_named *e = is_se ? score_snapshot_named(s->so, &s->nso, name, 1)
                                   : score_snapshot_named(s->repo_counts, &s->nrepo_counts, name, 1);
            if (!e) continue;
            int dup = 0;
            for (int j = 0; j < n; j++) dup |= dst[j] == e;
            if (dup) continue;
            if (is_se) SD_TRY(http_se_tag_url(a->se_api_base, name, urls[n], sizeof urls[n]));
            else SD_TRY(http_github_search_url(a->api_base, "repositories", name, urls[n], sizeof urls[n]));
            uptr[n] = urls[n];
            dst[n] = e;
            se[n] = is_se;
            n++;
        }
    }
    http_client *c = NULL;
    SD_TRY(http_client_new(&c, &o));
    http_get_many(c, uptr, (size_t)n, rs);   /* per-answer status in rs[i]; failures handled below */
    int answered = 0, lost = 0;
    for (int i = 0; i < n; i++) {
        if (rs[i].rc == 0 && !rs[i].stale) answered++;
        else if (rs[i].rc == SD_ENET || rs[i].stale) {
            if (!lost++) snprintf(why, nwhy, "%s", rs[i].why);
        }
        http_value v;
        int rc = http_count_from(&rs[i], se[i], &v);
        keep_or_missing(dst[i], &v, rc);
        http_response_free(&rs[i]);
    }
    http_client_free(c);
    *unreachable = answered ? 0 : lost;
    return 0;
}

static int run(const score_args *a) {
    char sdir[PATH_MAX], path[PATH_MAX + 32], snap_path[PATH_MAX + 32], cache_dir[PATH_MAX];
    if (a->scoring_dir) snprintf(sdir, sizeof sdir, "%s", a->scoring_dir);
    else sd_default_dir(sdir, sizeof sdir, "scoring", "scoring/method.json");
    if (a->cache_dir) snprintf(cache_dir, sizeof cache_dir, "%s", a->cache_dir);
    else if (!a->offline) SD_TRY(http_default_cache_dir(cache_dir, sizeof cache_dir));
    else cache_dir[0] = 0;   /* --offline fetches nothing */
    if (a->snapshot) snprintf(snap_path, sizeof snap_path, "%s", a->snapshot);
    else snprintf(snap_path, sizeof snap_path, "%s/snapshot.json", sdir);
    if (a->offline && (a->update || a->fetch || a->mirror_dir))
        return sd_err(SD_EUSAGE, "--offline uses the snapshot only: it cannot be combined with --update-snapshot, "
                      "--fetch or --mirror-dir");

    static score_method m;
    static score_inputs in;
    static score_snapshot s;
    static score_fw fw[SCORE_MAX_FW];
    char method_path[PATH_MAX + 32], fw_dir[PATH_MAX + 32];
    /* v2 is method.json; v1 stays reproducible from method-v1.json. */
    snprintf(method_path, sizeof method_path, "%s/%s", sdir, strcmp(a->method, "v1") == 0 ? "method-v1.json" : "method.json");
    snprintf(fw_dir, sizeof fw_dir, "%s/frameworks", sdir);
    snprintf(path, sizeof path, "%s/ops.json", sdir);
    SD_TRY(score_method_load(&m, method_path));
    SD_TRY(score_inputs_load(&in, fw_dir, path));
    if (exists(snap_path)) SD_TRY(score_snapshot_load(&s, snap_path));
    else if (a->offline) return sd_err(SD_EIO, "no snapshot at %s (needed by --offline)", snap_path);
    else memset(&s, 0, sizeof s);

    int64_t as_of = (int64_t)time(NULL);
    int have_as_of = 0, unreachable = 0;
    char why[512] = "";
    if (a->as_of) {
        if (score_date_parse(a->as_of, 1, &as_of) < 0) return sd_err_prefix(SD_EUSAGE, "--as-of");
        have_as_of = 1;
    }
    if (a->offline) {
        as_of = s.as_of;
    } else {
        if (a->mirror_dir || a->fetch) SD_TRY(refresh_git(a, &in, &s, &as_of, have_as_of, cache_dir));
        else if (a->update) {
            /* No mirrors: git inputs are recorded missing, with the way to supply them. */
            static char repos[SCORE_MAX_REPOS][SCORE_REPO_LEN];
            int n = collect_repos(&in, repos, SCORE_MAX_REPOS);
            for (int i = 0; i < n; i++) {
                score_git *g = score_snapshot_git(&s, repos[i], 1);
                if (!g || g->present) continue;
                snprintf(g->why, sizeof g->why, "not analysed: no git mirror was available where this snapshot was "
                         "made; run `showdown score --mirror-dir DIR --update-snapshot` on mirrors");
            }
        }
        SD_TRY(refresh_network(a, &in, &s, cache_dir, &unreachable, why, sizeof why));
        s.as_of = as_of;
        score_date_day((int64_t)time(NULL), s.date, sizeof s.date);
        if (!s.note[0] || a->update)
            snprintf(s.note, sizeof s.note, "Measured inputs of showdown's framework scores. Git metrics are computed "
                     "by showdown from local mirrors as of 'as_of'; network counts carry their fetch date; anything "
                     "that could not be measured is listed with the reason.");
        if (a->update) {
            SD_TRY(score_snapshot_write(&s, snap_path));
            fprintf(stderr, "score: wrote %s (date %s)\n", snap_path, s.date);
        }
    }
    SD_TRY(score_build(&m, &in, &s, fw));
    SD_TRY(score_compute(&m, fw, (size_t)in.nfw));
    score_run r = {&m, &in, &s, method_path, snap_path, a->offline ? "offline (snapshot only)" : "online", as_of};
    if (!a->quiet) score_print(stdout, &r, fw, in.nfw);
    if (a->json) {
        SD_TRY(score_write_json(a->json, &r, fw, in.nfw));
        fprintf(stderr, "score: wrote %s\n", a->json);
    }
    /* the scores stand on the snapshot's dated values, but the online refresh the user asked for failed */
    if (unreachable)
        return sd_err(SD_ENET, "network failure: none of the %d queries was answered (%s); the scores use the "
                      "snapshot's dated counts", unreachable, why);
    return 0;
}

int cmd_score(int argc, char **argv) {
    score_args a = {0};
    a.api_base = "https://api.github.com";
    a.se_api_base = "https://api.stackexchange.com";
    a.timeout_s = 30;
    a.method = "v2";
    const sd_opt opts[] = {
        {"offline", SD_OPT_FLAG, &a.offline, NULL, "use the committed snapshot only (no git, no network)", 0, 0},
        {"method", SD_OPT_CHOICE, &a.method, "v1|v2", "scoring method: v2 (default, ranges; scoring/method.json) or v1 "
         "(scoring/method-v1.json, the earlier results)", 0, 0},
        {"json", SD_OPT_OUT, &a.json, "FILE", "write scores as showdown-scores/1 JSON (scoring/README.md)", 0, 0},
        {"as-of", SD_OPT_STR, &a.as_of, "DATE", "measure git activity as of the end of DATE (YYYY-MM-DD, UTC); default: "
         "end of the day of the newest mirrored commit, else now", 0, 0},
        {"mirror-dir", SD_OPT_STR, &a.mirror_dir, "DIR", "read git mirrors <owner>+<name>.git or <name>.git from DIR", 0, 0},
        {"fetch", SD_OPT_FLAG, &a.fetch, NULL, "clone or fetch bare mirrors into CACHE/mirrors (network)", 0, 0},
        {"no-stats", SD_OPT_FLAG, &a.no_stats, NULL, "do not ask GitHub's statistics API for repositories without a "
         "mirror", 0, 0},
        {"update-snapshot", SD_OPT_FLAG, &a.update, NULL, "write the measured inputs to the snapshot file", 0, 0},
        {"snapshot", SD_OPT_STR, &a.snapshot, "FILE", "snapshot file (default: SCORING/snapshot.json)", 0, 0},
        {"scoring-dir", SD_OPT_STR, &a.scoring_dir, "DIR", "method, frameworks and ops data (default: ./scoring)", 0, 0},
        {"cache-dir", SD_OPT_STR, &a.cache_dir, "DIR", "HTTP cache and mirrors (default: ~/.cache/showdown)", 0, 0},
        {"api-base", SD_OPT_STR, &a.api_base, "URL", "GitHub API base (default https://api.github.com)", 0, 0},
        {"se-api-base", SD_OPT_STR, &a.se_api_base, "URL", "StackExchange API base (default https://api.stackexchange.com)", 0, 0},
        {"timeout", SD_OPT_INT, &a.timeout_s, "SECONDS", "per HTTP request (default 30)", 1, 600},
        {"quiet", SD_OPT_FLAG, &a.quiet, NULL, "print nothing but errors", 0, 0},
        {0},
    };
    int code = sd_cli_parse("score", "[--offline] [--json FILE] [--mirror-dir DIR] [--update-snapshot] ...",
                      "Score frameworks on Support & Community, API & Internals and Platform (scoring/README.md).\n"
                      "Qualitative inputs come from scoring/frameworks and scoring/ops.json; measured inputs from the\n"
                      "dated snapshot, refreshed from git mirrors and the GitHub/StackExchange APIs unless --offline.\n"
                      "GITHUB_TOKEN, when set, is sent to the GitHub API only and never printed.",
                      opts, argc, argv);
    if (code >= 0) return code;
    sd_sig_install_immediate();
    int rc = run(&a);
    return rc < 0 ? sd_cli_fail("score", rc) : SD_EXIT_OK;
}
