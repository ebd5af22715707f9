/* setting — a framework's best-setting figure measured again: the command the run recorded (make bench-cpu's
 * cell script, scripts/<framework>_perf.py, with its arguments and environment) under the recorded interpreter,
 * in processes of their own. A process's figure per phase is its fastest timed window, as bench-cpu counts it. */
#include "bench/bench.h"
#include "bench/results.h"
#include "bench/verify.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "core/sig.h"
#include "core/util.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SETTING_TIMEOUT_S 900.0   /* a cell script's process at most (bench-cpu's own default) */
#define MAX_ARGS 64

/* images/s at the fastest window: the script's median rate scaled by median / fastest seconds per call. */
static double fastest_rate(const json_t *line, const char *phase) {
    char k[64];
    snprintf(k, sizeof k, "%s_images_per_s", phase);
    double ips = json_number_value(json_object_get(line, k));
    snprintf(k, sizeof k, "%s_windows_s", phase);
    const json_t *w = json_object_get(line, k);
    size_t n = json_array_size(w);
    if (!(ips > 0) || n == 0) return ips > 0 ? ips : NAN;
    double *t = calloc(n, sizeof *t);
    if (!t) return NAN;
    for (size_t i = 0; i < n; i++) t[i] = json_number_value(json_array_get(w, i));
    qsort(t, n, sizeof *t, sd_cmp_double);
    double r = t[0] > 0 ? ips * t[n / 2] / t[0] : NAN;
    free(t);
    return r;
}

/* The output line of the setting asked for, parsed (NULL when there is none). */
static json_t *line_of(char *out, const char *setting) {
    json_t *found = NULL;
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
        if (*l != '{') continue;
        json_t *j = json_loads(l, 0, NULL);
        const char *s = json_string_value(json_object_get(j, "setting"));
        if (j && s && strcmp(s, setting) == 0) {
            json_decref(found);
            found = j;
        } else {
            json_decref(j);
        }
    }
    return found;
}

/* The processes run so far, per command: a command measures all of a framework's candidates of a workload (bench-cpu
 * ran them in one process), and each of its best runs takes its own line from the same processes. */
typedef struct cmd_out {
    char *key;
    size_t klen;
    char **outs;      /* each process's output, in the order they ran */
    double *speeds;   /* each process's host speed: the lower of its canaries before and after (none: NAN) */
    long n, cap;
    char *err;        /* why a process of it failed: the command is not run again until forgotten */
    int errc;
} cmd_out;
static cmd_out *cmds;
static size_t ncmds, capcmds;

void sd_bench_setting_forget(void) {
    for (size_t i = 0; i < ncmds; i++) {
        for (long r = 0; r < cmds[i].n; r++) free(cmds[i].outs[r]);
        free(cmds[i].outs);
        free(cmds[i].speeds);
        free(cmds[i].key);
        free(cmds[i].err);
    }
    free(cmds);
    cmds = NULL;
    ncmds = capcmds = 0;
}

/* The command's entry, added when new (the key then owned by it); NULL when out of memory. */
static cmd_out *cmd_of(char *key, size_t klen) {
    for (size_t i = 0; i < ncmds; i++)
        if (cmds[i].klen == klen && memcmp(cmds[i].key, key, klen) == 0) { free(key); return &cmds[i]; }
    if (ncmds == capcmds) {
        size_t cap = capcmds ? 2 * capcmds : 16;
        cmd_out *m = realloc(cmds, cap * sizeof *m);
        if (!m) { free(key); return NULL; }
        cmds = m;
        capcmds = cap;
    }
    cmds[ncmds] = (cmd_out){.key = key, .klen = klen};
    return &cmds[ncmds++];
}

/* Room for cap processes in c. */
static int cmd_reserve(cmd_out *c, long cap) {
    char **o = realloc(c->outs, (size_t)cap * sizeof *o);
    if (o) c->outs = o;
    double *sp = o ? realloc(c->speeds, (size_t)cap * sizeof *sp) : NULL;
    if (sp) c->speeds = sp;
    if (!o || !sp) return sd_err(SD_ENOMEM, "out of memory");
    c->cap = cap;
    return 0;
}

