/* outline — the report's outline as a template gives it (format in templates/README.md): the sections in
 * order, their titles, texts with {placeholders} and the parts each shows; and the two tables a template
 * names rows of: the kinds of section and the placeholders. Each table is one row per entry, defined beside
 * the code that fills it in (report_build.c, report_facts.c); the template reader checks names against them. */
#ifndef SD_RENDER_OUTLINE_H
#define SD_RENDER_OUTLINE_H

#include "render/render.h"

struct rdoc;
struct rt_section;

/* Parts a section may show ("show": [...]); a section without "show" shows all its parts. */
enum { RT_SHOW_TABLE = 1, RT_SHOW_CHART = 2, RT_SHOW_CATEGORIES = 4, RT_SHOW_CRITERIA = 8, RT_SHOW_ALL = 15 };

/* What a kind of section asks of the outline around it. */
enum {
    RT_OWN_TITLE = 1,    /* the builder sets out its title and text itself (the cover): no heading above it */
    RT_NEEDS_TEXT = 2,   /* a template must give it a "text" */
};

/* The kinds of section, in the order messages list them; each is described by its row of render_section_kinds. */
typedef enum rt_kind {
    RT_COVER, RT_PODIUM, RT_RADARS, RT_CRITERIA, RT_BENCH_TABLES, RT_BENCH_CHARTS, RT_ACCURACY,
    RT_FIRST_STEADY, RT_VERIFICATION, RT_HISTORY, RT_METHODOLOGY, RT_TEXT, RT_REGRESSIONS,
    RT_FRAMEWORKS, RT_SHOWDOWN, RT_PHASE_TABLES, RT_PRECISION, RT_KIND_N
} rt_kind;

/* A kind of section: its "type" in a template, its title when the template gives none (NULL: no heading),
 * the function that builds it and RT_ flags. build returns 0 when it added its blocks, 1 when the inputs hold
 * no data for it (what it added is dropped and the cover lists it as omitted), or an error; NULL builds
 * nothing beyond the title and text. Adding a kind = its enum value, its row and its builder. */
typedef struct rt_kind_info {
    rt_kind kind;
    const char *name, *title;
    int (*build)(struct rdoc *d, const struct rt_section *s);
    unsigned flags;
} rt_kind_info;

/* Row k describes kind k (tests/test_render.c checks the order). */
extern const rt_kind_info render_section_kinds[RT_KIND_N];

/* A placeholder a text may use as {name}, and the function giving its value for the report's inputs. */
typedef struct rt_placeholder {
    const char *name;
    const char *(*value)(struct rdoc *d);
} rt_placeholder;

/* Every placeholder; the last row's name is NULL. "{{" and "}}" are braces. */
extern const rt_placeholder render_placeholders[];

typedef struct rt_section {
    rt_kind kind;
    const char *title, *text;   /* NULL: the kind's default title / no text */
    unsigned show;
    int new_page;
    int compact;                /* smaller figures (the brief) */
} rt_section;

typedef struct render_template {
    const char *name, *title, *subtitle, *footer;
    int one_page;               /* everything on one page, scaled down to fit if need be */
    int nsections;
    rt_section *sections;
} render_template;

#endif
