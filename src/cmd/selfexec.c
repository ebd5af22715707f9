/* selfexec — run this same showdown binary as a child (bench for verify --rerun and nightly), its
 * output appended to a log file (or discarded), so that every measurement goes through `bench`. */
#include "cmd/cli.h"
#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int sd_run_self(char *const argv[], const char *log_path, int *exit_code) {
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) return sd_err(SD_ERROR, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
    exe[k] = 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return sd_err(SD_ERROR, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = log_path ? open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(exe, argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return sd_err(SD_ERROR, "waitpid: %s", strerror(errno));
    *exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 0;
}
