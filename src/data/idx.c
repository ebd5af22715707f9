/* idx — MNIST-format data: idx3 unsigned-byte images + idx1 unsigned-byte labels, plain or gzip (zlib's
 * gzread reads both). Headers are checked against SD_DATA_MAX_* before anything is allocated, and the
 * body is read into a buffer that grows with what the file really holds, so a header that claims 10 GB
 * costs no more than the file. Truncated bodies and trailing bytes are errors naming file and sizes. */
#include "data/data.h"
#include "data/data_impl.h"
#include "core/err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_MAGIC_IMAGES 0x00000803u   /* 0x08 = unsigned byte, 3 dimensions */
#define IDX_MAGIC_LABELS 0x00000801u   /* 0x08 = unsigned byte, 1 dimension */
#define IDX_CHUNK        (1u << 20)    /* read granularity; also the first body buffer size */

typedef struct idx_file {
    const char *path;
    gzFile gz;                /* a file, or (gz NULL) bytes in memory: */
    const uint8_t *mem;
    size_t mem_len, mem_pos;
    int mem_gzip, mem_end;    /* gzip stream (inflated with z); its end was reached */
    z_stream z;
    uint32_t dims[3];   /* count first, then rows, cols for images */
    int ndims;
    int header_bytes;
} idx_file;

static void idx_close(idx_file *f) {
    if (f->gz) gzclose(f->gz);
    f->gz = NULL;
    if (f->mem_gzip) inflateEnd(&f->z);
    f->mem_gzip = 0;
}

/* Bytes in memory, plain or gzip (as gzread: gzip when they start with the gzip magic). */
static int idx_open_mem(idx_file *f, const char *name, const uint8_t *data, size_t len) {
    memset(f, 0, sizeof *f);
    f->path = name;
    f->mem = data;
    f->mem_len = len;
    if (len >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
        if (inflateInit2(&f->z, 15 + 16) != Z_OK) return sd_err(SD_ENOMEM, "%s: out of memory in zlib", name);
        f->mem_gzip = 1;
        f->z.next_in = (Bytef *)data;
        f->z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
    }
    return 0;
}

static int idx_read_mem(idx_file *f, void *buf, size_t want, size_t *got, int *cut) {
    if (!f->mem_gzip) {
        size_t n = f->mem_len - f->mem_pos < want ? f->mem_len - f->mem_pos : want;
        memcpy(buf, f->mem + f->mem_pos, n);
        f->mem_pos += n;
        *got = n;
        return 0;
    }
    *got = 0;
    while (*got < want && !f->mem_end) {
        size_t ask = want - *got > IDX_CHUNK ? IDX_CHUNK : want - *got;
        f->z.next_out = (Bytef *)buf + *got;
        f->z.avail_out = (uInt)ask;
        int zr = inflate(&f->z, Z_NO_FLUSH);
        *got += ask - f->z.avail_out;
        if (zr == Z_STREAM_END) { f->mem_end = 1; break; }
        if (zr == Z_BUF_ERROR || (zr == Z_OK && f->z.avail_in == 0 && f->z.avail_out > 0)) { *cut = 1; break; }
        if (zr == Z_MEM_ERROR) return sd_err(SD_ENOMEM, "%s: out of memory in zlib", f->path);
        if (zr != Z_OK) return sd_err(SD_EINPUT, "%s: corrupt gzip data: %s", f->path, f->z.msg ? f->z.msg : "?");
    }
    return 0;
}

static int idx_open(idx_file *f, const char *path) {
    memset(f, 0, sizeof *f);
    f->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sd_err(SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return sd_err(SD_EIO, "%s: cannot read: %s", path, strerror(EISDIR));
    }
    f->gz = gzdopen(fd, "rb");
    if (!f->gz) {
        close(fd);
        return sd_err(SD_ENOMEM, "%s: cannot open (gzdopen failed: out of memory)", path);
    }
    gzbuffer(f->gz, 1u << 17);
    return 0;
}

/* Read up to want bytes (stopping at end of data). *got is what was read; *cut is set if the gzip
 * stream ended before its trailer (a truncated .gz). Fails only on I/O errors and corrupt data. */
