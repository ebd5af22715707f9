/* template — reads a report template (templates/README.md) with jv: unknown keys, section types, parts
 * and placeholders are errors naming file:line:column, so a typo cannot silently drop a section. */
#include "render/template.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *render_template_kind_name(rt_kind k) { return k < RT_KIND_N ? render_section_kinds[k].name : "?"; }

/* "a, b, c": the names a message offers instead of an unknown one. */
static void append_name(char *buf, size_t n, const char *name) {
    if (buf[0]) strncat(buf, ", ", n - strlen(buf) - 1);
    strncat(buf, name, n - strlen(buf) - 1);
}

static int check_text(const jv_doc *d, const jv *v) {
    const char *s = v->string;
    for (size_t i = 0; i < v->string_len; i++) {
        if (s[i] == '{' && i + 1 < v->string_len && s[i + 1] == '{') { i++; continue; }
        if (s[i] == '}' && i + 1 < v->string_len && s[i + 1] == '}') { i++; continue; }
        if (s[i] != '{') continue;
        const char *e = memchr(s + i, '}', v->string_len - i);
        if (!e) return jv_err(d, v, "unclosed '{' in text (write '{{' for a brace)");
        size_t n = (size_t)(e - (s + i + 1));
        int ok = 0;
        for (const rt_placeholder *p = render_placeholders; p->name; p++)
            if (strlen(p->name) == n && strncmp(p->name, s + i + 1, n) == 0) ok = 1;
        if (!ok) {
            char list[512] = "";
            for (const rt_placeholder *p = render_placeholders; p->name; p++) append_name(list, sizeof list, p->name);
            return jv_err(d, v, "unknown placeholder '{%.*s}' (expected one of: %s)", (int)n, s + i + 1, list);
        }
        i += n + 1;
    }
    return 0;
}

static int get_text(render_arena *a, const jv_doc *d, const jv *obj, const char *key, const char *what,
                    const char **out) {
    const jv *v = jv_get(obj, key);
    if (!v) return 0;
    SD_TRY(jv_expect(d, v, JV_STRING, what));
    SD_TRY(check_text(d, v));
    *out = render_strdup(a, v->string);
    return *out ? 0 : sd_err(SD_ENOMEM, "out of memory");
}

static int read_section(render_arena *a, const jv_doc *d, const jv *o, rt_section *s) {
    static const char *const keys[] = {"type", "title", "text", "show", "new_page", "compact", NULL};
    SD_TRY(jv_expect(d, o, JV_OBJECT, "section"));
    SD_TRY(jv_check_keys(d, o, "section", keys));
    const char *type = NULL;
    SD_TRY(jv_get_str(d, o, "type", "section", 1, &type));
    s->kind = RT_KIND_N;
    for (int k = 0; k < RT_KIND_N; k++)
        if (strcmp(type, render_section_kinds[k].name) == 0) s->kind = (rt_kind)k;
    if (s->kind == RT_KIND_N) {
        char list[512] = "";
        for (int k = 0; k < RT_KIND_N; k++) append_name(list, sizeof list, render_section_kinds[k].name);
        return jv_err(d, jv_get(o, "type"), "unknown section type '%s' (expected one of: %s)", type, list);
    }
    SD_TRY(get_text(a, d, o, "title", "section title", &s->title));
    SD_TRY(get_text(a, d, o, "text", "section text", &s->text));
    SD_TRY(jv_get_bool(d, o, "new_page", "section", 0, &s->new_page));
    SD_TRY(jv_get_bool(d, o, "compact", "section", 0, &s->compact));
    s->show = RT_SHOW_ALL;
    const jv *show = jv_get(o, "show");
    if (show) {
        SD_TRY(jv_expect(d, show, JV_ARRAY, "show"));
        s->show = 0;
        for (size_t i = 0; i < show->count; i++) {
            const jv *p = show->items[i];
            SD_TRY(jv_expect(d, p, JV_STRING, "part in show"));
            if (strcmp(p->string, "table") == 0) s->show |= RT_SHOW_TABLE;
            else if (strcmp(p->string, "chart") == 0) s->show |= RT_SHOW_CHART;
            else if (strcmp(p->string, "categories") == 0) s->show |= RT_SHOW_CATEGORIES;
            else if (strcmp(p->string, "criteria") == 0) s->show |= RT_SHOW_CRITERIA;
            else return jv_err(d, p, "unknown part '%s' (expected one of: table, chart, categories, criteria)", p->string);
        }
    }
    if ((render_section_kinds[s->kind].flags & RT_NEEDS_TEXT) && !s->text)
        return jv_err(d, o, "a section of type '%s' needs a \"text\"", type);
    return 0;
}

