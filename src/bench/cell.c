/* cell — one cell of a benchmark run: a workload on the native engine over one back-end, or through one framework
 * runner on the data the native runs use, repeated; the data set chosen (real when present, else seeded synthetic),
 * the equivalence check of a framework against the native forward pass, and the workload-only entry points
 * (--describe, --export-weights). A cell records its own failure and lets the matrix go on. */
#include "bench/bench.h"
#include "bench/frameworks.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sig.h"
#include "core/util.h"
#include "data/data.h"
#include "nn/dp.h"
#include "nn/export.h"
#include "nn/model.h"
#include "nn/train.h"
#include "runner/runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

/* 1 the first time this process is told msg: a data-set fallback or a framework that is not installed is said
 * once per run, not once per cell (the results still record it in every cell). */
static int first_time(const char *msg) {
    static char said[32][160];
    static int nsaid;
    for (int i = 0; i < nsaid; i++)
        if (strncmp(said[i], msg, sizeof said[i] - 1) == 0) return 0;
    if (nsaid < 32) snprintf(said[nsaid++], sizeof said[0], "%s", msg);
    return 1;
}

/* An input file must be a regular file: a FIFO would block the reader forever, a device never end. Opened without
 * blocking and checked on the descriptor; 0 also when it does not exist (its reader says so). */
static int regular_input(const char *path, const char *what) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    return ok ? 0 : sd_err(SD_EINPUT, "%s %s: not a regular file (a FIFO or device is not read)", what, path);
}

/* Find "<dir>/<base>" or "<dir>/<base>.gz": 1 found, 0 not, or the error of one that is not a regular file. */
static int find_idx(char *out, size_t n, const char *dir, const char *base) {
    snprintf(out, n, "%s/%s", dir, base);
    if (!exists(out)) snprintf(out, n, "%s/%s.gz", dir, base);
    if (!exists(out)) return 0;
    SD_TRY(regular_input(out, "data file"));
    return 1;
}