static int idx_read(idx_file *f, void *buf, size_t want, size_t *got, int *cut) {
    if (!f->gz) return idx_read_mem(f, buf, want, got, cut);
    *got = 0;
    while (*got < want) {
        size_t ask = want - *got;
        if (ask > IDX_CHUNK) ask = IDX_CHUNK;
        int r = gzread(f->gz, (char *)buf + *got, (unsigned)ask);
        if (r > 0) { *got += (size_t)r; if ((size_t)r == ask) continue; }
        int zerr = Z_OK;
        const char *msg = gzerror(f->gz, &zerr);
        if (zerr == Z_BUF_ERROR) { *cut = 1; return 0; }   /* "unexpected end of file" */
        if (zerr == Z_ERRNO) return sd_err(SD_EIO, "%s: read error: %s", f->path, strerror(errno));
        if (zerr == Z_MEM_ERROR) return sd_err(SD_ENOMEM, "%s: out of memory in zlib", f->path);
        if (zerr != Z_OK) return sd_err(SD_EINPUT, "%s: corrupt gzip data: %s", f->path, msg);
        if (r <= 0 || gzeof(f->gz)) return 0;            /* end of data */
    }
    return 0;
}

static const char *idx_kind(uint32_t magic) {
    return magic == IDX_MAGIC_IMAGES ? "idx3 unsigned-byte images" : "idx1 unsigned-byte labels";
}

/* Read and check the header: magic, then one big-endian u32 per dimension. */
static int idx_header(idx_file *f, uint32_t want_magic) {
    uint8_t b[12];
    size_t got = 0;
    int cut = 0;
    SD_TRY(idx_read(f, b, 4, &got, &cut));
    if (got < 4)
        return sd_err(SD_EINPUT, "%s: truncated header: file has %zu bytes, an idx header starts with a "
                      "4-byte magic", f->path, got);
    uint32_t magic = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    int want_ndims = (int)(want_magic & 0xff);
    if (b[0] != 0 || b[1] != 0)
        return sd_err(SD_EINPUT, "%s: wrong magic 0x%08x: not an idx file (expected 0x%08x, %s)",
                      f->path, magic, want_magic, idx_kind(want_magic));
    if (b[2] != 0x08)
        return sd_err(SD_EINPUT, "%s: wrong magic 0x%08x: data type 0x%02x is not unsigned byte "
                      "(expected 0x%08x, %s)", f->path, magic, b[2], want_magic, idx_kind(want_magic));
    if (b[3] != want_ndims)
        return sd_err(SD_EINPUT, "%s: wrong magic 0x%08x: %d dimensions (expected 0x%08x, %s)",
                      f->path, magic, b[3], want_magic, idx_kind(want_magic));
    f->ndims = want_ndims;
    f->header_bytes = 4 + 4 * want_ndims;
    SD_TRY(idx_read(f, b, (size_t)(4 * want_ndims), &got, &cut));
    if (got < (size_t)(4 * want_ndims))
        return sd_err(SD_EINPUT, "%s: truncated header: file has %zu bytes, a %s header has %d",
                      f->path, 4 + got, idx_kind(want_magic), f->header_bytes);
    for (int i = 0; i < want_ndims; i++)
        f->dims[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
                     (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];

    const char *noun = want_ndims == 3 ? "images" : "labels";
    if (f->dims[0] == 0)
        return sd_err(SD_EINPUT, "%s: header says 0 %s: a data set needs at least 1 example", f->path, noun);
    if (f->dims[0] > SD_DATA_MAX_EXAMPLES)
        return sd_err(SD_ELIMIT, "%s: header says %u %s, past the limit of %d examples",
                      f->path, f->dims[0], noun, SD_DATA_MAX_EXAMPLES);
    if (want_ndims == 3) {
        if (f->dims[1] == 0 || f->dims[2] == 0)
            return sd_err(SD_EINPUT, "%s: header says images of %ux%u: a dimension is 0",
                          f->path, f->dims[1], f->dims[2]);
        if (f->dims[1] > SD_DATA_MAX_DIM || f->dims[2] > SD_DATA_MAX_DIM)
            return sd_err(SD_ELIMIT, "%s: header says images of %ux%u, a dimension past the limit of %d",
                          f->path, f->dims[1], f->dims[2], SD_DATA_MAX_DIM);
    }
    return 0;
}

/* Describe what the header claims, for the size messages. */
static void idx_claim(const idx_file *f, char *buf, size_t len, uint64_t bytes) {
    if (f->ndims == 3)
        snprintf(buf, len, "header says %u images of %ux%u (%llu bytes after the %d-byte header)",
                 f->dims[0], f->dims[1], f->dims[2], (unsigned long long)bytes, f->header_bytes);
    else
        snprintf(buf, len, "header says %u labels (%llu bytes after the %d-byte header)",
                 f->dims[0], (unsigned long long)bytes, f->header_bytes);
}

/* Read exactly the body the header claims into a freshly allocated buffer that grows with the data
 * actually present; error if the file holds less (truncated) or more (trailing bytes). */
static int idx_body(idx_file *f, uint8_t **out) {
    *out = NULL;
    uint64_t want = (uint64_t)f->dims[0];
    if (f->ndims == 3) want *= (uint64_t)f->dims[1] * f->dims[2];
    uint8_t *buf = NULL;
    size_t cap = 0, have = 0;
    int cut = 0, rc = 0;
    char claim[256];
    while (have < want) {
        if (have == cap) {
            size_t ncap = cap ? cap * 2 : IDX_CHUNK;
            if (ncap > want) ncap = (size_t)want;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) { rc = sd_err(SD_ENOMEM, "%s: out of memory reading %zu bytes", f->path, ncap); goto fail; }
            buf = nb; cap = ncap;
        }
        size_t got = 0;
        SD_TRY_GOTO(rc, idx_read(f, buf + have, cap - have, &got, &cut), fail);
        have += got;
        if (have < cap) break;   /* end of data */
    }
    if (have < want) {
        idx_claim(f, claim, sizeof claim, want);
        rc = sd_err(SD_EINPUT, "%s: truncated: %s, file has %zu%s", f->path, claim, have,
                    cut ? " (the gzip stream ends early)" : "");
        goto fail;
    }
    /* Trailing bytes: count them (bounded by the file) so the message can say how many. */
    uint64_t extra = 0;
    for (;;) {
        uint8_t scratch[4096];
        size_t got = 0;
        SD_TRY_GOTO(rc, idx_read(f, scratch, sizeof scratch, &got, &cut), fail);
        extra += got;
        if (got < sizeof scratch) break;
    }
    if (cut) {
        rc = sd_err(SD_EINPUT, "%s: truncated: the gzip stream ends before its trailer (data unchecked)",
                    f->path);
        goto fail;
    }
    if (extra) {
        idx_claim(f, claim, sizeof claim, want);
        rc = sd_err(SD_EINPUT, "%s: trailing bytes: %s, file has %llu more", f->path, claim,
                    (unsigned long long)extra);
        goto fail;
    }
    *out = buf;
    return 0;
fail:
    free(buf);
    return rc;
}