/* The command as one key of *len bytes: its arguments and environment, NUL-separated. */
static char *key_of(char *const *argv, const char *const *env, size_t *len) {
    size_t n = 2;
    for (int i = 0; argv[i]; i++) n += strlen(argv[i]) + 1;
    for (int i = 0; env[i]; i++) n += strlen(env[i]) + 1;
    char *k = malloc(n), *p = k;
    if (!k) return NULL;
    for (int i = 0; argv[i]; i++) { size_t l = strlen(argv[i]) + 1; memcpy(p, argv[i], l); p += l; }
    *p++ = 0;
    for (int i = 0; env[i]; i++) { size_t l = strlen(env[i]) + 1; memcpy(p, env[i], l); p += l; }
    *p++ = 0;
    *len = (size_t)(p - k);
    return k;
}

/* The journal of a `bench --best-settings` pass (FILE.journal): each process's output as it ends, so that a pass
 * killed in the middle (a session's end, a reboot) goes on from the processes it had instead of hours anew. Line 1
 * names the results measured (a hash of the file as read) and the repeat; each further line is one process: its
 * pass, command, host speed and output. A journal of other results or another repeat is not taken up. */
#define JOURNAL_FORMAT "showdown-best-settings-journal/1"
#define JOURNAL_MAX ((size_t)1 << 30)
static FILE *journal;            /* appended to as processes end; NULL: no journal */
static char journal_path[PATH_MAX];
static json_t *journal_taken;    /* the processes of the interrupted run taken up, each line parsed */
static int journal_pass;         /* the pass running now (enum pass below) */

