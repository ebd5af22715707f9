/* data — data sets for the native engine and the runners: MNIST-format idx (plain or gzip),
 * CIFAR-10 binary batches, and a seeded synthetic generator. Every loader checks sizes against the
 * file and against documented bounds, and names the file and the problem on error. */
#ifndef SD_DATA_H
#define SD_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Bounds on what a file from outside may claim (SD_ELIMIT past them). */
/* Where Debian's dataset-fashion-mnist puts the idx files the mnist workloads read by default. */
#define SD_DEFAULT_MNIST_DIR "/usr/share/datasets/fashion-mnist"
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

/* ---- token sequences, in imdb.c ----------------------------------------------------------
 * IMDB in the Keras conventions (keras.datasets.imdb.load_data + keras.preprocessing.sequence.pad_sequences).
 * An example is a sequence of integer token ids stored as floats (exact), shape (c, h, w) = (maxlen, 1, 1);
 * 0 is padding, start_char begins every review, oov_char replaces words out of the vocabulary, and the
 * word of frequency rank r (1 = most frequent) gets id r + index_from; ids >= num_words become oov_char.
 * Labels: 0 negative, 1 positive. */
typedef struct sd_imdb_opts {
    int num_words;      /* ids >= num_words -> oov_char (0: no cap) */
    int maxlen;         /* pad/truncate to this length (0: the longest sequence) */
    int start_char, oov_char, index_from;   /* Keras: 1, 2, 3 */
    int pad_post;       /* 0: zeros before the sequence (Keras default 'pre'), 1: after ('post') */
    int trunc_post;     /* 0: drop the beginning, keep the last maxlen ('pre', Keras default), 1: drop the end */
} sd_imdb_opts;
void sd_imdb_opts_default(sd_imdb_opts *o);   /* Keras defaults: 1, 2, 3, 'pre', 'pre', no caps */

/* The aclImdb text layout: dir/train/{neg,pos}/\*.txt and dir/test/{neg,pos}/\*.txt (neg then pos, files
 * in name order). Tokenised as Keras' Tokenizer: ASCII lower-case; the characters
 * !"#$%&()*+,-./:;<=>?@[\]^_`{|}~ and whitespace separate words (the apostrophe stays in a word; "<br />"
 * yields "br"). Vocabulary: the training reviews' words ranked by count, ties in byte order; test words
 * unseen in training are oov_char. A review is at most 1 MiB; a NUL byte is "FILE:LINE: NUL byte". */
int sd_data_load_imdb_text(sd_dataset *train, sd_dataset *test, const char *dir, const sd_imdb_opts *o);

/* The showdown token-id file, a text format:
 *     showdown-tokens/1
 *     # comment lines start with '#'; blank lines are skipped
 *     LABEL ID ID ID ...
 * one example per line: a label in [0, 255] then its token ids (already in the Keras encoding, start
 * token included), decimal integers in [0, 2^24) separated by spaces or tabs. The loader applies only
 * num_words (ids >= num_words -> oov_char) and maxlen/padding. Errors are "FILE:LINE: ...".
 * classes = max(2, 1 + the largest label). */
int sd_data_load_tokens(sd_dataset *out, const char *path, const sd_imdb_opts *o);
/* The same from n bytes in memory (the fuzz target's entry); name stands for the file in errors. */
int sd_data_parse_tokens(sd_dataset *out, const char *name, const void *buf, size_t n, const sd_imdb_opts *o);

/* Seeded synthetic token sequences shaped like IMDB: n examples of maxlen ids in [0, vocab), labels in
 * [0, classes), start token 1, a length of maxlen (probability 0.7, as most IMDB reviews) or uniform in [maxlen/4, maxlen],
 * zero-padded at the end; learnable
 * (30% of each example's tokens come from a block of up to 64 ids particular to its label, wrapped
 * into [3, vocab) when the vocabulary is small). split: 0 train, 1 test. */
int sd_data_synthetic_tokens(sd_dataset *out, int n, int maxlen, int vocab, int classes, uint64_t seed, int split);

#endif
