/* cli — option parsing and usage printing for the command tables. */
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const sd_opt *find_opt(const sd_opt *opts, const char *name, size_t len) {
    for (const sd_opt *o = opts; o && o->name; o++)
        if (o->type != SD_OPT_ARG && strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    return NULL;
}

/* "a|b|c" as "a, b or c" for messages. */
static const char *choice_list(const char *choices) {
    static _Thread_local char buf[256];
    size_t len = 0, k, n = 0;
    buf[0] = 0;
    for (const char *c = choices; c && *c && len < sizeof buf; c += k + (c[k] == '|'), n++) {
        k = strcspn(c, "|");
        const char *sep = n == 0 ? "" : c[k] ? ", " : " or ";
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.*s", sep, (int)k, c);
    }
    return buf;
}

static int is_choice(const char *s, const char *choices, size_t n) {
    for (const char *c = choices; c && *c;) {
        size_t k = strcspn(c, "|");
        if (k == n && strncmp(c, s, n) == 0) return 1;
        c += k + (c[k] == '|');
    }
    return 0;
}

/* A LIST option's kind, from its metavar: whole arguments ("FILE..."), or split at commas and checked
 * against the values it lists ("pdf|svg") or not ("NAME"). */
static int list_whole(const sd_opt *o) {
    size_t n = o->metavar ? strlen(o->metavar) : 0;
    return n >= 3 && strcmp(o->metavar + n - 3, "...") == 0;
}
static int list_checked(const sd_opt *o) { return o->metavar && strchr(o->metavar, '|'); }

/* What a LIST option expects, for messages and usage. */
static const char *list_expects(const sd_opt *o, int usage) {
    static _Thread_local char buf[320];
    const char *m = o->metavar ? o->metavar : "VALUE";
    if (list_whole(o)) snprintf(buf, sizeof buf, "%s", m);
    else if (list_checked(o) && !usage) snprintf(buf, sizeof buf, "a comma-separated list of %s", choice_list(m));
    else if (list_checked(o)) snprintf(buf, sizeof buf, "%s[,...]", m);
    else snprintf(buf, sizeof buf, "%s[,%s...]", m, m);
    return buf;
}

static int list_add(sd_list *l, const char *s, size_t n, int copy) {
    if (l->n >= SD_LIST_MAX) return -1;
    if (copy) {
        if (l->used + n + 1 > sizeof l->buf) return -1;
        char *d = l->buf + l->used;
        memcpy(d, s, n);
        d[n] = 0;
        l->used += n + 1;
        s = d;
    }
    l->v[l->n++] = s;
    return 0;
}

int sd_list_has(const sd_list *l, const char *s) {
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) return 1;
    return 0;
}

void sd_list_join(const sd_list *l, char *buf, size_t n) {
    size_t len = 0;
    if (n) buf[0] = 0;
    for (int i = 0; i < l->n && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", l->v[i]);
}

/* Add s's comma-separated items to l (empty ones are skipped); o checks them against its choices and is
 * named in the messages, NULL for a default the command supplies. */
static int split_add(sd_list *l, const char *s, const sd_opt *o) {
    int any = 0;
    for (const char *p = s; *p;) {
        size_t k = strcspn(p, ",");
        if (k && o && list_checked(o) && !is_choice(p, o->metavar, k))
            return sd_err(SD_EUSAGE, "--%s expects %s, got '%.*s'", o->name, list_expects(o, 0), (int)k, p);
        if (k && list_add(l, p, k, 1) < 0)
            return sd_err(o ? SD_EUSAGE : SD_ELIMIT, "%s%s takes at most %d values (%zu characters in all)",
                          o ? "--" : "", o ? o->name : "a list", SD_LIST_MAX, sizeof l->buf - 1);
        any |= k > 0;
        p += k + (p[k] == ',');
    }
    if (!any && o) return sd_err(SD_EUSAGE, "--%s expects %s, got '%s'", o->name, list_expects(o, 0), s);
    return 0;
}

int sd_list_split(sd_list *l, const char *csv) { return split_add(l, csv ? csv : "", NULL); }

static int set_list(const sd_opt *o, const char *v) {
    if (!list_whole(o)) return split_add(o->dst, v, o);
    if (list_add(o->dst, v, 0, 0) < 0)   /* the argument itself, kept in argv */
        return sd_err(SD_EUSAGE, "--%s takes at most %d values", o->name, SD_LIST_MAX);
    return 0;
}

static int set_value(const sd_opt *o, const char *v) {
    char *end;
    switch (o->type) {
    case SD_OPT_STR:
    case SD_OPT_OUT:
        *(const char **)o->dst = v;
        return 0;
    case SD_OPT_INT: {
        errno = 0;
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end)
            return sd_err(SD_EUSAGE, "--%s expects an integer, got '%s'", o->name, v);
        if ((o->min != 0 || o->max != 0) && (x < o->min || x > o->max))
            return sd_err(SD_EUSAGE, "--%s must be between %.0f and %.0f, got %ld", o->name, o->min,
                          o->max, x);
        *(long *)o->dst = x;
        return 0;
    }
    case SD_OPT_DOUBLE: {
        errno = 0;
        double x = strtod(v, &end);
        if (errno || end == v || *end)
            return sd_err(SD_EUSAGE, "--%s expects a number, got '%s'", o->name, v);
        if ((o->min != 0 || o->max != 0) && (x < o->min || x > o->max))
            return sd_err(SD_EUSAGE, "--%s must be between %g and %g, got %g", o->name, o->min, o->max, x);
        *(double *)o->dst = x;
        return 0;
    }
    case SD_OPT_CHOICE:
        if (!is_choice(v, o->metavar, strlen(v)))
            return sd_err(SD_EUSAGE, "--%s expects %s, got '%s'", o->name, choice_list(o->metavar), v);
        *(const char **)o->dst = v;
        return 0;
    case SD_OPT_LIST:
        return set_list(o, v);
    case SD_OPT_FLAG:
    case SD_OPT_ARG:
        break;
    }
    return sd_err(SD_ERROR, "internal: bad option type");
}

