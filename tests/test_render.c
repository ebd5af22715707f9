/* test_render — the drawing primitives: number formatting and ticks, missing values noted (never zero),
 * best-per-column marking, figures measured = drawn, text reaching the PDF (pdftotext), SVGs well formed
 * (xmllint) and byte-identical when rendered twice in one process. */
#include "render/render.h"
#include "render/template.h"
#include "core/err.h"
#include "testutil.h"

#include <cairo-pdf.h>
#include <math.h>

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)len + 1);
    cr_assert_eq(fread(p, 1, (size_t)len, f), (size_t)len);
    p[len] = 0;
    fclose(f);
    if (n) *n = (size_t)len;
    return p;
}

TestSuite(render, .fini = render_shutdown);

static int have(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

Test(render, fmt_num) {
    char b[64];
    render_fmt_num(b, sizeof b, 3441592, 0);
    cr_expect_str_eq(b, "3,441,592");
    render_fmt_num(b, sizeof b, 1234.5678, 2);
    cr_expect_str_eq(b, "1,234.57");
    render_fmt_num(b, sizeof b, -0.001, 2);
    cr_expect_str_eq(b, "0.00");
    render_fmt_num(b, sizeof b, -1500, 1);
    cr_expect_str_eq(b, "-1,500.0");
    render_fmt_num(b, sizeof b, NAN, 2);
    cr_expect_str_eq(b, "missing");
    render_fmt_num(b, sizeof b, 999.5, 0);
    cr_expect_str_eq(b, "1,000");
}

Test(render, nice_ticks) {
    double t0, step;
    int n = render_nice_ticks(0, 87, 5, &t0, &step);
    cr_expect_eq(t0, 0);
    cr_expect_eq(step, 20);
    cr_expect_eq(n, 6);   /* 0..100 */
    n = render_nice_ticks(0.45, 0.78, 5, &t0, &step);
    cr_expect(fabs(step - 0.1) < 1e-12, "step %g", step);
    cr_expect(t0 <= 0.45 && t0 + step * (n - 1) >= 0.78);
    cr_expect_eq(render_decimals_for_step(0.1), 1);
    cr_expect_eq(render_decimals_for_step(2.5), 1);
    cr_expect_eq(render_decimals_for_step(50), 0);
}

/* ---- a fixture of every figure kind ---------------------------------------------------------------- */
static const char *rows[] = {"Caffe2", "CNTK", "PyTorch"};
static const char *cols[] = {"K80", "P100", "CPU (oneDNN)"};
static const char *units[] = {"s", "s", "s"};
static double tv[] = {148, 54, NAN, 163, 53, 411.25, 169, 51, 288.1};
static signed char best[] = {-1, -1, -1};
static int dec[] = {0, 0, 2};
static render_table tab = {3, 3, "Framework", rows, cols, units, tv, NULL, best, dec, NULL};
static render_fig ftab = {RENDER_FIG_TABLE, "t", "Training time", NULL, {.table = &tab}};

static const char *fws[] = {"MXNet", "TensorFlow"};
static const char *crit[] = {"Sponsor", "Activity", "Ecosystem"};
static double bv[] = {67, 80, 55, 100, NAN, 100};
static render_bar bar = {2, 3, fws, crit, NULL, bv, NULL, NULL, "score (0-100)", 100, 0};
static render_fig fbar = {RENDER_FIG_BAR, "b", "Support & Community", NULL, {.bar = &bar}};

static const char *cats[] = {"Support", "API", "Platform"};
static double rv[] = {90, 85, 95, 84, NAN, 90};
static render_radar rad = {3, 2, cats, fws, NULL, NULL, rv, 100, 0, 0};
static render_fig frad = {RENDER_FIG_RADAR, "r", "Category scores", NULL, {.radar = &rad}};

static double lx[] = {1, 2, 3}, ly0[] = {0.5, 0.6, 0.7}, ly1[] = {0.4, NAN, 0.65};
static double *lxs[] = {lx, lx}, *lys[] = {ly0, ly1};
static int lnp[] = {3, 3};
static render_line line = {2, fws, NULL, lnp, lxs, lys, "epoch", "accuracy", 0, 0, 1};
static render_fig fline = {RENDER_FIG_LINE, "l", "Accuracy per epoch", NULL, {.line = &line}};

static const render_fig *all[] = {&ftab, &fbar, &frad, &fline};

Test(render, missing_notes_name_the_cells) {
    char note[1024];
    cr_expect_eq(render_fig_missing_note(&ftab, note, sizeof note), 1);
    cr_expect(strstr(note, "Caffe2: CPU (oneDNN)") != NULL, "%s", note);
    cr_expect(strstr(note, "not counted as zero") != NULL, "%s", note);
    cr_expect_eq(render_fig_missing_note(&fbar, note, sizeof note), 1);
    cr_expect(strstr(note, "TensorFlow: Activity") != NULL, "%s", note);
    cr_expect_eq(render_fig_missing_note(&frad, note, sizeof note), 1);
    cr_expect(strstr(note, "TensorFlow: API") != NULL, "%s", note);
    cr_expect_eq(render_fig_missing_note(&fline, note, sizeof note), 1);
    tab.v[2] = 1;
    cr_expect_eq(render_fig_missing_note(&ftab, note, sizeof note), 0);
    cr_expect_str_eq(note, "");
    tab.v[2] = NAN;
}

Test(render, measured_height_is_drawn_height) {
    cairo_t *m = render_measure_context();
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        double h = render_fig_height(m, all[i], 480);
        cairo_surface_t *s = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
        cairo_t *cr = cairo_create(s);
        double d = render_fig_draw(cr, all[i], 0, 0, 480);
        double x0, y0, w, ih;
        cairo_recording_surface_ink_extents(s, &x0, &y0, &w, &ih);
        cr_expect(fabs(h - d) < 0.01, "figure %zu: measured %g, drew %g", i, h, d);
        cr_expect(h > 40, "figure %zu is %g high", i, h);
        cr_expect(y0 + ih <= h + 1 && x0 >= -1 && x0 + w <= 481, "figure %zu ink %g,%g %gx%g outside 480x%g", i, x0,
                  y0, w, ih, h);
        cairo_destroy(cr);
        cairo_surface_destroy(s);
    }
    cairo_destroy(m);
}

