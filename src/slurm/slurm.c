/* slurm — bench matrices as Slurm job arrays: the results directory (manifest, batch script, per-cell
 * results and logs), sbatch submission and resubmission, task states (sacct, else scontrol, else the files)
 * and the merge of the cells into one run. Slurm commands are run as child processes (never a shell). */
#include "slurm/slurm.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "db/db.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_CELLS 4096
#define OUT_MAX (4u << 20)

/* ---- child processes --------------------------------------------------------------------------- */

/* Run argv (PATH lookup), stdout into *out (NUL-terminated, caller frees), stderr into *err (may be NULL:
 * discarded). *code: exit status (127: could not run). */
static int run_capture(char *const argv[], char **out, char **err, int *code) {
    *out = NULL;
    if (err) *err = NULL;
    FILE *ef = tmpfile();
    sd_proc_opts po = {.argv = argv, .path_lookup = 1, .out = SD_PROC_PIPE, .err = ef ? fileno(ef) : SD_PROC_NULL};
    sd_proc p;
    int rc = sd_proc_spawn(&p, &po);
    if (rc == SD_ENODEV) {   /* as a shell would say it: exit 127 and the reason on stderr */
        if (ef) fprintf(ef, "cannot run %s: %s\n", argv[0], strerror(p.exec_errno));
        *code = 127;
        rc = 0;
    } else if (rc) {
        if (ef) fclose(ef);
        return rc;
    } else {
        fcntl(p.out, F_SETFL, 0);   /* read to the end, blocking */
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (; p.out >= 0;) {
        if (!buf) { rc = sd_err(SD_ENOMEM, "out of memory"); break; }
        if (len + 1 >= cap) {
            if (cap >= OUT_MAX) break;   /* bounded: the rest is drained below */
            char *nb = realloc(buf, cap * 2);
            if (!nb) { free(buf); buf = NULL; continue; }
            buf = nb;
            cap *= 2;
        }
        ssize_t k = read(p.out, buf + len, cap - len - 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        len += (size_t)k;
    }
    char drain[4096];
    while (p.out >= 0 && read(p.out, drain, sizeof drain) > 0) {}
    if (p.pid > 0) {
        int k = sd_proc_wait(&p, -1);
        if (k < 0 && rc == 0) rc = k;
        *code = sd_proc_exit_code(p.status);
    }
    sd_proc_end(&p, 0);
    if (buf) buf[len] = 0;
    if (ef && err && rc == 0) {
        fflush(ef);
        long n = ftell(ef);
        if (n > 0 && n < 65536) {
            *err = calloc((size_t)n + 1, 1);
            rewind(ef);
            if (*err && fread(*err, 1, (size_t)n, ef) != (size_t)n) (*err)[0] = 0;
        }
    }
    if (ef) fclose(ef);
    if (rc) { free(buf); return rc; }
    *out = buf;
    return 0;
}

/* The first line of s, trimmed, into buf. */
static void first_line(const char *s, char *buf, size_t n) {
    buf[0] = 0;
    if (!s) return;
    while (*s == ' ' || *s == '\n') s++;
    size_t l = strcspn(s, "\n");
    snprintf(buf, n, "%.*s", (int)l, s);
}

/* ---- the results directory --------------------------------------------------------------------- */

static void path_in(char *buf, size_t n, const char *dir, const char *rel) { snprintf(buf, n, "%s/%s", dir, rel); }

static void cell_results_path(char *buf, size_t n, const char *dir, int i) {
    snprintf(buf, n, "%s/cells/cell-%d.json", dir, i);
}

static void cell_log_path(char *buf, size_t n, const char *dir, int i, const char *job) {
    snprintf(buf, n, "%s/logs/cell-%d-%s.log", dir, i, job);
}

static int load_manifest(const char *dir, json_t **out) {
    char p[PATH_MAX];
    path_in(p, sizeof p, dir, "manifest.json");
    json_error_t je;
    json_t *m = json_load_file(p, 0, &je);
    if (!m) {
        struct stat sb;
        if (stat(p, &sb) != 0)
            return sd_err(SD_EINPUT, "%s: no manifest (is %s a directory written by bench --executor slurm?)", p, dir);
        return sd_err(SD_EINPUT, "%s:%d:%d: %s", p, je.line, je.column, je.text);
    }
    const char *schema = json_string_value(json_object_get(m, "schema"));
    json_t *cells = json_object_get(m, "cells");
    if (!schema || strcmp(schema, SD_SLURM_MANIFEST_SCHEMA) != 0 || !json_is_array(cells) ||
        json_array_size(cells) == 0 || json_array_size(cells) > MAX_CELLS ||
        !json_is_array(json_object_get(m, "submissions"))) {
        json_decref(m);
        return sd_err(SD_EINPUT, "%s: not a %s manifest (schema, cells, submissions)", p, SD_SLURM_MANIFEST_SCHEMA);
    }
    *out = m;
    return 0;
}

static int save_manifest(const char *dir, const json_t *m) {
    char p[PATH_MAX];
    path_in(p, sizeof p, dir, "manifest.json");
    return sd_json_write_atomic(m, p);
}

/* Append s to buf single-quoted for sh. */
static void sh_quote(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t need = *len + 4 * strlen(s) + 4;
    if (need > *cap) {
        size_t nc = need * 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return;
        *buf = nb;
        *cap = nc;
    }
    char *o = *buf + *len;
    *o++ = '\'';
    for (; *s; s++) {
        if (*s == '\'') { memcpy(o, "'\\''", 4); o += 4; }
        else *o++ = *s;
    }
    *o++ = '\'';
    *o = 0;
    *len = (size_t)(o - *buf);
}

static void append(char **buf, size_t *len, size_t *cap, const char *s) {
    size_t l = strlen(s);
    if (*len + l + 1 > *cap) {
        size_t nc = (*len + l + 1) * 2;
        char *nb = realloc(*buf, nc);
        if (!nb) return;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, s, l + 1);
    *len += l;
}

/* job.sh: one case per cell; the task's index picks the cell. */
static int write_script(const char *dir, const json_t *m) {
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    SD_ALLOC_CHECK(s);
    s[0] = 0;
    append(&s, &len, &cap, "#!/bin/sh\n# Generated by showdown bench --executor slurm: one array task per cell of manifest.json.\n"
                           "# Each task runs showdown bench for its cell and writes cells/cell-INDEX.json.\ncd ");
    sh_quote(&s, &len, &cap, json_string_value(json_object_get(m, "cwd")));
    append(&s, &len, &cap, " || exit 1\ncase \"$SLURM_ARRAY_TASK_ID\" in\n");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(m, "cells"), i, c) {
        char num[32];
        snprintf(num, sizeof num, "  %zu) set -- --workload ", i);
        append(&s, &len, &cap, num);
        sh_quote(&s, &len, &cap, json_string_value(json_object_get(c, "workload")));
        append(&s, &len, &cap, " --impl ");
        sh_quote(&s, &len, &cap, json_string_value(json_object_get(c, "implementation")));
        const char *impl = json_string_value(json_object_get(c, "implementation"));
        append(&s, &len, &cap, strcmp(impl, "native") == 0 ? " --backend " : " --device ");
        sh_quote(&s, &len, &cap, json_string_value(json_object_get(c, "backend")));
        append(&s, &len, &cap, " ;;\n");
    }
    append(&s, &len, &cap, "  *) echo \"showdown: no cell '$SLURM_ARRAY_TASK_ID' in this array\" >&2; exit 2 ;;\nesac\n"
                           "echo \"showdown: cell $SLURM_ARRAY_TASK_ID (job ${SLURM_ARRAY_JOB_ID}_$SLURM_ARRAY_TASK_ID) on "
                           "$(hostname)\" >&2\nexec ");
    sh_quote(&s, &len, &cap, json_string_value(json_object_get(m, "showdown")));
    append(&s, &len, &cap, " bench \"$@\" --no-db --json ");
    sh_quote(&s, &len, &cap, dir);
    append(&s, &len, &cap, "/cells/cell-\"$SLURM_ARRAY_TASK_ID\".json");
    json_t *a;
    json_array_foreach(json_object_get(m, "common_args"), i, a) {
        append(&s, &len, &cap, " ");
        sh_quote(&s, &len, &cap, json_string_value(a));
    }
    append(&s, &len, &cap, "\n");
    char p[PATH_MAX];
    path_in(p, sizeof p, dir, "job.sh");
    int rc = sd_write_file_atomic(p, s, len);
    free(s);
    if (rc == 0 && chmod(p, 0755) != 0) rc = sd_err(SD_EIO, "chmod %s: %s", p, strerror(errno));
    return rc;
}

/* "0-3" style, or "0,2,5" when the list has gaps. */
static void array_spec(const int *idx, int n, char *buf, size_t len) {
    int contiguous = 1;
    for (int i = 1; i < n; i++) if (idx[i] != idx[i - 1] + 1) contiguous = 0;
    if (contiguous && n > 1) { snprintf(buf, len, "%d-%d", idx[0], idx[n - 1]); return; }
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < n && o < len; i++) o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", idx[i]);
}