static int read_template(render_arena *a, jv_doc *d, render_template **out);

int render_template_load(render_arena *a, const char *path, render_template **out) {
    jv_doc *d = NULL;
    SD_TRY(jv_load(&d, path));
    return read_template(a, d, out);
}

int render_template_parse(render_arena *a, const char *name, const char *text, size_t len, render_template **out) {
    jv_doc *d = NULL;
    SD_TRY(jv_parse(&d, name, text, len));
    return read_template(a, d, out);
}

/* Reads the template in d, then frees d. */
static int read_template(render_arena *a, jv_doc *d, render_template **out) {
    int rc = 0;
    const jv *root = jv_root(d);
    static const char *const keys[] = {"format", "name", "title", "subtitle", "footer", "one_page", "sections", NULL};
    render_template *t = render_alloc(a, sizeof *t);
    const char *format = NULL;
    if (!t) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    SD_TRY_GOTO(rc, jv_expect(d, root, JV_OBJECT, "template"), done);
    SD_TRY_GOTO(rc, jv_check_keys(d, root, "template", keys), done);
    SD_TRY_GOTO(rc, jv_get_str(d, root, "format", "template", 1, &format), done);
    if (strcmp(format, "showdown-template/1") != 0) {
        rc = jv_err(d, jv_get(root, "format"), "format '%s' not supported (expected showdown-template/1)", format);
        goto done;
    }
    SD_TRY_GOTO(rc, get_text(a, d, root, "name", "name", &t->name), done);
    SD_TRY_GOTO(rc, get_text(a, d, root, "title", "title", &t->title), done);
    SD_TRY_GOTO(rc, get_text(a, d, root, "subtitle", "subtitle", &t->subtitle), done);
    SD_TRY_GOTO(rc, get_text(a, d, root, "footer", "footer", &t->footer), done);
    SD_TRY_GOTO(rc, jv_get_bool(d, root, "one_page", "template", 0, &t->one_page), done);
    const jv *secs = jv_get(root, "sections");
    if (!secs) { rc = jv_err(d, root, "missing key 'sections' in template"); goto done; }
    SD_TRY_GOTO(rc, jv_expect(d, secs, JV_ARRAY, "sections"), done);
    if (secs->count == 0 || secs->count > 64) { rc = jv_err(d, secs, "a template has 1 to 64 sections (got %zu)", secs->count); goto done; }
    t->sections = render_alloc(a, secs->count * sizeof *t->sections);
    if (!t->sections) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < secs->count; i++) {
        SD_TRY_GOTO(rc, read_section(a, d, secs->items[i], &t->sections[i]), done);
        t->nsections++;
    }
    if (!t->title) t->title = "The deep-learning framework showdown";
    if (!t->name) t->name = "custom";
    *out = t;
done:
    jv_doc_free(d);
    return rc;
}

static int exists(const char *p) { return access(p, R_OK) == 0; }

/* A template found by name stays inside the directory it was looked up in (no symlink out). */
static int found(const char *dir, const char *path) { return sd_path_within(dir, path); }

int render_template_find(const char *name, char *buf, size_t n) {
    size_t len = strlen(name);
    if (strchr(name, '/') || (len > 5 && strcmp(name + len - 5, ".json") == 0)) {
        if ((size_t)snprintf(buf, n, "%s", name) >= n) return sd_err(SD_EUSAGE, "template path too long");
        if (!exists(buf)) return sd_err(SD_EIO, "template %s: cannot read it", name);
        return 0;
    }
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_'))
            return sd_err(SD_EUSAGE, "template name '%s': use letters, digits, '-' and '_' (or give a path)", name);
    const char *env = getenv("SHOWDOWN_TEMPLATES");
    if (env && env[0]) {
        snprintf(buf, n, "%s/%s.json", env, name);
        if (exists(buf)) return found(env, buf);
    }
    snprintf(buf, n, "templates/%s.json", name);
    if (exists(buf)) return found("templates", buf);
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        static const char *const rel[] = {"templates", "../templates", "../../templates", "../share/showdown/templates"};
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
            char dir[PATH_MAX + 64];
            snprintf(dir, sizeof dir, "%s/%s", exe, rel[i]);
            snprintf(buf, n, "%s/%s.json", dir, name);
            if (exists(buf)) return found(dir, buf);
        }
    }
    return sd_err(SD_EUSAGE, "no template named '%s' (looked in $SHOWDOWN_TEMPLATES, ./templates and beside the executable)", name);
}