Test(render, pdf_text_has_numbers_names_and_missing) {
    if (!have("pdftotext")) TU_SKIP("pdftotext not installed");
    char dir[256], pdf[300], txt[300], cmd[700];
    tu_tmpdir(dir, sizeof dir);
    snprintf(pdf, sizeof pdf, "%s/f.pdf", dir);
    snprintf(txt, sizeof txt, "%s/f.txt", dir);
    cairo_surface_t *s = cairo_pdf_surface_create(pdf, 595.28, 841.89);
    cairo_t *cr = cairo_create(s);
    double y = 40;
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) y += render_fig_draw(cr, all[i], 50, y, 495) + 12;
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    snprintf(cmd, sizeof cmd, "pdftotext -layout %s %s", pdf, txt);
    cr_assert_eq(system(cmd), 0);
    char *t = slurp(txt, NULL);
    const char *want[] = {"Caffe2", "PyTorch", "411.25", "288.10", "148", "TensorFlow", "missing",
                          "Support & Community", "Accuracy per epoch", "best in its column", "MXNet"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_expect(strstr(t, want[i]) != NULL, "no '%s' in:\n%s", want[i], t);
    free(t);
}

Test(render, svg_well_formed_and_byte_identical) {
    char dir[256], a[300], b[300], cmd[700];
    tu_tmpdir(dir, sizeof dir);
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        snprintf(a, sizeof a, "%s/a%zu.svg", dir, i);
        snprintf(b, sizeof b, "%s/b%zu.svg", dir, i);
        cr_assert_eq(render_fig_svg(all[i], 480, a), 0);
        cr_assert_eq(render_fig_svg(all[i], 480, b), 0);   /* cairo's surface counter has moved on */
        size_t na, nb;
        char *pa = slurp(a, &na), *pb = slurp(b, &nb);
        cr_expect(na > 500 && strstr(pa, "<svg") != NULL);
        cr_expect(na == nb && memcmp(pa, pb, na) == 0, "figure %zu: two renders differ", i);
        free(pa);
        free(pb);
        if (have("xmllint")) {
            snprintf(cmd, sizeof cmd, "xmllint --noout %s", a);
            cr_expect_eq(system(cmd), 0, "%s is not well-formed XML", a);
        }
    }
}