static int is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

/* A positional argument: the next ARG entry of the table (*arg walks them), else pos. */
static int positional(const sd_opt **arg, const char *a, const char **pos, int max_pos, int *np) {
    while (*arg && (*arg)->name && (*arg)->type != SD_OPT_ARG) (*arg)++;
    if (*arg && (*arg)->name) {
        *(const char **)(*arg)->dst = a;
        (*arg)++;
        return 0;
    }
    if (*np >= max_pos) return sd_err(SD_EUSAGE, "unexpected argument '%s'", a);
    pos[(*np)++] = a;
    return 0;
}

int sd_opts_parse(const sd_opt *opts, int argc, char **argv, const char **pos, int max_pos, int *npos,
                  int *help) {
    int np = 0;
    const sd_opt *arg = opts;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) { *help = 1; continue; }
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) SD_TRY(positional(&arg, argv[i], pos, max_pos, &np));
            break;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == 0) {
            SD_TRY(positional(&arg, a, pos, max_pos, &np));
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const sd_opt *o = find_opt(opts, name, len);
        if (!o) return sd_err(SD_EUSAGE, "unknown option '--%.*s' (see --help)", (int)len, name);
        if (o->type == SD_OPT_FLAG) {
            if (eq) return sd_err(SD_EUSAGE, "--%s takes no value", o->name);
            *(int *)o->dst = 1;
            continue;
        }
        int whole = o->type == SD_OPT_LIST && list_whole(o);
        const char *v = eq ? eq + 1 : NULL;
        if (!v) {
            if (i + 1 >= argc || (whole && (strncmp(argv[i + 1], "--", 2) == 0 || is_help(argv[i + 1]))))
                return sd_err(SD_EUSAGE, "--%s expects %s", o->name,
                              o->type == SD_OPT_LIST ? list_expects(o, 0)
                              : o->type == SD_OPT_CHOICE ? choice_list(o->metavar)
                              : o->metavar ? o->metavar : "a value");
            v = argv[++i];
        }
        SD_TRY(set_value(o, v));
        /* "--results a b c": the arguments that follow, up to the next option */
        while (whole && !eq && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 && !is_help(argv[i + 1]))
            SD_TRY(set_value(o, argv[++i]));
    }
    while (arg && arg->name && arg->type != SD_OPT_ARG) arg++;
    if (arg && arg->name && !*help)
        return sd_err(SD_EUSAGE, "missing %s: %s (see --help)", arg->name, arg->help);
    if (npos) *npos = np;
    return 0;
}

void sd_opts_usage(FILE *f, const char *cmd, const char *synopsis, const char *description,
                   const sd_opt *opts) {
    fprintf(f, "usage: showdown %s %s\n\n%s\n", cmd, synopsis, description);
    if (!opts || !opts->name) return;
    for (int args = 1; args >= 0; args--) {
        int first = 1;
        for (const sd_opt *o = opts; o->name; o++) {
            if ((o->type == SD_OPT_ARG) != args) continue;
            if (first) fprintf(f, "\n%s:\n", args ? "arguments" : "options");
            first = 0;
            char left[400];
            const char *m = o->type == SD_OPT_LIST ? list_expects(o, 1) : o->metavar;
            if (args) snprintf(left, sizeof left, "%s", o->name);
            else snprintf(left, sizeof left, "--%s%s%s", o->name, m ? " " : "", m ? m : "");
            /* a long metavar (a list of choices) puts the help on the next line */
            if (strlen(left) > 26) fprintf(f, "  %s\n  %-26s %s\n", left, "", o->help);
            else fprintf(f, "  %-26s %s\n", left, o->help);
        }
    }
    fprintf(f, "  %-26s %s\n", "--help", "show this help");
}

int sd_cli_fail(const char *cmd, int status) {
    fprintf(stderr, "showdown %s: %s\n", cmd, sd_errmsg());
    return sd_exit_code(status);
}

int sd_cli_parse(const char *cmd, const char *synopsis, const char *description, const sd_opt *opts, int argc,
                 char **argv) {
    int help = 0;
    int rc = sd_opts_parse(opts, argc, argv, NULL, 0, NULL, &help);
    if (rc) return sd_cli_fail(cmd, rc);
    if (help) {
        sd_opts_usage(stdout, cmd, synopsis, description, opts);
        return SD_EXIT_OK;
    }
    for (const sd_opt *o = opts; o->name; o++) {
        if (o->type != SD_OPT_OUT || !*(const char **)o->dst) continue;
        char what[80];
        snprintf(what, sizeof what, "--%s", o->name);
        if ((rc = sd_out_file_check(*(const char **)o->dst, what)) != 0) return sd_cli_fail(cmd, rc);
    }
    return -1;
}
