/* frameworks — the framework implementations `bench --impl` runs through a runner (workloads/runners/):
 * the table, where each one's interpreter is, and whether it can run here (`showdown env`). */
#ifndef SD_FRAMEWORKS_H
#define SD_FRAMEWORKS_H

#include <stddef.h>

typedef struct sd_framework {
    const char *name;    /* as in --impl */
    const char *script;  /* runner under <workloads>/runners/ */
    const char *venv;    /* virtual environment under .venv-frameworks/ (`make deps-frameworks`); NULL: --python */
    const char *env;     /* one NAME=VALUE the runner needs (Keras's backend), or NULL */
    const char *module;  /* the Python module a runner imports */
    const char *dists;   /* its distributions, first installed one's metadata gives the version: "a,b" */
} sd_framework;

int sd_framework_count(void);
const sd_framework *sd_framework_at(int i);
const sd_framework *sd_framework_find(const char *name);
/* 1 when `bench --impl` can run impl: "native" or a framework with a runner. */
int sd_bench_impl_known(const char *impl);

/* The interpreter of f into out: <venvs>/<venv>/bin/python (venvs NULL: .venv-frameworks, found as
 * sd_default_dir does), or default_python for frameworks without a venv. Returns 1 when it exists. */
int sd_framework_python(const sd_framework *f, const char *venvs, const char *default_python, char *out, size_t n);

/* Imports f's module with python (timeout_s seconds at most): 0 and its distribution's version (package
 * metadata, not the module's output) in version, or a negative
 * status with the reason in sd_errmsg() (interpreter missing, import failed: its last line of stderr). */
int sd_framework_probe(const sd_framework *f, const char *python, double timeout_s, char *version, size_t n);
#endif
