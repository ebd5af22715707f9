/* export — writes what a framework runner needs to prove it built the native network: the parameters
 * nn_model_build uploads, an input batch and the reference forward output (export.h). Each file is written
 * atomically; index.json last, so a directory with an index is complete. */
#include "nn/export.h"
#include "nn/backend_impl.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nn_npy_encode(const void *data, int is_int32, const int *shape, int ndim, char **out, size_t *len) {
    char hdr[256], dims[160] = "";
    size_t count = 1, dl = 0;
    for (int i = 0; i < ndim; i++) {
        dl += (size_t)snprintf(dims + dl, sizeof dims - dl, "%d,%s", shape[i], ndim > 1 && i < ndim - 1 ? " " : "");
        if (dl >= sizeof dims) return sd_err(SD_ELIMIT, "npy: too many dimensions");
        count *= (size_t)shape[i];
    }
    if (ndim > 1) dims[dl - 1] = 0;   /* "(3, 4)" but "(3,)" */
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
                      is_int32 ? "<i4" : "<f4", dims);
    size_t pre = 10, total_hdr = pre + (size_t)hl + 1;
    size_t pad = (64 - total_hdr % 64) % 64;
    size_t hlen = (size_t)hl + pad + 1, bytes = count * 4;
    char *buf = malloc(pre + hlen + bytes);
    SD_ALLOC_CHECK(buf);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + pre, hdr, (size_t)hl);
    memset(buf + pre + hl, ' ', pad);
    buf[pre + hlen - 1] = '\n';
    memcpy(buf + pre + hlen, data, bytes);   /* the hosts we build for are little-endian */
    *out = buf;
    *len = pre + hlen + bytes;
    return 0;
}

static int write_npy(const char *dir, const char *name, const void *data, int is_int32, const int *shape, int ndim,
                     json_t *entry) {
    char path[4096], *buf = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    SD_TRY(nn_npy_encode(data, is_int32, shape, ndim, &buf, &len));
    int rc = sd_write_file_atomic(path, buf, len);
    free(buf);
    if (rc) return rc;
    json_t *sh = json_array();
    for (int i = 0; i < ndim; i++) json_array_append_new(sh, json_integer(shape[i]));
    json_object_set_new(entry, "file", json_string(name));
    json_object_set_new(entry, "shape", sh);
    json_object_set_new(entry, "dtype", json_string(is_int32 ? "int32" : "float32"));
    return 0;
}

/* The layer whose buffer holds the logits: the loss layer's input, through views (flatten, dropout). */
static int logits_layer(const nn_model *m) {
    /* no loss (an inference workload): the last layer's output is the model's */
    int i = m->loss_kind == NN_LOSS_NONE ? m->nlayers - 1 : m->layers[m->nlayers - 1].input;
    while (i >= 0 && (m->layers[i].op.kind == NN_OP_FLATTEN || m->layers[i].op.kind == NN_OP_DROPOUT))
        i = m->layers[i].input;
    return i;
}

