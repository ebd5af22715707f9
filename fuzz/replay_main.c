/* replay_main — a main() for the fuzz targets without libFuzzer: runs LLVMFuzzerTestOneInput once on each
 * file named on the command line (the regression inputs in fuzz/regress/ and the seed corpus), so the
 * tests replay them with the ordinary build and under `make test SANITIZE=1`. Exit 0 when all returned. */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    int n = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) { fprintf(stderr, "cannot read %s\n", argv[i]); return 2; }
        size_t cap = 1 << 16, len = 0;
        uint8_t *buf = malloc(cap);
        size_t k;
        while (buf && (k = fread(buf + len, 1, cap - len, f)) > 0) {
            len += k;
            if (len == cap) buf = realloc(buf, cap *= 2);
        }
        fclose(f);
        if (!buf) { fprintf(stderr, "out of memory reading %s\n", argv[i]); return 2; }
        /* an exact-size copy, so ASan sees a read past the end as the fuzzer would */
        uint8_t *exact = malloc(len ? len : 1);
        if (!exact) return 2;
        memcpy(exact, buf, len);
        free(buf);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
        n++;
    }
    printf("replayed %d input(s)\n", n);
    return 0;
}
