/* report_blocks — the report as a growing list of blocks, and the figures the sections put in it: each
 * figure numbered in its sequence (tables and charts apart), every value missing until a section sets it. */
#include "render/report_sections.h"
#include "core/err.h"

#include <math.h>
#include <string.h>

int rb_add(rdoc *d, rb_kind k, const char *text, render_fig *fig) {
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 64;
        rb_block *b = render_alloc(d->a, (size_t)cap * sizeof *b);
        if (!b) return sd_err(SD_ENOMEM, "out of memory");
        if (d->n) memcpy(b, d->b, (size_t)d->n * sizeof *b);
        d->b = b;
        d->cap = cap;
    }
    d->b[d->n++] = (rb_block){.kind = k, .text = text, .fig = fig};
    return 0;
}

const char *rb_slug(rdoc *d, const char *s) {
    size_t n = strlen(s);
    char *o = render_alloc(d->a, n + 2);
    if (!o) return "x";
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) o[k++] = c;
        else if (k > 0 && o[k - 1] != '-') o[k++] = '-';
    }
    while (k > 0 && o[k - 1] == '-') k--;
    if (k == 0) o[k++] = 'x';
    o[k] = 0;
    return o;
}


/* ---- figure constructors ------------------------------------------------------------------------------ */
render_fig *rb_new_fig(rdoc *d, render_fig_kind k, const char *id, const char *title) {
    render_fig *f = NEW(d, render_fig, 1);
    if (!f) return NULL;
    f->kind = k;
    f->id = id;
    if (k == RENDER_FIG_TABLE) f->title = render_printf(d->a, "Table %d. %s", ++d->ntab, title);
    else f->title = render_printf(d->a, "Figure %d. %s", ++d->nfig, title);
    return f;
}

/* n doubles, all NAN (missing until set). */
static double *nan_values(rdoc *d, int n) {
    double *v = NEW(d, double, n);
    if (v)
        for (int i = 0; i < n; i++) v[i] = NAN;
    return v;
}

render_table *rb_new_table(rdoc *d, int nr, int nc) {
    render_table *t = NEW(d, render_table, 1);
    if (!t) return NULL;
    t->nrows = nr;
    t->ncols = nc;
    t->rows = NEW(d, const char *, nr);
    t->cols = NEW(d, const char *, nc);
    t->units = NEW(d, const char *, nc);
    t->v = nan_values(d, nr * nc);
    t->text = NEW(d, const char *, nr * nc);
    t->best = NEW(d, signed char, nc);
    t->dec = NEW(d, int, nc);
    if (!t->rows || !t->cols || !t->units || !t->v || !t->text || !t->best || !t->dec) return NULL;
    for (int c = 0; c < nc; c++) t->dec[c] = 1;
    return t;
}

render_bar *rb_new_bar(rdoc *d, int ng, int ns) {
    render_bar *b = NEW(d, render_bar, 1);
    if (!b) return NULL;
    b->groups = NEW(d, const char *, ng);
    b->series = NEW(d, const char *, ns);
    b->v = nan_values(d, ng * ns);
    if (!b->groups || !b->series || !b->v) return NULL;
    b->ngroups = ng;
    b->nseries = ns;
    return b;
}

int rb_add_fig(rdoc *d, render_fig *f) {
    if (!f) return sd_err(SD_ENOMEM, "out of memory");
    if (f->kind == RENDER_FIG_TABLE) d->st->tables++; else d->st->figures++;
    return rb_add(d, RB_FIG, NULL, f);
}

int rb_time_decimals(double max) { return max < 10 ? 2 : max < 1000 ? 1 : 0; }
