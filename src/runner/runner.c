/* runner — spawns a framework runner with pipes (core/proc: own process group that dies with showdown, no
 * secrets in its environment), reads its protocol lines (workloads/runners/PROTOCOL.md) with src/core/jv.h under a
 * line-length bound, an idle timeout and a bound on its total time, and kills the whole group of a runner that
 * hangs, misbehaves or built a different network. Measured values are held to the bounds the results reader uses. */
#include "runner/runner.h"
#include "core/clock.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/jv.h"
#include "core/proc.h"

#include <errno.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 64
#define KILL_GRACE_S 2.0   /* SIGTERM first: a runner may flush or release a GPU */

typedef struct child {
    sd_proc p;
    char tail[SD_RUNNER_STDERR_TAIL + 1];
    size_t tail_len;
} child;

static void keep_tail(child *c, const char *buf, size_t n) {
    if (n >= SD_RUNNER_STDERR_TAIL) { buf += n - SD_RUNNER_STDERR_TAIL; n = SD_RUNNER_STDERR_TAIL; }
    if (c->tail_len + n > SD_RUNNER_STDERR_TAIL) {
        size_t drop = c->tail_len + n - SD_RUNNER_STDERR_TAIL;
        memmove(c->tail, c->tail + drop, c->tail_len - drop);
        c->tail_len -= drop;
    }
    memcpy(c->tail + c->tail_len, buf, n);
    c->tail_len += n;
    c->tail[c->tail_len] = 0;
}

/* The last non-empty line of the stderr tail (the exception of a Python traceback), or "". */
static const char *tail_last_line(child *c, char *buf, size_t n) {
    size_t len = c->tail_len;
    while (len && (c->tail[len - 1] == '\n' || c->tail[len - 1] == '\r')) len--;
    size_t s = len;
    while (s && c->tail[s - 1] != '\n') s--;
    size_t m = len - s < n - 1 ? len - s : n - 1;
    memcpy(buf, c->tail + s, m);
    buf[m] = 0;
    return buf;
}

typedef struct sd_runner_proto state;
struct sd_runner_proto {
    const sd_runner_opts *o;
    sd_runner_result *r;
    int lineno, hello, done, nepochs;
    int unavailable;              /* error event said unavailable */
    int unsupported;              /* error event said unsupported */
    int error_event;
    char msg[1024];               /* from an error event */
    char *line;                   /* the line being read (SD_RUNNER_MAX_LINE + 1 bytes) */
    size_t len;
    size_t total, max_output;     /* bytes seen (stdout + stderr) and their bound */
};

/* A measured value, within the bounds the results reader holds a stored run to (bench/results.h): what the
 * report would reject is refused here, at the runner, not stored. */
static int num(const jv_doc *d, const jv *obj, const char *key, const char *what, int required, double *out) {
    return jv_get_num(d, obj, key, what, required, 0.0, SD_RESULTS_MAX_VALUE, out);
}

static int count(const jv_doc *d, const jv *obj, const char *key, const char *what, long long *out) {
    return jv_get_int(d, obj, key, what, 1, 1, (long long)SD_RESULTS_MAX_VALUE, out);
}

/* An epoch event: the next epoch's measurements, each within the results bounds. */
static int on_epoch(state *s, const jv_doc *d, const jv *root) {
    long long e = 0, ti = 0, vi = 0;
    SD_TRY(jv_get_int(d, root, "epoch", "epoch event", 1, 1, s->o->epochs, &e));
    if (e != s->nepochs + 1) return jv_err(d, jv_get(root, "epoch"), "expected epoch %d (got %lld)", s->nepochs + 1, e);
    nn_epoch_stats *st = &s->r->train.epochs[s->nepochs];
    st->epoch = (int)e;
    SD_TRY(num(d, root, "train_s", "epoch event", 1, &st->train_s));
    SD_TRY(num(d, root, "val_s", "epoch event", 1, &st->val_s));
    SD_TRY(num(d, root, "loss", "epoch event", 1, &st->loss));
    SD_TRY(num(d, root, "val_loss", "epoch event", 1, &st->val_loss));
    SD_TRY(jv_get_num(d, root, "accuracy", "epoch event", 1, 0.0, 1.0, &st->accuracy));
    SD_TRY(count(d, root, "train_images", "epoch event", &ti));
    SD_TRY(count(d, root, "test_images", "epoch event", &vi));
    if (!(st->train_s > 0)) return jv_err(d, jv_get(root, "train_s"), "train_s must be positive");
    if ((double)ti / st->train_s > SD_RESULTS_MAX_VALUE)   /* stored as images_per_s */
        return jv_err(d, jv_get(root, "train_s"), "train_s %g for %lld images is more than %g images/s", st->train_s,
                      ti, SD_RESULTS_MAX_VALUE);
    st->train_images = (long)ti;
    st->test_images = (long)vi;
    s->nepochs++;
    s->r->train.nepochs = s->nepochs;
    return 0;
}