/* Real data when present (or required), synthetic otherwise; says which on stderr. */
static int load_data(const sd_bench_opts *a, const sd_workload *w, long max_examples, sd_dataset *train,
                     sd_dataset *test, sd_runner_data *desc) {
    memset(desc, 0, sizeof *desc);
    int want_real = strcmp(a->data, "real") == 0, want_syn = strcmp(a->data, "synthetic") == 0;
    const char *why = NULL;
    char whybuf[1024];
    if (!want_syn && strcmp(w->dataset, "mnist") == 0) {
        const char *dir = a->data_dir ? a->data_dir : SD_DEFAULT_MNIST_DIR;
        char ti[1024], tl[1024], vi[1024], vl[1024];
        int f[4] = {find_idx(ti, sizeof ti, dir, "train-images-idx3-ubyte"), find_idx(tl, sizeof tl, dir, "train-labels-idx1-ubyte"),
                    find_idx(vi, sizeof vi, dir, "t10k-images-idx3-ubyte"), find_idx(vl, sizeof vl, dir, "t10k-labels-idx1-ubyte")};
        for (int k = 0; k < 4; k++)
            if (f[k] < 0) return f[k];
        if (f[0] && f[1] && f[2] && f[3]) {
            SD_TRY(sd_data_load_idx(train, ti, tl));
            int rc = sd_data_load_idx(test, vi, vl);
            if (rc) { sd_dataset_free(train); return rc; }
            desc->kind = SD_RUNNER_DATA_IDX;
            snprintf(desc->train_images, sizeof desc->train_images, "%s", ti);
            snprintf(desc->train_labels, sizeof desc->train_labels, "%s", tl);
            snprintf(desc->test_images, sizeof desc->test_images, "%s", vi);
            snprintf(desc->test_labels, sizeof desc->test_labels, "%s", vl);
            return 0;
        }
        snprintf(whybuf, sizeof whybuf, "no MNIST-format files (train-images-idx3-ubyte[.gz] ...) in %s%s", dir,
                 a->data_dir ? "" : " (install dataset-fashion-mnist or give --data-dir)");
        why = whybuf;
    } else if (!want_syn && strcmp(w->dataset, "cifar10") == 0) {
        if (a->data_dir) {
            SD_TRY(sd_data_load_cifar10(train, a->data_dir, 0));
            int rc = sd_data_load_cifar10(test, a->data_dir, 1);
            if (rc) { sd_dataset_free(train); return rc; }
            desc->kind = SD_RUNNER_DATA_CIFAR10;
            snprintf(desc->cifar_dir, sizeof desc->cifar_dir, "%s", a->data_dir);
            return 0;
        }
        why = "CIFAR-10 is not on this machine (give --data-dir DIR holding data_batch_1.bin ... test_batch.bin)";
    } else if (!want_syn && strcmp(w->dataset, "imdb") == 0) {
        /* --data-dir: train.tok + test.tok (showdown-tokens/1), or the aclImdb text layout */
        sd_imdb_opts io;
        sd_imdb_opts_default(&io);
        io.num_words = w->num_words; io.maxlen = w->in_c; io.pad_post = w->pad_post; io.trunc_post = w->trunc_post;
        if (a->data_dir) {
            char tt[1024], vt[1024], pos[1024];
            snprintf(tt, sizeof tt, "%s/train.tok", a->data_dir);
            snprintf(vt, sizeof vt, "%s/test.tok", a->data_dir);
            snprintf(pos, sizeof pos, "%s/train/pos", a->data_dir);
            if (exists(tt) || exists(vt)) {
                SD_TRY(regular_input(tt, "data file"));
                SD_TRY(regular_input(vt, "data file"));
                SD_TRY(sd_data_load_tokens(train, tt, &io));
                int rc = sd_data_load_tokens(test, vt, &io);
                if (rc) { sd_dataset_free(train); return rc; }
                snprintf(desc->train_tokens, sizeof desc->train_tokens, "%s", tt);
                snprintf(desc->test_tokens, sizeof desc->test_tokens, "%s", vt);
            } else if (exists(pos)) {
                SD_TRY(sd_data_load_imdb_text(train, test, a->data_dir, &io));
                snprintf(desc->acl_dir, sizeof desc->acl_dir, "%s", a->data_dir);
            } else {
                return sd_err(SD_EINPUT, "--data-dir %s: expected train.tok and test.tok (showdown-tokens/1) or the "
                              "aclImdb layout train/{pos,neg}, test/{pos,neg}", a->data_dir);
            }
            desc->kind = SD_RUNNER_DATA_TOKENS;
            snprintf(desc->source, sizeof desc->source, "%s", train->source);
            return 0;
        }
        why = "IMDB is not on this machine (give --data-dir DIR holding aclImdb/ or train.tok + test.tok)";
    } else if (!want_syn && strcmp(w->dataset, "babi") == 0) {
        why = "bAbI is not on this machine (no loader yet: synthetic token data with the published shapes)";
    } else if (!want_syn) {
        why = "the workload's data set is synthetic";
    }
    if (want_real) return sd_err(SD_EINPUT, "--data real: %s", why);
    if (why && !a->quiet && first_time(why)) fprintf(stderr, "data: %s: using seeded synthetic data\n", why);
    long ntrain = w->train_n, ntest = w->test_n;
    if (max_examples > 0) {
        if (ntrain > max_examples) ntrain = max_examples;
        if (ntest > max_examples) ntest = max_examples;
    }
    if (strcmp(w->dataset, "imdb") == 0 || strcmp(w->dataset, "babi") == 0) {   /* token ids */
        int vocab = w->num_words;
        for (int i = 0; i < w->nlayers; i++)
            if (w->layers[i].kind == NN_OP_EMBEDDING && (!vocab || w->layers[i].vocab < vocab)) vocab = w->layers[i].vocab;
        SD_TRY(sd_data_synthetic_tokens(train, (int)ntrain, w->in_c, vocab, w->classes, (uint64_t)a->seed, 0));
        int rc = sd_data_synthetic_tokens(test, (int)ntest, w->in_c, vocab, w->classes, (uint64_t)a->seed, 1);
        if (rc) { sd_dataset_free(train); return rc; }
        *desc = (sd_runner_data){.kind = SD_RUNNER_DATA_SYNTHETIC_TOKENS, .seed = (uint64_t)a->seed,
                                 .train_n = (int)ntrain, .test_n = (int)ntest, .c = w->in_c, .h = w->in_h,
                                 .w = w->in_w, .classes = w->classes, .vocab = vocab};
        return 0;
    }
    SD_TRY(sd_data_synthetic(train, (int)ntrain, w->in_c, w->in_h, w->in_w, w->classes, (uint64_t)a->seed, 0));
    int rc = sd_data_synthetic(test, (int)ntest, w->in_c, w->in_h, w->in_w, w->classes, (uint64_t)a->seed, 1);
    if (rc) { sd_dataset_free(train); return rc; }
    *desc = (sd_runner_data){.kind = SD_RUNNER_DATA_SYNTHETIC, .seed = (uint64_t)a->seed, .train_n = (int)ntrain,
                             .test_n = (int)ntest, .c = w->in_c, .h = w->in_h, .w = w->in_w, .classes = w->classes};
    return 0;
}

/* --workloads DIR, or the default workloads/ directory. */
static void workloads_dir(const sd_bench_opts *a, char *buf, size_t n) {
    if (a->workloads_dir) snprintf(buf, n, "%s", a->workloads_dir);
    else sd_default_dir(buf, n, "workloads", "workloads");
}

