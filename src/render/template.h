/* template — the report's outline read from templates/NAME.json (format in templates/README.md): the
 * sections in order, their titles, texts with {placeholders}, and which parts (table, chart, ...) each
 * shows. Read with jv so every mistake is reported as file:line:column. */
#ifndef SD_RENDER_TEMPLATE_H
#define SD_RENDER_TEMPLATE_H

#include "render/render.h"

typedef enum rt_kind {
    RT_COVER, RT_PODIUM, RT_RADARS, RT_CRITERIA, RT_BENCH_TABLES, RT_BENCH_CHARTS, RT_ACCURACY,
    RT_FIRST_STEADY, RT_VERIFICATION, RT_HISTORY, RT_METHODOLOGY, RT_TEXT, RT_REGRESSIONS,
    RT_FRAMEWORKS, RT_KIND_N
} rt_kind;

/* Parts a section may show ("show": [...]); a section without "show" shows all its parts. */
enum { RT_SHOW_TABLE = 1, RT_SHOW_CHART = 2, RT_SHOW_CATEGORIES = 4, RT_SHOW_CRITERIA = 8, RT_SHOW_ALL = 15 };

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

const char *render_template_kind_name(rt_kind k);
/* Placeholders a text may use: {name} with a name from this NULL-terminated list; "{{" is a brace. */
extern const char *const render_template_placeholders[];
/* Read a template file into the arena. */
int render_template_load(render_arena *a, const char *path, render_template **out);
/* The same from memory (the fuzzers' entry point); name is used in messages. */
int render_template_parse(render_arena *a, const char *name, const char *text, size_t len, render_template **out);
/* Resolve NAME (a file path if it contains '/' or ends in .json, else NAME.json in $SHOWDOWN_TEMPLATES,
 * ./templates, and templates/ beside or above the executable) into buf. A found NAME.json that is a
 * symlink leading out of its directory is an error. */
int render_template_find(const char *name, char *buf, size_t n);

#endif
