/* report_facts — facts about the inputs that several sections and the template's texts state (a run's row
 * and column, the back-ends, the machine, the dates), and the one table of {placeholders} with their values. */
#include "render/report_sections.h"
#include "bench/bench.h"
#include "core/err.h"
#include "nn/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *rb_backend_name(const char *b) {
    if (!b) return NULL;
    if (strcmp(b, "ref") == 0 || strcmp(b, "reference") == 0) return "reference C";
    if (strcmp(b, "dnnl") == 0 || strcmp(b, "onednn") == 0) return "oneDNN";
    if (strcmp(b, "cudnn") == 0) return "cuDNN";
    return b;
}

/* The GPU model without count, vendor, family and variant: "Tesla V100-SXM2-16GB" -> "V100", "4x Tesla
 * V100-PCIE-16GB" -> "V100", "NVIDIA A100-SXM4-40GB" -> "A100", "NVIDIA GeForce RTX 4090" -> "RTX 4090". */
const char *rb_gpu_short(rdoc *d, const char *dev) {
    static const char *const drop[] = {"NVIDIA ", "Tesla ", "GeForce ", "Quadro ", NULL};
    size_t k = strspn(dev, "0123456789");   /* a published "4x Tesla V100": the count is given apart */
    if (k && strncmp(dev + k, "x ", 2) == 0) dev += k + 2;
    else if (k && strncmp(dev + k, "× ", strlen("× ")) == 0) dev += k + strlen("× ");
    for (int again = 1; again;) {
        again = 0;
        for (int i = 0; drop[i]; i++)
            if (strncmp(dev, drop[i], strlen(drop[i])) == 0) { dev += strlen(drop[i]); again = 1; }
    }
    return render_printf(d->a, "%.*s", (int)strcspn(dev, "-"), dev);
}

/* The column of a run: its device without the back-end detail ("CPU (oneDNN 2.6.3, 2 threads)" -> "CPU"),
 * so that back-ends on one device share a column and differ by row. GPU runs are grouped by device type and
 * count as the published multi-GPU tables are ("1×V100 | 4×V100"); so are CPU runs over several replicas
 * and published runs that give "gpus". */
const char *rb_device_of(rdoc *d, const rm_run *r) {
    const char *dev = "CPU";
    int gpu = rb_is_gpu(r);
    if (r->device) {
        const char *p = strstr(r->device, " (");
        dev = p ? render_printf(d->a, "%.*s", (int)(p - r->device), r->device) : r->device;
        if (strcasecmp(dev, "cpu") == 0) dev = "CPU";   /* framework runners say "cpu" */
    } else if (gpu) {
        dev = "GPU";
    }
    if (r->published ? r->gpus > 0 : gpu || r->gpus > 1)
        return render_printf(d->a, "%d×%s", r->gpus > 0 ? r->gpus : 1, gpu || r->published ? rb_gpu_short(d, dev) : dev);
    return dev;
}

/* A framework run's backend is its device kind (cpu, cuda; auto when it did not start): the column says that. */
static int is_device_kind(const char *b) {
    return b && (strcmp(b, "cpu") == 0 || strcmp(b, "cuda") == 0 || strcmp(b, "auto") == 0);
}

/* A run's setting as text, or NULL. */
const char *rb_run_setting(const rm_run *r, const char *key) {
    const char *v = NULL;
    for (int k = 0; r && k < r->nsettings; k++)
        if (strcmp(r->settings[k].key, key) == 0) v = r->settings[k].value;
    return v;
}

const char *rb_row_of(rdoc *d, const rm_run *r) {
    const char *b = rb_backend_name(r->backend);
    if (!b || strcmp(b, r->implementation) == 0 || r->published ||
        (strcmp(r->implementation, "native") != 0 && is_device_kind(r->backend)))
        return r->implementation;
    return render_printf(d->a, "%s · %s", r->implementation, b);
}

const char *rb_env_device(const rdoc *d) {
    static const char *const keys[] = {"device", "cpu_model", "cpu", "gpu", "machine", NULL};
    for (const char *const *k = keys; *k; k++) {
        const char *v = render_model_env(d->m, *k);
        if (v) return v;
    }
    return NULL;
}

