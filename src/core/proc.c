/* proc — child processes: a group led by a sentinel that takes the group down when showdown dies, the program
 * with a parent-death signal and a cleaned environment, exec failures reported through a close-on-exec pipe, and
 * descendants that left the group (setsid) collected as orphans of this process (a child subreaper) and killed. */
#define _GNU_SOURCE   /* prctl, execvpe, close_range */
#include "core/proc.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/sig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_LIVE 32

/* pids started here and not yet reaped: everything else that becomes our child is an orphan to kill */
static pid_t g_live[MAX_LIVE];

static void live_add(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (g_live[i] == 0) { g_live[i] = pid; return; }
}

static void live_del(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (g_live[i] == pid) g_live[i] = 0;
}

static int is_live(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (g_live[i] == pid) return 1;
    return 0;
}

static void nap(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A name whose value a child should not see unless it needs it: *_TOKEN, *_SECRET, *_PASSWORD. */
static int secret_name(const char *entry) {
    static const char *const tails[] = {"_TOKEN", "_SECRET", "_PASSWORD", NULL};
    size_t n = strcspn(entry, "=");
    for (int i = 0; tails[i]; i++) {
        size_t t = strlen(tails[i]);
        if (n >= t && strncmp(entry + n - t, tails[i], t) == 0) return 1;
    }
    return 0;
}

static int same_name(const char *a, const char *b) {
    size_t n = strcspn(a, "=");
    return strncmp(a, b, n) == 0 && (b[n] == '=' || b[n] == 0);
}

/* The child's environment, built before fork (no allocation between fork and exec); free the array only. */
static char **child_env(const sd_proc_opts *o) {
    size_t n = 0, k = 0, add = 0;
    while (environ && environ[n]) n++;
    while (o->env_add && o->env_add[add]) add++;
    char **env = calloc(n + add + 1, sizeof *env);
    if (!env) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!o->keep_secrets && secret_name(environ[i])) continue;
        int replaced = 0;
        for (size_t j = 0; j < add; j++) replaced |= same_name(o->env_add[j], environ[i]);
        if (!replaced) env[k++] = environ[i];
    }
    for (size_t j = 0; j < add; j++) env[k++] = (char *)o->env_add[j];
    env[k] = NULL;
    return env;
}

static void on_parent_death(int sig) {
    (void)sig;
    kill(0, SIGKILL);   /* the whole group, the sentinel last */
    _exit(137);
}

/* The group's leader: waits, and takes the group down when showdown goes (PR_SET_PDEATHSIG survives kill -9). */
static pid_t start_sentinel(void) {
    pid_t parent = getpid();
    pid_t s = fork();
    if (s != 0) {
        if (s > 0) setpgid(s, s);   /* both sides: no window in which the group does not exist yet */
        return s;
    }
    setpgid(0, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_parent_death;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    prctl(PR_SET_PDEATHSIG, SIGUSR1);
    if (getppid() != parent) on_parent_death(SIGUSR1);
    close_range(0, ~0U, 0);
    for (;;) pause();
}

/* Between fork and exec: async-signal-safe calls only. */
static void exec_child(const sd_proc_opts *o, pid_t parent, pid_t group, char **env, int po, int pe, int px) {
    if (setpgid(0, group) != 0) _exit(127);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    static const int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ, SIGUSR1, SIGCHLD};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++) signal(reset[i], SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) dup2(nul, 0);
    int out = o->out == SD_PROC_PIPE ? po : o->out == SD_PROC_NULL ? nul : o->out;
    int err = o->err == SD_PROC_PIPE ? pe : o->err == SD_PROC_NULL ? nul : o->err == SD_PROC_TO_OUT ? out : o->err;
    if (out >= 0) dup2(out, 1);
    if (err >= 0) dup2(err, 2);
    /* nothing else of showdown's (the database, the log, other pipes) is the child's business */
    if (px > 3) close_range(3, (unsigned)px - 1, 0);
    close_range((unsigned)px + 1, ~0U, 0);
    const char *prog = o->path ? o->path : o->argv[0];
    if (o->path_lookup) execvpe(prog, o->argv, env);
    else execve(prog, o->argv, env);
    int e = errno;
    ssize_t w = write(px, &e, sizeof e);
    (void)w;
    _exit(127);
}

