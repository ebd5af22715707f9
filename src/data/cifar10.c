/* cifar10 — the CIFAR-10 binary version: data_batch_1..5.bin (train) and test_batch.bin (test), each a
 * whole number of 3073-byte records (1 label byte < 10, then 3x32x32 CHW pixel bytes). File sizes are
 * checked (stat) before anything is allocated; pixels become float / 255. */
#include "data/data.h"
#include "data/data_impl.h"
#include "core/err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CIFAR_PIXELS  (3 * 32 * 32)
#define CIFAR_RECORD  (1 + CIFAR_PIXELS)
#define CIFAR_CLASSES 10

static const char *const k_train[] = {
    "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin",
};
static const char *const k_test[] = { "test_batch.bin" };

/* Open dir/name and return its record count after checking the size is a whole number of records. */
static int cifar_open(FILE **out, char *path, size_t len, const char *dir, const char *name, long long *records) {
    *out = NULL;
    snprintf(path, len, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return sd_err(SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return sd_err(SD_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(f);
        return sd_err(SD_EIO, "%s: not a regular file", path);
    }
    long long size = (long long)st.st_size;
    if (size == 0 || size % CIFAR_RECORD != 0) {
        fclose(f);
        return sd_err(SD_EINPUT, "%s: size %lld bytes is not a whole number of %d-byte records "
                      "(1 label + %d pixels): %lld records and %lld bytes over", path, size, CIFAR_RECORD,
                      CIFAR_PIXELS, size / CIFAR_RECORD, size % CIFAR_RECORD);
    }
    *records = size / CIFAR_RECORD;
    *out = f;
    return 0;
}

/* One record: label checked, pixels scaled into example k. */
static int record(sd_dataset *out, long long k, const uint8_t *rec, const char *path, long long r) {
    if (rec[0] >= CIFAR_CLASSES)
        return sd_err(SD_EINPUT, "%s: record %lld: label %u (CIFAR-10 labels are 0..9)", path, r, rec[0]);
    out->y[k] = rec[0];
    sd_data_pixels(out->x + (size_t)k * CIFAR_PIXELS, rec + 1, CIFAR_PIXELS);
    return 0;
}

int sd_data_parse_cifar10(sd_dataset *out, const char *name, const void *data, size_t len) {
    memset(out, 0, sizeof *out);
    if (len == 0 || len % CIFAR_RECORD != 0)
        return sd_err(SD_EINPUT, "%s: size %zu bytes is not a whole number of %d-byte records (1 label + %d pixels): "
                      "%zu records and %zu bytes over", name, len, CIFAR_RECORD, CIFAR_PIXELS, len / CIFAR_RECORD,
                      len % CIFAR_RECORD);
    long long n = (long long)(len / CIFAR_RECORD);
    int rc = sd_data_alloc(out, name, n, 3, 32, 32);
    for (long long r = 0; rc == 0 && r < n; r++) rc = record(out, r, (const uint8_t *)data + r * CIFAR_RECORD, name, r);
    if (rc < 0) { sd_dataset_free(out); return rc; }
    out->classes = CIFAR_CLASSES;
    snprintf(out->source, sizeof out->source, "cifar10:%s", name);
    return 0;
}

int sd_data_load_cifar10(sd_dataset *out, const char *dir, int which) {
    memset(out, 0, sizeof *out);
    if (which != 0 && which != 1)
        return sd_err(SD_EUSAGE, "cifar10: split %d: expected 0 (train) or 1 (test)", which);
    const char *const *names = which == 0 ? k_train : k_test;
    int nfiles = which == 0 ? (int)(sizeof k_train / sizeof *k_train) : 1;
    FILE *files[5] = {0};
    long long counts[5] = {0}, total = 0;
    char path[4096];
    uint8_t rec[CIFAR_RECORD];
    int rc = 0;
    for (int i = 0; i < nfiles; i++) {
        SD_TRY_GOTO(rc, cifar_open(&files[i], path, sizeof path, dir, names[i], &counts[i]), done);
        total += counts[i];
    }
    char what[4200];
    snprintf(what, sizeof what, "cifar10:%s", dir);
    SD_TRY_GOTO(rc, sd_data_alloc(out, what, total, 3, 32, 32), done);
    long long k = 0;
    for (int i = 0; i < nfiles; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        for (long long r = 0; r < counts[i]; r++, k++) {
            if (fread(rec, 1, sizeof rec, files[i]) != sizeof rec) {
                rc = sd_err(SD_EIO, "%s: record %lld: %s", path, r,
                            ferror(files[i]) ? strerror(errno) : "file shrank while reading");
                goto done;
            }
            SD_TRY_GOTO(rc, record(out, k, rec, path, r), done);
        }
    }
    out->classes = CIFAR_CLASSES;
    snprintf(out->source, sizeof out->source, "cifar10:%s", dir);
done:
    for (int i = 0; i < nfiles; i++) if (files[i]) fclose(files[i]);
    if (rc < 0) sd_dataset_free(out);
    return rc;
}
