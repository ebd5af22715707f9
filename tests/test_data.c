/* test_data — the data module against small files written here: idx (plain and gzip, every header and
 * size error with its exact message), CIFAR-10 batches, the synthetic generator (determinism and
 * learnability), and the real Fashion-MNIST files when the Debian package is installed. */
#include "testutil.h"
#include "data/data.h"
#include "core/err.h"

#include <math.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

#ifndef FMNIST
#define FMNIST "/usr/share/datasets/fashion-mnist"   /* Debian dataset-fashion-mnist */
#endif

#if defined(__SANITIZE_ADDRESS__)
/* Under ASan an address-space limit would break the shadow memory; cap single allocations instead so
 * that allocating what a header claims makes the huge-claim test fail (NULL -> SD_ENOMEM). */
const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void) { return "max_allocation_size_mb=1024:allocator_may_return_null=1"; }
static void limit_memory(void) {}
#else
/* Allow this test process 1 GiB of address space beyond what it already maps. */
static void limit_memory(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert_not_null(f);
    unsigned long pages = 0;
    cr_assert_eq(fscanf(f, "%lu", &pages), 1);
    fclose(f);
    rlim_t lim = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)1 << 30);
    struct rlimit r = { lim, lim };
    cr_assert_eq(setrlimit(RLIMIT_AS, &r), 0);
}
#endif

/* ---- writing idx files -------------------------------------------------------------------------- */

static size_t put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
    return 4;
}

static void write_file(const char *path, const uint8_t *data, size_t n, int gz) {
    if (!gz) { tu_write(path, data, n); return; }
    gzFile g = gzopen(path, "wb");
    cr_assert_not_null(g);
    if (n) cr_assert_eq(gzwrite(g, data, (unsigned)n), (int)n);
    cr_assert_eq(gzclose(g), Z_OK);
}

/* idx3 images: header claims (n, h, w); body has `body` bytes pix (NULL: pattern). */
static void write_images(const char *path, uint32_t magic, uint32_t n, uint32_t h, uint32_t w,
                         const uint8_t *pix, size_t body, int gz) {
    uint8_t *buf = malloc(16 + body);
    size_t k = put_u32(buf, magic);
    k += put_u32(buf + k, n); k += put_u32(buf + k, h); k += put_u32(buf + k, w);
    for (size_t i = 0; i < body; i++) buf[k + i] = pix ? pix[i] : (uint8_t)(i * 7);
    write_file(path, buf, k + body, gz);
    free(buf);
}

static void write_labels(const char *path, uint32_t n, const uint8_t *lab, size_t body, int gz) {
    uint8_t *buf = malloc(8 + body);
    size_t k = put_u32(buf, 0x00000801);
    k += put_u32(buf + k, n);
    for (size_t i = 0; i < body; i++) buf[k + i] = lab ? lab[i] : (uint8_t)(i % 10);
    write_file(path, buf, k + body, gz);
    free(buf);
}

static const uint8_t k_pix[3 * 2 * 3] = { 0, 255, 128, 1, 2, 3,  10, 20, 30, 40, 50, 60,  255, 254, 0, 7, 8, 9 };
static const uint8_t k_lab[3] = { 0, 4, 2 };

/* A dir with valid images (3 of 2x3) + labels; names get .gz when gz. */
static void valid_idx(char *dir, size_t dlen, char *im, char *lb, size_t len, int gz) {
    tu_tmpdir(dir, dlen);
    snprintf(im, len, "%s/images-idx3-ubyte%s", dir, gz ? ".gz" : "");
    snprintf(lb, len, "%s/labels-idx1-ubyte%s", dir, gz ? ".gz" : "");
    write_images(im, 0x803, 3, 2, 3, k_pix, sizeof k_pix, gz);
    write_labels(lb, 3, k_lab, sizeof k_lab, gz);
}

static void check_valid(const sd_dataset *d) {
    cr_assert_eq(d->n, 3);
    cr_assert_eq(d->c, 1);
    cr_assert_eq(d->h, 2);
    cr_assert_eq(d->w, 3);
    cr_assert_eq(d->classes, 5, "classes = 1 + max label = 5, got %d", d->classes);
    cr_assert_eq(d->synthetic, 0);
    for (int i = 0; i < 18; i++)
        cr_assert_eq(d->x[i], (float)k_pix[i] / 255.0f, "x[%d] = %g", i, (double)d->x[i]);
    for (int i = 0; i < 3; i++) cr_assert_eq(d->y[i], k_lab[i]);
}

#define ASSERT_ERR(rc, code, substr) do {                                                     \
        cr_assert_eq((rc), (code), "status %d (%s), want %d; message: %s", (rc),               \
                     sd_status_name(rc), (code), sd_errmsg());                                  \
        cr_assert_not_null(strstr(sd_errmsg(), (substr)), "message \"%s\" lacks \"%s\"",        \
                           sd_errmsg(), (substr));                                              \
    } while (0)