/* One protocol line. A negative return ends the run (the caller kills the runner). */
static int handle_line(state *s, const char *line, size_t len) {
    const sd_runner_opts *o = s->o;
    char name[96];
    snprintf(name, sizeof name, "%s runner output line %d", o->framework, s->lineno);
    if (len == 0) return 0;
    jv_doc *d = NULL;
    int rc = jv_parse(&d, name, line, len), mismatch = 0;
    if (rc) goto out;
    const jv *root = jv_root(d);
    const char *ev = NULL;
    if (root->type != JV_OBJECT) { rc = jv_err(d, root, "expected an event object like {\"event\": \"hello\", ...}"); goto out; }
    SD_TRY_GOTO(rc, jv_get_str(d, root, "event", "protocol line", 1, &ev), out);
    if (strcmp(ev, "progress") == 0) goto out;
    if (strcmp(ev, "error") == 0) {
        const char *m = "(no message)", *kind = NULL;
        SD_TRY_GOTO(rc, jv_get_str(d, root, "message", "error event", 0, &m), out);
        SD_TRY_GOTO(rc, jv_get_str(d, root, "kind", "error event", 0, &kind), out);
        snprintf(s->msg, sizeof s->msg, "%s", m);
        s->error_event = 1;
        s->unavailable = kind && strcmp(kind, "unavailable") == 0;
        s->unsupported = kind && strcmp(kind, "unsupported") == 0;
        goto out;
    }
    if (strcmp(ev, "hello") == 0) {
        if (s->hello) { rc = jv_err(d, root, "a second hello event"); goto out; }
        const char *fw = NULL, *ver = NULL, *dev = NULL, *kind = "cpu";
        long long np = 0;
        SD_TRY_GOTO(rc, jv_get_str(d, root, "framework", "hello event", 1, &fw), out);
        SD_TRY_GOTO(rc, jv_get_str(d, root, "version", "hello event", 1, &ver), out);
        SD_TRY_GOTO(rc, jv_get_str(d, root, "device", "hello event", 1, &dev), out);
        SD_TRY_GOTO(rc, jv_get_str(d, root, "device_kind", "hello event", 0, &kind), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "parameters", "hello event", 1, 0, 1LL << 50, &np), out);
        snprintf(s->r->version, sizeof s->r->version, "%s", ver);
        snprintf(s->r->device, sizeof s->r->device, "%s", dev);
        snprintf(s->r->device_kind, sizeof s->r->device_kind, "%s", kind);
        s->r->train.nparams = (size_t)np;
        json_error_t je;
        json_decref(s->r->hello);
        s->r->hello = json_loadb(line, len, 0, &je);
        s->hello = 1;
        if (o->native_params > 0 && np != o->native_params) {
            mismatch = 1;
            rc = sd_err(SD_EINPUT, "architecture mismatch: %s has %lld parameters, native %lld", o->framework, np,
                        o->native_params);
            goto out;
        }
        goto out;
    }
    if (!s->hello) { rc = jv_err(d, root, "expected the hello event first (got \"%s\")", ev); goto out; }
    if (strcmp(ev, "epoch") == 0) {
        rc = on_epoch(s, d, root);
        goto out;
    }
    if (strcmp(ev, "equivalence") == 0) {
        long long nb = 0;
        SD_TRY_GOTO(rc, num(d, root, "max_rel_diff", "equivalence event", 1, &s->r->max_rel_diff), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "batch", "equivalence event", 0, 0, 1LL << 30, &nb), out);
        s->r->eq_batch = (int)nb;
        s->r->equivalence = 1;
        goto out;
    }
    if (strcmp(ev, "inference") == 0) {   /* a timed inference pass */
        double t = 0, cold = 0;
        long long n = 0, passes = 1;
        SD_TRY_GOTO(rc, num(d, root, "timed_s", "inference event", 1, &t), out);
        SD_TRY_GOTO(rc, count(d, root, "images", "inference event", &n), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "passes", "inference event", 0, 1, 1000000, &passes), out);
        SD_TRY_GOTO(rc, num(d, root, "cold_s", "inference event", 0, &cold), out);
        if (!(t > 0)) { rc = jv_err(d, jv_get(root, "timed_s"), "timed_s must be positive"); goto out; }
        if ((double)n / t > SD_RESULTS_MAX_VALUE || t / (double)n * 1000.0 > SD_RESULTS_MAX_VALUE) {
            rc = jv_err(d, jv_get(root, "timed_s"), "timed_s %g for %lld images is out of bounds", t, n);
            goto out;
        }
        s->r->train.infer_s = t;
        s->r->train.infer_images = (long)n;
        s->r->train.infer_passes = (int)passes;
        s->r->train.cold_s = cold;
        goto out;
    }
    if (strcmp(ev, "done") == 0) {
        if (s->nepochs != o->epochs) { rc = jv_err(d, root, "done after %d of %d epochs", s->nepochs, o->epochs); goto out; }
        const jv *conf = jv_get(root, "confusion");
        const int C = s->r->train.classes;
        if (conf && conf->type != JV_NULL) {
            if (conf->type != JV_ARRAY || (int)conf->count != C) { rc = jv_err(d, conf, "expected a %dx%d confusion matrix", C, C); goto out; }
            for (int i = 0; i < C; i++) {
                const jv *row = conf->items[i];
                if (row->type != JV_ARRAY || (int)row->count != C) { rc = jv_err(d, row, "expected a row of %d counts", C); goto out; }
                for (int j = 0; j < C; j++) {
                    const jv *v = row->items[j];
                    if (v->type != JV_NUMBER || !v->is_integer || v->integer < 0) { rc = jv_err(d, v, "expected a count"); goto out; }
                    s->r->train.confusion[(size_t)i * C + j] = v->integer;
                }
            }
        }
        long long peak = 0;
        SD_TRY_GOTO(rc, jv_get_int(d, root, "peak_bytes", "done event", 0, 0, 1LL << 60, &peak), out);
        s->r->train.peak_bytes = (size_t)peak;
        long long rss = 0;   /* the runner process's peak resident memory (absent from older runners) */
        SD_TRY_GOTO(rc, jv_get_int(d, root, "peak_rss_bytes", "done event", 0, 0, 1LL << 60, &rss), out);
        s->r->train.peak_rss_bytes = (size_t)rss;
        s->done = 1;
        goto out;
    }
    /* unknown events are ignored (forward compatibility) */