int nn_export_weights(const sd_workload *w, nn_backend *be, const sd_dataset *data, int n, uint64_t seed,
                      const char *dir) {
    if (n < 1 || n > data->n) return sd_err(SD_EUSAGE, "export: batch %d outside 1..%d examples", n, data->n);
    nn_model *m = NULL;
    SD_TRY(nn_model_build(&m, w, be, n, seed));
    int rc = 0, li = logits_layer(m), C = w->classes;
    if (m->loss_kind == NN_LOSS_NONE && li >= 0)   /* the features an inference workload outputs, per example */
        C = m->layers[li].op.oc * m->layers[li].op.oh * m->layers[li].op.ow;
    float *params = malloc(m->nparams * sizeof(float) + 1), *logits = malloc((size_t)n * C * sizeof(float));
    json_t *index = json_object(), *plist = json_array();
    if (!params || !logits) { rc = sd_err(SD_ENOMEM, "out of memory"); goto done; }
    SD_TRY_GOTO(rc, sd_mkdir_p(dir, 0), done);
    SD_TRY_GOTO(rc, nn_model_upload_input(m, data->x), done);   /* token ids too (m->ids), as train.c does */
    if (m->labels)   /* none without a loss */
        SD_TRY_GOTO(rc, be->ops->upload(be, m->labels, data->y, (size_t)n * sizeof(int32_t)), done);
    SD_TRY_GOTO(rc, nn_model_forward(m, 0, 0), done);
    if (li < 0) { rc = sd_err(SD_EINPUT, "export: the model has no layer before its loss"); goto done; }
    SD_TRY_GOTO(rc, be->ops->sync(be), done);
    SD_TRY_GOTO(rc, be->ops->download(be, logits, m->layers[li].y, (size_t)n * C * sizeof(float)), done);
    SD_TRY_GOTO(rc, be->ops->download(be, params, m->params, m->nparams * sizeof(float)), done);
    int k = 0;
    for (int i = 0; i < m->nlayers; i++) {
        const nn_layer *l = &m->layers[i];
        for (int b = 0; b < 2; b++) {
            size_t off = b ? l->b_off : l->w_off, len = b ? l->b_len : l->w_len;
            if (!len) continue;
            int shape[4], nd;
            if (b) { shape[0] = l->op.oc; nd = 1; }
            else if (l->op.kind == NN_OP_CONV2D) { shape[0] = l->op.oc; shape[1] = l->op.c; shape[2] = l->op.kh; shape[3] = l->op.kw; nd = 4; }
            else if (l->op.kind == NN_OP_DENSE) {
                shape[0] = l->op.oc; shape[1] = (int)(len / (size_t)l->op.oc); nd = 2;
            }
            else { shape[0] = (int)len; nd = 1; }   /* embedding, gru/lstm (weights and biases), batch norm: flat */
            char name[64];
            snprintf(name, sizeof name, "params_%d.npy", k++);
            json_t *e = json_pack("{s:i,s:s,s:s,s:s,s:I}", "layer", i, "name", l->name, "op", nn_op_name(l->op.kind),
                                  "role", b ? "bias" : "weight", "offset", (json_int_t)off);
            json_array_append_new(plist, e);
            SD_TRY_GOTO(rc, write_npy(dir, name, params + off, 0, shape, nd, e), done);
        }
    }
    json_t *in = json_object(), *lab = json_object(), *out = json_object();
    json_object_set_new(index, "input", in);
    json_object_set_new(index, "labels", lab);
    json_object_set_new(index, "logits", out);
    int ishape[4] = {n, w->in_c, w->in_h, w->in_w}, lshape[1] = {n}, oshape[2] = {n, C};
    SD_TRY_GOTO(rc, write_npy(dir, "input.npy", data->x, 0, ishape, 4, in), done);
    SD_TRY_GOTO(rc, write_npy(dir, "labels.npy", data->y, 1, lshape, 1, lab), done);
    SD_TRY_GOTO(rc, write_npy(dir, "logits.npy", logits, 0, oshape, 2, out), done);
    json_object_set_new(index, "schema", json_string(SD_WEIGHTS_SCHEMA));
    json_object_set_new(index, "workload", json_string(w->name));
    json_object_set_new(index, "spec", json_string(w->path));
    json_object_set_new(index, "seed", json_integer((json_int_t)seed));
    json_object_set_new(index, "batch", json_integer(n));
    json_object_set_new(index, "parameters", json_integer((json_int_t)m->nparams));
    json_object_set_new(index, "backend", json_string(be->name));
    json_object_set_new(index, "data_source", json_string(data->source));
    json_object_set_new(index, "params", plist);
    plist = NULL;
    char *text = json_dumps(index, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (!text) { rc = sd_err(SD_ENOMEM, "cannot serialise the weight index"); goto done; }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.json", dir);
    rc = sd_write_file_atomic(path, text, strlen(text));
    free(text);
done:
    json_decref(plist);
    json_decref(index);
    free(params);
    free(logits);
    nn_model_free(m);
    return rc;
}