/* ---- idx: valid files ---------------------------------------------------------------------------- */

Test(idx, plain_valid) {
    char dir[256], im[512], lb[512];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    sd_dataset d;
    cr_assert_eq(sd_data_load_idx(&d, im, lb), 0, "%s", sd_errmsg());
    check_valid(&d);
    char src[1100];
    snprintf(src, sizeof src, "idx:%s + %s", im, lb);
    cr_assert_str_eq(d.source, src);
    sd_dataset_free(&d);
    cr_assert_null(d.x);
    sd_dataset_free(&d);   /* twice is fine */
}

Test(idx, gzip_valid_equals_plain) {
    char dir[256], im[512], lb[512], dir2[256], im2[512], lb2[512];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 1);
    valid_idx(dir2, sizeof dir2, im2, lb2, sizeof im2, 0);
    /* the .gz really is compressed (starts with the gzip magic) */
    FILE *f = fopen(im, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fgetc(f), 0x1f);
    cr_assert_eq(fgetc(f), 0x8b);
    fclose(f);
    sd_dataset a, b;
    cr_assert_eq(sd_data_load_idx(&a, im, lb), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_load_idx(&b, im2, lb2), 0, "%s", sd_errmsg());
    check_valid(&a);
    cr_assert_eq(memcmp(a.x, b.x, 18 * sizeof(float)), 0);
    cr_assert_eq(memcmp(a.y, b.y, 3 * sizeof(int32_t)), 0);
    sd_dataset_free(&a);
    sd_dataset_free(&b);
}

/* ---- idx: errors --------------------------------------------------------------------------------- */

Test(idx, missing_file) {
    char dir[256], im[512], lb[512], missing[600];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    snprintf(missing, sizeof missing, "%s/nope-idx3-ubyte.gz", dir);
    sd_dataset d;
    char want[800];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", missing);
    ASSERT_ERR(sd_data_load_idx(&d, missing, lb), SD_EIO, want);
    cr_assert_null(d.x);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", missing);
    ASSERT_ERR(sd_data_load_idx(&d, im, missing), SD_EIO, want);
}

Test(idx, wrong_magic) {
    char dir[256], im[512], lb[512], bad[600], want[900];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    sd_dataset d;
    snprintf(bad, sizeof bad, "%s/bad", dir);

    write_images(bad, 0x12345678, 3, 2, 3, k_pix, sizeof k_pix, 0);
    snprintf(want, sizeof want, "%s: wrong magic 0x12345678: not an idx file (expected 0x00000803, idx3 "
             "unsigned-byte images)", bad);
    ASSERT_ERR(sd_data_load_idx(&d, bad, lb), SD_EINPUT, want);

    write_images(bad, 0x00000d03, 3, 2, 3, k_pix, sizeof k_pix, 0);   /* float32 idx3 */
    ASSERT_ERR(sd_data_load_idx(&d, bad, lb), SD_EINPUT, "wrong magic 0x00000d03: data type 0x0d is not unsigned byte");

    /* labels given as images and images as labels */
    snprintf(want, sizeof want, "%s: wrong magic 0x00000801: 1 dimensions (expected 0x00000803", lb);
    ASSERT_ERR(sd_data_load_idx(&d, lb, lb), SD_EINPUT, want);
    snprintf(want, sizeof want, "%s: wrong magic 0x00000803: 3 dimensions (expected 0x00000801, idx1", im);
    ASSERT_ERR(sd_data_load_idx(&d, im, im), SD_EINPUT, want);
}

Test(idx, truncated_header) {
    char dir[256], im[512], lb[512], bad[600], want[900];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    snprintf(bad, sizeof bad, "%s/short", dir);
    sd_dataset d;
    const uint8_t hdr[10] = { 0, 0, 8, 3, 0, 0, 0, 3, 0, 0 };
    tu_write(bad, hdr, 10);
    snprintf(want, sizeof want, "%s: truncated header: file has 10 bytes, a idx3 unsigned-byte images header has 16", bad);
    ASSERT_ERR(sd_data_load_idx(&d, bad, lb), SD_EINPUT, want);
    tu_write(bad, hdr, 2);
    snprintf(want, sizeof want, "%s: truncated header: file has 2 bytes", bad);
    ASSERT_ERR(sd_data_load_idx(&d, bad, lb), SD_EINPUT, want);
    tu_write(bad, hdr, 0);
    ASSERT_ERR(sd_data_load_idx(&d, bad, lb), SD_EINPUT, "truncated header: file has 0 bytes");
}