out:
    if (d) jv_doc_free(d);
    if (rc && !mismatch) sd_err_prefix(rc, "protocol error");
    return rc;
}

static int build_argv(const sd_runner_opts *o, char **argv, char (*buf)[1100], int *nargs) {
    int n = 0, b = 0;
#define ARG(s) do { argv[n++] = (char *)(s); } while (0)
#define ARGF(...) do { snprintf(buf[b], sizeof buf[b], __VA_ARGS__); argv[n++] = buf[b++]; } while (0)
    if (o->program) ARG(o->program);
    else { ARG(o->python ? o->python : "/usr/bin/python3"); ARG(o->script); }
    ARG("--spec"); ARG(o->spec_path);
    const sd_runner_data *d = o->data;
    switch (d->kind) {
    case SD_RUNNER_DATA_IDX:
        ARG("--data"); ARG("idx");
        ARG("--train-images"); ARG(d->train_images); ARG("--train-labels"); ARG(d->train_labels);
        ARG("--test-images"); ARG(d->test_images); ARG("--test-labels"); ARG(d->test_labels);
        break;
    case SD_RUNNER_DATA_CIFAR10:
        ARG("--data"); ARG("cifar10"); ARG("--cifar-dir"); ARG(d->cifar_dir);
        break;
    case SD_RUNNER_DATA_TOKENS:   /* the spec's data keys give num_words, maxlen (shape), padding, truncating */
        if (d->train_tokens[0]) {
            ARG("--data"); ARG("tokens");
            ARG("--train-tokens"); ARG(d->train_tokens); ARG("--test-tokens"); ARG(d->test_tokens);
        } else {
            ARG("--data"); ARG("aclimdb"); ARG("--acl-dir"); ARG(d->acl_dir);
        }
        break;
    case SD_RUNNER_DATA_SYNTHETIC_TOKENS:
        ARG("--data"); ARG("synthetic-tokens");
        ARG("--synthetic-seed"); ARGF("%llu", (unsigned long long)d->seed);
        ARG("--train-n"); ARGF("%d", d->train_n); ARG("--test-n"); ARGF("%d", d->test_n);
        ARG("--shape"); ARGF("%d,%d,%d", d->c, d->h, d->w); ARG("--classes"); ARGF("%d", d->classes);
        ARG("--vocab"); ARGF("%d", d->vocab);
        break;
    default:
        ARG("--data"); ARG("synthetic");
        ARG("--synthetic-seed"); ARGF("%llu", (unsigned long long)d->seed);
        ARG("--train-n"); ARGF("%d", d->train_n); ARG("--test-n"); ARGF("%d", d->test_n);
        ARG("--shape"); ARGF("%d,%d,%d", d->c, d->h, d->w); ARG("--classes"); ARGF("%d", d->classes);
        break;
    }
    ARG("--epochs"); ARGF("%d", o->epochs); ARG("--batch"); ARGF("%d", o->batch);
    ARG("--max-batches"); ARGF("%d", o->max_batches > 0 ? o->max_batches : 0);
    ARG("--seed"); ARGF("%llu", (unsigned long long)o->seed); ARG("--shuffle"); ARGF("%d", o->shuffle ? 1 : 0);
    ARG("--threads"); ARGF("%d", o->threads);
    ARG("--device"); ARG(o->device ? o->device : "auto");
    ARG("--cudnn-benchmark"); ARGF("%d", o->cudnn_benchmark ? 1 : 0);
    ARG("--precision"); ARG(o->precision ? o->precision : "fp32");
    if (o->equivalence_dir) { ARG("--equivalence"); ARG(o->equivalence_dir); }
    if (o->plan) { ARG("--plan"); ARG(o->plan); }
    argv[n] = NULL;
#undef ARG
#undef ARGF
    *nargs = n;
    return 0;
}