static int load_workload(const sd_bench_opts *a, const char *wname, sd_workload *w) {
    char wdir[PATH_MAX];
    workloads_dir(a, wdir, sizeof wdir);
    return sd_workload_load(w, wdir, wname);
}

/* Training settings: the workload's, overridden by the run's options. Native and framework runs share them. */
static nn_train_opts train_opts(const sd_bench_opts *a, const sd_workload *w) {
    nn_train_opts o = {0};
    o.epochs = a->epochs > 0 ? (int)a->epochs : w->epochs;
    o.batch = a->batch > 0 ? (int)a->batch : w->batch;
    o.max_batches = (int)a->batches;
    o.seed = (uint64_t)a->seed;
    o.shuffle = w->shuffle;
    return o;
}

/* One workload on the native engine over back-end bname, a->repeat times. */
static int run_one(const sd_bench_opts *a, const char *wname, const char *bname, json_t *doc, int *failed) {
    sd_workload w;
    SD_TRY(load_workload(a, wname, &w));
    int rc = 0;
    nn_backend *be = NULL;
    sd_dataset train = {0}, test = {0};
    nn_train_result *samples = NULL;
    int nsamples = 0;
    nn_train_opts o = train_opts(a, &w);
    o.progress = !a->quiet && isatty(2);
    o.stop = sd_sig_flag();
    char label[128];
    snprintf(label, sizeof label, "%s/%s", w.name, bname);
    o.label = label;

    nn_backend_opts bo = {.threads = (int)a->threads, .precision = a->precision,
                          .autotune = strcmp(a->autotune, "off") != 0, .quiet = a->quiet};
    char note[1024] = "";
    rc = nn_backend_new(&be, bname, &bo, note, sizeof note);
    if (rc) goto done;
    if (note[0] && !a->quiet) fprintf(stderr, "backend: %s; using %s\n", note, nn_backend_name(be));
    snprintf(label, sizeof label, "%s/%s", w.name, nn_backend_name(be));
    long cap = a->batches > 0 ? a->batches * o.batch * a->gpus : 0;
    sd_runner_data desc;
    if (w.mode == SD_MODE_INFERENCE) {   /* one seeded synthetic set of the images a pass runs */
        long n = cap > 0 && cap < w.infer_images ? cap : w.infer_images;
        SD_TRY_GOTO(rc, sd_data_synthetic(&test, (int)n, w.in_c, w.in_h, w.in_w, w.classes, (uint64_t)a->seed, 1), done);
        if (!a->quiet) fprintf(stderr, "%s: inference, %ld synthetic images per pass, batch %d, %d untimed pass(es) then "
                               "one timed, %ld repeat(s) on %s\n", w.name, n, o.batch, w.warmup_passes, a->repeat, nn_backend_device(be));
        samples = calloc((size_t)a->repeat, sizeof *samples);
        if (!samples) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
        for (long r = 0; r < a->repeat; r++) {
            nn_backend_reset_peak(be);
            const int rss = sd_rss_peak_reset() == 0;
            SD_TRY_GOTO(rc, nn_infer(&w, be, &test, &o, &samples[r]), done);
            samples[r].peak_rss_bytes = rss ? (size_t)sd_rss_peak_bytes() : 0;
            nsamples++;
        }
        sd_run_info ri = {.w = &w, .implementation = "native", .be = be, .backend_note = note, .train = &test,
                          .test = &test, .opts = &o, .threads = a->threads > 0 ? (int)a->threads : (int)sysconf(_SC_NPROCESSORS_ONLN),
                          .samples = samples, .nsamples = nsamples};
        rc = sd_results_add_run(doc, &ri);
        goto done;
    }
    SD_TRY_GOTO(rc, load_data(a, &w, cap, &train, &test, &desc), done);
    if (!a->quiet) fprintf(stderr, "%s: %s, %d train / %d test examples, batch %d%s, %d epoch(s), %ld repeat(s) on %s\n",
                           w.name, train.source, train.n, test.n, o.batch, a->gpus > 1 ? " per replica" : "", o.epochs,
                           a->repeat, nn_backend_device(be));
    char how[32] = "";
    samples = calloc((size_t)a->repeat, sizeof *samples);
    if (!samples) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    for (long r = 0; r < a->repeat; r++) {
        nn_backend_reset_peak(be);
        const int rss = sd_rss_peak_reset() == 0;   /* the peak of this repeat, not of the cells before it */
        SD_TRY_GOTO(rc, a->gpus > 1 ? nn_dp_train_replicas(be, (int)a->gpus, &w, &train, &test, &o, &samples[r], how, sizeof how)
                                    : nn_train(&w, be, &train, &test, &o, &samples[r]), done);
        samples[r].peak_rss_bytes = rss ? (size_t)sd_rss_peak_bytes() : 0;
        nsamples++;
    }
    sd_run_info ri = {.w = &w, .implementation = "native", .be = be, .backend_note = note, .train = &train,
                      .test = &test, .opts = &o, .threads = a->threads > 0 ? (int)a->threads : (int)sysconf(_SC_NPROCESSORS_ONLN),
                      .samples = samples, .nsamples = nsamples, .gpus = (int)a->gpus, .reduction = how};
    rc = sd_results_add_run(doc, &ri);
done:
    if (rc && rc != SD_EINTR && rc != SD_EUSAGE) {
        fprintf(stderr, "showdown bench: %s on %s failed: %s\n", w.name, bname, sd_errmsg());
        sd_results_add_failure(doc, w.name, "native", be ? nn_backend_name(be) : bname, sd_errmsg());
        sd_results_note_precision(doc, a->precision);
        *failed = rc;
    }
    for (int i = 0; i < nsamples; i++) nn_train_result_free(&samples[i]);
    free(samples);
    sd_dataset_free(&train);
    sd_dataset_free(&test);
    nn_backend_free(be);
    sd_workload_free(&w);
    return rc == SD_EINTR || rc == SD_EUSAGE ? rc : 0;
}

