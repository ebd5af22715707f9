/* proc — the one way showdown starts a child process (framework runners, Slurm commands, nested showdown runs).
 * A child runs in a process group of its own that dies with showdown, even under kill -9: a small sentinel leads
 * the group and kills it when its parent dies. What escapes the group (setsid) is reparented to showdown and killed
 * with the group. Secrets (*_TOKEN, *_SECRET, *_PASSWORD) stay out of a child's environment unless kept. */
#ifndef SD_PROC_H
#define SD_PROC_H

#include <sys/types.h>

#define SD_PROC_PIPE   (-1)   /* out/err: a pipe, read end in sd_proc.out/err (non-blocking) */
#define SD_PROC_NULL   (-2)   /* out/err: /dev/null */
#define SD_PROC_TO_OUT (-3)   /* err: wherever stdout goes */

typedef struct sd_proc_opts {
    char *const *argv;            /* argv[0]: the program, unless path is given */
    const char *path;             /* the program to execute, NULL: argv[0] */
    int path_lookup;              /* 1: the program is looked up in PATH */
    const char *const *env_add;   /* NULL-terminated "NAME=VALUE" set in the child, or NULL */
    int keep_secrets;             /* 1: the child needs the token (nested showdown score) */
    int out, err;                 /* SD_PROC_PIPE, SD_PROC_NULL, SD_PROC_TO_OUT (err) or a descriptor to use */
} sd_proc_opts;

typedef struct sd_proc {
    pid_t pid;                    /* the program; -1 once reaped */
    pid_t group;                  /* the sentinel: the process group's id; -1 once killed */
    int out, err;                 /* read ends of SD_PROC_PIPE, else -1 */
    int status;                   /* wait status once reaped */
    int exec_errno;               /* why the program could not be executed (SD_ENODEV), else 0 */
} sd_proc;

/* Start o->argv. SD_ENODEV "cannot start PROG: why" when it cannot be executed; other negatives: fork, pipe. */
int sd_proc_spawn(sd_proc *p, const sd_proc_opts *o);
/* 1 when the program has exited (p->status set, p->pid -1), 0 while it runs, negative on a wait error. */
int sd_proc_poll(sd_proc *p);
/* Wait for the program to exit, at most timeout_s (< 0: forever); 1 exited, 0 still running. */
int sd_proc_wait(sd_proc *p, double timeout_s);
/* End what is left: SIGTERM to the group, grace_s for the program to exit, then SIGKILL to the group and to
 * whatever escaped it; everything reaped, pipes closed. Safe to call twice. */
void sd_proc_end(sd_proc *p, double grace_s);
/* Run o (its out must be SD_PROC_PIPE) to its end, at most timeout_s: what it wrote into buf (n bytes; when more,
 * the tail), NUL-terminated, and its wait status in *status. 0 it exited, 1 it timed out (killed), or a negative
 * status when it could not start. */
int sd_proc_capture(const sd_proc_opts *o, double timeout_s, char *buf, size_t n, int *status);
/* The exit code of a wait status: the program's own, or 128 + the signal that killed it. */
int sd_proc_exit_code(int status);

#endif
