/* showdown env — what this machine and this build can run: the environment fingerprint every result
 * carries, each back-end (built, runnable, or why not), each framework runner (its interpreter and version,
 * or why not) and the data sets. The first thing to run when numbers look wrong; --require makes it a check. */
#include "bench/frameworks.h"
#include "bench/results.h"
#include "cmd/cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "data/data.h"
#include "nn/backend.h"
#include "runner/runner.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static const char *str(json_t *o, const char *k) {
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "unknown";
}

/* One back-end: built into this binary, and whether one can be created here (a device, a working library). */
static json_t *probe_backend(const char *name) {
    json_t *b = json_object();
    json_object_set_new(b, "name", json_string(name));
    int built = nn_backend_compiled(name);
    json_object_set_new(b, "built", json_boolean(built));
    if (!built) {
        json_object_set_new(b, "runnable", json_false());
        json_object_set_new(b, "why", json_string("not built into this binary (its library was not found when it was "
                                                  "built: see `make config`)"));
        return b;
    }
    nn_backend *be = NULL;
    nn_backend_opts o = {.threads = 0, .precision = "fp32", .quiet = 1};
    int rc = nn_backend_new(&be, name, &o, NULL, 0);
    json_object_set_new(b, "runnable", json_boolean(rc == 0));
    if (rc == 0) json_object_set_new(b, "device", json_string(nn_backend_device(be)[0] ? nn_backend_device(be) : name));
    else json_object_set_new(b, "why", json_string(sd_errmsg()));
    nn_backend_free(be);
    return b;
}

static json_t *probe_framework(const sd_framework *f, const char *venvs, const char *python, int probe) {
    json_t *j = json_object();
    char py[PATH_MAX + 64], version[128];
    json_object_set_new(j, "name", json_string(f->name));
    json_object_set_new(j, "venv", f->venv ? json_string(f->venv) : json_null());
    int have = sd_framework_python(f, venvs, python, py, sizeof py);
    json_object_set_new(j, "python", json_string(py));
    if (!have) {
        json_object_set_new(j, "runnable", json_false());
        json_object_set_new(j, "why", json_string(f->venv ? "not installed (`make deps-frameworks` installs it)"
                                                          : "no interpreter (apt-get install python3-torch)"));
        return j;
    }
    if (!probe) {
        json_object_set_new(j, "runnable", json_null());
        json_object_set_new(j, "why", json_string("not probed (--no-probe)"));
        return j;
    }
    if (sd_framework_probe(f, py, 120, version, sizeof version) == 0) {
        json_object_set_new(j, "runnable", json_true());
        json_object_set_new(j, "version", json_string(version));
    } else {
        json_object_set_new(j, "runnable", json_false());
        json_object_set_new(j, "why", json_string(sd_errmsg()));
    }
    return j;
}

static int is_dir(const char *p) { struct stat st; return stat(p, &st) == 0 && S_ISDIR(st.st_mode); }

static json_t *probe_data(const char *name, const char *dir, const char *workloads) {
    json_t *d = json_object();
    json_object_set_new(d, "name", json_string(name));
    json_object_set_new(d, "dir", dir ? json_string(dir) : json_null());
    json_object_set_new(d, "workloads", json_string(workloads));
    json_object_set_new(d, "found", json_boolean(dir && is_dir(dir)));
    return d;
}

static void print_text(json_t *doc) {
    sd_results_head h;
    sd_results_head_of(doc, &h);
    json_t *e = h.environment;
    printf("showdown %s\n\nenvironment\n", str(doc, "version"));
    printf("  %-12s %s (%lld cores; %s)\n", "cpu", str(e, "cpu_model"),
           (long long)json_integer_value(json_object_get(e, "cores")), str(e, "cpu_flags"));
    printf("  %-12s %.1f GiB\n", "memory", (double)json_integer_value(json_object_get(e, "memory_bytes")) / (1 << 30));
    printf("  %-12s %s, %s\n", "os", str(e, "os"), str(e, "kernel"));
    printf("  %-12s %s\n", "compiler", str(e, "compiler"));
    printf("  %-12s %s\n", "openmp", str(e, "omp_wait_policy"));
    json_t *lib = json_object_get(e, "libraries");
    const char *k;
    json_t *v;
    printf("  %-12s", "libraries");
    int first = 1;
    json_object_foreach(lib, k, v) {
        printf("%s%s %s", first ? " " : ", ", k, json_string_value(v) ? json_string_value(v) : "?");
        first = 0;
    }
    printf("\n\nback-ends (bench --backend)\n");
    size_t i;
    json_array_foreach(json_object_get(doc, "backends"), i, v) {
        int built = json_is_true(json_object_get(v, "built")), run = json_is_true(json_object_get(v, "runnable"));
        printf("  %-17s %-9s %-13s %s\n", str(v, "name"), built ? "built" : "not built", run ? "runnable" : "not runnable",
               run ? str(v, "device") : str(v, "why"));
    }
    printf("\nframework runners (bench --impl)\n");
    json_array_foreach(json_object_get(doc, "frameworks"), i, v) {
        int run = json_is_true(json_object_get(v, "runnable"));
        if (run) printf("  %-17s %-23s %s %s (%s)\n", str(v, "name"), "runnable", str(v, "name"), str(v, "version"),
                        str(v, "python"));
        else printf("  %-17s %-23s %s\n", str(v, "name"), "not runnable", str(v, "why"));
    }
    printf("\ndata sets (bench --data auto uses synthetic data where one is missing)\n");
    json_array_foreach(json_object_get(doc, "data"), i, v)
        printf("  %-17s %-23s %s (%s)\n", str(v, "name"), json_is_true(json_object_get(v, "found")) ? "found" : "not found",
               json_is_null(json_object_get(v, "dir")) ? "no default location: bench --data-dir DIR" : str(v, "dir"),
               str(v, "workloads"));
}