/* SD_ENODEV with the reason scripts/deps-frameworks.sh left beside a venv whose install failed; 0 otherwise. */
static int install_failed(const char *vroot, const char *venv, const char *impl) {
    char path[PATH_MAX + 64], why[512];
    snprintf(path, sizeof path, "%s/%s/install-failed.txt", vroot, venv);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (!fgets(why, sizeof why, f)) snprintf(why, sizeof why, "no reason recorded");
    fclose(f);
    why[strcspn(why, "\n")] = 0;
    return sd_err(SD_ENODEV, "unavailable: %s failed to install: %s (%s)", impl, why, path);
}

/* The program for framework impl: --runner IMPL=PROGRAM, else <workloads>/runners/<script>. */
static const char *runner_program(const sd_bench_opts *a, const char *impl) {
    if (!a->runner) return NULL;
    size_t n = strlen(impl);
    if (strncmp(a->runner, impl, n) == 0 && a->runner[n] == '=') return a->runner + n + 1;
    return NULL;
}

#define EXPORT_BATCH 8                /* examples in the equivalence batch */
#define EQUIVALENCE_TOLERANCE 1e-4    /* max |framework - native| / max |native| over its logits */

/* The plan as one "showdown-plan/1" line (nn_model_plan_json): what --describe --json prints and a runner reads. */
static int plan_line(char **out, const sd_workload *w, const nn_layer *plan, int L, int batch) {
    json_t *doc = NULL;
    SD_TRY(nn_model_plan_json(&doc, w, plan, L, batch));
    /* 9 digits: every float of the spec (rate, eps, momentum) reads back as itself */
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(9));
    json_decref(doc);
    size_t n = text ? strlen(text) : 0;
    char *line = text ? realloc(text, n + 2) : NULL;
    if (!line) { free(text); return sd_err(SD_ENOMEM, "cannot serialise the plan of %s", w->name); }
    line[n] = '\n';
    line[n + 1] = 0;
    *out = line;
    return 0;
}

/* DIR/plan.json for the runner's --plan. */
static int write_plan(const sd_workload *w, const nn_layer *plan, int L, int batch, const char *dir, char *path,
                      size_t n) {
    char *line = NULL;
    SD_TRY(plan_line(&line, w, plan, L, batch));
    snprintf(path, n, "%s/plan.json", dir);
    int rc = sd_write_file_atomic(path, line, strlen(line));
    free(line);
    return rc;
}

/* Export w's initial weights (seed), the first EXPORT_BATCH test examples and the reference engine's logits. */
static int export_weights(const sd_bench_opts *a, const sd_workload *w, const sd_dataset *test, const char *dir) {
    nn_backend *be = NULL;
    nn_backend_opts bo = {.threads = (int)a->threads, .precision = "fp32", .quiet = 1};
    SD_TRY(nn_backend_new(&be, "ref", &bo, NULL, 0));
    int n = test->n < EXPORT_BATCH ? test->n : EXPORT_BATCH;
    int rc = nn_export_weights(w, be, test, n, (uint64_t)a->seed, dir);
    nn_backend_free(be);
    return rc;
}

/* The default report's time cap of a framework cell (SHOWDOWN_CELL_SECONDS, seconds), 0 for none. */
static double cell_seconds(void) {
    const char *v = getenv("SHOWDOWN_CELL_SECONDS");
    char *end;
    double s = v && *v ? strtod(v, &end) : 0;
    return v && *v && *end == 0 && isfinite(s) && s > 0 ? s : 0;
}

/* How many batches a runner's repeat trained in its first epoch (an inference workload: a pass), 0 if unknown. */
static int batches_trained(const nn_train_result *t, int batch, int inference) {
    long images = inference ? t->infer_images : t->nepochs > 0 ? t->epochs[0].train_images : 0;
    return batch > 0 && images > 0 && images / batch < INT_MAX ? (int)(images / batch) : 0;
}

