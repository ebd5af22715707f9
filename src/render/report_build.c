/* report_build — turns the template's sections into blocks: each section's heading and text with its
 * placeholders filled, then what the builder of its kind adds (report_*.c). A section whose data are absent
 * adds nothing and is listed as omitted. */
#include "render/report_sections.h"
#include "core/err.h"

#include <stdio.h>
#include <string.h>

/* One row per kind of section, in the order of rt_kind. */
const rt_kind_info render_section_kinds[RT_KIND_N] = {
    {RT_COVER, "cover", NULL, rb_sec_cover, RT_OWN_TITLE},
    {RT_PODIUM, "podium", "Podium", rb_sec_podium, 0},
    {RT_RADARS, "radars", "Profiles", rb_sec_radars, 0},
    {RT_CRITERIA, "criteria", "Criteria breakdown", rb_sec_criteria, 0},
    {RT_BENCH_TABLES, "bench_tables", "Benchmarks", rb_sec_bench_tables, 0},
    {RT_BENCH_CHARTS, "bench_charts", "Training time", rb_sec_bench_charts, 0},
    {RT_ACCURACY, "accuracy", "Accuracy per epoch", rb_sec_accuracy, 0},
    {RT_FIRST_STEADY, "first_steady", "First epoch vs steady state", rb_sec_first_steady, 0},
    {RT_VERIFICATION, "verification", "Verification", rb_sec_verification, 0},
    {RT_HISTORY, "history", "History", rb_sec_history, 0},
    {RT_METHODOLOGY, "methodology", "Methodology and environment", rb_sec_methodology, 0},
    {RT_TEXT, "text", NULL, NULL, RT_NEEDS_TEXT},
    {RT_REGRESSIONS, "regressions", "Regressions", rb_sec_regressions, 0},
    {RT_FRAMEWORKS, "frameworks", "Frameworks against the native floor", rb_sec_frameworks, 0},
    {RT_SHOWDOWN, "showdown", "Which framework, for what", rb_sec_showdown, 0},
    {RT_PHASE_TABLES, "phase_tables", "Throughput per phase", rb_sec_phase_tables, 0},
    {RT_PRECISION, "precision", "Mixed precision: bf16 against fp32", rb_sec_precision, 0},
};

/* Append "a, b" style to a fixed buffer. */
static void list_add(char *buf, size_t n, const char *item) {
    size_t k = strlen(buf);
    snprintf(buf + k, n - k, "%s%s", k ? ", " : "", item);
}

/* One section: its heading and text, then its builder's blocks. 0 built, 1 no data, <0 error. */
static int build_section(rdoc *d, const rt_section *s) {
    const rt_kind_info *k = &render_section_kinds[s->kind];
    if (s->new_page && d->n > 0) SD_TRY(rb_add(d, RB_BREAK, NULL, NULL));
    if (!(k->flags & RT_OWN_TITLE)) {
        const char *title = s->title ? s->title : k->title;
        if (title) SD_TRY(rb_add(d, RB_H2, rb_expand(d, title), NULL));
        if (s->text) SD_TRY(rb_add(d, RB_PARA, rb_expand(d, s->text), NULL));
    }
    return k->build ? k->build(d, s) : 0;
}

int rb_build(rdoc *d) {
    d->omit_note = -1;
    char omitted[512] = "";
    for (int i = 0; i < d->t->nsections; i++) {
        const rt_section *s = &d->t->sections[i];
        int mark = d->n, nfig = d->nfig, ntab = d->ntab, figs = d->st->figures, tabs = d->st->tables;
        int rc = build_section(d, s);
        if (rc < 0) return rc;
        if (rc == 1) {   /* no data: drop what the section added and say so */
            d->n = mark;
            d->nfig = nfig;
            d->ntab = ntab;
            d->st->figures = figs;
            d->st->tables = tabs;
            d->st->omitted++;
            const rt_kind_info *k = &render_section_kinds[s->kind];
            list_add(d->st->omitted_names, sizeof d->st->omitted_names, k->name);
            const char *title = s->title ? rb_expand(d, s->title) : k->title ? k->title : k->name;
            list_add(omitted, sizeof omitted, title);
            continue;
        }
        d->st->sections++;
    }
    if (d->omit_note >= 0 && omitted[0]) {
        rb_block *b = &d->b[d->omit_note];
        b->kind = RB_PARA;
        b->text = render_printf(d->a, "Not in this report for lack of data in its inputs: %s.", omitted);
    }
    return 0;
}
