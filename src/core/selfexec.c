/* selfexec — run this same showdown binary as a child (nightly's bench, score and report), its output
 * appended to a log file (or discarded), so that a crashing or hanging step cannot take the caller with it. The child
 * has its own process group and dies with its parent; a SIGINT/SIGTERM the parent receives (core/sig) is
 * forwarded to that group and the child waited for. */
#define _GNU_SOURCE   /* prctl */
#include "core/util.h"
#include "core/err.h"
#include "core/sig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int sd_run_self(char *const argv[], const char *log_path, int *exit_code) {
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return sd_err(SD_ERROR, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
    exe[k] = 0;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return sd_err(SD_ERROR, "fork: %s", strerror(errno));
    if (pid == 0) {
        /* a kill -9 of the parent must not leave a benchmark running beside the next one */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(128 + SIGTERM);
        setpgid(0, 0);
        int fd = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(exe, argv);
        _exit(127);
    }
    setpgid(pid, 0);   /* also here: no window in which a forwarded signal misses the group */
    int st, forwarded = 0;
    for (;;) {
        int sig = sd_sig_pending();
        if (sig && !forwarded) {
            kill(-pid, sig);
            forwarded = 1;
        }
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return sd_err(SD_ERROR, "waitpid: %s", strerror(errno));
        /* polled, so that a signal landing just before a blocking wait is still forwarded at once */
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (sd_sig_pending()) return sd_err(SD_EINTR, "interrupted (the child exited %d)", *exit_code);
    return 0;
}