const char *rb_backends_list(rdoc *d) {
    char buf[512] = "";
    for (int i = 0; i < d->m->nruns; i++) {
        const rm_run *r = &d->m->runs[i];
        /* the engine's back-ends; a framework run's "backend" is its device kind */
        if (r->published || r->failed || !r->backend || strcmp(r->implementation, "native") != 0) continue;
        const char *b = rb_backend_name(r->backend);
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = !d->m->runs[j].published && !d->m->runs[j].failed && d->m->runs[j].backend &&
                   strcmp(d->m->runs[j].implementation, "native") == 0 && strcmp(rb_backend_name(d->m->runs[j].backend), b) == 0;
        if (seen) continue;
        if (buf[0]) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, b, sizeof buf - strlen(buf) - 1);
    }
    return buf[0] ? render_strdup(d->a, buf) : NULL;
}

int rb_workloads(const rdoc *d, const char **out, int max) {
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) {
        const char *w = d->m->runs[i].workload;
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = strcmp(out[k], w) == 0;
        if (!seen && n < max) out[n++] = w;
    }
    return n;
}

static int n_measured(const rdoc *d) {
    int n = 0;
    for (int i = 0; i < d->m->nruns; i++) n += !d->m->runs[i].published && !d->m->runs[i].failed;
    return n;
}

int rb_n_missing_criteria(const rdoc *d) {
    const rm_scores *s = d->m->scores;
    int n = 0;
    if (!s) return 0;
    for (int f = 0; f < s->nfw; f++)
        for (int k = 0; k < s->ncrit; k++) n += isnan(s->fw[f].crit[k]);
    return n;
}

const char *rb_kind_date(const rdoc *d, const char *kind) {
    const char *best = NULL;
    for (int i = 0; i < d->m->nfiles; i++)
        if (strcmp(d->m->files[i].kind, kind) == 0 && d->m->files[i].as_of &&
            (!best || strcmp(d->m->files[i].as_of, best) > 0))
            best = d->m->files[i].as_of;
    return best;
}

int rb_idx_of(const char **a, int *n, const char *s, int max) {
    for (int i = 0; i < *n; i++) if (strcmp(a[i], s) == 0) return i;
    if (*n >= max) return -1;
    a[*n] = s;
    return (*n)++;
}

/* A setting's positive integer value ("10"), else 0. */
int rb_pos_int(const char *s) {
    char *e;
    long v = s ? strtol(s, &e, 10) : 0;
    return s && e != s && *e == 0 && v > 0 && v < 1000000 ? (int)v : 0;
}

/* The word a table cell shows for a run that has no figures: "not run" is a cell the quick report left out
 * (scripts/report_merge.py), not a failure. */
const char *rb_status_word(const rm_run *r) {
    static const char *const kept[] = {"unavailable", "unsupported", "not run"};
    for (size_t i = 0; r->status && i < sizeof kept / sizeof kept[0]; i++)
        if (strcmp(r->status, kept[i]) == 0) return kept[i];
    return "failed";
}

int rb_is_native(const rm_run *r) { return strcmp(r->implementation, "native") == 0; }

int rb_is_gpu(const rm_run *r) { return nn_backend_name_gpu(r->backend); }

int rb_is_measured(const rm_run *r) { return !r->published && !r->failed; }
int rb_ran_slow(const rm_run *r) { return r && r->host_speed > 0 && r->host_speed < SD_HOST_SLOW; }

/* Seconds for one full epoch of the data set: the steady epoch when epochs were whole, else projected from the
 * timed batches' throughput (*projected = 1). NAN when neither is recorded. */
double rb_full_epoch_s(const rm_run *r, int *projected) {
    *projected = 0;
    if (r->max_batches > 0 && !r->epoch_examples) { *projected = 1; return NAN; }   /* cut, and the full size unknown */
    if (r->max_batches > 0 && r->batch > 0 && r->epoch_examples > (long long)r->max_batches * r->batch) {
        *projected = 1;
        double ips = r->images_per_s.median;
        return ips > 0 ? (double)r->epoch_examples / ips : NAN;
    }
    return !isnan(r->steady_epoch_s.median) ? r->steady_epoch_s.median : r->first_epoch_s.median;
}