/* Count n more bytes of output against the bound. */
static int count_output(state *s, size_t n) {
    s->total += n;
    if (s->total > s->max_output)
        return sd_err(SD_ELIMIT, "protocol error: %s runner printed more than %zu bytes (the bound on a runner's output)",
                      s->o->framework, s->max_output);
    return 0;
}

int sd_runner_proto_new(sd_runner_proto **out, const sd_runner_opts *o, sd_runner_result *r) {
    *out = NULL;
    memset(r, 0, sizeof *r);
    if (o->epochs < 0 || o->classes < 1 || o->classes > 100000)   /* 0 epochs: an inference workload */
        return sd_err(SD_EUSAGE, "%s runner: %d epochs and %d classes", o->framework, o->epochs, o->classes);
    r->train.classes = o->classes;
    r->train.epochs = calloc((size_t)o->epochs + 1, sizeof *r->train.epochs);
    r->train.confusion = calloc((size_t)o->classes * o->classes, sizeof(int64_t));
    state *s = calloc(1, sizeof *s);
    if (s) s->line = malloc(SD_RUNNER_MAX_LINE + 1);
    if (!r->train.epochs || !r->train.confusion || !s || !s->line) {
        if (s) free(s->line);
        free(s);
        sd_runner_result_free(r);
        return sd_err(SD_ENOMEM, "out of memory for the %s runner", o->framework);
    }
    s->o = o;
    s->r = r;
    s->max_output = o->max_output ? o->max_output : SD_RUNNER_MAX_OUTPUT;
    *out = s;
    return 0;
}

int sd_runner_proto_feed(sd_runner_proto *s, const char *buf, size_t n) {
    SD_TRY(count_output(s, n));
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (s->len >= SD_RUNNER_MAX_LINE)   /* stop at the bound, not at the line's end */
                return sd_err(SD_ELIMIT, "protocol error: %s runner output line %d is longer than %u bytes",
                              s->o->framework, s->lineno + 1, SD_RUNNER_MAX_LINE);
            s->line[s->len++] = buf[i];
            continue;
        }
        s->lineno++;
        int rc = handle_line(s, s->line, s->len);
        s->len = 0;
        if (rc) return rc;
    }
    return 0;
}

int sd_runner_proto_seen(const sd_runner_proto *s, int *hello, int *done, int *epochs) {
    *hello = s->hello;
    *done = s->done;
    *epochs = s->nepochs;
    return 0;
}