/* sbatch --parsable the directory's job.sh for cells idx; records the submission in the manifest. */
static int submit_cells(const char *dir, json_t *m, const int *idx, int n, int quiet) {
    const json_t *sb = json_object_get(m, "sbatch");
    char array[8192], output[PATH_MAX + 32], script[PATH_MAX], jobname[64];
    array_spec(idx, n, array, sizeof array);
    snprintf(output, sizeof output, "--output=%s/logs/cell-%%a-%%A.log", dir);
    path_in(script, sizeof script, dir, "job.sh");
    snprintf(jobname, sizeof jobname, "--job-name=showdown");
    char arrayopt[8200], opt[4][300];
    snprintf(arrayopt, sizeof arrayopt, "--array=%s", array);
    char *argv[16];
    int k = 0;
    argv[k++] = "sbatch";
    argv[k++] = "--parsable";
    argv[k++] = jobname;
    argv[k++] = arrayopt;
    argv[k++] = output;
    static const char *const keys[] = {"partition", "gres", "constraint", "time"};
    for (int i = 0; i < 4; i++) {
        const char *v = json_string_value(json_object_get(sb, keys[i]));
        if (!v) continue;
        snprintf(opt[i], sizeof opt[i], "--%s=%s", keys[i], v);
        argv[k++] = opt[i];
    }
    argv[k++] = script;
    argv[k] = NULL;
    char *out = NULL, *err = NULL;
    int code = 0;
    SD_TRY(run_capture(argv, &out, &err, &code));
    char jid[64], why[512];
    first_line(out, jid, sizeof jid);
    jid[strcspn(jid, ";")] = 0;   /* "ID;cluster" on federations */
    first_line(err, why, sizeof why);
    free(out);
    free(err);
    char *end = NULL;
    long id = strtol(jid, &end, 10);
    if (code != 0 || end == jid || *end || id <= 0) {
        if (code == 127) return sd_err(SD_ENODEV, "sbatch is not installed here (Slurm's client commands are needed)");
        return sd_err(SD_ERROR, "sbatch exited %d%s%s", code, why[0] ? ": " : "", why[0] ? why : "(no message)");
    }
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *cl = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(cl, json_integer(idx[i]));
    json_array_append_new(json_object_get(m, "submissions"),
                          json_pack("{s:s,s:s,s:o,s:s}", "job_id", jid, "submitted", when, "cells", cl, "array", array));
    SD_TRY(save_manifest(dir, m));
    if (!quiet) fprintf(stderr, "submitted job array %s (%d task%s, --array=%s); results in %s\n", jid, n,
                        n == 1 ? "" : "s", array, dir);
    printf("%s\n", jid);
    return 0;
}

