/* test_score — the scoring arithmetic against values computed by hand (see the comments), including
 * missing criteria, a missing part, a missing category, weights, tiers and the activity formula. */
#include "testutil.h"
#include "score/score.h"
#include "core/err.h"

#include <math.h>

#define NEAR(a, b) cr_assert(fabs((a) - (b)) < 1e-9, "%s = %.12g, expected %.12g", #a, (double)(a), (double)(b))

static void crit(score_method *m, const char *id, int cat, double w, score_formula f, score_scale_kind k,
                 double max) {
    score_criterion *c = &m->crit[m->ncrit++];
    snprintf(c->id, sizeof c->id, "%s", id);
    c->category = cat; c->weight = w; c->formula = f;
    c->scale.kind = k; c->scale.min = 0; c->scale.max = max;
}

/* Categories A, B (weight 1 each). a1 fixed 0-3, a2 best (A); b1 fixed 0-2 weight 1, b2 parts mean
 * weight 2 with p fixed 0-5 and q best (B). Tiers: >=80 -> 1, >=50 -> 2, else 3. */
static void method(score_method *m) {
    memset(m, 0, sizeof *m);
    m->ncat = 2;
    snprintf(m->cat[0].id, SCORE_ID_LEN, "A"); m->cat[0].weight = 1;
    snprintf(m->cat[1].id, SCORE_ID_LEN, "B"); m->cat[1].weight = 1;
    crit(m, "a1", 0, 1, SCORE_F_VALUE, SCORE_SCALE_FIXED, 3);
    crit(m, "a2", 0, 1, SCORE_F_ACTIVITY, SCORE_SCALE_BEST, 0);
    crit(m, "b1", 1, 1, SCORE_F_VALUE, SCORE_SCALE_FIXED, 2);
    crit(m, "b2", 1, 2, SCORE_F_PARTS_MEAN, SCORE_SCALE_FIXED, 0);
    score_criterion *b2 = &m->crit[3];
    b2->nparts = 2;
    snprintf(b2->part_id[0], SCORE_ID_LEN, "p"); b2->part_scale[0] = (score_scale){SCORE_SCALE_FIXED, 0, 5};
    snprintf(b2->part_id[1], SCORE_ID_LEN, "q"); b2->part_scale[1] = (score_scale){SCORE_SCALE_BEST, 0, 0};
    m->ntiers = 2;
    m->tier_min[0] = 80; m->tier_id[0] = 1;
    m->tier_min[1] = 50; m->tier_id[1] = 2;
    m->tier_last = 3;
}

static void set(score_value *v, double raw) { v->present = 1; v->raw = raw; }
static void miss(score_value *v, const char *why) { v->present = 0; snprintf(v->why, sizeof v->why, "%s", why); }

static int nmiss;
static char labels[8][80];
static void collect(void *ctx, const char *label, const char *why) {
    (void)ctx;
    snprintf(labels[nmiss++], sizeof labels[0], "%s=%s", label, why);
}