void sd_runner_proto_free(sd_runner_proto *s) {
    if (!s) return;
    free(s->line);
    free(s);
}

void sd_runner_result_free(sd_runner_result *r) {
    if (!r) return;
    json_decref(r->hello);
    nn_train_result_free(&r->train);
    memset(r, 0, sizeof *r);
}

/* Read what stderr holds now into the tail: bytes read, 0 when nothing (or closed: *open cleared), or an error. */
static int read_err(child *c, state *sp, int *open) {
    char buf[4096];
    ssize_t n = read(c->p.err, buf, sizeof buf);
    if (n > 0) {
        keep_tail(c, buf, (size_t)n);
        int rc = count_output(sp, (size_t)n);
        return rc ? rc : (int)n;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) *open = 0;
    return 0;
}

/* The same for stdout, fed to the protocol reader; *last is when the last complete line came. */
static int read_out(child *c, state *sp, int *open, double *last) {
    char buf[65536];
    ssize_t n = read(c->p.out, buf, sizeof buf);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) *open = 0;
    if (n <= 0) return 0;
    int lines = sp->lineno;
    int rc = sd_runner_proto_feed(sp, buf, (size_t)n);
    if (sp->lineno != lines) *last = sd_now();
    return rc ? rc : (int)n;
}

/* Read the runner until its output closes or it exits. Once the runner itself has exited, what it wrote is
 * drained and the run ends: a descendant still holding the pipes is not waited for (its group is killed). */
static int watch(const sd_runner_opts *o, child *c, state *sp, int *exited) {
    int out_open = 1, err_open = 1, n = 0;
    double start = sd_now(), last = start;
    while (out_open || err_open) {
        if (o->stop && *o->stop) return sd_err(SD_EINTR, "interrupted");
        double t = sd_now();
        if (t - last > o->timeout_s)
            return sd_err(SD_ETIMEOUT, "%s runner timed out: no output for %.0f s (killed)", o->framework, o->timeout_s);
        if (o->limit_s > 0 && t - start > o->limit_s)
            return sd_err(SD_ETIMEOUT, "%s runner timed out: still running after %.0f s in all (--runner-limit; killed)",
                          o->framework, o->limit_s);
        if ((*exited = sd_proc_poll(&c->p)) < 0) return *exited;
        if (*exited) {
            while (out_open && (n = read_out(c, sp, &out_open, &last)) > 0) {}
            if (n < 0) return n;
            while (err_open && (n = read_err(c, sp, &err_open)) > 0) {}
            return n < 0 ? n : 0;
        }
        struct pollfd pf[2] = {{.fd = out_open ? c->p.out : -1, .events = POLLIN},
                               {.fd = err_open ? c->p.err : -1, .events = POLLIN}};
        int k = poll(pf, 2, 100);
        if (k < 0 && errno != EINTR) return sd_err(SD_EIO, "%s runner: poll: %s", o->framework, strerror(errno));
        if (k <= 0) continue;
        if (err_open && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) && (n = read_err(c, sp, &err_open)) < 0) return n;
        if (out_open && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && (n = read_out(c, sp, &out_open, &last)) < 0)
            return n;
    }
    return 0;
}

/* What the run's end says, once the protocol and the exit status are known. */
static int verdict(const sd_runner_opts *o, const state *s, child *c, int exited) {
    char last_err[512];
    tail_last_line(c, last_err, sizeof last_err);
    int status = c->p.status;
    if (s->error_event)
        return s->unavailable   ? sd_err(SD_ENODEV, "unavailable: %s", s->msg)
               : s->unsupported ? sd_err(SD_EUNSUPPORTED, "%s", s->msg)
                                : sd_err(SD_ERROR, "%s runner failed: %s", o->framework, s->msg);
    if (exited && WIFSIGNALED(status))
        return sd_err(SD_ERROR, "%s runner killed by signal %d%s%s", o->framework, WTERMSIG(status),
                      last_err[0] ? ": " : "", last_err);
    if (exited && WEXITSTATUS(status) != 0)
        return sd_err(SD_ERROR, "%s runner exited with status %d%s%s", o->framework, WEXITSTATUS(status),
                      last_err[0] ? ": " : "", last_err[0] ? last_err : " (no message)");
    if (!s->hello)
        return sd_err(SD_ERROR, "protocol error: %s runner exited without a hello line%s%s", o->framework,
                      last_err[0] ? ": " : "", last_err);
    if (!s->done)
        return sd_err(SD_ERROR, "protocol error: %s runner exited after %d of %d epochs without done%s%s",
                      o->framework, s->nepochs, o->epochs, last_err[0] ? ": " : "", last_err);
    return 0;
}