static int make_dirs(const char *dir) {
    char p[PATH_MAX];
    SD_TRY(sd_mkdir_p(dir, 0));
    path_in(p, sizeof p, dir, "cells");
    SD_TRY(sd_mkdir_p(p, 0));
    path_in(p, sizeof p, dir, "logs");
    return sd_mkdir_p(p, 0);
}

int sd_slurm_submit(const sd_slurm_opts *o, const sd_slurm_cell *cells, int ncells, char *const *common,
                    int ncommon, char *dir_out, size_t dir_len) {
    if (ncells < 1 || ncells > MAX_CELLS) return sd_err(SD_ELIMIT, "a job array of %d cells (1..%d)", ncells, MAX_CELLS);
    char dflt[PATH_MAX], dir[PATH_MAX], cwd[PATH_MAX], exe[PATH_MAX];
    const char *want = o->dir;
    if (!want) {
        char when[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
        snprintf(dflt, sizeof dflt, "out/slurm/run-%s", when);
        want = dflt;
    }
    SD_TRY(make_dirs(want));
    char mp[PATH_MAX];
    path_in(mp, sizeof mp, want, "manifest.json");
    if (access(mp, F_OK) == 0)
        return sd_err(SD_EUSAGE, "%s already holds a matrix (manifest.json); give a new --results-dir, or --resubmit %s",
                      want, want);
    if (!realpath(want, dir)) return sd_err(SD_EIO, "%s: %s", want, strerror(errno));
    if (!getcwd(cwd, sizeof cwd)) return sd_err(SD_EIO, "getcwd: %s", strerror(errno));
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return sd_err(SD_ERROR, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
    exe[k] = 0;
    json_t *cl = json_array(), *args = json_array();
    for (int i = 0; i < ncells; i++)
        json_array_append_new(cl, json_pack("{s:i,s:s,s:s,s:s}", "index", i, "workload", cells[i].workload,
                                            "implementation", cells[i].implementation, "backend", cells[i].backend));
    for (int i = 0; i < ncommon; i++) json_array_append_new(args, json_string(common[i]));
    json_t *sb = json_object();
    if (o->partition) json_object_set_new(sb, "partition", json_string(o->partition));
    if (o->gres) json_object_set_new(sb, "gres", json_string(o->gres));
    if (o->constraint) json_object_set_new(sb, "constraint", json_string(o->constraint));
    if (o->time) json_object_set_new(sb, "time", json_string(o->time));
    json_t *m = json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:[]}", "schema", SD_SLURM_MANIFEST_SCHEMA, "showdown", exe,
                          "cwd", cwd, "dir", dir, "common_args", args, "sbatch", sb, "cells", cl, "submissions");
    if (!m) return sd_err(SD_ENOMEM, "out of memory");
    int rc = save_manifest(dir, m);
    if (rc == 0) rc = write_script(dir, m);
    int *idx = malloc(sizeof(int) * (size_t)ncells);
    if (!idx && rc == 0) rc = sd_err(SD_ENOMEM, "out of memory");
    for (int i = 0; idx && i < ncells; i++) idx[i] = i;
    if (rc == 0) rc = submit_cells(dir, m, idx, ncells, o->quiet);
    free(idx);
    json_decref(m);
    if (rc == 0 && dir_out) snprintf(dir_out, dir_len, "%s", dir);
    return rc;
}

