/* template — the report's outline (render/outline.h) read from templates/NAME.json (format in
 * templates/README.md). Read with jv so every mistake is reported as file:line:column. */
#ifndef SD_RENDER_TEMPLATE_H
#define SD_RENDER_TEMPLATE_H

#include "render/outline.h"

/* The name a template gives the kind as "type" ("?" for none). */
const char *render_template_kind_name(rt_kind k);
/* Read a template file into the arena. */
int render_template_load(render_arena *a, const char *path, render_template **out);
/* The same from memory (the fuzzers' entry point); name is used in messages. */
int render_template_parse(render_arena *a, const char *name, const char *text, size_t len, render_template **out);
/* Resolve NAME (a file path if it contains '/' or ends in .json, else NAME.json in $SHOWDOWN_TEMPLATES,
 * ./templates, and templates/ beside or above the executable) into buf. A found NAME.json that is a
 * symlink leading out of its directory is an error. */
int render_template_find(const char *name, char *buf, size_t n);

#endif
