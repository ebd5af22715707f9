/* fuzz_cifar10 — CIFAR-10 binary batch files (src/data/cifar10.c): records of 1 label + 3072 pixels. */
#include "fuzz.h"
#include "data/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sd_dataset d;
    int rc = sd_data_parse_cifar10(&d, "data_batch_1.bin", data, size);
    if (rc == 0) {
        if (d.n != (int)(size / 3073) || d.classes != 10) abort();
        for (int i = 0; i < d.n; i++) if (d.y[i] < 0 || d.y[i] > 9) abort();
        sd_dataset_free(&d);
    }
    fuzz_check_err(rc);
    return 0;
}
