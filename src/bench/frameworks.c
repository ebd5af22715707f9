/* frameworks — the table of framework runners and the probe that tells whether one can run here. */
#include "bench/frameworks.h"
#include "core/util.h"
#include "core/err.h"
#include "core/proc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const sd_framework FRAMEWORKS[] = {
    {"pytorch", "pytorch_runner.py", NULL, NULL, "torch", "torch"},
    {"tensorflow", "tensorflow_runner.py", "tensorflow", NULL, "tensorflow", "tensorflow-cpu,tensorflow"},
    {"keras-tensorflow", "keras_runner.py", "tensorflow", "KERAS_BACKEND=tensorflow", "keras", "keras"},
    {"keras-jax", "keras_runner.py", "jax", "KERAS_BACKEND=jax", "keras", "keras"},
    {"keras-torch", "keras_runner.py", "torch", "KERAS_BACKEND=torch", "keras", "keras"},
    {"jax", "jax_runner.py", "jax", NULL, "jax", "jax"},
    {"paddle", "paddle_runner.py", "paddle", NULL, "paddle", "paddlepaddle,paddlepaddle-gpu"},
    {"mindspore", "mindspore_runner.py", "mindspore", NULL, "mindspore", "mindspore"},
    {"tinygrad", "tinygrad_runner.py", "tinygrad", NULL, "tinygrad", "tinygrad"},
    {"chainer", "chainer_runner.py", "chainer", NULL, "chainer", "chainer"},
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

/* The version is the installed distribution's (importlib.metadata), printed after the import on a line of its own:
 * what the import itself writes (log noise, warnings) is never read as the version. */
#define VERSION_MARK "showdown-version: "

int sd_framework_probe(const sd_framework *f, const char *python, double timeout_s, char *version, size_t n) {
    version[0] = 0;
    if (access(python, X_OK) != 0) return sd_err(SD_ENODEV, "no interpreter %s", python);
    char code[1024];
    snprintf(code, sizeof code,
             "import sys\n"
             "from importlib import metadata\n"
             "import %s\n"
             "def v():\n"
             "    for d in '%s'.split(','):\n"
             "        try: return metadata.version(d)\n"
             "        except metadata.PackageNotFoundError: pass\n"
             "    return 'unknown (no package metadata for %s)'\n"
             "sys.stdout.write('\\n" VERSION_MARK "' + v() + '\\n')\n",
             f->module, f->dists, f->dists);
    char *argv[] = {(char *)python, "-c", code, NULL};
    const char *env[] = {f->env, NULL};
    sd_proc_opts po = {.argv = argv, .env_add = f->env ? env : NULL, .out = SD_PROC_PIPE, .err = SD_PROC_TO_OUT};
    char buf[8192];   /* stderr into the same pipe: an import error's last line is the reason */
    int st = 0, rc = sd_proc_capture(&po, timeout_s, buf, sizeof buf, &st);
    if (rc < 0) return rc;
    int timed_out = rc == 1;
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) buf[--len] = 0;
    if (timed_out) return sd_err(SD_ENODEV, "import %s did not finish in %.0f s", f->module, timeout_s);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        const char *last = strrchr(buf, '\n');
        return sd_err(SD_ENODEV, "import %s failed: %s", f->module, last ? last + 1 : buf[0] ? buf : "no output");
    }
    const char *mark = NULL;
    for (const char *p = buf; (p = strstr(p, VERSION_MARK)) != NULL; p++) mark = p;
    if (!mark) return sd_err(SD_ENODEV, "import %s: no version line in its output", f->module);
    mark += strlen(VERSION_MARK);
    snprintf(version, n, "%.*s", (int)strcspn(mark, "\r\n"), mark);
    return 0;
}