static int load(sd_dataset *out, idx_file *im, idx_file *lb);

int sd_data_load_idx(sd_dataset *out, const char *images_path, const char *labels_path) {
    memset(out, 0, sizeof *out);
    idx_file im = {0}, lb = {0};
    int rc = idx_open(&im, images_path);
    if (rc == 0) rc = idx_open(&lb, labels_path);
    if (rc == 0) rc = load(out, &im, &lb);
    idx_close(&im);
    idx_close(&lb);
    return rc;
}

int sd_data_parse_idx(sd_dataset *out, const char *images_name, const void *images, size_t images_len,
                      const char *labels_name, const void *labels, size_t labels_len) {
    memset(out, 0, sizeof *out);
    idx_file im = {0}, lb = {0};
    int rc = idx_open_mem(&im, images_name, images, images_len);
    if (rc == 0) rc = idx_open_mem(&lb, labels_name, labels, labels_len);
    if (rc == 0) rc = load(out, &im, &lb);
    idx_close(&im);
    idx_close(&lb);
    return rc;
}

/* Headers, sizes and bodies of two opened files (closed by the caller). */
static int load(sd_dataset *out, idx_file *imf, idx_file *lbf) {
    uint8_t *pix = NULL, *lab = NULL;
    int rc = 0;
    const char *images_path = imf->path, *labels_path = lbf->path;
    SD_TRY_GOTO(rc, idx_header(imf, IDX_MAGIC_IMAGES), done);
    SD_TRY_GOTO(rc, idx_header(lbf, IDX_MAGIC_LABELS), done);
    if (imf->dims[0] != lbf->dims[0]) {
        rc = sd_err(SD_EINPUT, "%s: count mismatch: header says %u labels, but %s says %u images",
                    labels_path, lbf->dims[0], images_path, imf->dims[0]);
        goto done;
    }
    SD_TRY_GOTO(rc, idx_body(imf, &pix), done);
    SD_TRY_GOTO(rc, idx_body(lbf, &lab), done);
    SD_TRY_GOTO(rc, sd_data_alloc(out, images_path, imf->dims[0], 1, imf->dims[1], imf->dims[2]), done);
    sd_data_pixels(out->x, pix, (size_t)imf->dims[0] * imf->dims[1] * imf->dims[2]);
    for (int i = 0; i < out->n; i++) out->y[i] = lab[i];   /* u8: always < 256 */
    out->classes = sd_data_max_label_plus_one(out);
    snprintf(out->source, sizeof out->source, "idx:%s + %s", images_path, labels_path);
done:
    free(pix);
    free(lab);
    return rc;
}
