/* test_score_data — the scoring readers and score_build: the committed method and framework data load;
 * a null qualitative value becomes a listed missing criterion; bad ops/snapshot data are positioned
 * errors; a snapshot survives write + load; dates and repository keys parse exactly. Method v2: ranges
 * and insufficient data against hand-computed values, a stale mirror, and the property that removing any
 * measured input never raises any framework's lower bound nor the rank of the framework that lost it. */
#include "testutil.h"
#include "score/score_data.h"
#include "score/score_out.h"
#include "core/err.h"

#include <math.h>
#include <sys/stat.h>

static score_method m;
static score_inputs in;
static score_snapshot snap, snap2;
static score_fw fw[SCORE_MAX_FW];

Test(score_data, committed_data_loads) {
    cr_assert_eq(score_method_load(&m, "scoring/method.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(m.ncat, 3);
    cr_assert_eq(m.ncrit, 12);
    cr_assert_eq(m.ntiers, 3);
    cr_assert_eq(m.tier_last, 4);
    int sp = score_criterion_index(&m, "sponsor");
    cr_assert(sp >= 0 && m.crit[sp].scale.kind == SCORE_SCALE_FIXED && m.crit[sp].scale.max == 3);
    cr_assert_eq(score_inputs_load(&in, "scoring/frameworks", "scoring/ops.json"), 0, "%s", sd_errmsg());
    cr_assert_geq(in.nfw, 17);
    const char *need[] = {"bigdl", "caffe", "caffe2", "chainer", "cntk", "dl4j", "mxnet", "neon", "paddle", "pytorch",
                          "tensorflow", "torch", "theano", "jax", "keras", "tinygrad", "mindspore"};
    for (size_t k = 0; k < sizeof need / sizeof need[0]; k++) {
        int found = 0;
        for (int i = 0; i < in.nfw; i++) found |= strcmp(in.fw[i].id, need[k]) == 0;
        cr_assert(found, "framework %s missing", need[k]);
    }
    cr_assert_eq(score_snapshot_load(&snap, "scoring/snapshot.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert_eq(score_compute(&m, fw, (size_t)in.nfw), 0, "%s", sd_errmsg());
    for (int i = 0; i < in.nfw; i++) cr_assert(fw[i].overall_present && fw[i].tier >= 1 && fw[i].tier <= 4);
}

static void write_fw(const char *dir, const char *id, const char *sponsor) {
    char path[512], text[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, id);
    snprintf(text, sizeof text,
        "{\"schema\": \"showdown-framework/1\", \"id\": \"%s\", \"name\": \"%s\", \"in_2018\": false,\n"
        " \"status\": {\"value\": \"active\", \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        " \"repositories\": [{\"url\": \"https://github.com/o/%s\", \"role\": \"main\"}],\n"
        " \"stackoverflow_tags\": [\"%s\"], \"github_search_terms\": [\"%s\", \"%s-x\"],\n"
        " \"inputs\": {\n"
        "  \"sponsor\": %s,\n"
        "  \"documentation\": {\"value\": 2, \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"graph_building\": {\"value\": 1, \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"numerics\": {\"library\": \"L\", \"repository_missing\": \"closed\", \"maturity\": 4, \"ease\": 2.5,\n"
        "                \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"languages\": {\"value\": [{\"name\": \"Python\", \"maturity\": 1}, {\"name\": \"C\", \"maturity\": 0.25}],\n"
        "                 \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"scalability\": {\"value\": 2, \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"os\": {\"value\": [\"Linux\", \"macOS\"], \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"cloud\": {\"value\": 0, \"source\": \"s\", \"checked\": \"2026-01-02\"},\n"
        "  \"onnx\": {\"value\": 1, \"source\": \"s\", \"checked\": \"2026-01-02\"}}}\n",
        id, id, id, id, id, id, sponsor);
    tu_write_str(path, text);
}

static const char *OPS_OK =
    "{\"schema\": \"showdown-ops/1\", \"ops\": [{\"id\": \"a\", \"name\": \"A\", \"kind\": \"layer\"},\n"
    "  {\"id\": \"b\", \"name\": \"B\", \"kind\": \"layer\"}],\n"
    " \"presence\": {\"f1\": {\"source\": \"s\", \"checked\": \"2026-01-02\", \"ops\": {\"a\": 1, \"b\": 0.5}}}}\n";

Test(score_data, inputs_and_build) {
    char tmp[256], dir[512], ops[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/fw", tmp);
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_fw(dir, "f1", "{\"value\": 2, \"source\": \"s\", \"checked\": \"2026-01-02\"}");
    write_fw(dir, "f2", "{\"value\": null, \"missing\": \"nobody knows\", \"source\": \"s\", \"checked\": \"2026-01-02\"}");
    snprintf(ops, sizeof ops, "%s/ops.json", tmp);
    tu_write_str(ops, OPS_OK);
    cr_assert_eq(score_method_load(&m, "scoring/method-v1.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(m.version, 1);
    cr_assert_eq(score_inputs_load(&in, dir, ops), 0, "%s", sd_errmsg());
    cr_assert_eq(in.nfw, 2);
    cr_assert_str_eq(in.fw[0].repo, "github.com/o/f1");
    /* snapshot: f1 has git (last commit 14 days before as_of, 3 PRs) and both counts; f2 only SO */
    memset(&snap, 0, sizeof snap);
    snprintf(snap.date, sizeof snap.date, "2026-01-03");
    cr_assert_eq(score_date_parse("2026-01-02", 1, &snap.as_of), 0);
    score_git *g = score_snapshot_git(&snap, "github.com/o/f1", 1);
    g->present = 1; g->a.as_of = snap.as_of; g->a.has_commits = 1; g->a.last_commit = snap.as_of - 14 * 86400;
    g->a.prs_merged_30 = 3; g->a.commits_30 = 9;
    score_git *g2 = score_snapshot_git(&snap, "github.com/o/f2", 1);
    snprintf(g2->why, sizeof g2->why, "no mirror");
    const char *names[] = {"f1", "f1-x", "f2-x"};
    double vals[] = {99, 900, 5};
    for (int i = 0; i < 3; i++) {
        score_named *e = score_snapshot_named(snap.repo_counts, &snap.nrepo_counts, names[i], 1);
        e->v.present = 1; e->v.value = vals[i]; snprintf(e->v.date, sizeof e->v.date, "2026-01-03T00:00:00Z");
    }
    score_named *so1 = score_snapshot_named(snap.so, &snap.nso, "f1", 1);
    so1->v.present = 1; so1->v.value = 9; snprintf(so1->v.date, sizeof so1->v.date, "2026-01-03T00:00:00Z");
    score_named *so2 = score_snapshot_named(snap.so, &snap.nso, "f2", 1);
    so2->v.present = 1; so2->v.value = 99; snprintf(so2->v.date, sizeof so2->v.date, "2026-01-03T00:00:00Z");

    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert_eq(score_compute(&m, fw, 2), 0, "%s", sd_errmsg());
    int sp = score_criterion_index(&m, "sponsor"), act = score_criterion_index(&m, "activity");
    int eco = score_criterion_index(&m, "ecosystem"), lang = score_criterion_index(&m, "languages");
    int os = score_criterion_index(&m, "os"), ops_i = score_criterion_index(&m, "ops");
    int num = score_criterion_index(&m, "numerics");
    cr_assert(fw[0].crit[sp].present && fw[0].crit[sp].raw == 2);
    cr_assert(!fw[1].crit[sp].present);
    cr_assert_str_eq(fw[1].crit[sp].why, "nobody knows");
    cr_assert(fabs(fw[0].crit[act].raw - 3.5) < 1e-12);       /* 1/2 weeks + 3 */
    cr_assert(!fw[1].crit[act].present);
    cr_assert(strstr(fw[1].crit[act].why, "no mirror"), "%s", fw[1].crit[act].why);
    cr_assert(fabs(fw[0].crit[eco].raw - (log10(1 + 999.0) + log10(10.0))) < 1e-12);   /* terms summed: 99 + 900 */
    cr_assert(!fw[1].crit[eco].present);                       /* term 'f2' has no count */
    cr_assert(strstr(fw[1].crit[eco].why, "'f2'"), "%s", fw[1].crit[eco].why);
    cr_assert(fabs(fw[0].crit[lang].raw - 1.25) < 1e-12);
    cr_assert(fw[0].crit[os].raw == 2);
    cr_assert(fw[0].crit[ops_i].raw == 1.5);
    cr_assert(!fw[1].crit[ops_i].present);                     /* no presence entry for f2 */
    /* numerics: maturity 4/5 = 80, ease 2.5/5 = 50, activity missing ("closed") -> 65 */
    cr_assert(fabs(fw[0].crit[num].norm - 65) < 1e-12);
    cr_assert_str_eq(fw[0].part[num][2].why, "closed");
    /* Support for f1: sponsor 66.67, activity 100 (best), ecosystem 100 (best), documentation 66.67 */
    cr_assert(fabs(fw[0].cat[0] - (200.0 / 3 * 2 + 200) / 4) < 1e-9, "%g", fw[0].cat[0]);
    /* Support for f2: only documentation (sponsor, activity, ecosystem missing) */
    cr_assert(fabs(fw[1].cat[0] - 200.0 / 3) < 1e-9, "%g", fw[1].cat[0]);

    /* Snapshot round trip. */
    char sp_path[512];
    snprintf(sp_path, sizeof sp_path, "%s/snap.json", tmp);
    cr_assert_eq(score_snapshot_write(&snap, sp_path), 0, "%s", sd_errmsg());
    cr_assert_eq(score_snapshot_load(&snap2, sp_path), 0, "%s", sd_errmsg());
    cr_assert_str_eq(snap2.date, "2026-01-03");
    cr_assert_eq(snap2.as_of, snap.as_of);
    score_git *r1 = score_snapshot_git(&snap2, "github.com/o/f1", 0), *r2 = score_snapshot_git(&snap2, "github.com/o/f2", 0);
    cr_assert(r1 && r1->present && r1->a.last_commit == g->a.last_commit && r1->a.prs_merged_30 == 3 && r1->a.commits_30 == 9);
    cr_assert(r2 && !r2->present);
    cr_assert_str_eq(r2->why, "no mirror");
    score_named *c = score_snapshot_named(snap2.repo_counts, &snap2.nrepo_counts, "f1-x", 0);
    cr_assert(c && c->v.present && c->v.value == 900);
}

Test(score_data, ops_errors_are_positioned) {
    char tmp[256], dir[512], ops[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(dir, sizeof dir, "%s/fw", tmp);
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_fw(dir, "f1", "{\"value\": 2, \"source\": \"s\", \"checked\": \"2026-01-02\"}");
    snprintf(ops, sizeof ops, "%s/ops.json", tmp);
    tu_write_str(ops, "{\"schema\": \"showdown-ops/1\", \"ops\": [{\"id\": \"a\"}, {\"id\": \"b\"}],\n"
                      " \"presence\": {\"f1\": {\"source\": \"s\", \"checked\": \"2026-01-02\", \"ops\": {\"a\": 1}}}}\n");
    cr_assert_eq(score_inputs_load(&in, dir, ops), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "ops.json:2:69: framework 'f1': no presence for op 'b'"), "%s", sd_errmsg());
    tu_write_str(ops, "{\"schema\": \"showdown-ops/1\", \"ops\": [{\"id\": \"a\"}],\n"
                      " \"presence\": {\"f1\": {\"source\": \"s\", \"checked\": \"2026-01-02\", \"ops\": {\"a\": 0.7}}}}\n");
    cr_assert_eq(score_inputs_load(&in, dir, ops), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "ops.json:2:") && strstr(sd_errmsg(), "must be 0, 0.5 or 1"), "%s", sd_errmsg());
    tu_write_str(ops, "{\"schema\": \"showdown-ops/1\", \"ops\": [],\n"
                      " \"presence\": {\"zz\": {\"source\": \"s\", \"checked\": \"2026-01-02\", \"ops\": {}}}}\n");
    cr_assert_eq(score_inputs_load(&in, dir, ops), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "ops.json:2:15: presence for unknown framework 'zz'"), "%s", sd_errmsg());
}

Test(score_data, snapshot_errors_are_positioned) {
    char tmp[256], p[512];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(p, sizeof p, "%s/s.json", tmp);
    tu_write_str(p, "{\"schema\": \"showdown-snapshot/1\", \"date\": \"2026-01-02\", \"as_of\": \"2026-01-02\",\n"
                    " \"git\": {\"github.com/a/b\": {\"has_commits\": true, \"last_commit\": \"2026-13-01T00:00:00Z\"}}}\n");
    cr_assert_eq(score_snapshot_load(&snap, p), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "s.json:2:65: bad date '2026-13-01T00:00:00Z'"), "%s", sd_errmsg());
}

Test(score_data, dates_and_repo_keys) {
    int64_t t;
    cr_assert_eq(score_date_parse("2024-03-31", 1, &t), 0);
    char buf[32];
    score_date_iso(t, buf, sizeof buf);
    cr_assert_str_eq(buf, "2024-04-01T00:00:00Z");
    cr_assert_eq(score_date_parse("2024-03-31", 0, &t), 0);
    score_date_iso(t, buf, sizeof buf);
    cr_assert_str_eq(buf, "2024-03-31T00:00:00Z");
    cr_assert_eq(score_date_parse("2024-03-05T06:07:08Z", 1, &t), 0);
    score_date_iso(t, buf, sizeof buf);
    cr_assert_str_eq(buf, "2024-03-05T06:07:08Z");
    cr_assert_eq(score_date_parse("2024-02-30", 0, &t), SD_EINPUT);
    cr_assert_eq(score_date_parse("24-02-03", 0, &t), SD_EINPUT);
    cr_assert_eq(score_date_parse("2024-02-03x", 0, &t), SD_EINPUT);
    char key[160], owner[64], name[96];
    cr_assert_eq(score_repo_key("https://gitlab.com/libeigen/eigen.git", key, sizeof key, owner, sizeof owner, name,
                                sizeof name), 0);
    cr_assert_str_eq(key, "gitlab.com/libeigen/eigen");
    cr_assert_str_eq(owner, "libeigen");
    cr_assert_str_eq(name, "eigen");
    cr_assert_eq(score_repo_key("https://github.com/only-owner", key, sizeof key, owner, sizeof owner, name,
                                sizeof name), SD_EINPUT);
}

/* Method v2 on two frameworks made here. f1 is fully measured: activity parts weeks 13/13 -> 100,
 * authors 10/20 -> 50, bus factor 5/5 -> 100, releases 2/4 -> 50, last release 73 days ago ->
 * 100 (1 - 73/365) = 80: activity 76. Ecosystem log10(1000) + log10(10) = 4 of 12 -> 33.33. Support
 * (66.67 + 76 + 33.33 + 66.67) / 4; API: graph 50, numerics (80 + 50 + 100) / 3 (activity from f1's own
 * repository: the library has none), ops 1.5 / 32; Platform: languages 1.25 / 4, scalability 100, os 2/3,
 * cloud 0, onnx 50. f2 has only documentation in Support: 1 of 4 measured -> insufficient, no tier; its
 * range puts the three missing criteria at 0 and at 100. */
static void v2_fixture(const char *tmp, int64_t newest_age_days) {
    char dir[512], ops[512];
    snprintf(dir, sizeof dir, "%s/fw", tmp);
    cr_assert_eq(mkdir(dir, 0700), 0);
    write_fw(dir, "f1", "{\"value\": 2, \"source\": \"s\", \"checked\": \"2026-01-02\"}");
    write_fw(dir, "f2", "{\"value\": null, \"missing\": \"nobody knows\", \"source\": \"s\", \"checked\": \"2026-01-02\"}");
    snprintf(ops, sizeof ops, "%s/ops.json", tmp);
    tu_write_str(ops, OPS_OK);
    cr_assert_eq(score_method_load(&m, "scoring/method.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(m.version, 2);
    cr_assert_eq(score_inputs_load(&in, dir, ops), 0, "%s", sd_errmsg());
    memset(&snap, 0, sizeof snap);
    snprintf(snap.date, sizeof snap.date, "2026-01-03");
    cr_assert_eq(score_date_parse("2026-01-02", 1, &snap.as_of), 0);
    score_git *g = score_snapshot_git(&snap, "github.com/o/f1", 1);
    g->present = g->has_maint = 1;
    g->a = (git_activity){.as_of = snap.as_of, .has_commits = 1, .last_commit = snap.as_of - newest_age_days * 86400,
                          .newest_commit = snap.as_of - newest_age_days * 86400, .weeks_active_13 = 13,
                          .authors_90 = 10, .bus_factor_365 = 5, .releases_365 = 2,
                          .last_release = snap.as_of - 73 * 86400};
    score_git *g2 = score_snapshot_git(&snap, "github.com/o/f2", 1);
    snprintf(g2->why, sizeof g2->why, "no mirror");
    const char *names[] = {"f1", "f1-x"};
    double vals[] = {99, 900};
    for (int i = 0; i < 2; i++) {
        score_named *e = score_snapshot_named(snap.repo_counts, &snap.nrepo_counts, names[i], 1);
        e->v.present = 1; e->v.value = vals[i]; snprintf(e->v.date, sizeof e->v.date, "2026-01-03T00:00:00Z");
    }
    score_named *so1 = score_snapshot_named(snap.so, &snap.nso, "f1", 1);
    so1->v.present = 1; so1->v.value = 9; snprintf(so1->v.date, sizeof so1->v.date, "2026-01-03T00:00:00Z");
}

#define NEAR(a, b) cr_assert(fabs((a) - (b)) < 1e-9, "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

Test(score_data, v2_ranges_hand_computed) {
    char tmp[256];
    tu_tmpdir(tmp, sizeof tmp);
    v2_fixture(tmp, 1);
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert_eq(score_compute(&m, fw, 2), 0, "%s", sd_errmsg());
    int act = score_criterion_index(&m, "activity"), num = score_criterion_index(&m, "numerics");
    NEAR(fw[0].crit[act].norm, 76);
    NEAR(fw[0].part[num][2].norm, 100);
    cr_assert(strstr(fw[0].part[num][2].src, "github.com/o/f1, the framework's own repository"), "%s",
              fw[0].part[num][2].src);
    double sup = (200.0 / 3 + 76 + 100.0 / 3 + 200.0 / 3) / 4;
    double api = (50 + (80 + 50 + 100) / 3.0 + 100 * 1.5 / 32) / 3;
    double plat = (100 * 1.25 / 4 + 100 + 200.0 / 3 + 0 + 50) / 5;
    NEAR(fw[0].cat_lo[0], sup); NEAR(fw[0].cat_hi[0], sup);
    NEAR(fw[0].cat_lo[1], api); NEAR(fw[0].cat_hi[1], api);
    NEAR(fw[0].cat_lo[2], plat);
    NEAR(fw[0].overall, (sup + api + plat) / 3);
    NEAR(fw[0].overall_lo, fw[0].overall_hi);
    cr_assert_eq(fw[0].tier, 3);                              /* 51.3: >= 50 */
    cr_assert_str_eq(fw[0].status, "active");                 /* 13 weeks >= 7, 10 authors >= 5 */
    cr_assert_eq(fw[0].cover_measured, 7);                    /* 5 activity parts, ecosystem, numerics.activity */
    cr_assert_eq(fw[0].cover_missing, 0);
    /* f2: sponsor, activity, ecosystem missing; documentation 66.67 */
    NEAR(fw[1].cat_lo[0], 200.0 / 3 / 4);
    NEAR(fw[1].cat_hi[0], (300 + 200.0 / 3) / 4);
    cr_assert(fw[1].cat_insufficient[0] && !fw[1].cat_insufficient[1] && !fw[1].cat_insufficient[2]);
    cr_assert_eq(fw[1].cat_measured[0], 1);
    /* API: graph 50; numerics maturity 80, ease 50, activity missing -> [130/3, 230/3]; ops missing */
    NEAR(fw[1].cat_lo[1], (50 + 130.0 / 3 + 0) / 3);
    NEAR(fw[1].cat_hi[1], (50 + 230.0 / 3 + 100) / 3);
    NEAR(fw[1].overall, (fw[1].overall_lo + fw[1].overall_hi) / 2);
    NEAR(fw[1].rank_key, fw[1].overall_lo);
    cr_assert_eq(fw[1].tier, 0);                              /* insufficient Support: not tiered */
    cr_assert_str_eq(fw[1].status, "unknown");
}

/* A mirror whose newest commit is 31 days before as_of (limit 30) is stale: the activity parts keep their
 * raw value for display but are missing from the score, and the status is unknown, not inactive. At 29
 * days it is fresh; a repository typed archived is never stale (no newer commit can exist). */
Test(score_data, v2_stale_mirror) {
    char tmp[256];
    tu_tmpdir(tmp, sizeof tmp);
    v2_fixture(tmp, 31);
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert_eq(score_compute(&m, fw, 2), 0, "%s", sd_errmsg());
    int act = score_criterion_index(&m, "activity"), num = score_criterion_index(&m, "numerics");
    for (int p = 0; p < m.crit[act].nparts; p++) {
        cr_assert(!fw[0].part[act][p].present && fw[0].part[act][p].stale);
        cr_assert(strstr(fw[0].part[act][p].why, "stale mirror (newest commit 2025-12-03, 31 days before as_of "
                                                  "2026-01-02"), "%s", fw[0].part[act][p].why);
    }
    NEAR(fw[0].part[act][0].stale_raw, 13);
    cr_assert(!fw[0].part[num][2].present && fw[0].part[num][2].stale);
    NEAR(fw[0].crit[act].lo, 0);
    NEAR(fw[0].crit[act].hi, 100);
    cr_assert_str_eq(fw[0].status, "unknown");
    cr_assert(strstr(fw[0].status_why, "stale mirror"), "%s", fw[0].status_why);

    snap.git[0].a.newest_commit = snap.as_of - 29 * 86400;
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert(fw[0].part[act][0].present && !fw[0].part[act][0].stale);
    cr_assert_str_eq(fw[0].status, "active");

    snap.git[0].a.newest_commit = snap.as_of - 400 * 86400;
    snprintf(in.fw[0].status, sizeof in.fw[0].status, "archived");
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert(fw[0].part[act][0].present);
    cr_assert_str_eq(fw[0].status, "archived");
}

/* With the mirror's fetch time recorded, the age of its newest commit no longer decides: a mirror fetched on as_of
 * whose newest commit is 400 days old is a measured inactive project (its activity scored, status inactive); a
 * mirror fetched 31 days before as_of is stale whatever its commits, and says when it was fetched. */
Test(score_data, v2_mirror_fetch_time) {
    char tmp[256];
    tu_tmpdir(tmp, sizeof tmp);
    v2_fixture(tmp, 400);
    git_activity *a = &snap.git[0].a;
    a->weeks_active_13 = a->authors_90 = a->bus_factor_365 = a->releases_365 = 0;
    a->commits_30 = a->commits_90 = a->commits_365 = a->prs_merged_30 = 0;
    a->last_release = snap.as_of - 900 * 86400;
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    int act = score_criterion_index(&m, "activity");
    cr_assert(!fw[0].part[act][0].present && fw[0].part[act][0].stale, "no fetch time: stale as before");
    cr_assert_str_eq(fw[0].status, "unknown");

    score_date_iso(snap.as_of - 3600, snap.git[0].fetched, sizeof snap.git[0].fetched);
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    for (int p = 0; p < m.crit[act].nparts; p++)
        cr_assert(fw[0].part[act][p].present && !fw[0].part[act][p].stale, "part %d: %s", p, fw[0].part[act][p].why);
    NEAR(fw[0].part[act][0].raw, 0);
    cr_assert_str_eq(fw[0].status, "inactive", "%s", fw[0].status_why);

    score_date_iso(snap.as_of - 31 * 86400, snap.git[0].fetched, sizeof snap.git[0].fetched);
    snap.git[0].a.newest_commit = snap.as_of - 2 * 86400;
    cr_assert_eq(score_build(&m, &in, &snap, fw), 0);
    cr_assert(!fw[0].part[act][0].present && fw[0].part[act][0].stale);
    cr_assert(strstr(fw[0].part[act][0].why, "stale mirror (fetched 2025-12-03, 31 days before as_of 2026-01-02"), "%s",
              fw[0].part[act][0].why);
    cr_assert_str_eq(fw[0].status, "unknown");
}

/* Property on the committed data: for every framework and every input it has (criterion or part),
 * removing that one input never raises any framework's lower bound, and never improves the rank of the
 * framework that lost it. Method v1 (missing left out of the mean, scales relative to the best) breaks
 * it, which the second half checks: the property test can fail. */
static int violations(const char *method_path, int *checked) {
    static score_fw base[SCORE_MAX_FW], cut[SCORE_MAX_FW], built[SCORE_MAX_FW];
    cr_assert_eq(score_method_load(&m, method_path), 0, "%s", sd_errmsg());
    cr_assert_eq(score_inputs_load(&in, "scoring/frameworks", "scoring/ops.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(score_snapshot_load(&snap, "scoring/snapshot.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(score_build(&m, &in, &snap, built), 0);
    memcpy(base, built, sizeof base);
    cr_assert_eq(score_compute(&m, base, (size_t)in.nfw), 0, "%s", sd_errmsg());
    int n = in.nfw, bad = 0;
    *checked = 0;
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < m.ncrit; c++) {
            int nleaf = m.crit[c].formula == SCORE_F_PARTS_MEAN ? m.crit[c].nparts : 1;
            for (int p = 0; p < nleaf; p++) {
                score_value *v = m.crit[c].formula == SCORE_F_PARTS_MEAN ? &built[i].part[c][p] : &built[i].crit[c];
                if (!v->present) continue;
                memcpy(cut, built, sizeof cut);
                score_value *cv = m.crit[c].formula == SCORE_F_PARTS_MEAN ? &cut[i].part[c][p] : &cut[i].crit[c];
                cv->present = 0;
                cr_assert_eq(score_compute(&m, cut, (size_t)n), 0, "%s", sd_errmsg());
                (*checked)++;
                for (int j = 0; j < n; j++) bad += cut[j].overall_lo > base[j].overall_lo + 1e-9;
                const score_fw *o1[SCORE_MAX_FW], *o2[SCORE_MAX_FW];
                score_rank(base, n, o1);
                score_rank(cut, n, o2);
                int r1 = 0, r2 = 0;
                for (int k = 0; k < n; k++) {
                    if (o1[k] == &base[i]) r1 = k;
                    if (o2[k] == &cut[i]) r2 = k;
                }
                bad += r2 < r1;
            }
        }
    }
    return bad;
}

Test(score_data, v2_removing_an_input_never_helps) {
    int checked = 0;
    int bad = violations("scoring/method.json", &checked);
    cr_assert_gt(checked, 150, "only %d removals checked", checked);
    cr_assert_eq(bad, 0, "%d violations in %d removals", bad, checked);
    bad = violations("scoring/method-v1.json", &checked);
    cr_assert_gt(bad, 0, "method v1 should break the property (%d removals)", checked);
}

/* A repository known from GitHub's statistics (no mirror): the snapshot keeps source, fetch date and the
 * four figures through write + load; v2 scores weeks, contributors and bus factor and leaves the release
 * parts missing ("no release tags"); v1's activity is missing (no last-commit date). */
Test(score_data, github_stats_entry) {
    char tmp[256], path[512];
    tu_tmpdir(tmp, sizeof tmp);
    v2_fixture(tmp, 1);
    score_git *g = &snap.git[0];
    memset(&g->a, 0, sizeof g->a);
    g->a.as_of = snap.as_of;
    g->a.weeks_active_13 = 13; g->a.commits_365 = 400; g->a.authors_90 = 10; g->a.bus_factor_365 = 5;
    snprintf(g->source, sizeof g->source, "github-stats");
    snprintf(g->fetched, sizeof g->fetched, "2026-01-02T10:00:00Z");
    snprintf(path, sizeof path, "%s/snap.json", tmp);
    cr_assert_eq(score_snapshot_write(&snap, path), 0, "%s", sd_errmsg());
    cr_assert_eq(score_snapshot_load(&snap2, path), 0, "%s", sd_errmsg());
    score_git *r = score_snapshot_git(&snap2, "github.com/o/f1", 0);
    cr_assert(r && r->present && r->has_maint);
    cr_assert_str_eq(r->source, "github-stats");
    cr_assert_str_eq(r->fetched, "2026-01-02T10:00:00Z");
    cr_assert(r->a.weeks_active_13 == 13 && r->a.commits_365 == 400 && r->a.authors_90 == 10 && r->a.bus_factor_365 == 5);
    cr_assert_eq(score_build(&m, &in, &snap2, fw), 0);
    cr_assert_eq(score_compute(&m, fw, 2), 0, "%s", sd_errmsg());
    int act = score_criterion_index(&m, "activity");
    NEAR(fw[0].part[act][0].norm, 100);   /* weeks 13/13 */
    NEAR(fw[0].part[act][1].norm, 50);    /* authors 10/20 */
    NEAR(fw[0].part[act][2].norm, 100);   /* bus factor 5/5 */
    cr_assert(!fw[0].part[act][3].present && strstr(fw[0].part[act][3].why, "no release tags"));
    cr_assert(!fw[0].part[act][4].present && strstr(fw[0].part[act][4].why, "no release tags"));
    NEAR(fw[0].crit[act].lo, (100 + 50 + 100) / 5.0);
    NEAR(fw[0].crit[act].hi, (100 + 50 + 100 + 200) / 5.0);
    cr_assert_str_eq(fw[0].status, "active");
    cr_assert_eq(score_method_load(&m, "scoring/method-v1.json"), 0, "%s", sd_errmsg());
    cr_assert_eq(score_build(&m, &in, &snap2, fw), 0);
    act = score_criterion_index(&m, "activity");
    cr_assert(!fw[0].crit[act].present && strstr(fw[0].crit[act].why, "no last-commit date"), "%s", fw[0].crit[act].why);
}
