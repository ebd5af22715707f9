/* spec — reads workloads/<name>.json ("showdown-workload/1" or "/2") into an sd_workload. Every problem is
 * reported as "FILE:LINE:COL: ..." naming what was expected: unknown keys, wrong types, values out of
 * range. The format is documented in workloads/README.md.
 * Version 2 adds named blocks (reusable layer lists with integer parameters written "$name"), repeats,
 * and block connections (residual add, dense concatenation); they expand here into the flat DAG of
 * nn_layer_spec the planner reads, bounded by SD_SPEC_MAX_LAYERS layers and SPEC_MAX_DEPTH nesting. */
#include "nn/spec.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#define SCHEMA "showdown-workload/1"
#define SCHEMA2 "showdown-workload/2"
#define SPEC_MAX_DEPTH 8      /* blocks inside blocks */
#define SPEC_MAX_PARAMS 16    /* parameters of one block */

/* Block parameters in scope: "$name" in an integer field takes the value. */
typedef struct spec_env {
    int n;
    const char *name[SPEC_MAX_PARAMS];
    long long val[SPEC_MAX_PARAMS];
} spec_env;

typedef struct spec_ctx {
    const jv_doc *d;
    sd_workload *w;
    int cap;                  /* layers allocated */
    const jv *blocks;         /* the "blocks" object, or NULL */
    int depth;
} spec_ctx;

/* An integer member that may be written "$param". Absent: *out unchanged. */
static int get_int_p(const jv_doc *d, const spec_env *env, const jv *obj, const char *key, const char *what,
                     int required, long long lo, long long hi, long long *out) {
    const jv *v = jv_get(obj, key);
    if (v && v->type == JV_STRING && v->string[0] == '$') {
        for (int i = env ? env->n - 1 : -1; i >= 0; i--)
            if (strcmp(env->name[i], v->string + 1) == 0) {
                if (env->val[i] < lo || env->val[i] > hi)
                    return jv_err(d, v, "value %lld of '%s' (from %s) in %s out of range [%lld, %lld]", env->val[i], key,
                                  v->string, what, lo, hi);
                *out = env->val[i];
                return 0;
            }
        return jv_err(d, v, "unknown parameter '%s' in %s (not a parameter of the enclosing block)", v->string, what);
    }
    return jv_get_int(d, obj, key, what, required, lo, hi, out);
}

/* An int or a [a, b] pair of ints, each in [lo, hi]. */
static int get_pair(const jv_doc *d, const spec_env *env, const jv *obj, const char *key, const char *what,
                    int lo, int hi, int *a, int *b) {
    const jv *v = jv_get(obj, key);
    if (!v) return 0;
    if (v->type == JV_ARRAY) {
        if (v->count != 2) return jv_err(d, v, "expected [height, width] for '%s' in %s (got %zu values)", key, what, v->count);
        int out[2];
        for (int i = 0; i < 2; i++) {
            const jv *e = v->items[i];
            if (e->type != JV_NUMBER || !e->is_integer)
                return jv_err(d, e, "expected an integer in '%s' (got %s)", key, jv_type_name(e->type));
            if (e->integer < lo || e->integer > hi)
                return jv_err(d, e, "value %lld in '%s' out of range [%d, %d]", e->integer, key, lo, hi);
            out[i] = (int)e->integer;
        }
        *a = out[0]; *b = out[1];
        return 0;
    }
    long long x = 0;
    SD_TRY(get_int_p(d, env, obj, key, what, 0, lo, hi, &x));
    *a = *b = (int)x;
    return 0;
}

/* "valid" (0), "same" (k/2 for odd k), an int, or a pair. */
static int get_padding(const jv_doc *d, const spec_env *env, const jv *obj, const char *what, nn_layer_spec *l) {
    const jv *v = jv_get(obj, "padding");
    l->ph = l->pw = 0;
    if (!v) return 0;
    if (v->type == JV_STRING) {
        if (strcmp(v->string, "valid") == 0) return 0;
        if (strcmp(v->string, "same") == 0) {
            if (l->kh % 2 == 0 || l->kw % 2 == 0 || l->sh != 1 || l->sw != 1)
                return jv_err(d, v, "'same' padding needs an odd kernel and stride 1 in %s (give the padding as a number)", what);
            l->ph = l->kh / 2; l->pw = l->kw / 2;
            return 0;
        }
        return jv_err(d, v, "expected \"valid\", \"same\", a number or [h, w] for 'padding' in %s (got \"%s\")", what, v->string);
    }
    SD_TRY(get_pair(d, env, obj, "padding", what, 0, 64, &l->ph, &l->pw));
    if (l->ph >= l->kh || l->pw >= l->kw)
        return jv_err(d, v, "padding %dx%d must be smaller than the window %dx%d in %s", l->ph, l->pw, l->kh, l->kw, what);
    return 0;
}