#define RUNNER_DIR_PREFIX "showdown-runner-"

/* The runner input directories of showdown processes that are gone (killed with -9: nothing of theirs ran to
 * remove them): /tmp/showdown-runner-PID-XXXXXX of this user whose PID no longer exists. */
static void sweep_runner_dirs(void) {
    DIR *d = opendir("/tmp");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, RUNNER_DIR_PREFIX, strlen(RUNNER_DIR_PREFIX)) != 0) continue;
        char *end;
        long pid = strtol(e->d_name + strlen(RUNNER_DIR_PREFIX), &end, 10);
        if (*end != '-' || pid <= 0 || pid > INT_MAX || (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) continue;
        char path[PATH_MAX];
        struct stat st;
        snprintf(path, sizeof path, "/tmp/%s", e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid()) sd_remove_tree(path);
    }
    closedir(d);
}

/* A fresh /tmp/showdown-runner-PID-XXXXXX (dir stays "" on failure), after removing those of dead runs. */
static int make_runner_dir(char *dir, size_t n) {
    sweep_runner_dirs();
    snprintf(dir, n, "/tmp/" RUNNER_DIR_PREFIX "%ld-XXXXXX", (long)getpid());
    if (mkdtemp(dir)) return 0;
    dir[0] = 0;
    return sd_err(SD_EIO, "cannot create a temporary directory: %s", strerror(errno));
}

/* The runner input files of the workload the last framework cell ran (the frameworks of a workload run one after
 * another and read the same files; the reference engine's export takes seconds for the large models). */
static struct { char dir[64], key[PATH_MAX + 160]; } inputs;

void sd_bench_inputs_drop(void) {
    if (inputs.dir[0]) sd_remove_tree(inputs.dir);
    inputs.dir[0] = inputs.key[0] = 0;
}

/* The runner's input files in a directory named with our pid (a later run can tell them left behind): the layer
 * plan, the initial weights and the reference engine's forward output on the first test examples (every
 * workload's forward pass is checked: any layer's weights, token ids, an inference workload's features). */
static int runner_inputs(const sd_bench_opts *a, const sd_workload *w, const sd_dataset *test, const nn_layer *plan,
                         int L, int batch, char *dir, size_t ndir, char *plan_path, size_t nplan) {
    char key[sizeof inputs.key];
    snprintf(key, sizeof key, "%s|%ld|%d|%d|%ld|%s", w->path, (long)a->seed, batch, test->n, (long)a->threads,
             test->source);
    if (strcmp(key, inputs.key) != 0) {
        sd_bench_inputs_drop();
        SD_TRY(make_runner_dir(inputs.dir, sizeof inputs.dir));
        int rc = export_weights(a, w, test, inputs.dir);
        if (rc == 0) rc = write_plan(w, plan, L, batch, inputs.dir, plan_path, nplan);
        if (rc) { sd_bench_inputs_drop(); return rc; }
        snprintf(inputs.key, sizeof inputs.key, "%s", key);
    }
    snprintf(dir, ndir, "%s", inputs.dir);
    snprintf(plan_path, nplan, "%s/plan.json", inputs.dir);
    return 0;
}

/* One workload through a framework runner, on the data the native runs use, a->repeat times. */
/* The interpreter of impl's runner: pytorch's is the newest torch installed (a venv's or Debian's) unless --python
 * names one; a venv framework's is its venv's, unavailable (SD_ENODEV) when not installed or its install failed. */
static int pick_python(const sd_bench_opts *a, const sd_framework *def, const char *impl, char *python, size_t n,
                       sd_torch_choice *torch) {
    char vroot[PATH_MAX];
    if (a->venvs) snprintf(vroot, sizeof vroot, "%s", a->venvs);
    else sd_default_dir(vroot, sizeof vroot, ".venv-frameworks", ".venv-frameworks");
    if (def->venv == NULL && a->python == NULL) {
        sd_runner_pick_torch(vroot, "/usr/bin/python3", "/usr/lib/python3/dist-packages", torch);
        snprintf(python, n, "%s", torch->python);
    } else {
        snprintf(python, n, "%s", a->python ? a->python : "/usr/bin/python3");
    }
    if (!def->venv) return 0;
    snprintf(python, n, "%s/%s/bin/python", vroot, def->venv);
    if (runner_program(a, impl)) return 0;
    if (!exists(python))
        return sd_err(SD_ENODEV, "unavailable: %s is not installed (no %s; `make deps-frameworks` installs it)", impl,
                      python);
    return install_failed(vroot, def->venv, impl);
}

/* "same model": the parameter count was checked at hello; the forward pass on the exported batch of every repeat
 * here. *failed: a repeat's output differs from native's beyond the tolerance. */