int sd_runner_run(const sd_runner_opts *o, sd_runner_result *out) {
    state *sp = NULL;
    SD_TRY(sd_runner_proto_new(&sp, o, out));
    char *argv[MAX_ARGS];
    static char abuf[16][1100];
    int nargs = 0;
    build_argv(o, argv, abuf, &nargs);

    child c;
    memset(&c, 0, sizeof c);
    sd_proc_opts po = {.argv = argv, .env_add = o->env, .out = SD_PROC_PIPE, .err = SD_PROC_PIPE};
    int rc = sd_proc_spawn(&c.p, &po);
    if (rc) {
        if (rc == SD_ENODEV)
            sd_err(SD_ENODEV, "unavailable: cannot start %s runner %s: %s", o->framework, argv[0], strerror(c.p.exec_errno));
        else sd_err_prefix(rc, "%s runner", o->framework);
        sd_runner_proto_free(sp);
        sd_runner_result_free(out);
        return rc;
    }
    int exited = 0;
    rc = watch(o, &c, sp, &exited);
    state s = *sp;   /* what the protocol said, for the verdict below */
    sd_runner_proto_free(sp);
    if (rc == 0 && !exited) {   /* stdout closed: give the process the idle timeout to exit */
        double t0 = sd_now();
        while (!exited && sd_now() - t0 <= o->timeout_s && !(o->stop && *o->stop)) exited = sd_proc_wait(&c.p, 0.02);
        if (exited < 0) rc = exited;
        else if (!exited) rc = sd_err(SD_ERROR, "%s runner closed its output but did not exit (killed)", o->framework);
    }
    sd_proc_end(&c.p, KILL_GRACE_S);
    if (rc == 0) rc = verdict(o, &s, &c, exited);
    if (rc) sd_runner_result_free(out);
    return rc;
}

int sd_runner_version_cmp(const char *a, const char *b) {
    for (int part = 0; part < 4; part++) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (ea == a) x = -1;   /* a missing component sorts first: "1.13" < "1.13.0" */
        if (eb == b) y = -1;
        if (x != y) return x < y ? -1 : 1;
        if (x < 0) return 0;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
    }
    return 0;
}

/* __version__ of <torch_dir>/version.py into v; 0 when found. */
static int torch_version(const char *torch_dir, char *v, size_t n) {
    char path[1100], line[256];
    snprintf(path, sizeof path, "%s/version.py", torch_dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int rc = -1;
    while (rc && fgets(line, sizeof line, f)) {
        if (strncmp(line, "__version__", 11) != 0) continue;
        char *q = strpbrk(line, "'\""), *e = q ? strchr(q + 1, *q) : NULL;
        if (!q || !e || e == q + 1) continue;
        snprintf(v, n, "%.*s", (int)(e - q - 1), q + 1);
        rc = 0;
    }
    fclose(f);
    return rc;
}

void sd_runner_pick_torch(const char *venv_root, const char *system_python, const char *system_site,
                          sd_torch_choice *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->python, sizeof out->python, "%s", system_python);
    out->source = "none";
    char dir[1100], v[64];
    snprintf(dir, sizeof dir, "%s/torch", system_site);
    if (torch_version(dir, v, sizeof v) == 0) {
        snprintf(out->version, sizeof out->version, "%s", v);
        snprintf(out->torch_dir, sizeof out->torch_dir, "%s", dir);
        out->source = "system";
    }
    if (!venv_root) return;
    char py[1100], pat[1100];
    snprintf(py, sizeof py, "%s/torch/bin/python", venv_root);
    if (access(py, X_OK) != 0) return;
    snprintf(pat, sizeof pat, "%s/torch/lib/python3*/site-packages/torch", venv_root);
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        if (torch_version(g.gl_pathv[i], v, sizeof v) != 0) continue;
        if (out->version[0] && sd_runner_version_cmp(v, out->version) <= 0) continue;   /* the system's is as new */
        snprintf(out->python, sizeof out->python, "%s", py);
        snprintf(out->version, sizeof out->version, "%s", v);
        snprintf(out->torch_dir, sizeof out->torch_dir, "%s", g.gl_pathv[i]);
        out->source = "venv";
    }
    globfree(&g);
}
