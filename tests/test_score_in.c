/* test_score_in — the scores file read back beside its writer: the writer's shape (method with categories and
 * criteria apart, values as objects, ranges, coverage), the hand-written shape of the report's fixtures, and the
 * spellings no writer produces ("normalized", a criterion's "score") read as absent. */
#include "testutil.h"
#include "core/err.h"
#include "score/score_in.h"

#include <libgen.h>
#include <math.h>
#include <unistd.h>

static const char *write_tmp(const char *name, const char *text) {
    static char path[512];
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tu_write_str(path, text);
    return path;
}

static void remove_tmp(const char *path) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    unlink(path);
    rmdir(dirname(dir));
}

Test(score_in, writer_shape) {
    const char *p = write_tmp("s.json",
        "{\"schema\": \"showdown-scores/1\", \"mode\": \"offline\", \"snapshot\": {\"date\": \"2026-01-01\"},"
        " \"method\": {\"categories\": [{\"id\": \"support\", \"name\": \"Support\"}, {\"id\": \"api\", \"name\": \"API\"}],"
        "  \"criteria\": [{\"id\": \"stars\", \"name\": \"Stars\", \"category\": \"support\", \"about\": \"GitHub stars\"},"
        "                {\"id\": \"ops\", \"name\": \"Ops\", \"category\": \"api\"}]},"
        " \"frameworks\": [{\"id\": \"pytorch\", \"name\": \"PyTorch\", \"status\": \"active\", \"status_typed\": \"active\","
        "  \"overall\": 80.5, \"tier\": 1, \"categories\": {\"support\": 90, \"api\": null},"
        "  \"criteria\": {\"stars\": {\"raw\": 5, \"normalised\": 90, \"lower\": 90, \"upper\": 90},"
        "                \"ops\": {\"raw\": null, \"normalised\": null, \"missing\": \"no data\", \"lower\": 0, \"upper\": 100}},"
        "  \"category_ranges\": {\"api\": {\"lower\": 0, \"upper\": 100, \"insufficient\": true}},"
        "  \"overall_range\": {\"lower\": 45, \"upper\": 95}, \"coverage\": {\"measured\": 1, \"hand_entered\": 0, \"missing\": 1}}]}");
    score_in s;
    cr_assert_eq(score_in_load(&s, p), 0, "%s", sd_errmsg());
    cr_assert_eq(s.ncat, 2);
    cr_assert_eq(s.ncrit, 2);
    cr_assert_str_eq(s.cat_name[1], "API");
    cr_assert_str_eq(s.crit_about[0], "GitHub stars");
    cr_assert_eq(s.crit_cat[1], 1);
    cr_assert_str_eq(s.mode, "offline");
    cr_assert_str_eq(s.snapshot_date, "2026-01-01");
    cr_assert_eq(s.nfw, 1);
    const score_in_fw *w = &s.fw[0];
    cr_assert_str_eq(w->name, "PyTorch");
    cr_assert_str_eq(w->tier, "1");
    cr_assert_float_eq(w->overall, 80.5, 1e-12);
    cr_assert_float_eq(w->cat[0], 90, 1e-12);
    cr_assert(isnan(w->cat[1]));
    cr_assert(w->cat_insufficient[1]);
    cr_assert_float_eq(w->crit[0], 90, 1e-12);
    cr_assert_float_eq(w->crit_raw[0], 5, 1e-12);
    cr_assert(isnan(w->crit[1]) && isnan(w->crit_raw[1]));
    cr_assert_str_eq(w->crit_why[1], "no data");
    cr_assert_float_eq(w->crit_hi[1], 100, 1e-12);
    cr_assert_float_eq(w->overall_lo, 45, 1e-12);
    cr_assert_eq(w->cov_missing, 1);
    score_in_free(&s);
    remove_tmp(p);
}

Test(score_in, fixture_shape_and_no_invented_spellings) {
    const char *p = write_tmp("f.json",
        "{\"schema\": \"showdown-scores/1\","
        " \"categories\": [{\"id\": \"support\", \"name\": \"Support\", \"criteria\": [{\"id\": \"sponsor\", \"name\": \"Sponsor\"}]}],"
        " \"frameworks\": [{\"name\": \"Theano\", \"overall\": 41.5, \"tier\": \"3\", \"archived\": true,"
        "  \"categories\": {\"support\": {\"score\": 33}},"
        "  \"criteria\": {\"sponsor\": {\"raw\": 0, \"normalized\": 10, \"score\": 20}, \"cloud\": {\"missing\": true}}}]}");
    score_in s;
    cr_assert_eq(score_in_load(&s, p), 0, "%s", sd_errmsg());
    const score_in_fw *w = &s.fw[0];
    cr_assert_str_eq(w->tier, "3");
    cr_assert(w->archived);
    cr_assert_float_eq(w->cat[0], 33, 1e-12);
    cr_assert(isnan(w->crit[0]), "\"normalized\" and \"score\" are not the writer's: %g", w->crit[0]);
    cr_assert_float_eq(w->crit_raw[0], 0, 1e-12);
    cr_assert_eq(s.ncrit, 2, "a criterion a framework names is added");
    cr_assert_eq(s.crit_cat[1], -1);
    cr_assert(isnan(w->crit[1]));
    score_in_free(&s);
    remove_tmp(p);
    p = write_tmp("bad.json", "{\"schema\": \"showdown-scores/2\", \"frameworks\": []}");
    cr_assert_eq(score_in_load(&s, p), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "not supported"), "%s", sd_errmsg());
    score_in_free(&s);
    remove_tmp(p);
    p = write_tmp("nofw.json", "{\"schema\": \"showdown-scores/1\"}");
    cr_assert_eq(score_in_load(&s, p), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "no \"frameworks\" list"), "%s", sd_errmsg());
    score_in_free(&s);
    remove_tmp(p);
}

/* The bounds: more categories, or criteria, than SCORE_IN_MAX_IDS is SD_ELIMIT naming which, wherever they are
 * declared (the method's categories, a framework's criteria). */
Test(score_in, too_many_ids) {
    static char text[64 * SCORE_IN_MAX_IDS];
    const char *what[2] = {"categories", "criteria"};
    for (int t = 0; t < 2; t++) {
        size_t n = (size_t)snprintf(text, sizeof text, "{\"schema\": \"showdown-scores/1\", %s",
                                    t ? "\"frameworks\": [{\"name\": \"x\", \"criteria\": {" : "\"categories\": [");
        for (int i = 0; i <= SCORE_IN_MAX_IDS; i++)
            n += (size_t)snprintf(text + n, sizeof text - n, t ? "%s\"k%d\": 1" : "%s{\"id\": \"c%d\"}", i ? ", " : "", i);
        snprintf(text + n, sizeof text - n, "%s", t ? "}}]}" : "], \"frameworks\": []}");
        const char *p = write_tmp("many.json", text);
        score_in s;
        cr_assert_eq(score_in_load(&s, p), SD_ELIMIT, "%s", what[t]);
        char want[64];
        snprintf(want, sizeof want, "more than %d %s", SCORE_IN_MAX_IDS, what[t]);
        cr_assert(strstr(sd_errmsg(), want), "%s", sd_errmsg());
        score_in_free(&s);
        remove_tmp(p);
    }
}