static const char *const backends[] = {"ref", "dnnl", "cudnn"};

/* --require a,b: each must be a runnable back-end or framework (the option table let only those names in,
 * and every one of them is probed). */
static int check_required(json_t *doc, const sd_list *req) {
    int bad = 0;
    char why[1024] = "";
    for (int r = 0; r < req->n; r++) {
        json_t *hit = NULL, *v;
        size_t i;
        const char *groups[] = {"backends", "frameworks"};
        for (int g = 0; g < 2 && !hit; g++)
            json_array_foreach(json_object_get(doc, groups[g]), i, v)
                if (strcmp(str(v, "name"), req->v[r]) == 0) hit = v;
        if (!hit || !json_is_true(json_object_get(hit, "runnable"))) {
            size_t l = strlen(why);
            snprintf(why + l, sizeof why - l, "%s%s: %s", bad ? "; " : "", req->v[r], hit ? str(hit, "why") : "not probed");
            bad++;
        }
    }
    if (bad) return sd_err(SD_ENODEV, "required but not runnable: %s", why);
    return 0;
}

int cmd_env(int argc, char **argv) {
    const char *json_path = NULL, *venvs = NULL, *python = NULL, *mnist = NULL;
    sd_list require = {0};
    int no_probe = 0;
    char names[512];   /* what --require accepts: every back-end and framework runner */
    size_t len = 0;
    for (size_t i = 0; i < sizeof backends / sizeof *backends; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? "|" : "", backends[i]);
    for (int i = 0; i < sd_framework_count() && len < sizeof names; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "|%s", sd_framework_at(i)->name);
    const sd_opt opts[] = {
        {"json", SD_OPT_STR, &json_path, "FILE", "also write it as JSON to FILE ('-': standard output, no text)", 0, 0},
        {"require", SD_OPT_LIST, &require, names, "exit 4 unless each named back-end or framework is runnable", 0, 0},
        {"python", SD_OPT_STR, &python, "PATH", "interpreter of the pytorch runner (default: the newest torch installed, as bench picks it)", 0, 0},
        {"venvs", SD_OPT_STR, &venvs, "DIR", "virtual environments of the framework runners (default .venv-frameworks)", 0, 0},
        {"data-dir", SD_OPT_STR, &mnist, "DIR", "where the mnist workloads' idx files are (default " SD_DEFAULT_MNIST_DIR
         "); CIFAR-10 and IMDB have no default location", 0, 0},
        {"no-probe", SD_OPT_FLAG, &no_probe, NULL, "do not start Python to import each framework (faster)", 0, 0},
        {0},
    };
    int code = sd_cli_parse("env", "[options]",
                            "Print the environment fingerprint every result carries, and for each back-end and framework runner\n"
                            "whether it is built and runnable here, with the reason when not. Exit 0; with --require, 4 when a\n"
                            "named back-end or framework cannot run.",
                            opts, argc, argv);
    if (code >= 0) return code;
    json_t *doc = json_object();
    char ver[128];
    snprintf(ver, sizeof ver, "%s (%s%s)", SD_VERSION, SD_GIT_COMMIT, SD_GIT_DIRTY ? ", dirty" : "");
    json_object_set_new(doc, "version", json_string(ver));
    sd_results_set_env(doc, sd_env_fingerprint());
    json_t *bes = json_array();
    for (size_t i = 0; i < sizeof backends / sizeof *backends; i++) json_array_append_new(bes, probe_backend(backends[i]));
    json_object_set_new(doc, "backends", bes);
    /* the pytorch runner's interpreter as bench chooses it: the newest torch, .venv-frameworks' or Debian's */
    sd_torch_choice torch = {.source = NULL};
    if (!python) {
        char vroot[PATH_MAX];
        if (venvs) snprintf(vroot, sizeof vroot, "%s", venvs);
        else sd_default_dir(vroot, sizeof vroot, ".venv-frameworks", ".venv-frameworks");
        sd_runner_pick_torch(vroot, "/usr/bin/python3", "/usr/lib/python3/dist-packages", &torch);
        python = torch.python;
    }
    json_t *fws = json_array();
    for (int i = 0; i < sd_framework_count(); i++)
        json_array_append_new(fws, probe_framework(sd_framework_at(i), venvs, python, !no_probe));
    json_object_set_new(doc, "frameworks", fws);
    json_t *data = json_array();
    json_array_append_new(data, probe_data("fashion-mnist", mnist ? mnist : SD_DEFAULT_MNIST_DIR, "mnist_*"));
    json_array_append_new(data, probe_data("cifar-10", NULL, "cifar10_*, the binary version"));
    json_array_append_new(data, probe_data("imdb", NULL, "imdb_*, aclImdb or train.tok + test.tok"));
    json_object_set_new(doc, "data", data);

    int rc = 0;
    if (json_path && strcmp(json_path, "-") == 0) {
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s) { fputs(s, stdout); fputc('\n', stdout); free(s); }
    } else {
        print_text(doc);
        if (json_path) {
            char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
            rc = s ? sd_write_file_atomic(json_path, s, strlen(s)) : sd_err(SD_ENOMEM, "out of memory");
            free(s);
        }
    }
    if (rc == 0 && require.n) rc = check_required(doc, &require);
    json_decref(doc);
    return rc < 0 ? sd_cli_fail("env", rc) : SD_EXIT_OK;
}