static json_t *equivalence_of(const sd_runner_result *res, int nres, int *failed) {
    json_t *eq = json_object();
    json_object_set_new(eq, "tolerance", json_real(EQUIVALENCE_TOLERANCE));
    *failed = 0;
    if (!res[0].equivalence) {
        json_object_set_new(eq, "status", json_string("not checked"));
        return eq;
    }
    int passed = res[0].max_rel_diff <= EQUIVALENCE_TOLERANCE;
    for (int i = 1; i < nres; i++) passed = passed && res[i].equivalence && res[i].max_rel_diff <= EQUIVALENCE_TOLERANCE;
    json_object_set_new(eq, "status", json_string(passed ? "passed" : "failed"));
    json_object_set_new(eq, "max_rel_diff", json_real(res[0].max_rel_diff));
    json_object_set_new(eq, "batch", json_integer(res[0].eq_batch));
    *failed = !passed;
    return eq;
}

/* A framework cell's back-end environment: the runner's hello, the runner and its interpreter, and which torch was
 * chosen and why (the hello has the one it imported). */
static json_t *runner_env(const sd_runner_result *r, const char *runner, const char *python, const sd_torch_choice *t) {
    json_t *env = r->hello ? json_deep_copy(r->hello) : json_object();
    json_object_del(env, "event");
    json_object_set_new(env, "runner", json_string(runner));
    if (python) json_object_set_new(env, "interpreter", json_string(python));
    if (t->source) {
        json_object_set_new(env, "torch_source", json_string(t->source));
        json_object_set_new(env, "torch_dir", json_string(t->torch_dir));
    }
    return env;
}

static void say_repeat(const char *wname, const char *impl, const sd_runner_result *res, const nn_train_result *s) {
    if (s->nepochs == 0) {
        fprintf(stderr, "%s/%s: %s %s on %s: timed inference pass %.2fs for %ld images\n", wname, impl, impl,
                res->version, res->device, s->infer_s, s->infer_images);
        return;
    }
    const nn_epoch_stats *st = &s->epochs[s->nepochs - 1];
    fprintf(stderr, "%s/%s: %s %s on %s: epoch %d train %.2fs val %.2fs accuracy %.4f\n", wname, impl, impl,
            res->version, res->device, st->epoch, st->train_s, st->val_s, st->accuracy);
}

/* A framework cell that did not run, in the results as what happened (unsupported, unavailable, failed); 1 when
 * that is a runtime failure (exit 1): a runner's bad output, not a bad input file. */
static int record_status(const sd_bench_opts *a, const char *wname, const char *impl, int rc, json_t *doc) {
    if (rc == SD_EINTR || rc == SD_EUSAGE) return 0;
    if (rc == SD_EUNSUPPORTED) {
        fprintf(stderr, "showdown bench: %s through %s: %s\n", wname, impl, sd_errmsg());
        sd_results_add_status(doc, wname, impl, a->device, "unsupported", sd_errmsg());
    } else if (rc == SD_ENODEV) {
        if (first_time(sd_errmsg())) fprintf(stderr, "showdown bench: %s: %s\n", impl, sd_errmsg());
        sd_results_add_status(doc, wname, impl, a->device, "unavailable", sd_errmsg());
    } else {
        fprintf(stderr, "showdown bench: %s through %s failed: %s\n", wname, impl, sd_errmsg());
        if (rc == SD_ETIMEOUT) sd_results_add_timeout(doc, wname, impl, a->device, sd_errmsg());
        else sd_results_add_failure(doc, wname, impl, a->device, sd_errmsg());
    }
    sd_results_note_precision(doc, a->precision);
    return rc != SD_EUNSUPPORTED && rc != SD_ENODEV;
}

