/* fuzz_idx — MNIST-format idx files (src/data/idx.c), plain or gzip: the first 4 bytes (little-endian,
 * modulo the rest) say where the images file ends and the labels file starts. */
#include "fuzz.h"
#include "data/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    uint32_t cut = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    const uint8_t *p = data + 4;
    size_t n = size - 4;
    size_t k = cut % (n + 1);
    sd_dataset d;
    int rc = sd_data_parse_idx(&d, "images.idx", p, k, "labels.idx", p + k, n - k);
    if (rc == 0) {
        if (d.n < 1 || d.classes < 1 || d.classes > 256) abort();
        sd_dataset_free(&d);
    }
    fuzz_check_err(rc);
    return 0;
}