Test(idx, truncated_body_plain_and_gzip) {
    char dir[256], im[512], lb[512], bad[600], want[900];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    sd_dataset d;
    for (int gz = 0; gz <= 1; gz++) {
        snprintf(bad, sizeof bad, "%s/train-images-idx3-ubyte%s", dir, gz ? ".gz" : "");
        char lab[600];
        snprintf(lab, sizeof lab, "%s/train-labels-idx1-ubyte%s", dir, gz ? ".gz" : "");
        write_images(bad, 0x803, 60000, 28, 28, NULL, 1000, gz);
        write_labels(lab, 60000, NULL, 60000, gz);
        snprintf(want, sizeof want, "%s: truncated: header says 60000 images of 28x28 (47040000 bytes after "
                 "the 16-byte header), file has 1000", bad);
        int rc = sd_data_load_idx(&d, bad, lab);
        ASSERT_ERR(rc, SD_EINPUT, want);
        cr_assert_str_eq(sd_errmsg(), want, "the whole message is one line: %s", sd_errmsg());
        /* labels body short */
        write_images(bad, 0x803, 3, 2, 3, k_pix, sizeof k_pix, gz);
        write_labels(lab, 3, k_lab, 2, gz);
        snprintf(want, sizeof want, "%s: truncated: header says 3 labels (3 bytes after the 8-byte header), "
                 "file has 2", lab);
        ASSERT_ERR(sd_data_load_idx(&d, bad, lab), SD_EINPUT, want);
    }
}

Test(idx, truncated_gzip_stream) {
    char dir[256], im[512], lb[512], want[900];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    /* a gzip file of 3 images of 16x16 with random-ish pixels, then cut mid-stream */
    uint8_t pix[3 * 256];
    for (size_t i = 0; i < sizeof pix; i++) pix[i] = (uint8_t)((i * 2654435761u) >> 13);
    char gzp[600];
    snprintf(gzp, sizeof gzp, "%s/cut-images.gz", dir);
    write_images(gzp, 0x803, 3, 16, 16, pix, sizeof pix, 1);
    FILE *f = fopen(gzp, "rb");
    uint8_t raw[4096];
    size_t n = fread(raw, 1, sizeof raw, f);
    fclose(f);
    cr_assert_gt(n, 400u);
    tu_write(gzp, raw, n / 2);
    sd_dataset d;
    snprintf(want, sizeof want, "%s: truncated: header says 3 images of 16x16 (768 bytes after the 16-byte "
             "header), file has ", gzp);
    ASSERT_ERR(sd_data_load_idx(&d, gzp, lb), SD_EINPUT, want);
    ASSERT_ERR(sd_data_load_idx(&d, gzp, lb), SD_EINPUT, "(the gzip stream ends early)");
    /* only the 8-byte gzip trailer (CRC, size) cut: data complete but unchecked */
    tu_write(gzp, raw, n - 4);
    ASSERT_ERR(sd_data_load_idx(&d, gzp, lb), SD_EINPUT, "the gzip stream ends before its trailer");
    /* corrupt compressed bytes */
    memcpy(raw + 20, "garbage-garbage-garbage", 23);
    tu_write(gzp, raw, n);
    cr_assert_lt(sd_data_load_idx(&d, gzp, lb), 0);
    cr_assert_null(d.x);
}

Test(idx, trailing_bytes) {
    char dir[256], im[512], lb[512], want[900];
    for (int gz = 0; gz <= 1; gz++) {
        valid_idx(dir, sizeof dir, im, lb, sizeof im, gz);
        write_images(im, 0x803, 3, 2, 3, NULL, sizeof k_pix + 5, gz);
        sd_dataset d;
        snprintf(want, sizeof want, "%s: trailing bytes: header says 3 images of 2x3 (18 bytes after the "
                 "16-byte header), file has 5 more", im);
        ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_EINPUT, want);
        cr_assert_str_eq(sd_errmsg(), want);
    }
}

Test(idx, count_mismatch) {
    char dir[256], im[512], lb[512], want[1200];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    write_labels(lb, 2, k_lab, 2, 0);
    sd_dataset d;
    snprintf(want, sizeof want, "%s: count mismatch: header says 2 labels, but %s says 3 images", lb, im);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_EINPUT, want);
}

Test(idx, bounds) {
    char dir[256], im[512], lb[512], want[900];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 0);
    sd_dataset d;
    write_images(im, 0x803, 0, 2, 3, NULL, 0, 0);
    snprintf(want, sizeof want, "%s: header says 0 images: a data set needs at least 1 example", im);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_EINPUT, want);
    write_images(im, 0x803, 3, 0, 3, NULL, 0, 0);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_EINPUT, "header says images of 0x3: a dimension is 0");
    write_images(im, 0x803, 3, 28, 4097, NULL, 0, 0);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_ELIMIT, "header says images of 28x4097, a dimension past the limit of 4096");
    write_images(im, 0x803, 10000001, 28, 28, NULL, 0, 0);
    snprintf(want, sizeof want, "%s: header says 10000001 images, past the limit of 10000000 examples", im);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_ELIMIT, want);
    write_images(im, 0x803, 0xffffffffu, 4096, 4096, NULL, 0, 0);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_ELIMIT, "header says 4294967295 images, past the limit");
    write_images(im, 0x803, 3, 2, 3, k_pix, sizeof k_pix, 0);
    write_labels(lb, 20000000, NULL, 10, 0);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_ELIMIT, "header says 20000000 labels, past the limit");
    cr_assert_null(d.x);
}