static int run_framework(const sd_bench_opts *a, const char *wname, const char *impl, json_t *doc, int *failed) {
    sd_workload w;
    SD_TRY(load_workload(a, wname, &w));
    int rc = 0;
    sd_dataset train = {0}, test = {0};
    sd_runner_result *res = NULL;
    nn_train_result *samples = NULL;
    nn_layer *plan = NULL;
    json_t *env = NULL, *eq = NULL;
    int nres = 0;
    char dir[64] = "", plan_path[96];   /* the runner's input files (runner_inputs) */
    nn_train_opts o = train_opts(a, &w);
    size_t nparams = 0;
    int L = nn_model_plan(&w, o.batch, &plan, &nparams);
    if (L < 0) { rc = L; goto done; }
    double flops_fwd, flops_train;
    nn_model_flops(plan, L, &flops_fwd, &flops_train);
    long cap = a->batches > 0 ? a->batches * o.batch : 0;
    sd_runner_data desc;
    if (w.mode == SD_MODE_INFERENCE) {   /* the images of a pass, as the native run generates them */
        long n = cap > 0 && cap < w.infer_images ? cap : w.infer_images;
        SD_TRY_GOTO(rc, sd_data_synthetic(&test, (int)n, w.in_c, w.in_h, w.in_w, w.classes, (uint64_t)a->seed, 1), done);
        desc = (sd_runner_data){.kind = SD_RUNNER_DATA_SYNTHETIC, .seed = (uint64_t)a->seed, .train_n = 0,
                                .test_n = (int)n, .c = w.in_c, .h = w.in_h, .w = w.in_w, .classes = w.classes};
        o.epochs = 0;
    } else {
        SD_TRY_GOTO(rc, load_data(a, &w, cap, &train, &test, &desc), done);
    }
    const sd_framework *def = sd_framework_find(impl);
    char script[PATH_MAX + 64], python[PATH_MAX + 64];
    char wdir[PATH_MAX];
    workloads_dir(a, wdir, sizeof wdir);
    if ((rc = sd_safe_name(impl, "framework")) < 0) goto done;   /* it names the runner script */
    if (!def) { rc = sd_err(SD_EUSAGE, "unknown implementation '%s'", impl); goto done; }
    snprintf(script, sizeof script, "%s/runners/%s", wdir, def->script);
    sd_torch_choice torch = {.source = NULL};
    SD_TRY_GOTO(rc, pick_python(a, def, impl, python, sizeof python, &torch), done);
    /* a time cap (SHOWDOWN_CELL_SECONDS, the default report's) is the first repeat's to apply: the batches it
     * trained are every later repeat's length, uncapped, so the repeats and a verify rerun measure one length */
    const char *envv[3] = {NULL, NULL, NULL};
    int nenv = 0;
    if (def->env) envv[nenv++] = def->env;
    SD_TRY_GOTO(rc, runner_inputs(a, &w, &test, plan, L, o.batch, dir, sizeof dir, plan_path, sizeof plan_path), done);
    int threads = a->threads > 0 ? (int)a->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    sd_runner_opts ro = {.framework = impl, .program = runner_program(a, impl), .python = python,
                         .equivalence_dir = dir, .plan = plan_path, .env = nenv ? envv : NULL,
                         .script = script, .spec_path = w.path, .data = &desc, .epochs = o.epochs,
                         .batch = o.batch, .max_batches = o.max_batches, .shuffle = o.shuffle, .threads = threads,
                         .cudnn_benchmark = strcmp(a->autotune, "off") != 0, .classes = w.classes, .seed = o.seed,
                         .device = a->device, .precision = a->precision, .timeout_s = (double)a->runner_timeout,
                         .limit_s = (double)a->runner_limit,
                         .native_params = (long long)nparams, .stop = sd_sig_flag()};
    if (!a->quiet) fprintf(stderr, "%s/%s: %s runner, %d train / %d test examples, batch %d, %d epoch(s)\n", w.name,
                           impl, ro.program ? ro.program : script, train.n, test.n, o.batch, o.epochs);
    res = calloc((size_t)a->repeat, sizeof *res);
    samples = calloc((size_t)a->repeat, sizeof *samples);
    if (!res || !samples) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    double cap_s = cell_seconds();
    int asked = o.max_batches;
    if (a->fixed_batches) {   /* the length an earlier process of the cell trained under the cap, uncapped */
        if (a->fixed_batches > 0) o.max_batches = ro.max_batches = (int)a->fixed_batches;
        envv[nenv] = "SHOWDOWN_CELL_SECONDS=0";
        ro.env = envv;
        cap_s = 0;
    }
    for (long r = 0; r < a->repeat; r++) {
        SD_TRY_GOTO(rc, sd_runner_run(&ro, &res[r]), done);
        nres++;
        if (r == 0 && cap_s > 0) {
            int k = batches_trained(&res[0].train, o.batch, w.mode == SD_MODE_INFERENCE);
            if (k > 0 && (asked <= 0 || k < asked)) o.max_batches = ro.max_batches = k;
            envv[nenv] = "SHOWDOWN_CELL_SECONDS=0";
            ro.env = envv;
        }
        samples[r] = res[r].train;
        samples[r].flops_fwd = flops_fwd;
        samples[r].flops_train = flops_train;
        samples[r].metric = w.mode == SD_MODE_INFERENCE ? "none" : w.loss == NN_LOSS_SIGMOID_BCE ? "mean_roc_auc" : "accuracy";
        if (!a->quiet) say_repeat(w.name, impl, &res[r], &samples[r]);
    }
    env = runner_env(&res[0], ro.program ? ro.program : script, ro.program ? NULL : python, &torch);
    sd_results_set_library(doc, impl, res[0].version);
    int eq_failed = 0;
    eq = equivalence_of(res, nres, &eq_failed);
    sd_run_info ri = {.w = &w, .implementation = impl, .be = NULL, .backend_name = res[0].device_kind,
                      .device = res[0].device, .precision = a->precision, .backend_env = env,
                      .train = w.mode == SD_MODE_INFERENCE ? &test : &train,
                      .test = &test, .opts = &o, .threads = threads, .samples = samples, .nsamples = nres,
                      .equivalence = eq, .time_cap_s = cap_s,
                      .asked_batches = cap_s > 0 && o.max_batches != asked ? (asked > 0 ? asked : -1) : 0};
    rc = sd_results_add_run(doc, &ri);
    if (rc == 0 && eq_failed) {
        fprintf(stderr, "showdown bench: %s through %s: equivalence failed: forward output differs from native by "
                "%.3g relative (tolerance %g)\n", w.name, impl, res[0].max_rel_diff, EQUIVALENCE_TOLERANCE);
        *failed = SD_ERROR;
    }
done:
    if (rc && record_status(a, w.name, impl, rc, doc)) *failed = SD_ERROR;
    for (int i = 0; i < nres; i++) sd_runner_result_free(&res[i]);
    free(res);
    free(samples);
    free(plan);
    json_decref(env);
    json_decref(eq);
    sd_dataset_free(&train);
    sd_dataset_free(&test);
    sd_workload_free(&w);
    return rc == SD_EINTR || rc == SD_EUSAGE ? rc : 0;
}

