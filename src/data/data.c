/* data — what the loaders share: sd_dataset_free, checked allocation against the documented bounds
 * (SD_DATA_MAX_EXAMPLES, SD_DATA_MAX_DIM), and the u8 pixel → float conversion (/255). */
#include "data/data.h"
#include "data/data_impl.h"
#include "core/err.h"

#include <stdlib.h>
#include <string.h>

void sd_dataset_free(sd_dataset *d) {
    if (!d) return;
    free(d->x);
    free(d->y);
    memset(d, 0, sizeof *d);
}

int sd_data_alloc(sd_dataset *d, const char *what, long long n, long long c, long long h, long long w) {
    memset(d, 0, sizeof *d);
    if (n < 1) return sd_err(SD_EINPUT, "%s: %lld examples: a data set needs at least 1", what, n);
    if (n > SD_DATA_MAX_EXAMPLES)
        return sd_err(SD_ELIMIT, "%s: %lld examples, past the limit of %d", what, n, SD_DATA_MAX_EXAMPLES);
    if (c < 1 || h < 1 || w < 1)
        return sd_err(SD_EINPUT, "%s: example shape %lldx%lldx%lld has a dimension below 1", what, c, h, w);
    if (c > SD_DATA_MAX_DIM || h > SD_DATA_MAX_DIM || w > SD_DATA_MAX_DIM)
        return sd_err(SD_ELIMIT, "%s: example shape %lldx%lldx%lld has a dimension past the limit of %d",
                      what, c, h, w, SD_DATA_MAX_DIM);
    /* Each factor is <= 2^24 (n) or 2^12 (dims): the product fits in 60 bits, the byte count in 62. */
    size_t count = (size_t)n * (size_t)c * (size_t)h * (size_t)w;
    d->x = malloc(count * sizeof *d->x);
    d->y = malloc((size_t)n * sizeof *d->y);
    if (!d->x || !d->y) {
        sd_dataset_free(d);
        return sd_err(SD_ENOMEM, "%s: out of memory for %lld examples of %lldx%lldx%lld (%zu bytes)",
                      what, n, c, h, w, count * sizeof(float));
    }
    d->n = (int)n; d->c = (int)c; d->h = (int)h; d->w = (int)w;
    return 0;
}

void sd_data_pixels(float *dst, const uint8_t *src, size_t count) {
    for (size_t i = 0; i < count; i++) dst[i] = (float)src[i] / 255.0f;
}

int sd_data_max_label_plus_one(const sd_dataset *d) {
    int32_t m = 0;
    for (int i = 0; i < d->n; i++) if (d->y[i] > m) m = d->y[i];
    return (int)m + 1;
}
