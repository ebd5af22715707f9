/* synthetic — seeded, learnable synthetic data. Everything is a pure function of (seed, shape, classes,
 * split) built on counter-based splitmix64 streams (nn_hash64, the same hash the kernels use), so the
 * bytes are identical on every machine, thread count and run. Layout of the streams:
 *   prototype[k][j] = u(seed, "proto", k*D + j)                    in [0,1)   (D = c*h*w)
 *   label[i]        = u64(seed, "label"+split, i) % classes         random labels, not cycling
 *   x[i][j]         = clamp(prototype[label[i]][j] + SD_DATA_SYNTH_NOISE * (2u(seed, "noise"+split, i*D+j) - 1), 0, 1)
 * Train and test share the prototypes and draw independent labels and noise. */
#include "data/data.h"
#include "data/data_impl.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYN_GAMMA 0x9e3779b97f4a7c15ULL
enum { SYN_PROTO = 1, SYN_LABEL = 2, SYN_NOISE = 4 };   /* stream tags; +split (0/1) keeps them apart */

/* The key of one stream: the seed mixed with a tag. */
static uint64_t syn_key(uint64_t seed, uint64_t tag) { return nn_hash64(seed ^ nn_hash64(tag)); }
/* Element ctr of the stream with that key (splitmix64 with state key). */
static uint64_t syn_u64(uint64_t key, uint64_t ctr) { return nn_hash64(key + ctr * SYN_GAMMA); }
/* 24 random bits -> [0,1), exactly representable in float. */
static float syn_u01(uint64_t key, uint64_t ctr) { return (float)(syn_u64(key, ctr) >> 40) * (1.0f / 16777216.0f); }

int sd_data_synthetic(sd_dataset *out, int n, int c, int h, int w, int classes, uint64_t seed, int split) {
    memset(out, 0, sizeof *out);
    if (split != 0 && split != 1)
        return sd_err(SD_EUSAGE, "synthetic: split %d: expected 0 (train) or 1 (test)", split);
    if (classes < 1)
        return sd_err(SD_EINPUT, "synthetic: %d classes: need at least 1", classes);
    if (classes > 256)
        return sd_err(SD_ELIMIT, "synthetic: %d classes, past the limit of 256", classes);
    SD_TRY(sd_data_alloc(out, "synthetic", n, c, h, w));
    const size_t dim = (size_t)c * h * w;
    float *proto = malloc((size_t)classes * dim * sizeof *proto);
    if (!proto) {
        sd_dataset_free(out);
        return sd_err(SD_ENOMEM, "synthetic: out of memory for %d prototypes of %zu values", classes, dim);
    }
    const uint64_t kp = syn_key(seed, SYN_PROTO);
    const uint64_t kl = syn_key(seed, SYN_LABEL + (uint64_t)split);
    const uint64_t kn = syn_key(seed, SYN_NOISE + (uint64_t)split);
    for (size_t j = 0; j < (size_t)classes * dim; j++) proto[j] = syn_u01(kp, j);

    #pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        const int32_t y = (int32_t)(syn_u64(kl, (uint64_t)i) % (uint64_t)classes);
        const float *p = proto + (size_t)y * dim;
        float *x = out->x + (size_t)i * dim;
        for (size_t j = 0; j < dim; j++) {
            float v = p[j] + SD_DATA_SYNTH_NOISE * (2.0f * syn_u01(kn, (uint64_t)i * dim + j) - 1.0f);
            x[j] = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
        }
        out->y[i] = y;
    }
    free(proto);
    out->classes = classes;
    out->synthetic = 1;
    snprintf(out->source, sizeof out->source, "synthetic seed=%llu split=%s",
             (unsigned long long)seed, split ? "test" : "train");
    return 0;
}