int sd_slurm_parse_cells(const char *list, int limit, int *idx, int max) {
    int n = 0;
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10), b;
        if (end == p || errno) return sd_err(SD_EUSAGE, "--cells: expected a cell index at '%s'", p);
        b = a;
        p = end;
        if (*p == '-') {
            p++;
            b = strtol(p, &end, 10);
            if (end == p || errno) return sd_err(SD_EUSAGE, "--cells: expected the end of a range at '%s'", p);
            p = end;
        }
        if (a < 0 || b < a || b >= limit)
            return sd_err(SD_EUSAGE, "--cells: %ld-%ld is outside the matrix's cells 0-%d", a, b, limit - 1);
        for (long i = a; i <= b; i++) {
            int dup = 0;
            for (int j = 0; j < n; j++) dup |= idx[j] == i;
            if (dup) continue;
            if (n >= max) return sd_err(SD_ELIMIT, "--cells: more than %d cells", max);
            idx[n++] = (int)i;
        }
        if (*p == ',') p++;
        else if (*p) return sd_err(SD_EUSAGE, "--cells: unexpected '%c' (expected e.g. 2,3 or 0-2)", *p);
    }
    if (n == 0) return sd_err(SD_EUSAGE, "--cells needs at least one index");
    for (int i = 1; i < n; i++)   /* sorted, for the array spec */
        for (int j = i; j > 0 && idx[j - 1] > idx[j]; j--) { int t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t; }
    return n;
}

/* ---- task states --------------------------------------------------------------------------------- */

typedef struct cell_info {
    char job[32];          /* array job id of the cell's latest submission */
    char sched[32];        /* scheduler state ("COMPLETED", "TIMEOUT", ...) or "" when unknown */
    char exitcode[16];
    char state[16];        /* ok, failed, timeout, cancelled, missing, pending, running */
    char detail[512];
    char host[64];
    json_t *doc;           /* the cell's results file, or NULL */
} cell_info;

static int active(const char *sched) {
    static const char *const a[] = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED",
                                    "RESIZING", "REQUEUE_HOLD", "REQUEUE_FED", "SIGNALING", "STAGE_OUT", NULL};
    for (int i = 0; a[i]; i++) if (strcmp(sched, a[i]) == 0) return 1;
    return 0;
}

/* Set the scheduler state of task t of job j (only for cells whose latest job is j). */
static void set_sched(cell_info *ci, int n, const char *job, long t, const char *state, const char *ec) {
    if (t < 0 || t >= n || strcmp(ci[t].job, job) != 0) return;
    snprintf(ci[t].sched, sizeof ci[t].sched, "%.*s", (int)strcspn(state, " +"), state);
    if (ec) snprintf(ci[t].exitcode, sizeof ci[t].exitcode, "%s", ec);
}

/* Task ids "3", "2-3", "0-7%2", "1,4-5" (pending arrays not yet split) */
static void set_sched_range(cell_info *ci, int n, const char *job, const char *tasks, const char *state, const char *ec) {
    const char *p = tasks;
    if (*p == '[') p++;
    while (*p && *p != ']' && *p != '%') {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p) return;
        b = a;
        p = end;
        if (*p == '-') { b = strtol(p + 1, &end, 10); if (end == p + 1) return; p = end; }
        for (long t = a; t <= b && t < n; t++) set_sched(ci, n, job, t, state, ec);
        if (*p == ',') p++;
        else break;
    }
}

