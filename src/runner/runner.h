/* runner — starts a framework runner (workloads/runners/PROTOCOL.md) as a child process in its own process
 * group, reads its JSON lines with a bounded line length, an idle timeout and a total time bound, checks the network it built
 * against the native parameter count, and turns its epochs into an nn_train_result like a native run. */
#ifndef SD_RUNNER_H
#define SD_RUNNER_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "nn/train.h"

#define SD_RUNNER_MAX_LINE   (1u << 20)   /* bytes in one protocol line */
#define SD_RUNNER_STDERR_TAIL 4096        /* last bytes of stderr quoted on failure */
#define SD_RUNNER_MAX_OUTPUT (64u << 20)  /* bytes a runner may print in all (stdout + stderr) */

typedef enum sd_runner_data_kind {
    SD_RUNNER_DATA_IDX = 0, SD_RUNNER_DATA_CIFAR10, SD_RUNNER_DATA_SYNTHETIC,
    /* token data */
    SD_RUNNER_DATA_TOKENS,            /* showdown-tokens/1 files, or an aclImdb directory */
    SD_RUNNER_DATA_SYNTHETIC_TOKENS   /* sd_data_synthetic_tokens(seed, n, maxlen = c, vocab, classes) */
} sd_runner_data_kind;

/* The data the native engine used, as the runner receives it. */
typedef struct sd_runner_data {
    sd_runner_data_kind kind;
    char train_images[1024], train_labels[1024], test_images[1024], test_labels[1024];   /* idx */
    char cifar_dir[1024];                                                                  /* cifar10 */
    uint64_t seed;                                                                         /* synthetic */
    int train_n, test_n, c, h, w, classes;
    /* token data */
    char train_tokens[1024], test_tokens[1024];   /* token files; empty: acl_dir */
    char acl_dir[1024];                           /* aclImdb layout */
    char source[512];
    int vocab;                                    /* synthetic tokens */
} sd_runner_data;

typedef struct sd_runner_opts {
    const char *framework;        /* "pytorch": names the run and the messages */
    const char *program;          /* executable; NULL: python + script */
    const char *python;           /* interpreter for script (default /usr/bin/python3) */
    const char *script;           /* e.g. workloads/runners/pytorch_runner.py */
    const char *spec_path;
    const sd_runner_data *data;
    int epochs, batch, max_batches, shuffle, threads, cudnn_benchmark, classes;
    uint64_t seed;
    const char *device;           /* auto, cpu, cuda */
    const char *precision;        /* fp32, tf32, bf16 */
    double timeout_s;             /* idle timeout: seconds without a stdout line */
    double limit_s;               /* bound on the run's total time, progress lines or not; 0: none */
    long long native_params;      /* > 0: hello.parameters must equal it */
    const char *equivalence_dir;  /* non-NULL: --equivalence DIR (nn/export.h), the runner reports an equivalence event */
    const char *plan;             /* non-NULL: --plan PATH, the expanded layer plan ("showdown-plan/1", nn/model.h) */
    const char *const *env;       /* NULL-terminated "NAME=VALUE" added to the runner's environment, or NULL */
    volatile sig_atomic_t *stop;  /* set by a signal handler: kill the runner, SD_EINTR */
    size_t max_output;            /* bound on stdout + stderr bytes; 0: SD_RUNNER_MAX_OUTPUT */
} sd_runner_opts;

typedef struct sd_runner_result {
    char version[64], device[160], device_kind[16];
    json_t *hello;                /* the hello object (framework extras), owned */
    int equivalence;              /* 1: an equivalence event came: max_rel_diff, eq_batch */
    double max_rel_diff;          /* max |framework - native| / max |native| over the exported logits */
    int eq_batch;
    nn_train_result train;        /* epochs, confusion, nparams, peak_bytes */
} sd_runner_result;

/* Run the runner once. 0: ok. SD_ENODEV: unavailable (framework not importable, program cannot start,
 * device absent), message in sd_errmsg(). SD_EUNSUPPORTED: the framework lacks an operation of the
 * workload (error kind "unsupported", message "unsupported: <op>"). Other negatives: failed (timeout, garbage, non-zero exit,
 * architecture mismatch), message in sd_errmsg(). SD_EINTR when *stop was set. */
int sd_runner_run(const sd_runner_opts *o, sd_runner_result *out);
void sd_runner_result_free(sd_runner_result *r);

/* The newest PyTorch installed, for the pytorch runner: <venv_root>/torch (`make deps-frameworks`, PyPI)
 * against system_python's (Debian's python3-torch under system_site). Versions are read from each torch's
 * version.py, without starting Python. With neither found, python is system_python and version "" (the
 * runner then reports "unavailable"). source: "venv", "system" or "none". */
typedef struct sd_torch_choice {
    char python[1024], version[64], torch_dir[1024];
    const char *source;
} sd_torch_choice;
void sd_runner_pick_torch(const char *venv_root, const char *system_python, const char *system_site,
                          sd_torch_choice *out);
/* Numeric comparison of version strings ("2.15.0+cpu" > "1.13.0a0" > "1.9"): <0, 0, >0. */
int sd_runner_version_cmp(const char *a, const char *b);

/* The protocol reader alone, without a process (sd_runner_run drives it; the fuzzers call it directly):
 * feed it stdout bytes in any chunks; lines longer than SD_RUNNER_MAX_LINE and more than max_output bytes
 * in all are SD_ELIMIT, a bad line is a positioned "protocol error". new() allocates out's epochs and
 * confusion matrix (o->epochs, o->classes). hello/done tell whether those events were seen. */
typedef struct sd_runner_proto sd_runner_proto;
int sd_runner_proto_new(sd_runner_proto **p, const sd_runner_opts *o, sd_runner_result *out);
int sd_runner_proto_feed(sd_runner_proto *p, const char *buf, size_t n);
int sd_runner_proto_seen(const sd_runner_proto *p, int *hello, int *done, int *epochs);
void sd_runner_proto_free(sd_runner_proto *p);

#endif