/* The native back-ends a cell may name (backend.c's registry knows which were built: an unbuilt one is a cell
 * that fails as unavailable, not a typo). */
static int backend_known(const char *name) {
    static const char *const names[] = {"auto", "ref", "dnnl", "cudnn", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

int sd_bench_cells_check(const sd_bench_opts *o, const sd_bench_cell *cells, int ncells) {
    char wdir[PATH_MAX], path[PATH_MAX + 64];
    workloads_dir(o, wdir, sizeof wdir);
    for (int i = 0; i < ncells; i++) {
        const sd_bench_cell *c = &cells[i];
        if (strcmp(c->implementation, "native") == 0 && !backend_known(c->backend))
            return sd_err(SD_EUSAGE, "--backend: unknown back-end '%s' (expected auto, ref, dnnl, cudnn or all)",
                          c->backend);
        if (strcmp(c->implementation, "native") != 0 &&
            (sd_safe_name(c->implementation, "framework") < 0 || !sd_framework_find(c->implementation)))
            return sd_err(SD_EUSAGE, "--impl: unknown implementation '%s'", c->implementation);
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(cells[j].workload, c->workload) == 0;
        if (seen) continue;
        int is_path = strchr(c->workload, '/') || (strlen(c->workload) > 5 &&
                                                   strcmp(c->workload + strlen(c->workload) - 5, ".json") == 0);
        if (is_path) snprintf(path, sizeof path, "%s", c->workload);
        else snprintf(path, sizeof path, "%s/%s.json", wdir, c->workload);
        SD_TRY(regular_input(path, "workload spec"));
        sd_workload w;
        SD_TRY(load_workload(o, c->workload, &w));
        sd_workload_free(&w);
    }
    return 0;
}

int sd_bench_cell_run(const sd_bench_opts *o, const sd_bench_cell *c, json_t *doc, int *failed) {
    if (strcmp(c->implementation, "native") == 0) return run_one(o, c->workload, c->backend, doc, failed);
    return run_framework(o, c->workload, c->implementation, doc, failed);
}

int sd_bench_describe(FILE *f, const sd_bench_opts *o, const char *workload, int json) {
    sd_workload w;
    SD_TRY(load_workload(o, workload, &w));
    nn_layer *plan = NULL;
    size_t np = 0;
    int batch = o->batch > 0 ? (int)o->batch : w.batch;
    int L = nn_model_plan(&w, batch, &plan, &np), rc = L < 0 ? L : 0;
    if (rc == 0 && json) {
        char *line = NULL;
        if ((rc = plan_line(&line, &w, plan, L, batch)) == 0) fputs(line, f);
        free(line);
    } else if (rc == 0) {
        nn_model_describe(f, &w, plan, L, np);
    }
    free(plan);
    sd_workload_free(&w);
    return rc;
}

int sd_bench_export(const sd_bench_opts *o, const char *workload, const char *dir) {
    sd_workload w;
    SD_TRY(load_workload(o, workload, &w));
    sd_dataset train = {0}, test = {0};
    sd_runner_data desc;
    nn_train_opts t = train_opts(o, &w);
    int rc = load_data(o, &w, o->batches > 0 ? o->batches * t.batch : 0, &train, &test, &desc);
    if (rc == 0) rc = export_weights(o, &w, &test, dir);
    if (rc == 0 && !o->quiet) fprintf(stderr, "%s: weights, input batch and logits written to %s/index.json\n", w.name,
                                      dir);
    sd_dataset_free(&train);
    sd_dataset_free(&test);
    sd_workload_free(&w);
    return rc;
}