/* Within the bounds, but claiming 10M images of 64x64 (41 GB as bytes, 164 GB as floats) with a
 * 100-byte body: must fail as truncated without allocating the claim. The address space (or, under
 * ASan, the largest allocation) is capped at 1 GiB so allocating the claim would fail with SD_ENOMEM. */
Test(idx, huge_claim_fails_fast) {
    char dir[256], im[512], lb[512], want[900];
    valid_idx(dir, sizeof dir, im, lb, sizeof im, 1);
    write_images(im, 0x803, 10000000, 64, 64, NULL, 100, 1);
    write_labels(lb, 10000000, NULL, 100, 1);
    limit_memory();
    sd_dataset d;
    snprintf(want, sizeof want, "%s: truncated: header says 10000000 images of 64x64 (40960000000 bytes after "
             "the 16-byte header), file has 100", im);
    ASSERT_ERR(sd_data_load_idx(&d, im, lb), SD_EINPUT, want);
    /* and the cap is real: allocating 2 GiB fails here */
    void *p = malloc((size_t)2 << 30);
    cr_assert_null(p, "memory cap not in effect; this test could not catch a big allocation");
}

/* ---- idx: the real Fashion-MNIST files ----------------------------------------------------------- */

Test(idx, fashion_mnist) {
    const char *tri = FMNIST "/train-images-idx3-ubyte.gz", *trl = FMNIST "/train-labels-idx1-ubyte.gz";
    const char *tei = FMNIST "/t10k-images-idx3-ubyte.gz", *tel = FMNIST "/t10k-labels-idx1-ubyte.gz";
    if (access(tri, R_OK) || access(trl, R_OK) || access(tei, R_OK) || access(tel, R_OK))
        TU_SKIP("fashion-mnist not installed");
    sd_dataset tr, te;
    cr_assert_eq(sd_data_load_idx(&tr, tri, trl), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_load_idx(&te, tei, tel), 0, "%s", sd_errmsg());
    cr_assert_eq(tr.n, 60000);
    cr_assert_eq(te.n, 10000);
    cr_assert(tr.c == 1 && tr.h == 28 && tr.w == 28 && te.c == 1 && te.h == 28 && te.w == 28);
    cr_assert_eq(tr.classes, 10);
    cr_assert_eq(te.classes, 10);
    /* Pinned with python3 gzip: train labels start 9 0 0 3 0 2 7 2, test labels 9 2 1 1 6 1 4 6;
     * the first train image's pixels sum to 76247 with a maximum of 255. */
    const int32_t tr0[8] = { 9, 0, 0, 3, 0, 2, 7, 2 }, te0[8] = { 9, 2, 1, 1, 6, 1, 4, 6 };
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(tr.y[i], tr0[i], "train label %d", i);
        cr_assert_eq(te.y[i], te0[i], "test label %d", i);
    }
    double sum = 0; float mx = 0;
    for (int i = 0; i < 784; i++) { sum += tr.x[i] * 255.0; if (tr.x[i] > mx) mx = tr.x[i]; }
    cr_assert_lt(fabs(sum - 76247.0), 0.01, "first image pixel sum %f", sum);
    cr_assert_eq(mx, 1.0f);
    int per[10] = {0};
    for (int i = 0; i < tr.n; i++) per[tr.y[i]]++;
    for (int k = 0; k < 10; k++) cr_assert_eq(per[k], 6000, "class %d has %d train examples", k, per[k]);
    sd_dataset_free(&tr);
    sd_dataset_free(&te);
}

/* ---- CIFAR-10 ------------------------------------------------------------------------------------ */

#define REC 3073

/* Write dir/name with `records` records (label = (seed + r) % 10, pixel p = (seed + r + p) & 255). */
static void write_cifar(const char *dir, const char *name, int records, int seed, size_t extra) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = (size_t)records * REC + extra;
    uint8_t *buf = calloc(n ? n : 1, 1);
    for (int r = 0; r < records; r++) {
        buf[(size_t)r * REC] = (uint8_t)((seed + r) % 10);
        for (int p = 0; p < 3072; p++) buf[(size_t)r * REC + 1 + p] = (uint8_t)(seed + r + p);
    }
    tu_write(path, buf, n);
    free(buf);
}

static void cifar_dir(char *dir, size_t len) {
    tu_tmpdir(dir, len);
    char name[64];
    for (int b = 1; b <= 5; b++) {
        snprintf(name, sizeof name, "data_batch_%d.bin", b);
        write_cifar(dir, name, 2, 10 * b, 0);
    }
    write_cifar(dir, "test_batch.bin", 3, 7, 0);
}

