/* export — the native model's initial parameters, a fixed input batch and the logits the reference engine
 * computes for it, written for framework runners to load ("showdown-weights/1", workloads/runners/PROTOCOL.md):
 * DIR/index.json plus one NumPy .npy (format 1.0, little-endian, C order) file per array. */
#ifndef SD_NN_EXPORT_H
#define SD_NN_EXPORT_H

#include <stdint.h>

#include "data/data.h"
#include "nn/backend.h"
#include "nn/model.h"

#define SD_WEIGHTS_SCHEMA "showdown-weights/1"

/* Build w on be with batch n and seed, run one inference forward pass on the first n examples of data and
 * write DIR/index.json, params_K.npy (native layout: dense [out][in], conv [out][in][kh][kw], bias [out]),
 * input.npy [n][c][h][w], labels.npy [n] (int32) and logits.npy [n][classes]. n <= data->n. */
int nn_export_weights(const sd_workload *w, nn_backend *be, const sd_dataset *data, int n, uint64_t seed,
                      const char *dir);

/* The bytes of a .npy file (format 1.0) holding a float32 ('<f4') or int32 ('<i4') array of the given shape.
 * *out is malloc'd; caller frees. */
int nn_npy_encode(const void *data, int is_int32, const int *shape, int ndim, char **out, size_t *len);

#endif
