/* backend — the registry: the one place that knows which back-ends were compiled in, and the
 * memory wrappers that keep peak accounting. */
#include "nn/backend_impl.h"
#include "core/err.h"

#include <stdio.h>
#include <string.h>

int nn_optim_state_per_param(nn_optim_kind k) {
    switch (k) {
    case NN_OPTIM_SGD: return 1;
    case NN_OPTIM_RMSPROP: return 1;
    case NN_OPTIM_ADADELTA: return 2;
    case NN_OPTIM_ADAM: return 2;
    default: return 0;
    }
}

typedef int (*ctor_fn)(nn_backend **, const nn_backend_opts *);
static const struct { const char *name; ctor_fn ctor; } registry[] = {
#if SD_HAVE_CUDNN
    {"cudnn", nn_cudnn_new},
#endif
#if SD_HAVE_DNNL
    {"dnnl", nn_dnnl_new},
#endif
    {"ref", nn_ref_new},
};
#define NREG ((int)(sizeof registry / sizeof registry[0]))

const char *nn_backend_list(void) {
    static char buf[64];
    if (!buf[0]) {
        /* list in order ref, dnnl, cudnn (simplest first) */
        for (int i = NREG - 1; i >= 0; i--) {
            if (buf[0]) strncat(buf, ",", sizeof buf - strlen(buf) - 1);
            strncat(buf, registry[i].name, sizeof buf - strlen(buf) - 1);
        }
    }
    return buf;
}

void nn_backend_libraries(nn_env_fn add, void *user) {
#if SD_HAVE_DNNL
    nn_dnnl_libraries(add, user);
#endif
#if SD_HAVE_CUDNN
    nn_cudnn_libraries(add, user);
#endif
    (void)add;
    (void)user;
}

int nn_backend_compiled(const char *name) {
    for (int i = 0; i < NREG; i++)
        if (strcmp(registry[i].name, name) == 0) return 1;
    return 0;
}

int nn_backend_new(nn_backend **out, const char *name, const nn_backend_opts *opts, char *note,
                   size_t note_len) {
    *out = NULL;
    if (note && note_len) note[0] = 0;
    if (strcmp(name, "auto") == 0) {
        char usage[512] = "";   /* a setting no back-end takes (bf16 on a CPU without it) is the user's to change */
        for (int i = 0; i < NREG; i++) {
            int rc = registry[i].ctor(out, opts);
            if (rc == 0) return 0;
            if (rc == SD_EUSAGE) {
                size_t l = strlen(usage);
                snprintf(usage + l, sizeof usage - l, "%s%s", l ? "; " : "", sd_errmsg());
            }
            if (note && note_len) {
                size_t l = strlen(note);
                snprintf(note + l, note_len - l, "%s%s unavailable: %s", l ? "; " : "", registry[i].name,
                         sd_errmsg());
            }
        }
        if (usage[0]) return sd_err(SD_EUSAGE, "no back-end could be started: %s", usage);
        return sd_err(SD_ENODEV, "no back-end could be started");
    }
    for (int i = 0; i < NREG; i++)
        if (strcmp(registry[i].name, name) == 0) return registry[i].ctor(out, opts);
    if (strcmp(name, "ref") == 0 || strcmp(name, "dnnl") == 0 || strcmp(name, "cudnn") == 0)
        return sd_err(SD_ENODEV, "back-end '%s' was not built into this binary (built: %s; see `make config`)",
                      name, nn_backend_list());
    return sd_err(SD_EUSAGE, "unknown back-end '%s' (expected auto, ref, dnnl or cudnn)", name);
}

int nn_backend_name_gpu(const char *name) { return name && strcmp(name, "cudnn") == 0; }

void nn_backend_free(nn_backend *be) {
    if (be && be->ops->destroy) be->ops->destroy(be);
}

int nn_dev_alloc(nn_backend *be, void **out, size_t bytes) {
    SD_TRY(be->ops->alloc(be, out, bytes ? bytes : 1));
    be->bytes_in_use += bytes;
    if (be->bytes_in_use > be->bytes_peak) be->bytes_peak = be->bytes_in_use;
    return 0;
}

void nn_dev_free(nn_backend *be, void *p, size_t bytes) {
    if (!p) return;
    be->ops->free(be, p);
    be->bytes_in_use -= bytes;
}

const char *nn_backend_name(const nn_backend *be) { return be->name; }
const char *nn_backend_device(const nn_backend *be) { return be->device; }
const nn_backend_opts *nn_backend_options(const nn_backend *be) { return &be->opts; }
size_t nn_backend_peak_bytes(const nn_backend *be) { return be->bytes_peak; }
void nn_backend_reset_peak(nn_backend *be) { be->bytes_peak = be->bytes_in_use; }
void nn_backend_env(nn_backend *be, nn_env_fn add, void *user) {
    if (be->ops->env) be->ops->env(be, add, user);
}