/* "dense, conv2d, ..., repeat_vector": the layer ops a spec may write, in the op table's order. */
static void layer_op_list(char *buf, size_t n) {
    size_t o = 0;
    buf[0] = 0;
    for (int k = 0; k < NN_OP_COUNT && o < n; k++) {
        const char *name = nn_op_info_of((nn_op_kind)k)->spec_name;
        if (name) o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? ", " : "", name);
    }
}

static int parse_layer(const jv_doc *d, const spec_env *env, const jv *v, nn_layer_spec *l) {
    SD_TRY(jv_expect(d, v, JV_OBJECT, "a layer object like {\"op\": \"dense\", \"units\": 10}"));
    const char *op = NULL;
    SD_TRY(jv_get_str(d, v, "op", "layer", 1, &op));
    memset(l, 0, sizeof *l);
    l->line = v->line; l->col = v->col; l->bias = 1;
    int found = 0;
    for (int k = 0; k < NN_OP_COUNT; k++) {
        const char *name = nn_op_info_of((nn_op_kind)k)->spec_name;
        if (name && strcmp(op, name) == 0) { l->kind = (nn_op_kind)k; found = 1; }
    }
    if (!found) {
        char ops[256];
        layer_op_list(ops, sizeof ops);
        return jv_err(d, jv_get(v, "op"), "unknown layer op '%s' (expected one of: %s; or {\"block\": NAME})", op, ops);
    }
    char what[64];
    snprintf(what, sizeof what, "%s layer", op);
    long long x;
    switch (l->kind) {
    case NN_OP_DENSE: {
        static const char *const keys[] = {"op", "units", "bias", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        SD_TRY(get_int_p(d, env, v, "units", what, 1, 1, 1 << 20, &x));
        l->units = (int)x;
        SD_TRY(jv_get_bool(d, v, "bias", what, 0, &l->bias));
        return 0;
    }
    case NN_OP_CONV2D: {
        static const char *const keys[] = {"op", "filters", "kernel", "stride", "padding", "bias", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        SD_TRY(get_int_p(d, env, v, "filters", what, 1, 1, 1 << 16, &x));
        l->units = (int)x;
        if (!jv_get(v, "kernel")) return jv_err(d, v, "missing key 'kernel' in %s", what);
        SD_TRY(get_pair(d, env, v, "kernel", what, 1, 64, &l->kh, &l->kw));
        l->sh = l->sw = 1;
        SD_TRY(get_pair(d, env, v, "stride", what, 1, 64, &l->sh, &l->sw));
        SD_TRY(get_padding(d, env, v, what, l));
        SD_TRY(jv_get_bool(d, v, "bias", what, 0, &l->bias));
        return 0;
    }
    case NN_OP_MAXPOOL:
    case NN_OP_AVGPOOL: {
        static const char *const keys[] = {"op", "size", "stride", "padding", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        if (!jv_get(v, "size")) return jv_err(d, v, "missing key 'size' in %s", what);
        SD_TRY(get_pair(d, env, v, "size", what, 1, 64, &l->kh, &l->kw));
        l->sh = l->kh; l->sw = l->kw;
        SD_TRY(get_pair(d, env, v, "stride", what, 1, 64, &l->sh, &l->sw));
        SD_TRY(get_padding(d, env, v, what, l));
        l->bias = 0;
        return 0;
    }
    case NN_OP_DROPOUT: {
        static const char *const keys[] = {"op", "rate", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        double r = 0;
        SD_TRY(jv_get_num(d, v, "rate", what, 1, 0.0, 1.0, &r));
        if (r >= 1.0) return jv_err(d, jv_get(v, "rate"), "value %g of 'rate' in %s out of range [0, 1)", r, what);
        l->rate = (float)r;
        l->bias = 0;
        return 0;
    }
    case NN_OP_BATCHNORM: {
        static const char *const keys[] = {"op", "eps", "momentum", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        double eps = 1e-5, mom = 0.1;
        SD_TRY(jv_get_num(d, v, "eps", what, 0, 1e-12, 1.0, &eps));
        SD_TRY(jv_get_num(d, v, "momentum", what, 0, 0.0, 1.0, &mom));
        l->eps = (float)eps;
        l->momentum = (float)mom;
        return 0;
    }
    /* recurrent ops */
    case NN_OP_EMBEDDING: {
        static const char *const keys[] = {"op", "vocab", "units", "range", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        SD_TRY(get_int_p(d, env, v, "vocab", what, 1, 1, 1 << 24, &x));
        l->vocab = (int)x;
        SD_TRY(get_int_p(d, env, v, "units", what, 1, 1, 1 << 16, &x));
        l->units = (int)x;
        if (jv_get(v, "range")) {   /* [from, to): the ids this embedding reads (several inputs in one) */
            SD_TRY(get_pair(d, env, v, "range", what, 0, 1 << 20, &l->range_from, &l->range_to));
            if (l->range_to <= l->range_from)
                return jv_err(d, jv_get(v, "range"), "empty range [%d, %d) in %s", l->range_from, l->range_to, what);
        }
        l->bias = 0;
        return 0;
    }
    case NN_OP_REPEAT: {
        static const char *const keys[] = {"op", "times", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        SD_TRY(get_int_p(d, env, v, "times", what, 1, 1, 1 << 20, &x));
        l->units = (int)x;
        l->bias = 0;
        return 0;
    }
    case NN_OP_GRU:
    case NN_OP_LSTM: {
        static const char *const keys[] = {"op", "units", "return_sequences", "time_distributed", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        SD_TRY(get_int_p(d, env, v, "units", what, 1, 1, 1 << 14, &x));
        l->units = (int)x;
        SD_TRY(jv_get_bool(d, v, "return_sequences", what, 0, &l->ret_seq));
        SD_TRY(jv_get_bool(d, v, "time_distributed", what, 0, &l->distributed));
        l->bias = 0;   /* the biases are part of the recurrent weight slice */
        return 0;
    }
    default: {
        static const char *const keys[] = {"op", "repeat", NULL};
        SD_TRY(jv_check_keys(d, v, what, keys));
        l->bias = 0;
        return 0;
    }
    }
}

/* ---- blocks, repeats, connections ---------------------------------------------------------------- */

static int emit(spec_ctx *c, const jv *at, nn_layer_spec *l, int *cur) {
    sd_workload *w = c->w;
    if (w->nlayers >= SD_SPEC_MAX_LAYERS)
        return jv_err(c->d, at, "too many layers after expanding blocks and repeats (at most %d)", SD_SPEC_MAX_LAYERS);
    if (w->nlayers == c->cap) {
        int ncap = c->cap ? 2 * c->cap : 64;
        if (ncap > SD_SPEC_MAX_LAYERS) ncap = SD_SPEC_MAX_LAYERS;
        nn_layer_spec *p = realloc(w->layers, sizeof *p * (size_t)ncap);
        SD_ALLOC_CHECK(p);
        w->layers = p;
        c->cap = ncap;
    }
    w->layers[w->nlayers] = *l;
    *cur = w->nlayers++;
    return 0;
}

/* A connection layer (add, concat) of inputs a and b, positioned at the block use. */
static int emit_join(spec_ctx *c, const jv *at, nn_op_kind kind, int a, int b, int *cur) {
    nn_layer_spec l = {.kind = kind, .line = at->line, .col = at->col, .ninputs = 2, .inputs = {a, b}};
    return emit(c, at, &l, cur);
}

static int expand_list(spec_ctx *c, const spec_env *env, const jv *list, const char *what, int *cur);

static int expand_block(spec_ctx *c, const spec_env *outer, const jv *use, int *cur) {
    const jv_doc *d = c->d;
    const char *name = NULL;
    SD_TRY(jv_get_str(d, use, "block", "block use", 1, &name));
    const jv *def = c->blocks ? jv_get(c->blocks, name) : NULL;
    if (!def) return jv_err(d, jv_get(use, "block"), "unknown block '%s' (define it under model.blocks)", name);
    if (c->depth >= SPEC_MAX_DEPTH)
        return jv_err(d, use, "blocks nest deeper than %d (does block '%s' use itself?)", SPEC_MAX_DEPTH, name);
    /* parameters: the definition's defaults, overridden at the use */
    spec_env env = {0};
    const jv *params = jv_get(def, "params");
    const char *allowed[SPEC_MAX_PARAMS + 4] = {"block", "repeat", "project"};
    int na = 3;
    if (params) {
        for (size_t i = 0; i < params->count; i++) {
            const jv *p = params->items[i];
            env.name[env.n] = p->key;
            SD_TRY(get_int_p(d, outer, params, p->key, "block params", 1, -(1LL << 30), 1LL << 30, &env.val[env.n]));
            allowed[na++] = p->key;
            env.n++;
        }
    }
    allowed[na] = NULL;
    char what[96];
    snprintf(what, sizeof what, "use of block '%s'", name);
    SD_TRY(jv_check_keys(d, use, what, allowed));
    for (int i = 0; i < env.n; i++)
        SD_TRY(get_int_p(d, outer, use, env.name[i], what, 0, -(1LL << 30), 1LL << 30, &env.val[i]));
    int project = 0;
    SD_TRY(jv_get_bool(d, use, "project", what, 0, &project));
    const char *conn = "none";
    SD_TRY(jv_get_str(d, def, "connection", "block", 0, &conn));
    const jv *proj = jv_get(def, "projection");
    if (project && !proj)
        return jv_err(d, jv_get(use, "project"), "block '%s' has no 'projection' layers to project with", name);
    if (project && strcmp(conn, "residual") != 0)
        return jv_err(d, jv_get(use, "project"), "\"project\" needs a block with \"connection\": \"residual\"");
    c->depth++;
    int x_in = *cur, main_out = *cur, rc = 0;
    SD_TRY(expand_list(c, &env, jv_get(def, "layers"), "block layers", &main_out));
    if (strcmp(conn, "residual") == 0) {
        int sc = x_in;
        if (project) SD_TRY(expand_list(c, &env, proj, "block projection", &sc));
        rc = emit_join(c, use, NN_OP_ADD, main_out, sc, cur);
    } else if (strcmp(conn, "concat") == 0) {
        rc = emit_join(c, use, NN_OP_CONCAT, x_in, main_out, cur);
    } else {
        *cur = main_out;
    }
    if (rc == 0 && jv_get(def, "after")) rc = expand_list(c, &env, jv_get(def, "after"), "block after", cur);
    c->depth--;
    return rc;
}

static int expand_item(spec_ctx *c, const spec_env *env, const jv *v, int *cur) {
    const jv_doc *d = c->d;
    SD_TRY(jv_expect(d, v, JV_OBJECT, "a layer object like {\"op\": \"dense\", \"units\": 10} or {\"block\": NAME}"));
    long long rep = 1;
    SD_TRY(get_int_p(d, env, v, "repeat", "layer", 0, 1, SD_SPEC_MAX_LAYERS, &rep));
    for (long long r = 0; r < rep; r++) {
        if (jv_get(v, "block")) {
            SD_TRY(expand_block(c, env, v, cur));
            continue;
        }
        nn_layer_spec l;
        SD_TRY(parse_layer(d, env, v, &l));
        l.ninputs = 1;
        l.inputs[0] = *cur;
        SD_TRY(emit(c, v, &l, cur));
    }
    return 0;
}

static int expand_list(spec_ctx *c, const spec_env *env, const jv *list, const char *what, int *cur) {
    const jv_doc *d = c->d;
    if (!list) return 0;
    SD_TRY(jv_expect(d, list, JV_ARRAY, what));
    for (size_t i = 0; i < list->count; i++) SD_TRY(expand_item(c, env, list->items[i], cur));
    return 0;
}

/* Each block definition: keys and types (its layers are checked when it is used). */
static int check_blocks(const jv_doc *d, const jv *blocks) {
    SD_TRY(jv_expect(d, blocks, JV_OBJECT, "an object of named blocks"));
    for (size_t i = 0; i < blocks->count; i++) {
        const jv *b = blocks->items[i];
        SD_TRY(jv_expect(d, b, JV_OBJECT, "a block like {\"layers\": [...], \"connection\": \"residual\"}"));
        static const char *const keys[] = {"params", "layers", "connection", "projection", "after", NULL};
        SD_TRY(jv_check_keys(d, b, "block", keys));
        if (!jv_get(b, "layers")) return jv_err(d, b, "missing key 'layers' in block '%s'", b->key);
        SD_TRY(jv_expect(d, jv_get(b, "layers"), JV_ARRAY, "a list of layers"));
        const char *conn = NULL;
        SD_TRY(jv_get_str(d, b, "connection", "block", 0, &conn));
        if (conn && strcmp(conn, "residual") && strcmp(conn, "concat") && strcmp(conn, "none"))
            return jv_err(d, jv_get(b, "connection"), "unknown connection '%s' (expected residual, concat or none)", conn);
        const jv *p = jv_get(b, "params");
        if (p) {
            SD_TRY(jv_expect(d, p, JV_OBJECT, "an object of integer parameters like {\"filters\": 64}"));
            if (p->count > SPEC_MAX_PARAMS) return jv_err(d, p, "too many parameters (at most %d)", SPEC_MAX_PARAMS);
            for (size_t k = 0; k < p->count; k++) {
                static const char *const reserved[] = {"block", "repeat", "project", NULL};
                for (int r = 0; reserved[r]; r++)
                    if (strcmp(p->items[k]->key, reserved[r]) == 0)
                        return jv_err_key(d, p->items[k], "'%s' is reserved and cannot be a block parameter", reserved[r]);
            }
        }
    }
    return 0;
}

static int parse_optimizer(const jv_doc *d, const jv *v, nn_optim *o) {
    SD_TRY(jv_expect(d, v, JV_OBJECT, "an optimizer object like {\"name\": \"sgd\", \"lr\": 0.01}"));
    const char *name = NULL;
    SD_TRY(jv_get_str(d, v, "name", "optimizer", 1, &name));
    memset(o, 0, sizeof *o);
    double lr = 0, mom = 0, rho = 0.9, b1 = 0.9, b2 = 0.999, eps = 1e-7;
    if (strcmp(name, "sgd") == 0) {
        static const char *const keys[] = {"name", "lr", "momentum", NULL};
        SD_TRY(jv_check_keys(d, v, "sgd optimizer", keys));
        o->kind = NN_OPTIM_SGD;
        SD_TRY(jv_get_num(d, v, "lr", "sgd optimizer", 1, 0.0, 100.0, &lr));
        SD_TRY(jv_get_num(d, v, "momentum", "sgd optimizer", 0, 0.0, 0.999999, &mom));
    } else if (strcmp(name, "rmsprop") == 0) {
        static const char *const keys[] = {"name", "lr", "rho", "eps", NULL};
        SD_TRY(jv_check_keys(d, v, "rmsprop optimizer", keys));
        o->kind = NN_OPTIM_RMSPROP; lr = 0.001;
        SD_TRY(jv_get_num(d, v, "lr", "rmsprop optimizer", 0, 0.0, 100.0, &lr));
        SD_TRY(jv_get_num(d, v, "rho", "rmsprop optimizer", 0, 0.0, 1.0, &rho));
        SD_TRY(jv_get_num(d, v, "eps", "rmsprop optimizer", 0, 0.0, 1.0, &eps));
    } else if (strcmp(name, "adadelta") == 0) {
        static const char *const keys[] = {"name", "lr", "rho", "eps", NULL};
        SD_TRY(jv_check_keys(d, v, "adadelta optimizer", keys));
        o->kind = NN_OPTIM_ADADELTA; lr = 1.0; rho = 0.95;
        SD_TRY(jv_get_num(d, v, "lr", "adadelta optimizer", 0, 0.0, 100.0, &lr));
        SD_TRY(jv_get_num(d, v, "rho", "adadelta optimizer", 0, 0.0, 1.0, &rho));
        SD_TRY(jv_get_num(d, v, "eps", "adadelta optimizer", 0, 0.0, 1.0, &eps));
    } else if (strcmp(name, "adam") == 0) {
        static const char *const keys[] = {"name", "lr", "beta1", "beta2", "eps", NULL};
        SD_TRY(jv_check_keys(d, v, "adam optimizer", keys));
        o->kind = NN_OPTIM_ADAM; lr = 0.001;
        SD_TRY(jv_get_num(d, v, "lr", "adam optimizer", 0, 0.0, 100.0, &lr));
        SD_TRY(jv_get_num(d, v, "beta1", "adam optimizer", 0, 0.0, 0.999999, &b1));
        SD_TRY(jv_get_num(d, v, "beta2", "adam optimizer", 0, 0.0, 0.999999999, &b2));
        SD_TRY(jv_get_num(d, v, "eps", "adam optimizer", 0, 0.0, 1.0, &eps));
    } else {
        return jv_err(d, jv_get(v, "name"), "unknown optimizer '%s' (expected one of: sgd, rmsprop, adadelta, adam)", name);
    }
    o->lr = (float)lr; o->momentum = (float)mom; o->rho = (float)rho;
    o->beta1 = (float)b1; o->beta2 = (float)b2; o->eps = (float)eps;
    return 0;
}

static int parse_init(const jv_doc *d, const jv *obj, const char *key, nn_init_kind *out) {
    const char *s = NULL;
    SD_TRY(jv_get_str(d, obj, key, "init", 0, &s));
    if (!s) return 0;
    if (strcmp(s, "glorot_uniform") == 0) *out = NN_INIT_GLOROT_UNIFORM;
    else if (strcmp(s, "zeros") == 0) *out = NN_INIT_ZEROS;
    else return jv_err(d, jv_get(obj, key), "unknown initialiser '%s' (expected glorot_uniform or zeros)", s);
    return 0;
}

/* The "data" object: dataset, token options, input shape, classes and split sizes. */
static int parse_data(const jv_doc *d, const jv *root, sd_workload *w) {
    const jv *data = jv_get(root, "data");
    if (!data) return jv_err(d, root, "missing key 'data' in workload");
    SD_TRY(jv_expect(d, data, JV_OBJECT, "a data object"));
    static const char *const dkeys[] = {"dataset", "shape", "classes", "train", "test",
                                        "num_words", "padding", "truncating", NULL};
    SD_TRY(jv_check_keys(d, data, "data", dkeys));
    SD_TRY(jv_get_str_copy(d, data, "dataset", "data", 1, w->dataset, sizeof w->dataset));
    if (strcmp(w->dataset, "mnist") && strcmp(w->dataset, "cifar10") && strcmp(w->dataset, "synthetic") &&
        strcmp(w->dataset, "imdb") && strcmp(w->dataset, "babi"))
        return jv_err(d, jv_get(data, "dataset"), "unknown dataset '%s' (expected mnist, cifar10, imdb, babi or synthetic)", w->dataset);
    /* token data: Keras imdb.load_data(num_words) and pad_sequences(padding, truncating) */
    {
        long long nw = 0;
        SD_TRY(jv_get_int(d, data, "num_words", "data", 0, 4, 1 << 24, &nw));
        w->num_words = (int)nw;
        const char *keys[2] = {"padding", "truncating"};
        int *dst[2] = {&w->pad_post, &w->trunc_post};
        for (int k = 0; k < 2; k++) {
            const char *sv = NULL;
            SD_TRY(jv_get_str(d, data, keys[k], "data", 0, &sv));
            if (!sv) continue;
            if (strcmp(sv, "pre") && strcmp(sv, "post"))
                return jv_err(d, jv_get(data, keys[k]), "expected \"pre\" or \"post\" for '%s' in data (got \"%s\")",
                              keys[k], sv);
            *dst[k] = strcmp(sv, "post") == 0;
        }
    }
    const jv *shape = jv_get(data, "shape");
    if (!shape) return jv_err(d, data, "missing key 'shape' in data");
    if (shape->type != JV_ARRAY || shape->count != 3)
        return jv_err(d, shape, "expected [channels, height, width] for 'shape' in data");
    int dims[3];
    for (int i = 0; i < 3; i++) {
        const jv *e = shape->items[i];
        if (e->type != JV_NUMBER || !e->is_integer || e->integer < 1 || e->integer > 4096)
            return jv_err(d, e, "expected an integer in [1, 4096] in 'shape'");
        dims[i] = (int)e->integer;
    }
    if ((double)dims[0] * dims[1] * dims[2] > 1e9)   /* as every layer's output (nn_model_plan): ints stay exact */
        return jv_err(d, shape, "input shape %dx%dx%d has %.0f values per example (at most 1e9)", dims[0], dims[1],
                      dims[2], (double)dims[0] * dims[1] * dims[2]);
    w->in_c = dims[0]; w->in_h = dims[1]; w->in_w = dims[2];
    long long x;
    int tr_req = w->mode == SD_MODE_TRAIN;   /* an inference workload needs no classes or split sizes */
    x = 1;
    SD_TRY(jv_get_int(d, data, "classes", "data", tr_req, 2, 100000, &x)); w->classes = (int)x;
    x = 0;
    SD_TRY(jv_get_int(d, data, "train", "data", tr_req, 1, 100000000, &x)); w->train_n = (int)x;
    SD_TRY(jv_get_int(d, data, "test", "data", tr_req, 1, 100000000, &x)); w->test_n = (int)x;
    return 0;
}

/* The "model" object: initialisers, loss, blocks and the layer list, expanded into w->layers. */
static int parse_model(const jv_doc *d, const jv *root, sd_workload *w) {
    const jv *model = jv_get(root, "model");
    if (!model) return jv_err(d, root, "missing key 'model' in workload");
    SD_TRY(jv_expect(d, model, JV_OBJECT, "a model object"));
    static const char *const mkeys[] = {"init", "blocks", "layers", "loss", NULL};
    SD_TRY(jv_check_keys(d, model, "model", mkeys));
    w->weight_init = NN_INIT_GLOROT_UNIFORM; w->bias_init = NN_INIT_ZEROS;
    const jv *init = jv_get(model, "init");
    if (init) {
        SD_TRY(jv_expect(d, init, JV_OBJECT, "an init object like {\"weights\": \"glorot_uniform\"}"));
        static const char *const ikeys[] = {"weights", "bias", NULL};
        SD_TRY(jv_check_keys(d, init, "init", ikeys));
        SD_TRY(parse_init(d, init, "weights", &w->weight_init));
        SD_TRY(parse_init(d, init, "bias", &w->bias_init));
    }
    const char *loss = NULL;
    SD_TRY(jv_get_str(d, model, "loss", "model", 1, &loss));
    if (strcmp(loss, "softmax_cross_entropy") == 0) w->loss = NN_LOSS_SOFTMAX_XENT;
    else if (strcmp(loss, "sigmoid_binary_cross_entropy") == 0) w->loss = NN_LOSS_SIGMOID_BCE;
    else if (strcmp(loss, "none") == 0) w->loss = NN_LOSS_NONE;
    else return jv_err(d, jv_get(model, "loss"), "unknown loss '%s' (expected softmax_cross_entropy, "
                       "sigmoid_binary_cross_entropy or none)", loss);
    if ((w->loss == NN_LOSS_NONE) != (w->mode == SD_MODE_INFERENCE))
        return jv_err(d, jv_get(model, "loss"), w->mode == SD_MODE_INFERENCE
                      ? "an inference workload has loss \"none\"" : "loss \"none\" needs an \"inference\" section (no training)");
    const jv *blocks = jv_get(model, "blocks");
    if (blocks) SD_TRY(check_blocks(d, blocks));
    const jv *layers = jv_get(model, "layers");
    if (!layers) return jv_err(d, model, "missing key 'layers' in model");
    SD_TRY(jv_expect(d, layers, JV_ARRAY, "a list of layers"));
    if (layers->count == 0) return jv_err(d, layers, "expected at least one layer");
    if (layers->count > SD_SPEC_MAX_LAYERS)
        return jv_err(d, layers, "too many layers (%zu; at most %d)", layers->count, SD_SPEC_MAX_LAYERS);
    spec_ctx ctx = {.d = d, .w = w, .blocks = blocks};
    int cur = -1;
    SD_TRY(expand_list(&ctx, NULL, layers, "a list of layers", &cur));
    if (cur != w->nlayers - 1)
        return jv_err(d, layers, "internal: the model output is not the last layer");
    return 0;
}

/* The "inference" section: batch, images and warm-up passes; one pass over the images is the epoch. */
static int parse_inference(const jv_doc *d, const jv *root, const jv *inf, sd_workload *w) {
    long long x = 0;
    if (jv_get(root, "training")) return jv_err(d, jv_get(root, "training"), "a workload has either 'training' or 'inference', not both");
    SD_TRY(jv_expect(d, inf, JV_OBJECT, "an inference object like {\"batch\": 32, \"images\": 1280, \"warmup\": 1}"));
    static const char *const ikeys[] = {"batch", "images", "warmup", NULL};
    SD_TRY(jv_check_keys(d, inf, "inference", ikeys));
    SD_TRY(jv_get_int(d, inf, "batch", "inference", 1, 1, 65536, &x)); w->batch = (int)x;
    SD_TRY(jv_get_int(d, inf, "images", "inference", 1, 1, 100000000, &x)); w->infer_images = (int)x;
    x = 1;
    SD_TRY(jv_get_int(d, inf, "warmup", "inference", 0, 0, 100, &x)); w->warmup_passes = (int)x;
    if (w->infer_images < w->batch)
        return jv_err(d, jv_get(inf, "images"), "images %d is less than one batch of %d", w->infer_images, w->batch);
    w->epochs = 1;
    if (!w->train_n) w->train_n = w->infer_images;
    if (!w->test_n) w->test_n = w->infer_images;
    return 0;
}

/* The "training" section: optimizer, batch, epochs and shuffling. */
static int parse_training(const jv_doc *d, const jv *root, sd_workload *w) {
    long long x = 0;
    const jv *tr = jv_get(root, "training");
    if (!tr) return jv_err(d, root, "missing key 'training' in workload");
    SD_TRY(jv_expect(d, tr, JV_OBJECT, "a training object"));
    static const char *const tkeys[] = {"optimizer", "batch", "epochs", "shuffle", NULL};
    SD_TRY(jv_check_keys(d, tr, "training", tkeys));
    const jv *opt = jv_get(tr, "optimizer");
    if (!opt) return jv_err(d, tr, "missing key 'optimizer' in training");
    SD_TRY(parse_optimizer(d, opt, &w->optim));
    SD_TRY(jv_get_int(d, tr, "batch", "training", 1, 1, 65536, &x)); w->batch = (int)x;
    SD_TRY(jv_get_int(d, tr, "epochs", "training", 1, 1, 100000, &x)); w->epochs = (int)x;
    w->shuffle = 1;
    SD_TRY(jv_get_bool(d, tr, "shuffle", "training", 0, &w->shuffle));
    if (w->batch > w->train_n || w->batch > w->test_n)
        return jv_err(d, jv_get(tr, "batch"), "batch %d is larger than the data (train %d, test %d)", w->batch, w->train_n, w->test_n);
    return 0;
}

static int parse(const jv_doc *d, void *out) {
    sd_workload *w = out;
    static const char *const top[] = {"schema", "name", "title", "source", "data", "model", "training",
                                      "inference", "expected", "notes", NULL};
    static const char *const schemas[] = {SCHEMA, SCHEMA2, NULL};
    SD_TRY(jv_root_schema(d, "workload", top, schemas));
    const jv *root = jv_root(d);
    const jv *inf = jv_get(root, "inference");
    w->mode = inf ? SD_MODE_INFERENCE : SD_MODE_TRAIN;
    SD_TRY(jv_get_str_copy(d, root, "name", "workload", 1, w->name, sizeof w->name));
    for (const char *p = w->name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return jv_err(d, jv_get(root, "name"), "workload name '%s' may hold only a-z, 0-9 and _", w->name);
    SD_TRY(jv_get_str_copy(d, root, "title", "workload", 0, w->title, sizeof w->title));
    SD_TRY(jv_get_str_copy(d, root, "source", "workload", 0, w->source, sizeof w->source));
    SD_TRY(parse_data(d, root, w));
    SD_TRY(parse_model(d, root, w));
    SD_TRY(w->mode == SD_MODE_INFERENCE ? parse_inference(d, root, inf, w) : parse_training(d, root, w));
    const jv *exp = jv_get(root, "expected");
    if (exp) {
        SD_TRY(jv_expect(d, exp, JV_OBJECT, "an expected object like {\"parameters\": 669706}"));
        static const char *const ekeys[] = {"parameters", "accuracy", "target_accuracy", "published", NULL};
        SD_TRY(jv_check_keys(d, exp, "expected", ekeys));
        SD_TRY(jv_get_int(d, exp, "parameters", "expected", 0, 1, 1LL << 40, &w->expected_params));
        SD_TRY(jv_get_num(d, exp, "target_accuracy", "expected", 0, 1e-9, 1.0, &w->target_accuracy));
    }
    return 0;
}

int sd_workload_load(sd_workload *w, const char *dir, const char *name_or_path) {
    memset(w, 0, sizeof *w);
    char path[512];
    struct stat st;
    if (strchr(name_or_path, '/') || (strlen(name_or_path) > 5 && strcmp(name_or_path + strlen(name_or_path) - 5, ".json") == 0)) {
        snprintf(path, sizeof path, "%s", name_or_path);
        if (stat(path, &st) != 0)   /* a workload that does not exist is a usage error, named or by path */
            return sd_err(SD_EUSAGE, "no workload file %s: %s", path, strerror(errno));
    } else {
        for (const char *p = name_or_path; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
                return sd_err(SD_EUSAGE, "workload name '%s' may hold only a-z, 0-9 and _ (or give a path to a .json file)", name_or_path);
        snprintf(path, sizeof path, "%s/%s.json", dir, name_or_path);
        if (stat(path, &st) != 0)
            return sd_err(SD_EUSAGE, "no workload '%s' (no file %s)", name_or_path, path);
        SD_TRY(sd_path_within(dir, path));   /* a symlink may not lead out of the workloads directory */
    }
    snprintf(w->path, sizeof w->path, "%s", path);
    int rc = jv_read(path, NULL, 0, parse, w);
    if (rc < 0) sd_workload_free(w);
    return rc;
}

int sd_workload_parse(sd_workload *w, const char *name, const char *text, size_t len) {
    memset(w, 0, sizeof *w);
    snprintf(w->path, sizeof w->path, "%s", name);
    int rc = jv_read(name, text, len, parse, w);
    if (rc < 0) sd_workload_free(w);
    return rc;
}

void sd_workload_free(sd_workload *w) {
    if (!w) return;
    free(w->layers);
    w->layers = NULL;
    w->nlayers = 0;
}

const char *sd_spec_op_name(nn_op_kind k) { return nn_op_info_of(k)->spec_name; }