Test(cifar10, valid_train_and_test) {
    char dir[256];
    cifar_dir(dir, sizeof dir);
    sd_dataset tr, te;
    cr_assert_eq(sd_data_load_cifar10(&tr, dir, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_load_cifar10(&te, dir, 1), 0, "%s", sd_errmsg());
    cr_assert_eq(tr.n, 10);
    cr_assert_eq(te.n, 3);
    cr_assert(tr.c == 3 && tr.h == 32 && tr.w == 32);
    cr_assert_eq(tr.classes, 10);
    char src[300];
    snprintf(src, sizeof src, "cifar10:%s", dir);
    cr_assert_str_eq(tr.source, src);
    for (int b = 1; b <= 5; b++)
        for (int r = 0; r < 2; r++) {
            int i = (b - 1) * 2 + r, s = 10 * b;
            cr_assert_eq(tr.y[i], (s + r) % 10);
            for (int p = 0; p < 3072; p += 511)
                cr_assert_eq(tr.x[(size_t)i * 3072 + p], (float)(uint8_t)(s + r + p) / 255.0f, "ex %d px %d", i, p);
        }
    for (int r = 0; r < 3; r++) {
        cr_assert_eq(te.y[r], (7 + r) % 10);
        cr_assert_eq(te.x[(size_t)r * 3072 + 3071], (float)(uint8_t)(7 + r + 3071) / 255.0f);
    }
    sd_dataset_free(&tr);
    sd_dataset_free(&te);
}

Test(cifar10, partial_record) {
    char dir[256], want[600];
    cifar_dir(dir, sizeof dir);
    write_cifar(dir, "data_batch_3.bin", 2, 0, 100);
    sd_dataset d;
    snprintf(want, sizeof want, "%s/data_batch_3.bin: size 6246 bytes is not a whole number of 3073-byte "
             "records (1 label + 3072 pixels): 2 records and 100 bytes over", dir);
    ASSERT_ERR(sd_data_load_cifar10(&d, dir, 0), SD_EINPUT, want);
    cr_assert_null(d.x);
    cr_assert_eq(sd_data_load_cifar10(&d, dir, 1), 0, "test split is unaffected: %s", sd_errmsg());
    sd_dataset_free(&d);
    write_cifar(dir, "test_batch.bin", 0, 0, 0);
    ASSERT_ERR(sd_data_load_cifar10(&d, dir, 1), SD_EINPUT, "test_batch.bin: size 0 bytes is not a whole number");
}

Test(cifar10, bad_label) {
    char dir[256], want[600];
    cifar_dir(dir, sizeof dir);
    write_cifar(dir, "test_batch.bin", 3, 8, 0);   /* labels 8, 9, 0 */
    sd_dataset d;
    cr_assert_eq(sd_data_load_cifar10(&d, dir, 1), 0, "%s", sd_errmsg());
    sd_dataset_free(&d);
    /* record 1 gets label 10 */
    char path[600];
    snprintf(path, sizeof path, "%s/test_batch.bin", dir);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, REC, SEEK_SET);
    fputc(10, f);
    fclose(f);
    snprintf(want, sizeof want, "%s: record 1: label 10 (CIFAR-10 labels are 0..9)", path);
    ASSERT_ERR(sd_data_load_cifar10(&d, dir, 1), SD_EINPUT, want);
    cr_assert_null(d.x);
}

Test(cifar10, missing_batch_and_bad_split) {
    char dir[256], path[600];
    cifar_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/data_batch_4.bin", dir);
    cr_assert_eq(unlink(path), 0);
    sd_dataset d;
    char want[700];
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
    ASSERT_ERR(sd_data_load_cifar10(&d, dir, 0), SD_EIO, want);
    ASSERT_ERR(sd_data_load_cifar10(&d, dir, 2), SD_EUSAGE, "expected 0 (train) or 1 (test)");
}

/* ---- synthetic ----------------------------------------------------------------------------------- */