/* Run a scheduler query and pass each line of its output to line_fn (1: the line named a task). Returns 1
 * if the command ran, exited 0 and at least one line named a task. */
static int each_line(char *const argv[], cell_info *ci, int n, int (*line_fn)(cell_info *ci, int n, char *line)) {
    char *out = NULL;
    int code = 0;
    if (run_capture(argv, &out, NULL, &code) != 0) return 0;
    int any = 0;
    if (code == 0) {
        for (char *line = out, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next) *next++ = 0;
            any |= line_fn(ci, n, line);
        }
    }
    free(out);
    return any;
}

/* sacct -P line "JOB_TASK|STATE|EXIT". */
static int sacct_line(cell_info *ci, int n, char *line) {
    char *f1 = strchr(line, '|'), *f2 = f1 ? strchr(f1 + 1, '|') : NULL;
    char *us = strchr(line, '_');
    if (!f1 || !f2 || !us || us > f1) return 0;
    *f1 = *f2 = *us = 0;
    set_sched_range(ci, n, line, us + 1, f1 + 1, f2 + 1);
    return 1;
}

/* Returns 1 if sacct answered. */
static int states_sacct(cell_info *ci, int n, const char *jobs) {
    char *argv[] = {"sacct", "-n", "-P", "-X", "-o", "JobID,State,ExitCode", "-j", (char *)jobs, NULL};
    return each_line(argv, ci, n, sacct_line);
}

static const char *field(const char *line, const char *key, char *buf, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);   /* the keys read here never start a line */
    if (!p) return NULL;
    p += strlen(pat);
    size_t l = strcspn(p, " \n");
    snprintf(buf, n, "%.*s", (int)l, p);
    return buf;
}

/* scontrol -o line: one task (ArrayJobId, ArrayTaskId, JobState, ExitCode, BatchHost). */
static int scontrol_line(cell_info *ci, int n, char *line) {
    char aj[32], at[256], st[64], ec[32], nl[64];
    if (!field(line, "ArrayJobId", aj, sizeof aj) || !field(line, "ArrayTaskId", at, sizeof at) ||
        !field(line, "JobState", st, sizeof st))
        return 0;
    set_sched_range(ci, n, aj, at, st, field(line, "ExitCode", ec, sizeof ec));
    if (field(line, "BatchHost", nl, sizeof nl) && strcmp(nl, "(null)") != 0) {
        char *end;
        long t = strtol(at, &end, 10);
        if (*end == 0 && t >= 0 && t < n && strcmp(ci[t].job, aj) == 0)
            snprintf(ci[t].host, sizeof ci[t].host, "%s", nl);
    }
    return 1;
}

/* scontrol -o show job JOB: one line per task. Returns 1 if scontrol answered. */
static int states_scontrol(cell_info *ci, int n, const char *job) {
    char *argv[] = {"scontrol", "-o", "show", "job", (char *)job, NULL};
    return each_line(argv, ci, n, scontrol_line);
}

/* Latest job of every cell, then the scheduler's view. *source: "sacct", "scontrol" or "files". */
static void query_states(const json_t *m, cell_info *ci, int n, const char **source) {
    size_t i, j;
    json_t *s, *c;
    char jobs[4096] = "";
    json_array_foreach(json_object_get(m, "submissions"), i, s) {
        const char *jid = json_string_value(json_object_get(s, "job_id"));
        if (!jid) continue;
        json_array_foreach(json_object_get(s, "cells"), j, c) {
            json_int_t t = json_integer_value(c);
            if (t >= 0 && t < n) snprintf(ci[t].job, sizeof ci[t].job, "%s", jid);
        }
        size_t l = strlen(jobs);
        snprintf(jobs + l, sizeof jobs - l, "%s%s", l ? "," : "", jid);
    }
    for (int t = 0; t < n; t++) ci[t].sched[0] = ci[t].exitcode[0] = 0;
    *source = "files";
    if (!jobs[0]) return;
    if (states_sacct(ci, n, jobs)) { *source = "sacct"; return; }
    int any = 0;
    char *p = jobs;
    while (*p) {
        size_t l = strcspn(p, ",");
        char one[32];
        snprintf(one, sizeof one, "%.*s", (int)l, p);
        any |= states_scontrol(ci, n, one);
        p += l;
        if (*p) p++;
    }
    if (any) *source = "scontrol";
}

