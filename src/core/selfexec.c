/* selfexec — run this same showdown binary as a child (nightly's bench, score and report), its output
 * appended to a log file (or discarded), so that a crashing or hanging step cannot take the caller with it. The child
 * is started by core/proc (its own process group, which dies with its parent); a SIGINT/SIGTERM the parent receives (core/sig) is
 * forwarded to that group and the child waited for. */
#include "core/util.h"
#include "core/err.h"
#include "core/proc.h"
#include "core/sig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int sd_run_self(char *const argv[], const char *log_path, int *exit_code) {
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return sd_err(SD_ERROR, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
    exe[k] = 0;
    int fd = -1;
    if (log_path && (fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        return sd_err(SD_EIO, "cannot write %s: %s", log_path, strerror(errno));
    /* a nested score needs the token; the child's own runners are cleaned by their spawner */
    sd_proc_opts o = {.argv = argv, .path = exe, .keep_secrets = 1, .out = fd >= 0 ? fd : SD_PROC_NULL,
                      .err = fd >= 0 ? fd : SD_PROC_NULL};
    sd_proc p;
    int rc = sd_proc_spawn(&p, &o);
    if (fd >= 0) close(fd);
    if (rc) return rc;
    int forwarded = 0;
    for (;;) {
        int sig = sd_sig_pending();
        if (sig && !forwarded) {
            kill(-p.group, sig);
            forwarded = 1;
        }
        /* polled, so that a signal landing just before a blocking wait is still forwarded at once */
        int done = sd_proc_wait(&p, 0.05);
        if (done < 0) { sd_proc_end(&p, 0); return done; }
        if (done) break;
    }
    *exit_code = sd_proc_exit_code(p.status);
    sd_proc_end(&p, 0);   /* what the child left in its group */
    if (sd_sig_pending()) return sd_err(SD_EINTR, "interrupted (the child exited %d)", *exit_code);
    return 0;
}