Test(synthetic, deterministic_and_seeded) {
    sd_dataset a, b, c, t;
    cr_assert_eq(sd_data_synthetic(&a, 500, 3, 8, 8, 10, 42, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic(&b, 500, 3, 8, 8, 10, 42, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic(&c, 500, 3, 8, 8, 10, 43, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic(&t, 500, 3, 8, 8, 10, 42, 1), 0, "%s", sd_errmsg());
    size_t nx = (size_t)500 * 192;
    cr_assert_eq(memcmp(a.x, b.x, nx * sizeof(float)), 0, "same seed, different bytes");
    cr_assert_eq(memcmp(a.y, b.y, 500 * sizeof(int32_t)), 0);
    size_t diff_x = 0, diff_t = 0; int diff_y = 0;
    for (size_t i = 0; i < nx; i++) { diff_x += a.x[i] != c.x[i]; diff_t += a.x[i] != t.x[i]; }
    for (int i = 0; i < 500; i++) diff_y += a.y[i] != c.y[i];
    cr_assert_gt(diff_x, nx / 2, "different seed: only %zu of %zu values differ", diff_x, nx);
    cr_assert_gt(diff_y, 300, "different seed: only %d of 500 labels differ", diff_y);
    cr_assert_gt(diff_t, nx / 2, "train and test streams share examples");
    cr_assert_str_eq(a.source, "synthetic seed=42 split=train");
    cr_assert_str_eq(t.source, "synthetic seed=42 split=test");
    cr_assert_eq(a.synthetic, 1);
    cr_assert(a.n == 500 && a.c == 3 && a.h == 8 && a.w == 8 && a.classes == 10);
    int per[10] = {0};
    for (int i = 0; i < 500; i++) { cr_assert(a.y[i] >= 0 && a.y[i] < 10); per[a.y[i]]++; }
    for (int k = 0; k < 10; k++) cr_assert_gt(per[k], 20, "class %d drawn %d times of 500", k, per[k]);
    for (size_t i = 0; i < nx; i++) cr_assert(a.x[i] >= 0.0f && a.x[i] <= 1.0f);
    /* Pinned: the stream layout documented in synthetic.c is the promise (same bytes everywhere); these
     * values were computed from that description by an independent Python implementation. */
    const int32_t py[4] = { 4, 2, 8, 3 };
    const float px[4][2] = { { 0x1.f20198p-3f, 1.0f }, { 0x1.f12d68p-3f, 0x1.36d6ecp-1f },
                             { 0.0f, 0x1.d43bb8p-3f }, { 0x1.7af2fcp-2f, 0x1.2d39a8p-3f } };
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(a.y[i], py[i], "y[%d] = %d", i, a.y[i]);
        for (int j = 0; j < 2; j++)
            cr_assert_eq(a.x[(size_t)i * 192 + j], px[i][j], "x[%d][%d] = %a", i, j, (double)a.x[(size_t)i * 192 + j]);
    }
    sd_dataset_free(&a); sd_dataset_free(&b); sd_dataset_free(&c); sd_dataset_free(&t);
}

/* Class means from train, nearest mean on test: fraction correct. */
static double nearest_mean_accuracy(const sd_dataset *tr, const sd_dataset *te) {
    size_t dim = (size_t)tr->c * tr->h * tr->w;
    double *mean = calloc((size_t)tr->classes * dim, sizeof *mean);
    int *cnt = calloc((size_t)tr->classes, sizeof *cnt);
    for (int i = 0; i < tr->n; i++) {
        cnt[tr->y[i]]++;
        for (size_t j = 0; j < dim; j++) mean[(size_t)tr->y[i] * dim + j] += tr->x[(size_t)i * dim + j];
    }
    for (int k = 0; k < tr->classes; k++)
        for (size_t j = 0; j < dim; j++) mean[(size_t)k * dim + j] /= cnt[k] ? cnt[k] : 1;
    int right = 0;
    for (int i = 0; i < te->n; i++) {
        int best = -1; double bd = 0;
        for (int k = 0; k < tr->classes; k++) {
            double d2 = 0;
            for (size_t j = 0; j < dim; j++) {
                double e = te->x[(size_t)i * dim + j] - mean[(size_t)k * dim + j];
                d2 += e * e;
            }
            if (best < 0 || d2 < bd) { best = k; bd = d2; }
        }
        right += best == te->y[i];
    }
    free(mean); free(cnt);
    return (double)right / te->n;
}

/* Noise SD_DATA_SYNTH_NOISE (0.5): learnable even at 1x4x4; a model from another seed is at chance. */
Test(synthetic, learnable) {
    const int shapes[3][3] = { { 1, 28, 28 }, { 3, 8, 8 }, { 1, 4, 4 } };
    for (int s = 0; s < 3; s++) {
        const int *sh = shapes[s];
        sd_dataset tr, te, other;
        cr_assert_eq(sd_data_synthetic(&tr, 2000, sh[0], sh[1], sh[2], 10, 7, 0), 0, "%s", sd_errmsg());
        cr_assert_eq(sd_data_synthetic(&te, 1000, sh[0], sh[1], sh[2], 10, 7, 1), 0, "%s", sd_errmsg());
        cr_assert_eq(sd_data_synthetic(&other, 2000, sh[0], sh[1], sh[2], 10, 8, 0), 0, "%s", sd_errmsg());
        double acc = nearest_mean_accuracy(&tr, &te), chance = nearest_mean_accuracy(&other, &te);
        printf("synthetic %dx%dx%d: nearest-prototype test accuracy %.3f (other seed %.3f)\n",
               sh[0], sh[1], sh[2], acc, chance);
        cr_assert_gt(acc, 0.9, "%dx%dx%d: accuracy %.3f", sh[0], sh[1], sh[2], acc);
        cr_assert_lt(chance, 0.3, "%dx%dx%d: other seed's prototypes give %.3f", sh[0], sh[1], sh[2], chance);
        sd_dataset_free(&tr); sd_dataset_free(&te); sd_dataset_free(&other);
    }
}

Test(synthetic, bad_arguments) {
    sd_dataset d;
    ASSERT_ERR(sd_data_synthetic(&d, 10, 1, 4, 4, 0, 1, 0), SD_EINPUT, "0 classes: need at least 1");
    ASSERT_ERR(sd_data_synthetic(&d, 10, 1, 4, 4, 257, 1, 0), SD_ELIMIT, "257 classes, past the limit of 256");
    ASSERT_ERR(sd_data_synthetic(&d, 10, 1, 4, 4, 10, 1, 2), SD_EUSAGE, "split 2");
    ASSERT_ERR(sd_data_synthetic(&d, 0, 1, 4, 4, 10, 1, 0), SD_EINPUT, "synthetic: 0 examples: a data set needs at least 1");
    ASSERT_ERR(sd_data_synthetic(&d, 10, 1, 5000, 4, 10, 1, 0), SD_ELIMIT, "past the limit of 4096");
    ASSERT_ERR(sd_data_synthetic(&d, 20000000, 1, 4, 4, 10, 1, 0), SD_ELIMIT, "20000000 examples, past the limit");
    cr_assert_null(d.x);
}

/* ---- IMDB token sequences ------------------------------------------------------------------ */

static void mkdir_p(const char *path) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir(buf, 0755); *p = '/'; }
    mkdir(buf, 0755);
}