Test(score, hand_computed_with_missing) {
    score_method m;
    method(&m);
    static score_fw f[3];
    memset(f, 0, sizeof f);
    /* X: a1=3 a2=10 b1=1 p=5 q=4 */
    set(&f[0].crit[0], 3); set(&f[0].crit[1], 10); set(&f[0].crit[2], 1);
    set(&f[0].part[3][0], 5); set(&f[0].part[3][1], 4);
    /* Y: a1=1 a2=missing b1=2 p=2.5 q=missing */
    set(&f[1].crit[0], 1); miss(&f[1].crit[1], "no mirror"); set(&f[1].crit[2], 2);
    set(&f[1].part[3][0], 2.5); miss(&f[1].part[3][1], "no repo");
    /* Z: a1=0 a2=4 b1=missing p,q missing -> category B missing */
    set(&f[2].crit[0], 0); set(&f[2].crit[1], 4); miss(&f[2].crit[2], "unknown");
    miss(&f[2].part[3][0], "unknown"); miss(&f[2].part[3][1], "unknown");
    cr_assert_eq(score_compute(&m, f, 3), 0, "%s", sd_errmsg());

    /* a1 fixed /3: 100, 33.33, 0.  a2 best (10): 100, -, 40. */
    NEAR(f[0].crit[0].norm, 100); NEAR(f[1].crit[0].norm, 100.0 / 3); NEAR(f[2].crit[0].norm, 0);
    NEAR(f[0].crit[1].norm, 100); NEAR(f[2].crit[1].norm, 40);
    /* A: X (100+100)/2 = 100; Y 33.33 (a2 left out); Z (0+40)/2 = 20 */
    NEAR(f[0].cat[0], 100); NEAR(f[1].cat[0], 100.0 / 3); NEAR(f[2].cat[0], 20);
    /* b2 parts: p /5 -> X 100, Y 50; q best (4, X only) -> X 100. b2: X 100, Y 50, Z missing. */
    NEAR(f[0].part[3][0].norm, 100); NEAR(f[1].part[3][0].norm, 50); NEAR(f[0].part[3][1].norm, 100);
    NEAR(f[0].crit[3].norm, 100); NEAR(f[1].crit[3].norm, 50);
    cr_assert(!f[2].crit[3].present);
    /* B = (1*b1 + 2*b2)/3: X (50+200)/3 = 83.33; Y (100+100)/3 = 66.67; Z missing */
    NEAR(f[0].cat[1], 250.0 / 3); NEAR(f[1].cat[1], 200.0 / 3);
    cr_assert(!f[2].cat_present[1]);
    /* overall: X (100+83.33)/2 = 91.67 tier 1; Y (33.33+66.67)/2 = 50 tier 2 (cut inclusive); Z 20 tier 3 */
    NEAR(f[0].overall, (100 + 250.0 / 3) / 2); cr_assert_eq(f[0].tier, 1);
    NEAR(f[1].overall, 50); cr_assert_eq(f[1].tier, 2);
    NEAR(f[2].overall, 20); cr_assert_eq(f[2].tier, 3);

    nmiss = 0;
    cr_assert_eq(score_missing(&m, &f[0], collect, NULL), 0);
    cr_assert_eq(score_missing(&m, &f[1], collect, NULL), 2);
    cr_assert_str_eq(labels[0], "a2=no mirror");
    cr_assert_str_eq(labels[1], "b2.q=no repo");
    nmiss = 0;
    cr_assert_eq(score_missing(&m, &f[2], collect, NULL), 3);
    cr_assert_str_eq(labels[0], "b1=unknown");
    cr_assert_str_eq(labels[2], "b2.q=unknown");
}

Test(score, all_missing_overall_absent) {
    score_method m;
    method(&m);
    static score_fw f[1];
    memset(f, 0, sizeof f);
    for (int c = 0; c < 3; c++) miss(&f[0].crit[c], "x");
    miss(&f[0].part[3][0], "x"); miss(&f[0].part[3][1], "x");
    cr_assert_eq(score_compute(&m, f, 1), 0);
    cr_assert(!f[0].overall_present);
    cr_assert_eq(f[0].tier, 0);
}

Test(score, best_scale_all_zero_is_zero) {
    score_method m;
    method(&m);
    static score_fw f[2];
    memset(f, 0, sizeof f);
    set(&f[0].crit[1], 0); set(&f[1].crit[1], 0);
    cr_assert_eq(score_compute(&m, f, 2), 0);
    NEAR(f[0].crit[1].norm, 0);
}

Test(score, fixed_out_of_scale_is_an_input_error) {
    score_method m;
    method(&m);
    static score_fw f[1];
    memset(f, 0, sizeof f);
    set(&f[0].crit[0], 4);   /* a1 scale is 0-3 */
    cr_assert_eq(score_compute(&m, f, 1), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "a1") && strstr(sd_errmsg(), "outside"), "%s", sd_errmsg());
}

Test(score, activity_formula) {
    int64_t t = 1700000000;
    /* 14 days -> 2 weeks -> 1/2 + 3 PRs = 3.5 */
    NEAR(score_activity(t, t - 14 * 86400, 3, 1.0), 3.5);
    /* 2 days -> below weeks_min 1 -> 1/1 + 0 */
    NEAR(score_activity(t, t - 2 * 86400, 0, 1.0), 1.0);
    /* 70 days -> 10 weeks -> 0.1 */
    NEAR(score_activity(t, t - 70 * 86400, 0, 1.0), 0.1);
}

Test(score, tiers_cut_points) {
    score_method m;
    method(&m);
    cr_assert_eq(score_tier(&m, 80), 1);
    cr_assert_eq(score_tier(&m, 79.999), 2);
    cr_assert_eq(score_tier(&m, 49.999), 3);
}