/* FNV-1a of the results as canonical JSON: a journal goes with the very file it measured. */
static void results_hash(const json_t *doc, char out[17]) {
    char *t = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    uint64_t h = 14695981039346656037ULL;
    for (const char *c = t ? t : ""; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    free(t);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void journal_close(void) {
    if (journal) fclose(journal);
    journal = NULL;
    json_decref(journal_taken);
    journal_taken = NULL;
}

/* An append that fails ends the journal, said once: the pass goes on, an interruption would then lose it. */
static void journal_failed(const char *why) {
    fprintf(stderr, "bench: cannot keep %s (%s): an interruption now loses this pass's processes\n", journal_path, why);
    if (journal) fclose(journal);
    journal = NULL;
}

static void journal_add(char *const *argv, const char *const *env, double speed, const char *out) {
    if (!journal) return;
    json_t *a = json_array(), *e = json_array();
    for (int i = 0; argv[i]; i++) json_array_append_new(a, json_string(argv[i]));
    for (int i = 0; env[i]; i++) json_array_append_new(e, json_string(env[i]));
    json_t *l = json_pack("{s:i, s:o, s:o, s:o, s:s}", "pass", journal_pass, "argv", a, "env", e, "speed",
                          isfinite(speed) ? json_real(speed) : json_null(), "out", out);
    char *t = l ? json_dumps(l, JSON_COMPACT) : NULL;
    json_decref(l);
    /* one line written whole and flushed: a kill leaves at most the last line torn, which the reader drops */
    if (!t || fprintf(journal, "%s\n", t) < 0 || fflush(journal) != 0) journal_failed(t ? strerror(errno) : "out of memory");
    free(t);
}

/* Open FILE.journal for doc: take up the processes of an interrupted run of the same results and repeat, or start
 * it anew. Says which unless quiet. */
static void journal_open(const char *file, const json_t *doc, long repeat, int quiet) {
    journal_close();
    if (!file) return;
    if (snprintf(journal_path, sizeof journal_path, "%s.journal", file) >= (int)sizeof journal_path) return;
    char hash[17];
    results_hash(doc, hash);
    char *text = NULL;
    size_t len = 0, kept = 0;   /* text[0, kept): the header and the lines taken, rewritten as the journal */
    json_t *taken = json_array();
    int had = sd_read_file(journal_path, JOURNAL_MAX, &text, &len) == 0, ours = 0;
    for (char *l = text, *nl; had && l && (nl = memchr(l, '\n', len - (size_t)(l - text))); l = nl + 1) {
        *nl = 0;   /* a last line without its newline was torn by the kill: not read */
        json_t *j = json_loads(l, 0, NULL);
        int keep = 0;
        if (l == text) {
            const char *f = json_string_value(json_object_get(j, "format")), *h = json_string_value(json_object_get(j, "results"));
            ours = keep = f && h && strcmp(f, JOURNAL_FORMAT) == 0 && strcmp(h, hash) == 0 &&
                          json_integer_value(json_object_get(j, "repeat")) == repeat;
            json_decref(j);
            if (!ours) break;
        } else if (j && json_is_integer(json_object_get(j, "pass")) && json_is_array(json_object_get(j, "argv")) &&
                   json_is_array(json_object_get(j, "env")) && json_is_string(json_object_get(j, "out"))) {
            json_array_append_new(taken, j);
            keep = 1;
        } else {
            json_decref(j);
        }
        if (keep) {
            memmove(text + kept, l, (size_t)(nl - l));
            kept += (size_t)(nl - l);
            text[kept++] = '\n';
        }
    }
    char head[128];   /* a journal of other results, or none: its header alone */
    if (!ours) kept = (size_t)snprintf(head, sizeof head, "{\"format\":\"%s\",\"results\":\"%s\",\"repeat\":%ld}\n",
                                       JOURNAL_FORMAT, hash, repeat);
    int rc = sd_write_file_atomic(journal_path, ours ? text : head, kept);
    free(text);
    if (rc != 0 || !(journal = fopen(journal_path, "a"))) {
        journal_failed(rc != 0 ? sd_errmsg() : strerror(errno));
        json_decref(taken);
        return;
    }
    if (!ours || json_array_size(taken) == 0) {
        if (had && !quiet)
            fprintf(stderr, "bench: %s was of other results or another --repeat, or empty: started anew\n", journal_path);
        json_decref(taken);
        return;
    }
    journal_taken = taken;
    if (!quiet)
        fprintf(stderr, "bench: going on from %s: %zu process(es) of an interrupted run kept\n", journal_path,
                json_array_size(taken));
}

/* A JSON array of strings as a NULL-terminated array in out (room entries with the NULL): 0; -1 when it does not fit;
 * k when its k-th entry (from 1) is not a string. */
static int strings_of(const json_t *a, const char **out, size_t room) {
    const size_t n = json_array_size(a);
    if (n + 1 > room) return -1;
    for (size_t k = 0; k < n; k++)
        if (!(out[k] = json_string_value(json_array_get(a, k)))) return (int)k + 1;
    out[n] = NULL;
    return 0;
}

/* The journal's processes of this pass joined to their commands before its rounds run (they then run only the rest). */
static int journal_take(int pass) {
    size_t i;
    json_t *l;
    json_array_foreach(journal_taken, i, l) {
        if (json_integer_value(json_object_get(l, "pass")) != pass) continue;
        const char *argv[MAX_ARGS], *env[MAX_ARGS];
        if (strings_of(json_object_get(l, "argv"), argv, MAX_ARGS) || strings_of(json_object_get(l, "env"), env, MAX_ARGS))
            continue;
        size_t klen = 0;
        char *key = key_of((char *const *)argv, env, &klen);
        cmd_out *c = key ? cmd_of(key, klen) : NULL;
        if (!c) return sd_err(SD_ENOMEM, "out of memory");
        if (c->n == c->cap) SD_TRY(cmd_reserve(c, c->cap ? 2 * c->cap : 4));
        const json_t *sp = json_object_get(l, "speed");
        if (!(c->outs[c->n] = strdup(json_string_value(json_object_get(l, "out"))))) return sd_err(SD_ENOMEM, "out of memory");
        c->speeds[c->n++] = json_is_number(sp) ? json_number_value(sp) : NAN;
    }
    return 0;
}

/* Run the command until it has `upto` processes' outputs (each started once the host runs at its speed; one a
 * spell began in runs once more), or take those it has. *got: its entry. A failed process fails the command's
 * later calls too, until sd_bench_setting_forget. */
static int outputs(char *const *argv, const char *const *env, long upto, double host_wait_s, const char *script,
                   int quiet, const cmd_out **got) {
    size_t klen = 0;
    char *key = key_of(argv, env, &klen);
    cmd_out *c = key ? cmd_of(key, klen) : NULL;
    if (!c) return sd_err(SD_ENOMEM, "out of memory");
    *got = c;
    if (c->err) return sd_err(c->errc, "%s", c->err);
    if (c->n >= upto) return 0;
    if (c->cap < upto) SD_TRY(cmd_reserve(c, upto));
    char *buf = malloc(1 << 20);
    if (!buf) return sd_err(SD_ENOMEM, "out of memory");
    sd_bench_opts host;   /* the host canary's settings: as bench's */
    sd_bench_opts_default(&host);
    host.host_wait_s = host_wait_s;
    int rc = 0;
    for (int again = 0; rc == 0 && c->n < upto;) {
        double speed = host_wait_s > 0 ? sd_host_settle(&host, sd_sig_flag()) : NAN, t0 = sd_now(), after = NAN;
        if (sd_sig_pending()) { rc = SD_EINTR; break; }
        sd_proc_opts po = {.argv = argv, .env_add = env[0] ? env : NULL, .out = SD_PROC_PIPE, .err = SD_PROC_NULL};
        int st = 0, k = sd_proc_capture(&po, SETTING_TIMEOUT_S, buf, 1 << 20, &st);
        if (k < 0) rc = k;
        else if (k == 1) rc = sd_err(SD_ERROR, "%s timed out after %.0f s", script, SETTING_TIMEOUT_S);
        else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            rc = sd_err(SD_ERROR, "%s exited with status %d", script, sd_proc_exit_code(st));
        else if (host_wait_s > 0) {
            /* a spell that began while the process ran: this process runs once more */
            after = sd_host_after(&host, speed);
            if (!again && sd_host_retry(&host, after, sd_now() - t0)) {
                if (!quiet)
                    fprintf(stderr, "bench: %s process %ld of %ld ran while the host was at %.0f%% of its speed: run "
                            "once more\n", script, c->n + 1, upto, 100 * after);
                again = 1;
                continue;
            }
        }
        if (rc == 0 && !(c->outs[c->n] = strdup(buf))) rc = sd_err(SD_ENOMEM, "out of memory");
        if (rc == 0) {
            c->speeds[c->n++] = after;
            journal_add(argv, env, after, buf);
        }
        again = 0;
    }
    free(buf);
    if (rc && rc != SD_EINTR && rc != SD_ENOMEM) {
        c->errc = rc;
        c->err = strdup(sd_errmsg());
    }
    return rc;
}

/* The command that measures p's setting again, in argv and env (each MAX_ARGS long; script and self PATH_MAX): the
 * recorded interpreter and cell script, its arguments, and this showdown. SD_ENODEV when either is not here. */
static int command_of(const sd_run_view *p, char **argv, const char **env, char *script, char *self) {
    if (!p->rerun_python || !p->rerun_script || !p->rerun_args || !p->setting)
        return sd_err(SD_ENODEV, "the published run records no command to measure its setting again");
    if (access(p->rerun_python, X_OK) != 0)
        return sd_err(SD_ENODEV, "its interpreter %s is not here", p->rerun_python);
    sd_default_dir(script, PATH_MAX, p->rerun_script, p->rerun_script);
    if (access(script, R_OK) != 0) return sd_err(SD_ENODEV, "its cell script %s is not here", p->rerun_script);
    ssize_t k = readlink("/proc/self/exe", self, PATH_MAX - 1);
    if (k <= 0) return sd_err(SD_EIO, "cannot tell where this showdown is (/proc/self/exe)");
    self[k] = 0;
    const size_t na = json_array_size(p->rerun_args);
    if (na + 5 > MAX_ARGS) return sd_err(SD_EINPUT, "the recorded command is too long");
    argv[0] = (char *)p->rerun_python;
    argv[1] = script;
    const int bad = strings_of(p->rerun_args, (const char **)argv + 2, MAX_ARGS - 4);
    if (bad) return sd_err(SD_EINPUT, "the recorded command's argument %d is not a string", bad);
    argv[na + 2] = "--showdown";
    argv[na + 3] = self;
    argv[na + 4] = NULL;
    int e = strings_of(p->rerun_env, env, MAX_ARGS);
    if (e < 0) return sd_err(SD_EINPUT, "the recorded command is too long");
    for (size_t i = 0; e == 0 && env[i]; i++) e = !strchr(env[i], '=');
    return e ? sd_err(SD_EINPUT, "the recorded environment is not NAME=VALUE") : 0;
}

long sd_bench_setting_have(const sd_run_view *p) {
    char *argv[MAX_ARGS], script[PATH_MAX], self[PATH_MAX];
    const char *env[MAX_ARGS];
    size_t klen = 0;
    char *key = command_of(p, argv, env, script, self) == 0 ? key_of(argv, env, &klen) : NULL;
    long n = key ? 0 : -1;
    for (size_t i = 0; key && i < ncmds; i++)
        if (cmds[i].klen == klen && memcmp(cmds[i].key, key, klen) == 0) n = cmds[i].err ? -1 : cmds[i].n;
    free(key);
    return n;
}

int sd_bench_setting_grow(const sd_run_view *p, long upto, double host_wait_s, int quiet) {
    char *argv[MAX_ARGS], script[PATH_MAX], self[PATH_MAX];
    const char *env[MAX_ARGS];
    SD_TRY(command_of(p, argv, env, script, self));
    const cmd_out *got = NULL;
    return outputs(argv, env, upto, host_wait_s, p->rerun_script, quiet, &got);
}

size_t sd_bench_settings_todo(const sd_run_view *runs, size_t n, long repeat) {
    char *argv[MAX_ARGS], script[PATH_MAX], self[PATH_MAX];
    const char *env[MAX_ARGS];
    size_t *which = malloc((n ? n : 1) * sizeof *which), total = 0;   /* each run's entry; (size_t)-1: none */
    int rc = which ? 0 : sd_err(SD_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {   /* runs that share a command share its entry and its processes */
        size_t klen = 0;
        char *key = command_of(&runs[i], argv, env, script, self) == 0 ? key_of(argv, env, &klen) : NULL;
        cmd_out *c = key ? cmd_of(key, klen) : NULL;   /* cmd_of takes the key */
        if (key && !c) rc = sd_err(SD_ENOMEM, "out of memory");
        which[i] = c ? (size_t)(c - cmds) : (size_t)-1;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        int first = which[i] != (size_t)-1;
        for (size_t j = 0; j < i && first; j++) first = which[j] != which[i];
        if (first && !cmds[which[i]].err && cmds[which[i]].n < repeat) total += (size_t)(repeat - cmds[which[i]].n);
    }
    free(which);
    return rc ? (size_t)-1 : total;
}

/* The rounds of a best-settings pass (sd_rounds_run): its runs, a command that two runs share run for the first. */
typedef struct settings_rounds {
    const sd_run_view *runs;
    double host_wait_s;
    int quiet;
} settings_rounds;

static long settings_have(void *ctx, size_t i) { return sd_bench_setting_have(&((settings_rounds *)ctx)->runs[i]); }

static int settings_step(void *ctx, size_t i, long round) {
    const settings_rounds *s = ctx;
    const int rc = sd_bench_setting_grow(&s->runs[i], round, s->host_wait_s, s->quiet);
    return rc == SD_EINTR || rc == SD_ENOMEM ? rc : 0;   /* a failure is said when its figure is asked for */
}

static void settings_label(void *ctx, size_t i, char *buf, size_t len) {
    const sd_run_view *p = &((settings_rounds *)ctx)->runs[i];
    snprintf(buf, len, "%s/%s setting %s", json_string_value(p->workload), json_string_value(p->implementation),
             p->setting ? p->setting : "?");
}

int sd_bench_settings_rounds(const sd_run_view *runs, size_t n, long repeat, double host_wait_s, int quiet,
                             const char *who) {
    const size_t total = sd_bench_settings_todo(runs, n, repeat);
    if (total == (size_t)-1) return SD_ENOMEM;
    settings_rounds s = {runs, host_wait_s, quiet};
    return sd_rounds_run(&(sd_rounds){.n = n, .total = total, .repeat = repeat, .who = who, .quiet = quiet, .ctx = &s,
                                      .have = settings_have, .step = settings_step, .label = settings_label});
}

int sd_bench_setting_rerun(const sd_run_view *p, long repeat, double host_wait_s, int quiet, json_t **doc) {
    *doc = NULL;
    char *argv[MAX_ARGS], script[PATH_MAX], self[PATH_MAX];
    const char *env[MAX_ARGS];
    SD_TRY(command_of(p, argv, env, script, self));
    const cmd_out *got = NULL;
    int rc = outputs(argv, env, repeat, host_wait_s, p->rerun_script, quiet, &got);
    if (rc) return rc;
    double *train = calloc((size_t)repeat, sizeof *train), *infer = calloc((size_t)repeat, sizeof *infer);
    double *speeds = calloc((size_t)repeat, sizeof *speeds);
    long long *peak = calloc((size_t)repeat, sizeof *peak);
    char *out = NULL;
    char version[64] = "";
    int nt = 0, ni = 0, nspeed = 0;
    if (!train || !infer || !speeds || !peak) rc = sd_err(SD_ENOMEM, "out of memory");
    for (long r = 0; rc == 0 && r < repeat; r++) {
        if (isfinite(got->speeds[r])) speeds[nspeed++] = got->speeds[r];
        free(out);
        if (!(out = strdup(got->outs[r]))) { rc = sd_err(SD_ENOMEM, "out of memory"); break; }
        json_t *line = line_of(out, p->setting);
        if (!line) { rc = sd_err(SD_ERROR, "%s printed no figure for setting %s", p->rerun_script, p->setting); break; }
        const char *err = json_string_value(json_object_get(line, "error"));
        if (err) rc = sd_err(SD_ERROR, "setting %s failed: %s", p->setting, err);
        double t = fastest_rate(line, "train"), i = fastest_rate(line, "infer");
        if (isfinite(t)) train[nt++] = t;
        if (isfinite(i)) infer[ni++] = i;
        double mib = json_number_value(json_object_get(line, "peak_rss_mib"));
        peak[r] = mib > 0 ? (long long)(mib * 1048576) : 0;
        const char *v = json_string_value(json_object_get(line, "version"));
        if (!v) v = json_string_value(json_object_get(line, "torch"));
        if (v) snprintf(version, sizeof version, "%s", v);
        json_decref(line);
    }
    /* the median, not the lowest: the figure published is the median of the processes', so one process in a spell
     * does not move it (the lowest of a run's six canaries read below 90% on 35 of a report's 41 best settings) */
    const double speed = nspeed ? sd_median_inplace(speeds, nspeed) : NAN;
    if (rc == 0) {
        *doc = sd_results_new();
        sd_setting_run s = {.workload = json_string_value(p->workload), .implementation = json_string_value(p->implementation),
                            .python = p->rerun_python, .version = version, .published = p,
                            .train = sd_stat_of(train, nt), .infer = sd_stat_of(infer, ni), .peak_rss_bytes = peak,
                            .nrepeats = (int)repeat};
        if (!*doc || sd_results_add_setting_run(*doc, &s) != 0) {
            json_decref(*doc);
            *doc = NULL;
            rc = sd_err(SD_ENOMEM, "out of memory");
        } else if (isfinite(speed)) {
            sd_results_note_host(*doc, 0, speed);
        }
    }
    free(train);
    free(infer);
    free(speeds);
    free(peak);
    free(out);
    return rc;
}

/* The phases of run's summary that m measured take m's figures; the rest stay as they were. */
static void adopt(json_t *run, const json_t *m) {
    json_t *sum = json_object_get(run, "summary");
    const json_t *msum = json_object_get(m, "summary");
    const char *k;
    json_t *v;
    json_object_foreach(sum, k, v) {
        json_t *mv = json_object_get(msum, k);
        if (mv) json_object_set(sum, k, mv);
    }
    json_object_set(run, "samples", json_object_get(m, "samples"));
    json_object_set(run, "backend_env", json_object_get(m, "backend_env"));
    json_t *speed = json_object_get(m, "host_speed");
    if (speed) json_object_set(run, "host_speed", speed);
    else json_object_del(run, "host_speed");
}

static int is_best(const json_t *run) {
    const char *src = json_string_value(json_object_get(run, "source"));
    return src && strcmp(src, "bench-cpu") == 0 && json_object_get(run, "rerun");
}

static double host_speed_of(const json_t *run) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    return v.host_speed;
}

static double spread_of(const json_t *run) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    return sd_run_judged_spread_pct(&v);
}

/* Measured again after the others: a run from a slow spell, or whose processes disagree by more than verify's
 * tolerance (a reader's rerun could not reproduce its median). */
static int again_slow(const json_t *run) { return is_best(run) && host_speed_of(run) < SD_HOST_SLOW; }
static int again_wide(const json_t *run) { return is_best(run) && spread_of(run) > SD_VERIFY_TOLERANCE_PCT; }

enum pass { FIRST, AGAIN_SLOW, AGAIN_WIDE };

/* One best run's figure from its command's processes (sd_bench_settings_rounds ran them) and adopted; measured
 * again: only when its host ran faster than the first time (a slow spell), or its processes agree better than the
 * first time's and the host ran no slower (a wide spread). */
static int publish_one(json_t *run, long repeat, double host_wait_s, int quiet, enum pass pass, int *kept) {
    sd_run_view v;
    sd_run_view_of(run, &v);
    char what[160];
    snprintf(what, sizeof what, "%s/%s setting %s", json_string_value(v.workload), json_string_value(v.implementation),
             v.setting ? v.setting : "?");
    json_t *m = NULL;
    const double first = host_speed_of(run), spread = spread_of(run);
    int rc = sd_bench_setting_rerun(&v, repeat, host_wait_s, quiet, &m);
    if (rc == SD_EINTR) return rc;
    if (rc) {   /* the figure it has stays: the choosing pass's (n 1), or the first pass's */
        fprintf(stderr, "bench: %s: kept the figure %s: %s\n", what,
                pass != FIRST ? "of the first measurement" : "of the pass that chose it", sd_errmsg());
        *kept += pass == FIRST;
        return 0;
    }
    const json_t *mr = sd_results_run(m, 0);
    const double now = host_speed_of(mr), spread_now = spread_of(mr);
    const int take = pass == FIRST || (pass == AGAIN_SLOW && now > first) ||
                     (pass == AGAIN_WIDE && sd_host_steadier(spread_now, spread, now, first));
    if (take) adopt(run, mr);
    if (pass == AGAIN_SLOW && !quiet)
        fprintf(stderr, "bench: %s: host at %.0f%% (first %.0f%%): %s\n", what, 100 * now, 100 * first,
                take ? "this measurement published" : "the first kept");
    if (pass == AGAIN_WIDE && !quiet)
        fprintf(stderr, "bench: %s: spread %.1f%% (first %.1f%%), host at %.0f%%: %s\n", what, spread_now, spread,
                100 * now, take ? "this measurement published" : "the first kept");
    json_decref(m);
    return 0;
}

static size_t picked(const json_t *doc, int (*pick)(const json_t *)) {
    size_t i, n = 0;
    json_t *run;
    sd_results_foreach(doc, i, run) n += pick(run) != 0;
    return n;
}

/* The runs that pick(): their commands' processes in rounds over all of them, then each run's figure from them. */
static int measure(json_t *doc, long repeat, double host_wait_s, int quiet, enum pass pass, int (*pick)(const json_t *),
                   int *kept) {
    size_t i, todo = picked(doc, pick);
    json_t *run;
    if (!todo) return 0;
    sd_run_view *views = calloc(todo, sizeof *views);
    if (!views) return sd_err(SD_ENOMEM, "out of memory");
    size_t k = 0;
    sd_results_foreach(doc, i, run) if (pick(run)) sd_run_view_of(run, &views[k++]);
    journal_pass = (int)pass;
    int rc = journal_take((int)pass);
    if (rc == 0) rc = sd_bench_settings_rounds(views, k, repeat, host_wait_s, quiet, "bench");
    free(views);   /* publish_one adopts figures into the runs the views point into */
    sd_results_foreach(doc, i, run) {
        if (rc) break;
        if (pick(run)) rc = publish_one(run, repeat, host_wait_s, quiet, pass, kept);
    }
    return rc;
}

/* The second pass over the runs that pick(): measured once more with a longer wait for a quiet host. */
static int again(json_t *doc, long repeat, double host_wait_s, int quiet, enum pass pass, int (*pick)(const json_t *),
                 int *kept) {
    const size_t todo = picked(doc, pick);
    if (!todo) return 0;
    if (!quiet)
        fprintf(stderr, pass == AGAIN_SLOW ? "bench: %zu best setting(s) ran while this host was slow: measuring them "
                                             "again\n"
                                           : "bench: %zu best setting(s) spread wider than verify's tolerance over "
                                             "their processes: measuring them again\n", todo);
    sd_host_budget_renew();
    sd_bench_setting_forget();
    return measure(doc, repeat, host_wait_s * SD_HOST_AGAIN_WAIT, quiet, pass, pick, kept);
}

int sd_bench_settings_publish(json_t *doc, long repeat, double host_wait_s, int quiet, const char *journal_of,
                              int *kept) {
    *kept = 0;
    journal_open(journal_of, doc, repeat, quiet);
    int rc = measure(doc, repeat, host_wait_s, quiet, FIRST, is_best, kept);
    if (rc == 0 && host_wait_s > 0) rc = again(doc, repeat, host_wait_s, quiet, AGAIN_SLOW, again_slow, kept);
    if (rc == 0 && host_wait_s > 0) rc = again(doc, repeat, host_wait_s, quiet, AGAIN_WIDE, again_wide, kept);
    sd_bench_setting_forget();
    journal_close();
    return rc;
}
