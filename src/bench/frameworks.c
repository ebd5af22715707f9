/* frameworks — the table of framework runners and the probe that tells whether one can run here. */
#include "bench/frameworks.h"
#include "core/util.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/proc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const sd_framework FRAMEWORKS[] = {
    {"pytorch", "pytorch_runner.py", NULL, NULL, "torch"},
    {"tensorflow", "tensorflow_runner.py", "tensorflow", NULL, "tensorflow"},
    {"keras-tensorflow", "keras_runner.py", "tensorflow", "KERAS_BACKEND=tensorflow", "keras"},
    {"keras-jax", "keras_runner.py", "jax", "KERAS_BACKEND=jax", "keras"},
    {"keras-torch", "keras_runner.py", "torch", "KERAS_BACKEND=torch", "keras"},
    {"jax", "jax_runner.py", "jax", NULL, "jax"},
    {"paddle", "paddle_runner.py", "paddle", NULL, "paddle"},
    {"mindspore", "mindspore_runner.py", "mindspore", NULL, "mindspore"},
    {"tinygrad", "tinygrad_runner.py", "tinygrad", NULL, "tinygrad"},
    {"chainer", "chainer_runner.py", "chainer", NULL, "chainer"},
};
#define NFRAMEWORKS ((int)(sizeof FRAMEWORKS / sizeof FRAMEWORKS[0]))

int sd_framework_count(void) { return NFRAMEWORKS; }
const sd_framework *sd_framework_at(int i) { return i >= 0 && i < NFRAMEWORKS ? &FRAMEWORKS[i] : NULL; }

const sd_framework *sd_framework_find(const char *name) {
    for (int i = 0; i < NFRAMEWORKS; i++)
        if (strcmp(FRAMEWORKS[i].name, name) == 0) return &FRAMEWORKS[i];
    return NULL;
}

int sd_bench_impl_known(const char *impl) { return strcmp(impl, "native") == 0 || sd_framework_find(impl) != NULL; }

int sd_framework_python(const sd_framework *f, const char *venvs, const char *default_python, char *out, size_t n) {
    if (!f->venv) snprintf(out, n, "%s", default_python);
    else {
        char root[PATH_MAX];
        if (venvs) snprintf(root, sizeof root, "%s", venvs);
        else sd_default_dir(root, sizeof root, ".venv-frameworks", ".venv-frameworks");
        snprintf(out, n, "%s/%s/bin/python", root, f->venv);
    }
    return access(out, X_OK) == 0;
}

int sd_framework_probe(const sd_framework *f, const char *python, double timeout_s, char *version, size_t n) {
    version[0] = 0;
    if (access(python, X_OK) != 0) return sd_err(SD_ENODEV, "no interpreter %s", python);
    char code[256];
    snprintf(code, sizeof code, "import %s, sys; sys.stdout.write(%s.__version__)", f->module, f->module);
    char *argv[] = {(char *)python, "-c", code, NULL};
    const char *env[] = {f->env, NULL};
    sd_proc_opts po = {.argv = argv, .env_add = f->env ? env : NULL, .out = SD_PROC_PIPE, .err = SD_PROC_TO_OUT};
    sd_proc p;   /* stderr into the same pipe: an import error's last line is the reason */
    int rc = sd_proc_spawn(&p, &po);
    if (rc) return rc;
    char buf[8192];
    size_t len = 0;
    double end = sd_now() + timeout_s;
    int timed_out = 0;
    for (;;) {
        double left = end - sd_now();
        if (left <= 0) { timed_out = 1; break; }
        struct pollfd pl = {.fd = p.out, .events = POLLIN};
        int r = poll(&pl, 1, (int)(left * 1000) + 1);
        if (r <= 0) continue;
        ssize_t k = read(p.out, buf + len, sizeof buf - 1 - len);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) break;
        len += (size_t)k;
        if (len == sizeof buf - 1) {   /* keep the tail: the reason is at the end */
            memmove(buf, buf + len / 2, len - len / 2);
            len -= len / 2;
        }
    }
    if (!timed_out) sd_proc_wait(&p, -1);
    int st = p.status;
    sd_proc_end(&p, 0);
    buf[len] = 0;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) buf[--len] = 0;
    if (timed_out) return sd_err(SD_ENODEV, "import %s did not finish in %.0f s", f->module, timeout_s);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        const char *last = strrchr(buf, '\n');
        return sd_err(SD_ENODEV, "import %s failed: %s", f->module, last ? last + 1 : buf[0] ? buf : "no output");
    }
    snprintf(version, n, "%s", buf);
    return 0;
}
