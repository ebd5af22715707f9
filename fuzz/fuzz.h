/* fuzz.h — shared by the libFuzzer targets in fuzz/ (built by `make fuzz` with clang, ASan and UBSan) and
 * by their replay build (fuzz/replay_main.c, any compiler) that the tests run on fuzz/regress/. Each
 * target feeds bytes from outside to one parser's from-memory entry point; a crash, a sanitizer report
 * or a leak is a finding, an error return is the expected answer to bad input. */
#ifndef SD_FUZZ_H
#define SD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (for parsers that take C strings); caller frees. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A sink for the printers, opened once. */
static inline FILE *fuzz_devnull(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    if (!f) abort();
    return f;
}

/* Every error message is one line that names something: non-empty. */
static inline void fuzz_check_err(int rc) {
    if (rc < 0 && !sd_errmsg()[0]) { fprintf(stderr, "error %d without a message\n", rc); abort(); }
    sd_err_clear();
}

#endif