const char *rb_base(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* ---- placeholders: {name} in a template's texts ---------------------------------------------------------- */
static const char *ph_title(rdoc *d) { return d->t->title; }
static const char *ph_date(rdoc *d) { return d->date ? d->date : "undated"; }
static const char *ph_version(rdoc *d) { (void)d; return SD_VERSION; }
static const char *ph_commit(rdoc *d) { (void)d; return SD_GIT_COMMIT; }
static const char *ph_device(rdoc *d) { const char *v = rb_env_device(d); return v ? v : "an unrecorded device"; }
static const char *ph_backends(rdoc *d) { const char *v = rb_backends_list(d); return v ? v : "none"; }
static const char *ph_n_frameworks(rdoc *d) { return render_printf(d->a, "%d", d->m->scores ? d->m->scores->nfw : 0); }
static const char *ph_n_runs(rdoc *d) { return render_printf(d->a, "%d", n_measured(d)); }
static const char *ph_n_workloads(rdoc *d) {
    const char *w[256];
    return render_printf(d->a, "%d", rb_workloads(d, w, 256));
}
static const char *ph_top_framework(rdoc *d) {
    const rm_scores *s = d->m->scores;
    return s && s->nfw && !isnan(s->fw[0].overall) ? s->fw[0].name : "none";
}
static const char *ph_top_score(rdoc *d) {
    const rm_scores *s = d->m->scores;
    return s && s->nfw && !isnan(s->fw[0].overall) ? render_printf(d->a, "%.1f", s->fw[0].overall) : "missing";
}
static const char *ph_scores_as_of(rdoc *d) {
    const char *v = rb_kind_date(d, "scores");
    return v ? v : d->m->scores ? "undated" : "– (no scores)";
}
static const char *ph_results_as_of(rdoc *d) {
    const char *v = rb_kind_date(d, "results");
    return v ? v : n_measured(d) ? "undated" : "– (no results)";
}
static const char *ph_n_missing(rdoc *d) { return render_printf(d->a, "%d", rb_n_missing_criteria(d)); }

const rt_placeholder render_placeholders[] = {
    {"title", ph_title},
    {"date", ph_date},
    {"version", ph_version},
    {"commit", ph_commit},
    {"device", ph_device},
    {"backends", ph_backends},
    {"n_frameworks", ph_n_frameworks},
    {"n_runs", ph_n_runs},
    {"n_workloads", ph_n_workloads},
    {"top_framework", ph_top_framework},
    {"top_score", ph_top_score},
    {"scores_as_of", ph_scores_as_of},
    {"results_as_of", ph_results_as_of},
    {"n_missing", ph_n_missing},
    {NULL, NULL},
};

/* The value of the placeholder named by name[0..n), or NULL when there is none of that name. */
static const char *placeholder(rdoc *d, const char *name, size_t n) {
    for (const rt_placeholder *p = render_placeholders; p->name; p++)
        if (strlen(p->name) == n && strncmp(name, p->name, n) == 0) return p->value(d);
    return NULL;
}

const char *rb_expand(rdoc *d, const char *s) {
    if (!s) return NULL;
    size_t cap = strlen(s) * 2 + 256, k = 0;
    char *o = malloc(cap);
    if (!o) return s;
    for (const char *p = s; *p; p++) {
        const char *add = NULL;
        size_t alen = 0;
        char one[2] = {*p, 0};
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) { one[0] = *p; add = one; alen = 1; p++; }
        else if (*p == '{' && strchr(p, '}')) {
            const char *e = strchr(p, '}');
            add = placeholder(d, p + 1, (size_t)(e - p - 1));
            if (add) p = e; else add = one;
            alen = strlen(add);
        } else { add = one; alen = 1; }
        if (k + alen + 1 > cap) {
            cap = (k + alen + 1) * 2;
            char *q = realloc(o, cap);
            if (!q) { free(o); return s; }
            o = q;
        }
        memcpy(o + k, add, alen);
        k += alen;
    }
    o[k] = 0;
    const char *r = render_strdup(d->a, o);
    free(o);
    return r ? r : s;
}
