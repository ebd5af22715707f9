/* cli — option parsing and usage printing for the command tables. */
#include "cmd/cli.h"
#include "core/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const sd_opt *find_opt(const sd_opt *opts, const char *name, size_t len) {
    for (const sd_opt *o = opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
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

static int set_value(const sd_opt *o, const char *v) {
    char *end;
    switch (o->type) {
    case SD_OPT_STR:
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
    case SD_OPT_CHOICE: {
        size_t n = strlen(v);
        for (const char *c = o->metavar; c && *c;) {
            size_t k = strcspn(c, "|");
            if (k == n && strncmp(c, v, n) == 0) { *(const char **)o->dst = v; return 0; }
            c += k + (c[k] == '|');
        }
        return sd_err(SD_EUSAGE, "--%s expects %s, got '%s'", o->name, choice_list(o->metavar), v);
    }
    case SD_OPT_FLAG:
        break;
    }
    return sd_err(SD_ERROR, "internal: bad option type");
}

int sd_opts_parse(const sd_opt *opts, int argc, char **argv, const char **pos, int max_pos, int *npos,
                  int *help) {
    int np = 0;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { *help = 1; continue; }
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) {
                if (np >= max_pos) return sd_err(SD_EUSAGE, "unexpected argument '%s'", argv[i]);
                pos[np++] = argv[i];
            }
            break;
        }
        if (strncmp(a, "--", 2) != 0 || a[2] == 0) {
            if (np >= max_pos) return sd_err(SD_EUSAGE, "unexpected argument '%s'", a);
            pos[np++] = a;
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
        const char *v = eq ? eq + 1 : NULL;
        if (!v) {
            if (i + 1 >= argc) return sd_err(SD_EUSAGE, "--%s expects %s", o->name, o->metavar ? o->metavar : "a value");
            v = argv[++i];
        }
        SD_TRY(set_value(o, v));
    }
    if (npos) *npos = np;
    return 0;
}

void sd_opts_usage(FILE *f, const char *cmd, const char *synopsis, const char *description,
                   const sd_opt *opts) {
    fprintf(f, "usage: showdown %s %s\n\n%s\n", cmd, synopsis, description);
    if (!opts || !opts->name) return;
    fprintf(f, "\noptions:\n");
    for (const sd_opt *o = opts; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
        fprintf(f, "  %-26s %s\n", left, o->help);
    }
    fprintf(f, "  %-26s %s\n", "--help", "show this help");
}

int sd_cli_fail(const char *cmd, int status) {
    fprintf(stderr, "showdown %s: %s\n", cmd, sd_errmsg());
    return sd_exit_code(status);
}

int sd_cmd_not_built(int argc, char **argv, const char *synopsis, const char *description) {
    int help = 0;
    static const sd_opt none[] = {{0}};
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) help = 1;
    if (help) {
        sd_opts_usage(stdout, argv[0], synopsis, description, none);
        printf("\n(not built yet in this version)\n");
        return 0;
    }
    fprintf(stderr, "showdown %s: not built yet in this version (see README.md)\n", argv[0]);
    return 2;
}
