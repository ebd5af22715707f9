/* omp_policy — OpenMP's wait policy of this process (core/omp_policy.h). Spinning is faster on an idle machine and
 * much slower beside another busy process, so showdown looks before it starts. For passive we set OMP_WAIT_POLICY
 * and re-execute once, then remove it again so that child processes see the user's environment; SHOWDOWN_OMP_POLICY
 * carries the choice, with its reason, to the re-executed image and to the results' fingerprint. */
#include "core/omp_policy.h"
#include "core/err.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define OMP_POLICY_ENV "SHOWDOWN_OMP_POLICY"
#define SET_MARK "set:"   /* the note of an image re-executed under the policy it names */
#define FROM_ENV " (from the environment)"   /* the note's end when the user set the policy */

static char **g_argv;

/* /proc, or SHOWDOWN_PROC: a tree a test writes, to check what counts as a competing task */
static const char *proc_root(void) {
    const char *r = getenv("SHOWDOWN_PROC");
    return r && r[0] ? r : "/proc";
}

/* 1 if the task whose stat file is at path is runnable and competes at a weight near ours: not SCHED_IDLE, not niced
 * by 10 or more. Beside such a low-priority task spinning costs it, not us, and passive made us wait on it at every
 * barrier: mnist_hrnn's native training ran at 132 img/s beside a SCHED_IDLE test run, 506 alone. */
static int task_competes(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;   /* gone */
    char buf[1024];
    const size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    char *p = strrchr(buf, ')'), *save = NULL;   /* the command name may hold spaces and parentheses */
    if (!p) return 0;
    char state = 0;
    long nice = 0, policy = 0;
    int idx = 0;   /* fields after the name: state is field 3 of proc(5), nice 19, policy 41 */
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save), idx++) {
        if (idx == 0) state = tok[0];
        else if (idx == 16) nice = strtol(tok, NULL, 10);
        else if (idx == 38) { policy = strtol(tok, NULL, 10); break; }
    }
    return idx == 38 && state == 'R' && policy != 5 /* SCHED_IDLE */ && nice < 10;
}

/* Runnable tasks of other processes that compete with this one (task_competes), each thread counted; -1 when /proc
 * cannot be read. */
static int competing_now(void) {
    const char *root = proc_root();
    DIR *d = opendir(root);
    if (!d) return -1;
    const long self = (long)getpid();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        const long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%ld/task", root, pid);
        DIR *t = opendir(path);
        if (!t) continue;
        struct dirent *te;
        while ((te = readdir(t)))
            if (te->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%ld/task/%.32s/stat", root, pid, te->d_name);
                n += task_competes(path);
            }
        closedir(t);
    }
    closedir(d);
    return n;
}

/* Other runnable tasks in one look at /proc/stat's procs_running, less this process; -1 when unreadable. When there
 * are some, those that compete (competing_now). */
static int runnable_now(void) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/stat", proc_root());
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    int r = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "procs_running ", 14) != 0) continue;
        char *end;
        long v = strtol(line + 14, &end, 10);
        if (end != line + 14 && v >= 0 && v < 1000000) r = v > 0 ? (int)v - 1 : 0;
        break;
    }
    fclose(f);
    return r > 0 ? competing_now() : r;
}

/* The median of n looks gap_us apart; -1 when one was unreadable. */
static int runnable_median(int n, useconds_t gap_us) {
    int v[32];
    if (n > 32) n = 32;
    for (int k = 0; k < n; k++) {
        if (k) usleep(gap_us);
        if ((v[k] = runnable_now()) < 0) return -1;
    }
    for (int i = 1; i < n; i++)   /* insertion sort of a few */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) { int t = v[j]; v[j] = v[j - 1]; v[j - 1] = t; }
    return v[n / 2];
}

/* Other runnable tasks: five looks over 16 ms, and when they see some, fifteen more over 0.3 s. A task that ran for
 * a moment as showdown started (a shell command, a process exiting) must not set the policy of a whole measurement:
 * a rerun an hour later would start beside nothing and run up to 1.7x faster or slower. */
static int other_runnable(void) {
    const int quick = runnable_median(5, 4000);
    return quick <= 0 ? quick : runnable_median(15, 20000);
}