Test(render, write_file_is_atomic_and_reports_errors) {
    char dir[256], p[300];
    tu_tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/x.txt", dir);
    cr_assert_eq(render_write_file(p, "hello", 5), 0);
    size_t n;
    char *t = slurp(p, &n);
    cr_expect_eq(n, 5);
    cr_expect_str_eq(t, "hello");
    free(t);
    snprintf(p, sizeof p, "%s/x.txt/below-a-file.txt", dir);   /* a parent that is a file */
    cr_expect_lt(render_write_file(p, "x", 1), 0);
}

/* The pieces a long table is cut into for the PDF: the header plus every row's height is the whole height,
 * and a part of the rows (same columns) is as tall as its header plus its rows. */
Test(render, table_rows_add_up_to_the_table) {
    enum { NR = 60, NC = 3 };
    const char *rows[NR], *cols[NC] = {"first", "second", "a long text column"}, *text[NR * NC] = {0};
    double v[NR * NC];
    for (int r = 0; r < NR; r++) {
        rows[r] = r % 7 == 0 ? "a row label long enough to wrap onto a second line in a narrow table" : "row";
        for (int c = 0; c < NC; c++) v[r * NC + c] = r * 10.0 + c;
        text[r * NC + 2] = r % 5 == 0 ? "text that wraps over more than one line when the column is narrow" : "short";
    }
    render_table t = {.nrows = NR, .ncols = NC, .row_head = "Row", .rows = rows, .cols = cols, .v = v, .text = text};
    cairo_t *cr = render_measure_context();
    double head, rh[NR], sum = 0;
    cr_assert_eq(render_table_rows(cr, &t, 300, &head, rh), 0);
    for (int r = 0; r < NR; r++) { cr_expect_gt(rh[r], 5); sum += rh[r]; }
    cr_expect_float_eq(head + sum, render_table_height(cr, &t, 300), 1e-6);
    cr_expect_gt(rh[0], rh[1], "a wrapped row is taller (%g vs %g)", rh[0], rh[1]);
    render_table part = t;   /* rows 10..19, as the PDF's continuation draws them */
    part.whole = &t;
    part.nrows = 10;
    part.rows = rows + 10;
    part.v = v + 10 * NC;
    part.text = text + 10 * NC;
    double ph, prh[10], psum = 0;
    cr_assert_eq(render_table_rows(cr, &part, 300, &ph, prh), 0);
    for (int r = 0; r < 10; r++) psum += prh[r];
    cr_expect_float_eq(ph + psum, render_table_height(cr, &part, 300), 1e-6);
    cr_expect_lt(render_table_height(cr, &part, 300), render_table_height(cr, &t, 300) / 3);
    cairo_destroy(cr);
}

/* A grid too wide for its width (the showdown's inference grid: short ratios, a "failed", labels that wrap):
 * the columns narrow, but no cell's single word breaks, so the row with "failed" is one line like the others. */
