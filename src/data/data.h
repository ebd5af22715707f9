/* data — data sets for the native engine and the runners: MNIST-format idx (plain or gzip),
 * CIFAR-10 binary batches, and a seeded synthetic generator. Every loader checks sizes against the
 * file and against documented bounds, and names the file and the problem on error. */
#ifndef SD_DATA_H
#define SD_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Bounds on what a file from outside may claim (SD_ELIMIT past them). */
#define SD_DATA_MAX_EXAMPLES 10000000
#define SD_DATA_MAX_DIM      4096

/* Synthetic data: an example is clamp(prototype + noise) with noise uniform in ±this (see synthetic.c). */
#define SD_DATA_SYNTH_NOISE  0.5f

typedef struct sd_dataset {
    int n;              /* examples */
    int c, h, w;        /* per-example shape (NCHW) */
    int classes;        /* number of classes (labels are 0..classes-1) */
    float *x;           /* n*c*h*w, pixels / 255 for image files */
    int32_t *y;         /* n labels */
    int synthetic;      /* 1 if made by sd_data_synthetic */
    char source[512];   /* what it is: "idx:/path/images (+labels)", "cifar10:/dir", "synthetic seed=..." */
} sd_dataset;

/* idx images (idx3, u8) + labels (idx1, u8); each path may end in .gz (zlib reads both forms).
 * classes = 1 + max label (checked <= 256). */
int sd_data_load_idx(sd_dataset *out, const char *images_path, const char *labels_path);
/* The same from memory (plain or gzip bytes; the fuzzers' entry point); the names are used in messages. */
int sd_data_parse_idx(sd_dataset *out, const char *images_name, const void *images, size_t images_len,
                      const char *labels_name, const void *labels, size_t labels_len);

/* CIFAR-10 binary version: dir holds data_batch_1..5.bin and test_batch.bin (each record: 1 label
 * byte + 3072 pixel bytes, CHW). which: 0 train (all five batches), 1 test. */
int sd_data_load_cifar10(sd_dataset *out, const char *dir, int which);
/* One batch file's bytes from memory (the fuzzers' entry point); name is used in messages. */
int sd_data_parse_cifar10(sd_dataset *out, const char *name, const void *data, size_t len);

/* Seeded synthetic data: n examples of shape c×h×w in [0,1] and labels in [0,classes). Learnable:
 * each class has a fixed random prototype, an example is its class prototype plus noise; the same
 * (seed, shape, classes) gives the same prototypes, and split selects an independent example stream
 * (0 train, 1 test) so train and test share prototypes. Labels are drawn at random (uniform), not
 * cycled. classes in [1, 256]. source = "synthetic seed=S split=train|test". */
int sd_data_synthetic(sd_dataset *out, int n, int c, int h, int w, int classes, uint64_t seed, int split);

void sd_dataset_free(sd_dataset *d);

#endif
