/* data_impl — helpers the data loaders share (private to src/data): checked allocation of a data set
 * and the u8 → float pixel conversion. Not part of the public interface. */
#ifndef SD_DATA_IMPL_H
#define SD_DATA_IMPL_H

#include "data/data.h"

#include <stddef.h>
#include <stdint.h>

/* Zero *d, check n in [1, SD_DATA_MAX_EXAMPLES] and c,h,w in [1, SD_DATA_MAX_DIM] (SD_EINPUT below,
 * SD_ELIMIT above; `what` starts the message, e.g. a path), then allocate x (n*c*h*w) and y (n).
 * On failure *d is left empty. */
int sd_data_alloc(sd_dataset *d, const char *what, long long n, long long c, long long h, long long w);

/* dst[i] = src[i] / 255. */
void sd_data_pixels(float *dst, const uint8_t *src, size_t count);

/* 1 + the largest label in d->y (labels are known to be >= 0). */
int sd_data_max_label_plus_one(const sd_dataset *d);

#endif