/* A tiny aclImdb tree. Training words and counts: bad 3; acting, great, movie 2; br, don't, i, plot 1.
 * Ranks (ties in byte order): bad 1, acting 2, great 3, movie 4, br 5, don't 6, i 7, plot 8; id = rank + 3. */
static void write_acl(const char *root) {
    char p[1024];
    const char *dirs[4] = {"train/pos", "train/neg", "test/pos", "test/neg"};
    for (int i = 0; i < 4; i++) { snprintf(p, sizeof p, "%s/%s", root, dirs[i]); mkdir_p(p); }
    snprintf(p, sizeof p, "%s/train/pos/0_9.txt", root); tu_write_str(p, "Great movie, GREAT acting!");
    snprintf(p, sizeof p, "%s/train/neg/1_2.txt", root); tu_write_str(p, "Bad movie. Bad, bad acting<br />I don't");
    snprintf(p, sizeof p, "%s/train/neg/0_1.txt", root); tu_write_str(p, "plot");
    snprintf(p, sizeof p, "%s/test/pos/0_8.txt", root); tu_write_str(p, "great unseen movie");
    snprintf(p, sizeof p, "%s/test/neg/0_3.txt", root); tu_write_str(p, "Bad.");
}

static void expect_row(const sd_dataset *d, int i, const int *ids, int n) {
    cr_assert_eq(d->c, n);
    for (int t = 0; t < n; t++)
        cr_assert_eq((int)d->x[(size_t)i * d->c + t], ids[t], "example %d step %d: %d, expected %d", i, t,
                     (int)d->x[(size_t)i * d->c + t], ids[t]);
}

Test(imdb, acl_text_layout_keras_encoding) {
    char dir[256], root[512];
    tu_tmpdir(dir, sizeof dir);
    snprintf(root, sizeof root, "%s/aclImdb", dir);
    write_acl(root);
    sd_imdb_opts o;
    sd_imdb_opts_default(&o);
    o.maxlen = 8;
    sd_dataset tr, te;
    cr_assert_eq(sd_data_load_imdb_text(&tr, &te, root, &o), 0, "%s", sd_errmsg());
    cr_assert_eq(tr.n, 3);
    cr_assert_eq(te.n, 2);
    cr_assert_eq(tr.classes, 2);
    /* neg files in name order (0_1, 1_2), then pos; 'pre' padding and truncation (keep the last 8) */
    cr_assert_eq(tr.y[0], 0); cr_assert_eq(tr.y[1], 0); cr_assert_eq(tr.y[2], 1);
    expect_row(&tr, 0, (int[]){0, 0, 0, 0, 0, 0, 1, 11}, 8);                  /* "plot" */
    expect_row(&tr, 1, (int[]){4, 7, 4, 4, 5, 8, 10, 9}, 8);                  /* 9 ids: the start token dropped */
    expect_row(&tr, 2, (int[]){0, 0, 0, 1, 6, 7, 6, 5}, 8);
    expect_row(&te, 1, (int[]){0, 0, 0, 0, 1, 6, 2, 7}, 8);                   /* unseen word -> oov 2 */
    sd_dataset_free(&tr); sd_dataset_free(&te);
    /* num_words 7: ids >= 7 become 2; post padding, post truncation */
    o.num_words = 7; o.maxlen = 4; o.pad_post = 1; o.trunc_post = 1;
    cr_assert_eq(sd_data_load_imdb_text(&tr, &te, root, &o), 0, "%s", sd_errmsg());
    expect_row(&tr, 0, (int[]){1, 2, 0, 0}, 4);
    expect_row(&tr, 1, (int[]){1, 4, 2, 4}, 4);
    expect_row(&te, 0, (int[]){1, 4, 0, 0}, 4);
    expect_row(&te, 1, (int[]){1, 6, 2, 2}, 4);
    sd_dataset_free(&tr); sd_dataset_free(&te);
}