Test(render, narrowed_grid_keeps_words_whole) {
    enum { NR = 3, NC = 10 };
    const char *rows[NR] = {"keras-tensorflow", "tinygrad", "chainer"};
    const char *cols[NC] = {"babi_rnn", "imdb_gru", "mnist_hrnn", "mnist_mlp", "mnist_cnn", "cifar10_vgg",
                            "resnet50_features", "resnet18_cifar", "vgg16_cifar", "densenet121_xray"};
    const char *text[NR * NC];
    double v[NR * NC];
    for (int i = 0; i < NR * NC; i++) { v[i] = 2.5; text[i] = i % NC < 4 ? "n/a" : "2.5"; }
    text[1 * NC + 4] = "failed";   /* tinygrad, mnist_cnn: a column of short numbers */
    render_table t = {.nrows = NR, .ncols = NC, .row_head = "Framework", .rows = rows, .cols = cols, .v = v,
                      .text = text, .compact = 1};
    cairo_t *cr = render_measure_context();
    double head, rh[NR];
    cr_assert_eq(render_table_rows(cr, &t, 420, &head, rh), 0);
    cr_expect_float_eq(rh[1], rh[2], 1e-6, "the row with one \"failed\" is %g high, a one-line row %g", rh[1], rh[2]);
    cr_expect_gt(rh[0], rh[2], "the long label wraps (%g vs %g): the table was too wide", rh[0], rh[2]);
    cairo_destroy(cr);
}

/* ---- the tables a template names rows of ----------------------------------------------------------- */
/* Row k of the section kinds describes kind k, names are unique, every kind but free text has a builder,
 * and a template naming every kind reads back each one. */
Test(render, section_kinds_table_is_in_kind_order) {
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"format\": \"showdown-template/1\", \"sections\": [");
    for (int k = 0; k < RT_KIND_N; k++) {
        const rt_kind_info *r = &render_section_kinds[k];
        cr_assert_eq(r->kind, (rt_kind)k, "row %d describes kind %d", k, (int)r->kind);
        cr_assert_not_null(r->name);
        cr_assert_eq(r->build == NULL, k == RT_TEXT, "%s: a builder unless free text", r->name);
        for (int j = 0; j < k; j++) cr_assert_str_neq(render_section_kinds[j].name, r->name);
        n += (size_t)snprintf(text + n, sizeof text - n, "%s{\"type\": \"%s\", \"text\": \"t\"}", k ? ", " : "", r->name);
    }
    n += (size_t)snprintf(text + n, sizeof text - n, "]}");
    render_arena *a = NULL;
    cr_assert_eq(render_arena_new(&a), 0);
    render_template *t = NULL;
    cr_assert_eq(render_template_parse(a, "all.json", text, n, &t), 0, "%s", sd_errmsg());
    cr_assert_eq(t->nsections, RT_KIND_N);
    for (int k = 0; k < RT_KIND_N; k++) {
        cr_assert_eq(t->sections[k].kind, (rt_kind)k);
        cr_assert_str_eq(render_template_kind_name(t->sections[k].kind), render_section_kinds[k].name);
    }
    render_arena_free(a);
}

/* Every placeholder of the one table is accepted in a text; an unknown one is refused, the message listing
 * the table's names in order. */
Test(render, placeholders_come_from_one_table) {
    char text[2048], want[1024] = "";
    size_t n = (size_t)snprintf(text, sizeof text, "{\"format\": \"showdown-template/1\", \"sections\": [{\"type\": \"text\", \"text\": \"");
    int count = 0;
    for (const rt_placeholder *p = render_placeholders; p->name; p++, count++) {
        cr_assert_not_null(p->value, "%s has a value", p->name);
        n += (size_t)snprintf(text + n, sizeof text - n, "{%s} ", p->name);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", count ? ", " : "", p->name);
    }
    cr_assert_geq(count, 14);
    snprintf(text + n, sizeof text - n, "{{braces}}\"}]}");
    render_arena *a = NULL;
    cr_assert_eq(render_arena_new(&a), 0);
    render_template *t = NULL;
    cr_assert_eq(render_template_parse(a, "ok.json", text, strlen(text), &t), 0, "%s", sd_errmsg());
    const char *bad = "{\"format\": \"showdown-template/1\", \"sections\": [{\"type\": \"text\", \"text\": \"{nope}\"}]}";
    cr_assert_neq(render_template_parse(a, "bad.json", bad, strlen(bad), &t), 0);
    cr_assert_not_null(strstr(sd_errmsg(), "unknown placeholder '{nope}'"), "%s", sd_errmsg());
    cr_assert_not_null(strstr(sd_errmsg(), want), "%s lists %s", sd_errmsg(), want);
    render_arena_free(a);
}