/* Re-execute under the policy of note (SET_MARK + kind + ": " + reason); returns only on failure. */
static int reexec(const char *note, const char *omp, const char *spin) {
    if (!g_argv) return sd_err(SD_ERROR, "cannot re-execute for the OpenMP wait policy: no arguments kept");
    if (setenv(OMP_POLICY_ENV, note, 1) != 0 ||
        (omp ? setenv("OMP_WAIT_POLICY", omp, 1) : unsetenv("OMP_WAIT_POLICY")) != 0 ||
        (spin ? setenv("GOMP_SPINCOUNT", spin, 1) : unsetenv("GOMP_SPINCOUNT")) != 0)
        return sd_err(SD_ERROR, "cannot set the OpenMP wait policy: %s", strerror(errno));
    fflush(NULL);   /* what was printed before: execv drops buffers */
    execv("/proc/self/exe", g_argv);
    return sd_err(SD_ERROR, "re-executing for the OpenMP wait policy failed: %s", strerror(errno));
}

void sd_omp_policy_init(char **argv) {
    char note[256];
    g_argv = argv;
    const char *set = getenv(OMP_POLICY_ENV);
    if (set && strncmp(set, SET_MARK, strlen(SET_MARK)) == 0) {   /* the re-executed image: libgomp has read it */
        unsetenv("OMP_WAIT_POLICY");
        unsetenv("GOMP_SPINCOUNT");
        snprintf(note, sizeof note, "%s", set + strlen(SET_MARK));
        setenv(OMP_POLICY_ENV, note, 1);
        return;
    }
    const char *user = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    if (user || spin) {
        snprintf(note, sizeof note, "%s%s%s%s%s" FROM_ENV, user ? "OMP_WAIT_POLICY=" : "",
                 user ? user : "", user && spin ? " " : "", spin ? "GOMP_SPINCOUNT=" : "", spin ? spin : "");
        setenv(OMP_POLICY_ENV, note, 1);
        return;
    }
    int others = other_runnable();
    if (others <= 0) {
        setenv(OMP_POLICY_ENV, others == 0 ? "spin (libgomp default): no other runnable task when showdown started"
                                           : "spin (libgomp default): /proc/stat unreadable", 1);
        return;
    }
    snprintf(note, sizeof note, SET_MARK "passive: %d other runnable task%s when showdown started", others,
             others == 1 ? "" : "s");
    reexec(note, "passive", NULL);   /* returns only on failure: run on as we are */
    sd_err_clear();
    unsetenv("OMP_WAIT_POLICY");
    setenv(OMP_POLICY_ENV, "spin (libgomp default): re-executing for passive failed", 1);
}

const char *sd_omp_policy_note(void) {
    const char *n = getenv(OMP_POLICY_ENV);
    return n && n[0] ? n : "unknown";
}

int sd_omp_policy_kind(const char *note, char *kind, size_t n) {
    if (!note || !note[0] || strcmp(note, "unknown") == 0 || n == 0) return 0;
    if (strncmp(note, SET_MARK, strlen(SET_MARK)) == 0) note += strlen(SET_MARK);
    const char *env = strstr(note, FROM_ENV);
    size_t len = env ? (size_t)(env - note) : strcspn(note, ":(");
    while (len > 0 && isspace((unsigned char)note[len - 1])) len--;
    if (len == 0) return 0;
    snprintf(kind, n, "%.*s", (int)len, note);
    if (strcasecmp(kind, "OMP_WAIT_POLICY=passive") == 0) snprintf(kind, n, "passive");   /* what showdown sets */
    return 1;
}

int sd_omp_policy_adopt(const char *kind, const char *why) {
    char here[128], note[256], omp[64] = "", spin[64] = "";
    const char *cur = sd_omp_policy_note();
    if (sd_omp_policy_kind(cur, here, sizeof here) && strcmp(here, kind) == 0) return 0;
    if (strstr(cur, FROM_ENV) || strstr(cur, why)) return 0;
    if (strcmp(kind, "passive") == 0) {
        snprintf(omp, sizeof omp, "passive");
    } else if (strcmp(kind, "spin") != 0) {   /* a user's settings, "OMP_WAIT_POLICY=X GOMP_SPINCOUNT=Y" */
        const char *p = strstr(kind, "OMP_WAIT_POLICY="), *s = strstr(kind, "GOMP_SPINCOUNT=");
        if (p) snprintf(omp, sizeof omp, "%.*s", (int)strcspn(p + 16, " "), p + 16);
        if (s) snprintf(spin, sizeof spin, "%.*s", (int)strcspn(s + 15, " "), s + 15);
        if (!omp[0] && !spin[0]) return sd_err(SD_EINPUT, "unknown OpenMP wait policy '%s'", kind);
    }
    snprintf(note, sizeof note, SET_MARK "%s: %s", kind, why);
    return reexec(note, omp[0] ? omp : NULL, spin[0] ? spin : NULL);
}