Test(imdb, acl_errors_name_the_path) {
    char dir[256], root[512], p[1024];
    tu_tmpdir(dir, sizeof dir);
    snprintf(root, sizeof root, "%s/aclImdb", dir);
    sd_imdb_opts o;
    sd_imdb_opts_default(&o);
    sd_dataset tr, te;
    cr_assert_eq(sd_data_load_imdb_text(&tr, &te, root, &o), SD_EIO);
    cr_assert(strstr(sd_errmsg(), "aclImdb/train/neg") && strstr(sd_errmsg(), "cannot open"), "%s", sd_errmsg());
    write_acl(root);
    snprintf(p, sizeof p, "%s/train/pos/5_7.txt", root);
    tu_write(p, "fine\nbut\0binary", 15);
    cr_assert_eq(sd_data_load_imdb_text(&tr, &te, root, &o), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "train/pos/5_7.txt:2: NUL byte"), "%s", sd_errmsg());
    cr_assert_null(tr.x);
}

Test(imdb, token_file_and_its_errors) {
    char dir[256], p[512];
    tu_tmpdir(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/t.tok", dir);
    tu_write_str(p, "showdown-tokens/1\n# a comment\n1 1 14 22 16\n\n0\t1 5 30001 7\n");
    sd_imdb_opts o;
    sd_imdb_opts_default(&o);
    o.num_words = 30000; o.maxlen = 3; o.pad_post = 1;
    sd_dataset d;
    cr_assert_eq(sd_data_load_tokens(&d, p, &o), 0, "%s", sd_errmsg());
    cr_assert_eq(d.n, 2);
    cr_assert_eq(d.classes, 2);
    cr_assert_eq(d.y[0], 1); cr_assert_eq(d.y[1], 0);
    expect_row(&d, 0, (int[]){14, 22, 16}, 3);     /* 'pre' truncation keeps the last 3 */
    expect_row(&d, 1, (int[]){5, 2, 7}, 3);        /* 30001 >= num_words -> oov */
    sd_dataset_free(&d);
    static const struct { const char *text, *msg; int code; } bad[] = {
        {"tokens\n1 2 3\n", "t.tok:1: expected the header", SD_EINPUT},
        {"showdown-tokens/1\n1 2 3\n0 1 2x 4\n", "t.tok:3: field 3: expected a non-negative integer (got \"2x\")", SD_EINPUT},
        {"showdown-tokens/1\n1 2 -3\n", "t.tok:2: field 3: token id -3 out of range", SD_EINPUT},
        {"showdown-tokens/1\n\n\n300 2 3\n", "t.tok:4: label 300 out of range", SD_EINPUT},
        {"showdown-tokens/1\n# nothing\n", "no examples", SD_EINPUT},
        {"", "t.tok:1: empty file", SD_EINPUT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_write_str(p, bad[i].text);
        cr_assert_eq(sd_data_load_tokens(&d, p, &o), bad[i].code, "case %zu: %s", i, sd_errmsg());
        cr_assert(strstr(sd_errmsg(), bad[i].msg), "case %zu: got \"%s\", expected \"%s\"", i, sd_errmsg(), bad[i].msg);
        cr_assert_null(d.x);
    }
    snprintf(p, sizeof p, "%s/missing.tok", dir);
    cr_assert_eq(sd_data_load_tokens(&d, p, &o), SD_EIO);
    cr_assert(strstr(sd_errmsg(), "missing.tok: cannot open"), "%s", sd_errmsg());
}

Test(imdb, synthetic_tokens_deterministic_and_in_range) {
    sd_dataset a, b, t;
    cr_assert_eq(sd_data_synthetic_tokens(&a, 50, 20, 100, 2, 7, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic_tokens(&b, 50, 20, 100, 2, 7, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic_tokens(&t, 50, 20, 100, 2, 7, 1), 0, "%s", sd_errmsg());
    cr_assert_eq(memcmp(a.x, b.x, sizeof(float) * 50 * 20), 0);
    cr_assert_neq(memcmp(a.x, t.x, sizeof(float) * 50 * 20), 0);
    int labels[2] = {0, 0};
    for (int i = 0; i < 50; i++) {
        cr_assert_eq(a.x[i * 20], 1.0f);
        labels[a.y[i]]++;
        for (int k = 0; k < 20; k++) cr_assert(a.x[i * 20 + k] >= 0 && a.x[i * 20 + k] < 100);
    }
    cr_assert_gt(labels[0], 5); cr_assert_gt(labels[1], 5);
    sd_dataset_free(&a); sd_dataset_free(&b); sd_dataset_free(&t);
}