int sd_slurm_wait(const char *dir, double poll_s, int quiet) {
    json_t *m;
    SD_TRY(load_manifest(dir, &m));
    int n = (int)json_array_size(json_object_get(m, "cells"));
    cell_info *ci = calloc((size_t)n, sizeof *ci);
    if (!ci) { json_decref(m); return sd_err(SD_ENOMEM, "out of memory"); }
    if (poll_s < 0.1) poll_s = 0.1;
    int last = -1;
    for (;;) {
        const char *src;
        query_states(m, ci, n, &src);
        int busy = 0;
        for (int i = 0; i < n; i++) busy += active(ci[i].sched);
        if (!busy) break;
        if (!quiet && busy != last) fprintf(stderr, "waiting: %d of %d task(s) pending or running (%s)\n", busy, n, src);
        last = busy;
        struct timespec ts = {(time_t)poll_s, (long)((poll_s - (double)(time_t)poll_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    free(ci);
    json_decref(m);
    return 0;
}

/* The last non-empty line of a log file (the task's own error, or Slurm's "CANCELLED ... DUE TO TIME LIMIT"). */
static void log_tail(const char *path, char *buf, size_t n) {
    buf[0] = 0;
    char *text = NULL;
    size_t len = 0;
    if (sd_read_file(path, 16u << 20, &text, &len) != 0) return;   /* no log yet: no detail */
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' ')) text[--len] = 0;
    char *nl = strrchr(text, '\n');
    char *cr = strrchr(nl ? nl : text, '\r');   /* progress lines */
    const char *last = cr ? cr + 1 : nl ? nl + 1 : text;
    snprintf(buf, n, "%s", last);
    free(text);
}

/* The cell's results file and the scheduler state → ok / failed / timeout / cancelled / missing / pending /
 * running, with the reason. */
static void classify(const char *dir, int i, cell_info *c) {
    char rp[PATH_MAX], lp[PATH_MAX];
    cell_results_path(rp, sizeof rp, dir, i);
    cell_log_path(lp, sizeof lp, dir, i, c->job);
    c->doc = json_load_file(rp, 0, NULL);
    if (c->doc && !sd_results_has_runs(c->doc)) { json_decref(c->doc); c->doc = NULL; }
    if (c->doc) {
        size_t k;
        json_t *r;
        snprintf(c->state, sizeof c->state, "ok");
        sd_results_foreach(c->doc, k, r) {
            sd_run_view v;
            sd_run_view_of(r, &v);
            const char *st = json_string_value(v.status), *err = json_string_value(v.error);
            if (st && strcmp(st, "ok") == 0) continue;
            snprintf(c->state, sizeof c->state, "%s", st && strcmp(st, "unavailable") == 0 ? "unavailable" : "failed");
            snprintf(c->detail, sizeof c->detail, "%s", err ? err : "no error message");
            break;
        }
        if (sd_results_count(c->doc) == 0) {
            snprintf(c->state, sizeof c->state, "failed");
            snprintf(c->detail, sizeof c->detail, "the results file holds no run");
        }
        return;
    }
    char tail[400];
    log_tail(lp, tail, sizeof tail);
    const char *s = c->sched;
    if (strcmp(s, "PENDING") == 0 || strcmp(s, "REQUEUED") == 0 || strcmp(s, "REQUEUE_HOLD") == 0) {
        snprintf(c->state, sizeof c->state, "pending");
    } else if (active(s)) {
        snprintf(c->state, sizeof c->state, "running");
    } else if (strcmp(s, "TIMEOUT") == 0 || strcmp(s, "DEADLINE") == 0) {
        snprintf(c->state, sizeof c->state, "timeout");
    } else if (strcmp(s, "CANCELLED") == 0 || strcmp(s, "PREEMPTED") == 0) {
        snprintf(c->state, sizeof c->state, "cancelled");
    } else if (s[0] && strcmp(s, "COMPLETED") != 0) {
        snprintf(c->state, sizeof c->state, "failed");
    } else {
        snprintf(c->state, sizeof c->state, "missing");
    }
    if (strcmp(c->state, "pending") == 0 || strcmp(c->state, "running") == 0) return;
    const char *st = c->sched[0] ? c->sched : "state unknown";
    if (tail[0])
        snprintf(c->detail, sizeof c->detail, "no results file; Slurm %s%s%s; log: %s", st, c->exitcode[0] ? " exit " : "",
                 c->exitcode, tail);
    else
        snprintf(c->detail, sizeof c->detail, "no results file; Slurm %s%s%s; no log at %s", st,
                 c->exitcode[0] ? " exit " : "", c->exitcode, lp);
}

static int cell_ok(const cell_info *c) { return strcmp(c->state, "ok") == 0 || strcmp(c->state, "unavailable") == 0; }

int sd_slurm_resubmit(const sd_slurm_opts *o, const char *dir, const char *list, int *nsubmitted) {
    json_t *m;
    SD_TRY(load_manifest(dir, &m));
    int n = (int)json_array_size(json_object_get(m, "cells"));
    int *idx = calloc((size_t)n, sizeof(int));
    cell_info *ci = calloc((size_t)n, sizeof *ci);
    int rc = 0, k = 0;
    if (!idx || !ci) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    const char *src;
    query_states(m, ci, n, &src);
    for (int i = 0; i < n; i++) classify(dir, i, &ci[i]);
    if (list) {
        k = sd_slurm_parse_cells(list, n, idx, n);
        if (k < 0) { rc = k; goto done; }
    } else {
        for (int i = 0; i < n; i++) if (!cell_ok(&ci[i]) && !active(ci[i].sched)) idx[k++] = i;
        if (k == 0) {
            if (!o->quiet) fprintf(stderr, "%s: no failed, timed-out or missing cell to resubmit\n", dir);
            goto done;
        }
    }
    for (int i = 0; i < k; i++)
        if (active(ci[idx[i]].sched)) {
            rc = sd_err(SD_EBUSY, "cell %d is still %s in job %s_%d; cancel it (scancel) or wait before resubmitting",
                        idx[i], ci[idx[i]].sched, ci[idx[i]].job, idx[i]);
            goto done;
        }
    json_t *sb = json_object_get(m, "sbatch");
    if (o->partition) json_object_set_new(sb, "partition", json_string(o->partition));
    if (o->gres) json_object_set_new(sb, "gres", json_string(o->gres));
    if (o->constraint) json_object_set_new(sb, "constraint", json_string(o->constraint));
    if (o->time) json_object_set_new(sb, "time", json_string(o->time));
    for (int i = 0; i < k; i++) {   /* the previous attempt's results are kept beside, not merged */
        char rp[PATH_MAX], prev[PATH_MAX + 64];
        cell_results_path(rp, sizeof rp, dir, idx[i]);
        snprintf(prev, sizeof prev, "%s.job-%s", rp, ci[idx[i]].job[0] ? ci[idx[i]].job : "unknown");
        if (rename(rp, prev) != 0 && errno != ENOENT) {
            rc = sd_err(SD_EIO, "cannot move %s aside: %s", rp, strerror(errno));
            goto done;
        }
    }
    rc = submit_cells(dir, m, idx, k, o->quiet);
done:
    if (nsubmitted) *nsubmitted = rc == 0 ? k : 0;
    for (int i = 0; ci && i < n; i++) json_decref(ci[i].doc);
    free(ci);
    free(idx);
    json_decref(m);
    return rc;
}

/* ---- collect ------------------------------------------------------------------------------------- */

int sd_slurm_collect(const char *dir, const sd_slurm_collect_opts *o, FILE *out, int *nbad) {
    *nbad = 0;
    json_t *m;
    SD_TRY(load_manifest(dir, &m));
    int n = (int)json_array_size(json_object_get(m, "cells"));
    cell_info *ci = calloc((size_t)n, sizeof *ci);
    if (!ci) { json_decref(m); return sd_err(SD_ENOMEM, "out of memory"); }
    const char *src;
    query_states(m, ci, n, &src);
    int busy = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        classify(dir, i, &ci[i]);
        if (strcmp(ci[i].state, "pending") == 0 || strcmp(ci[i].state, "running") == 0) busy++;
        else if (!cell_ok(&ci[i])) (*nbad)++;
    }
    json_t *doc = NULL;
    db *dbh = NULL;

    fprintf(out, "cells of %s (states from %s):\n", dir, src);
    fprintf(out, "%-4s %-11s %-10s %-14s %-8s %-9s %-10s %s\n", "cell", "state", "job", "workload", "impl", "backend",
            "host", "detail");
    for (int i = 0; i < n; i++) {
        const json_t *c = json_array_get(json_object_get(m, "cells"), (size_t)i);
        char job[48];
        snprintf(job, sizeof job, "%s_%d", ci[i].job[0] ? ci[i].job : "?", i);
        const char *host = ci[i].host[0] ? ci[i].host : "-";
        sd_results_head ch;
        sd_env_view ce;
        sd_results_head_of(ci[i].doc, &ch);
        sd_env_view_of(ch.environment, &ce);
        if (ce.hostname) host = ce.hostname;
        fprintf(out, "%-4d %-11s %-10s %-14s %-8s %-9s %-10s %s\n", i, ci[i].state, job,
                json_string_value(json_object_get(c, "workload")), json_string_value(json_object_get(c, "implementation")),
                json_string_value(json_object_get(c, "backend")), host, ci[i].detail);
    }
    if (busy) {
        rc = sd_err(SD_EBUSY, "%d of %d cell(s) still pending or running; collect again when the array has ended "
                              "(or use --wait)", busy, n);
        goto done;
    }

    /* One document: the collecting host's environment at the top; each result carries its own cell's. */
    doc = sd_results_new();
    json_t *jobs = json_array();
    size_t si;
    json_t *s;
    json_array_foreach(json_object_get(m, "submissions"), si, s)
        json_array_append(jobs, json_object_get(s, "job_id"));
    json_object_set_new(doc, "slurm", json_pack("{s:s,s:o,s:s,s:i,s:i}", "dir", dir, "jobs", jobs, "states_from", src,
                                                "cells", n, "cells_not_ok", *nbad));
    for (int i = 0; i < n; i++) {
        const json_t *c = json_array_get(json_object_get(m, "cells"), (size_t)i);
        char job[48];
        snprintf(job, sizeof job, "%s_%d", ci[i].job, i);
        size_t before = sd_results_count(doc);
        if (ci[i].doc) {
            size_t k;
            json_t *r;
            sd_results_foreach(ci[i].doc, k, r) sd_results_append(doc, json_deep_copy(r));   /* annotated below */
            sd_results_head ch, dh;
            sd_env_view ce, de;
            sd_results_head_of(ci[i].doc, &ch);
            sd_results_head_of(doc, &dh);
            sd_env_view_of(ch.environment, &ce);
            sd_env_view_of(dh.environment, &de);
            const char *lk;
            json_t *lv;
            json_object_foreach((json_t *)ce.libraries, lk, lv)   /* framework versions the cells recorded */
                if (!json_object_get(de.libraries, lk)) sd_results_set_library(doc, lk, json_string_value(lv));
        } else {
            sd_results_add_status(doc, json_string_value(json_object_get(c, "workload")),
                                  json_string_value(json_object_get(c, "implementation")),
                                  json_string_value(json_object_get(c, "backend")), ci[i].state, ci[i].detail);
        }
        for (size_t k = before; k < sd_results_count(doc); k++) {   /* each run says which cell and node made it */
            json_t *r = sd_results_run(doc, k);
            json_object_set_new(r, "cell", json_integer(i));
            json_object_set_new(r, "slurm_job", json_string(job));
            sd_results_head ch;
            sd_results_head_of(ci[i].doc, &ch);
            if (ch.environment) sd_results_run_set_env(r, ch.environment);
        }
    }

    if (!o->no_db) {
        const char *path = o->db ? o->db : DB_DEFAULT_PATH;
        int64_t run_id = 0;
        SD_TRY_GOTO(rc, db_open(&dbh, path), done);
        SD_TRY_GOTO(rc, sd_results_db_begin(dbh, doc, "bench", dir, &run_id), done);
        size_t nr = sd_results_count(doc);
        SD_TRY_GOTO(rc, sd_results_store(dbh, run_id, doc, 0, 1), done);
        json_object_set_new(json_object_get(doc, "slurm"), "run_id", json_integer(run_id));
        if (!o->quiet) fprintf(stderr, "run %lld stored in %s (%zu results from %d cells)\n", (long long)run_id, path, nr, n);
    }
    char jp[PATH_MAX];
    if (o->json) snprintf(jp, sizeof jp, "%s", o->json);
    else path_in(jp, sizeof jp, dir, "merged.json");
    SD_TRY_GOTO(rc, sd_json_write_atomic(doc, jp), done);
    if (!o->quiet) fprintf(stderr, "merged results written to %s\n", jp);

    fprintf(out, "\n");
    sd_results_print_table(out, doc);
    sd_results_print_overhead(out, doc);
    if (*nbad) {
        char list[4096] = "";
        size_t l = 0;
        for (int i = 0; i < n && l < sizeof list - 16; i++)
            if (!cell_ok(&ci[i])) l += (size_t)snprintf(list + l, sizeof list - l, "%s%d", l ? "," : "", i);
        fprintf(out, "\n%d cell(s) not ok; resubmit only those with:\n  showdown bench --executor slurm --resubmit %s --cells %s\n",
                *nbad, dir, list);
    }
done:
    db_close(dbh);
    json_decref(doc);
    for (int i = 0; i < n; i++) json_decref(ci[i].doc);
    free(ci);
    json_decref(m);
    return rc;
}
