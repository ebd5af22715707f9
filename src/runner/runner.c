/* runner — spawns a framework runner with pipes (fork/exec, own process group), reads its protocol lines
 * (workloads/runners/PROTOCOL.md) with src/core/jv.h under a line-length bound and an idle timeout, and
 * kills the whole group of a runner that hangs, misbehaves or built a different network. */
#include "runner/runner.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/jv.h"

#include <errno.h>
#include <fcntl.h>
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

typedef struct child {
    pid_t pid;
    int out, err;                 /* read ends */
    char tail[SD_RUNNER_STDERR_TAIL + 1];
    size_t tail_len;
} child;

static void kill_group(child *c) {
    if (c->pid <= 0) return;
    kill(-c->pid, SIGTERM);
    int st;
    for (int i = 0; i < 200; i++) {   /* 2 s grace */
        if (waitpid(c->pid, &st, WNOHANG) == c->pid) { kill(-c->pid, SIGKILL); c->pid = -1; return; }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-c->pid, SIGKILL);
    waitpid(c->pid, &st, 0);
    c->pid = -1;
}

/* fork/exec argv with stdout/stderr pipes; exec failure comes back through a close-on-exec pipe. */
static int spawn(child *c, char *const *argv, const char *const *env, const char *framework) {
    int po[2], pe[2], px[2];
    if (pipe(po)) return sd_err(SD_EIO, "%s runner: pipe: %s", framework, strerror(errno));
    if (pipe(pe)) { close(po[0]); close(po[1]); return sd_err(SD_EIO, "%s runner: pipe: %s", framework, strerror(errno)); }
    if (pipe(px)) {
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
        return sd_err(SD_EIO, "%s runner: pipe: %s", framework, strerror(errno));
    }
    fcntl(px[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout); fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]); close(px[0]); close(px[1]);
        return sd_err(SD_EIO, "%s runner: fork: %s", framework, strerror(errno));
    }
    if (pid == 0) {
        setpgid(0, 0);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) { dup2(nul, 0); close(nul); }
        dup2(po[1], 1); dup2(pe[1], 2);
        close(po[0]); close(po[1]); close(pe[0]); close(pe[1]); close(px[0]);
        signal(SIGINT, SIG_DFL); signal(SIGTERM, SIG_DFL); signal(SIGPIPE, SIG_DFL);
        for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);   /* the child's own copy of the strings */
        execv(argv[0], argv);
        int e = errno;
        ssize_t w = write(px[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    setpgid(pid, pid);   /* both sides: no race with the kill */
    close(po[1]); close(pe[1]); close(px[1]);
    int e = 0;
    ssize_t k;
    do k = read(px[0], &e, sizeof e); while (k < 0 && errno == EINTR);
    close(px[0]);
    if (k == (ssize_t)sizeof e) {
        int st;
        waitpid(pid, &st, 0);
        close(po[0]); close(pe[0]);
        return sd_err(SD_ENODEV, "unavailable: cannot start %s runner %s: %s", framework, argv[0], strerror(e));
    }
    c->pid = pid; c->out = po[0]; c->err = pe[0];
    fcntl(c->out, F_SETFL, O_NONBLOCK);
    fcntl(c->err, F_SETFL, O_NONBLOCK);
    return 0;
}

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

static int num(const jv_doc *d, const jv *obj, const char *key, double *out) {
    return jv_get_num(d, obj, key, "epoch event", 1, 0.0, -1.0, out);
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
        long long e = 0, ti = 0, vi = 0;
        SD_TRY_GOTO(rc, jv_get_int(d, root, "epoch", "epoch event", 1, 1, o->epochs, &e), out);
        if (e != s->nepochs + 1) { rc = jv_err(d, jv_get(root, "epoch"), "expected epoch %d (got %lld)", s->nepochs + 1, e); goto out; }
        nn_epoch_stats *st = &s->r->train.epochs[s->nepochs];
        st->epoch = (int)e;
        SD_TRY_GOTO(rc, num(d, root, "train_s", &st->train_s), out);
        SD_TRY_GOTO(rc, num(d, root, "val_s", &st->val_s), out);
        SD_TRY_GOTO(rc, num(d, root, "loss", &st->loss), out);
        SD_TRY_GOTO(rc, num(d, root, "val_loss", &st->val_loss), out);
        SD_TRY_GOTO(rc, jv_get_num(d, root, "accuracy", "epoch event", 1, 0.0, 1.0, &st->accuracy), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "train_images", "epoch event", 1, 1, 1LL << 40, &ti), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "test_images", "epoch event", 1, 1, 1LL << 40, &vi), out);
        if (!(st->train_s > 0)) { rc = jv_err(d, jv_get(root, "train_s"), "train_s must be positive"); goto out; }
        st->train_images = (long)ti; st->test_images = (long)vi;
        s->nepochs++;
        s->r->train.nepochs = s->nepochs;
        goto out;
    }
    if (strcmp(ev, "equivalence") == 0) {
        long long nb = 0;
        SD_TRY_GOTO(rc, jv_get_num(d, root, "max_rel_diff", "equivalence event", 1, 0.0, -1.0, &s->r->max_rel_diff), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "batch", "equivalence event", 0, 0, 1LL << 30, &nb), out);
        s->r->eq_batch = (int)nb;
        s->r->equivalence = 1;
        goto out;
    }
    if (strcmp(ev, "inference") == 0) {   /* a timed inference pass */
        double t = 0, cold = 0;
        long long n = 0;
        SD_TRY_GOTO(rc, jv_get_num(d, root, "timed_s", "inference event", 1, 0.0, -1.0, &t), out);
        SD_TRY_GOTO(rc, jv_get_int(d, root, "images", "inference event", 1, 1, 1LL << 40, &n), out);
        SD_TRY_GOTO(rc, jv_get_num(d, root, "cold_s", "inference event", 0, 0.0, -1.0, &cold), out);
        if (!(t > 0)) { rc = jv_err(d, jv_get(root, "timed_s"), "timed_s must be positive"); goto out; }
        s->r->train.infer_s = t;
        s->r->train.infer_images = (long)n;
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

int sd_runner_run(const sd_runner_opts *o, sd_runner_result *out) {
    state *sp = NULL;
    SD_TRY(sd_runner_proto_new(&sp, o, out));
    char *argv[MAX_ARGS];
    static char abuf[16][1100];
    int nargs = 0;
    build_argv(o, argv, abuf, &nargs);

    child c = {.pid = -1, .out = -1, .err = -1};
    int rc = spawn(&c, argv, o->env, o->framework);
    if (rc) { sd_runner_proto_free(sp); sd_runner_result_free(out); return rc; }

    int out_open = 1, err_open = 1;
    double last = sd_now();
    while (out_open || err_open) {
        if (o->stop && *o->stop) { rc = sd_err(SD_EINTR, "interrupted"); break; }
        if (sd_now() - last > o->timeout_s) {
            rc = sd_err(SD_ERROR, "%s runner timed out: no output for %.0f s (killed)", o->framework, o->timeout_s);
            break;
        }
        struct pollfd pf[2] = {{.fd = out_open ? c.out : -1, .events = POLLIN}, {.fd = err_open ? c.err : -1, .events = POLLIN}};
        int k = poll(pf, 2, 100);
        if (k < 0 && errno != EINTR) { rc = sd_err(SD_EIO, "%s runner: poll: %s", o->framework, strerror(errno)); break; }
        if (k <= 0) continue;
        if (err_open && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[4096];
            ssize_t n = read(c.err, buf, sizeof buf);
            if (n > 0) {
                keep_tail(&c, buf, (size_t)n);
                if ((rc = count_output(sp, (size_t)n)) != 0) break;
            }
            else if (n == 0 || (errno != EAGAIN && errno != EINTR)) err_open = 0;
        }
        if (out_open && (pf[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[65536];
            ssize_t n = read(c.out, buf, sizeof buf);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) { out_open = 0; continue; }
            if (n < 0) continue;
            int lines = sp->lineno;
            rc = sd_runner_proto_feed(sp, buf, (size_t)n);
            if (sp->lineno != lines) last = sd_now();
            if (rc) break;
        }
    }
    state s = *sp;   /* what the protocol said, for the verdict below */
    sd_runner_proto_free(sp);
    int status = 0, exited = 0;
    if (rc == 0 && c.pid > 0) {
        /* stdout closed: give the process the idle timeout to exit */
        double t0 = sd_now();
        while (!exited) {
            pid_t w = waitpid(c.pid, &status, WNOHANG);
            if (w == c.pid) { exited = 1; c.pid = -1; break; }
            if (sd_now() - t0 > o->timeout_s || (o->stop && *o->stop)) break;
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!exited) rc = sd_err(SD_ERROR, "%s runner closed its output but did not exit (killed)", o->framework);
    }
    if (c.pid > 0) kill_group(&c);
    close(c.out); close(c.err);
    char last_err[512];
    tail_last_line(&c, last_err, sizeof last_err);
    if (rc == 0) {
        if (s.error_event) {
            rc = s.unavailable   ? sd_err(SD_ENODEV, "unavailable: %s", s.msg)
                 : s.unsupported ? sd_err(SD_EUNSUPPORTED, "%s", s.msg)
                                 : sd_err(SD_ERROR, "%s runner failed: %s", o->framework, s.msg);
        } else if (exited && WIFSIGNALED(status)) {
            rc = sd_err(SD_ERROR, "%s runner killed by signal %d%s%s", o->framework, WTERMSIG(status),
                        last_err[0] ? ": " : "", last_err);
        } else if (exited && WEXITSTATUS(status) != 0) {
            rc = sd_err(SD_ERROR, "%s runner exited with status %d%s%s", o->framework, WEXITSTATUS(status),
                        last_err[0] ? ": " : "", last_err[0] ? last_err : " (no message)");
        } else if (!s.hello) {
            rc = sd_err(SD_ERROR, "protocol error: %s runner exited without a hello line%s%s", o->framework,
                        last_err[0] ? ": " : "", last_err);
        } else if (!s.done) {
            rc = sd_err(SD_ERROR, "protocol error: %s runner exited after %d of %d epochs without done%s%s",
                        o->framework, s.nepochs, o->epochs, last_err[0] ? ": " : "", last_err);
        }
    }
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