static void close_fd(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

int sd_proc_spawn(sd_proc *p, const sd_proc_opts *o) {
    *p = (sd_proc){.pid = -1, .group = -1, .out = -1, .err = -1};
    static int subreaper;
    if (!subreaper) subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 1 : -1;
    char **env = child_env(o);
    if (!env) return sd_err(SD_ENOMEM, "out of memory");
    int po[2] = {-1, -1}, pe[2] = {-1, -1}, px[2] = {-1, -1}, rc = 0;
    if ((o->out == SD_PROC_PIPE && pipe(po) != 0) || (o->err == SD_PROC_PIPE && pipe(pe) != 0) ||
        pipe2(px, O_CLOEXEC) != 0) {
        rc = sd_err(SD_EIO, "pipe: %s", strerror(errno));
        goto fail;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    p->group = start_sentinel();
    if (p->group < 0) { rc = sd_err(SD_ERROR, "fork: %s", strerror(errno)); goto fail; }
    live_add(p->group);
    pid_t pid = fork();
    if (pid == 0) exec_child(o, parent, p->group, env, po[1], pe[1], px[1]);
    if (pid < 0) { rc = sd_err(SD_ERROR, "fork: %s", strerror(errno)); goto fail; }
    setpgid(pid, p->group);
    p->pid = pid;
    live_add(pid);
    close_fd(&po[1]);
    close_fd(&pe[1]);
    close_fd(&px[1]);
    int e = 0;
    ssize_t k;
    do k = read(px[0], &e, sizeof e); while (k < 0 && errno == EINTR);
    close_fd(&px[0]);
    free(env);
    env = NULL;
    if (k == (ssize_t)sizeof e) {
        close_fd(&po[0]);
        close_fd(&pe[0]);
        sd_proc_end(p, 0);
        p->exec_errno = e;
        return sd_err(SD_ENODEV, "cannot start %s: %s", o->path ? o->path : o->argv[0], strerror(e));
    }
    p->out = po[0];
    p->err = pe[0];
    if (p->out >= 0) fcntl(p->out, F_SETFL, O_NONBLOCK);
    if (p->err >= 0) fcntl(p->err, F_SETFL, O_NONBLOCK);
    return 0;
fail:
    for (int i = 0; i < 2; i++) { close_fd(&po[i]); close_fd(&pe[i]); close_fd(&px[i]); }
    free(env);
    sd_proc_end(p, 0);
    return rc;
}

int sd_proc_poll(sd_proc *p) {
    if (p->pid <= 0) return 1;
    int st;
    pid_t w = waitpid(p->pid, &st, WNOHANG);
    if (w == 0) return 0;
    if (w < 0 && errno == EINTR) return 0;
    if (w < 0) return sd_err(SD_ERROR, "waitpid: %s", strerror(errno));
    p->status = st;
    live_del(p->pid);
    p->pid = -1;
    return 1;
}

int sd_proc_wait(sd_proc *p, double timeout_s) {
    double end = sd_now() + timeout_s;
    for (;;) {
        int k = sd_proc_poll(p);
        if (k != 0) return k;
        if (timeout_s >= 0 && sd_now() >= end) return 0;
        nap(10);
    }
}

/* The parent and process group of pid from /proc/PID/stat; -1 when it is gone. */
static int stat_of(pid_t pid, pid_t *ppid, pid_t *pgrp) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    const char *q = strrchr(buf, ')');   /* the command name may hold spaces and parentheses */
    char state;
    int pp, pg;
    if (!q || sscanf(q + 1, " %c %d %d", &state, &pp, &pg) != 3) return -1;
    *ppid = pp;
    *pgrp = pg;
    return 0;
}

/* Kill and reap the processes reparented to us that we did not start (a runner's setsid grandchild). */
static void kill_orphans(void) {
    pid_t self = getpid();
    for (int round = 0; round < 10; round++) {
        DIR *d = opendir("/proc");
        if (!d) return;
        int found = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char *end;
            long v = strtol(e->d_name, &end, 10);
            pid_t ppid, pgrp;
            if (*end || v <= 0 || (pid_t)v == self || is_live((pid_t)v)) continue;
            if (stat_of((pid_t)v, &ppid, &pgrp) != 0 || ppid != self) continue;
            if (pgrp == (pid_t)v) kill(-pgrp, SIGKILL);
            kill((pid_t)v, SIGKILL);
            waitpid((pid_t)v, NULL, 0);
            found = 1;
        }
        closedir(d);
        if (!found) return;
    }
}

void sd_proc_end(sd_proc *p, double grace_s) {
    if (p->pid > 0) {
        kill(p->group > 0 ? -p->group : p->pid, SIGTERM);
        if (grace_s > 0) sd_proc_wait(p, grace_s);
    }
    if (p->group > 0) kill(-p->group, SIGKILL);
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        int st = 0;
        while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR) {}
        p->status = st;
        live_del(p->pid);
        p->pid = -1;
    }
    if (p->group > 0) {
        while (waitpid(p->group, NULL, 0) < 0 && errno == EINTR) {}
        live_del(p->group);
        p->group = -1;
    }
    kill_orphans();
    close_fd(&p->out);
    close_fd(&p->err);
}

int sd_proc_exit_code(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int sd_proc_capture(const sd_proc_opts *o, double timeout_s, char *buf, size_t n, int *status) {
    sd_proc p;
    SD_TRY(sd_proc_spawn(&p, o));
    size_t len = 0;
    double end = sd_now() + timeout_s;
    int timed_out = 0;
    for (;;) {
        double left = end - sd_now();
        if (left <= 0) { timed_out = 1; break; }
        if (sd_sig_pending()) {   /* the command stops at its next check: the child with it */
            sd_proc_end(&p, 1.0);
            return sd_err(SD_EINTR, "interrupted");
        }
        struct pollfd pl = {.fd = p.out, .events = POLLIN};
        /* polled in slices, so that a signal landing just before the wait is seen within a quarter second */
        if (poll(&pl, 1, left > 0.25 ? 250 : (int)(left * 1000) + 1) <= 0) continue;
        ssize_t k = read(p.out, buf + len, n - 1 - len);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) break;
        len += (size_t)k;
        if (len == n - 1) {   /* keep the tail: a reason, a last line, is at the end */
            memmove(buf, buf + len / 2, len - len / 2);
            len -= len / 2;
        }
    }
    if (!timed_out) sd_proc_wait(&p, -1);
    *status = p.status;
    sd_proc_end(&p, 0);
    buf[len] = 0;
    return timed_out ? 1 : 0;
}
