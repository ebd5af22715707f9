/* fuzz_runner — the runner protocol (src/runner/runner.c, workloads/runners/PROTOCOL.md): what a framework
 * runner prints on stdout, fed in chunks (the first byte sets the chunk size) to the protocol reader. */
#include "fuzz.h"
#include "runner/runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t chunk = (size_t)data[0] * 7 + 1;
    sd_runner_opts o = {0};
    o.framework = "fuzz";
    o.epochs = 2;
    o.classes = 3;
    o.native_params = data[0] & 1 ? 669706 : 0;
    o.max_output = 1u << 16;
    sd_runner_result r;
    sd_runner_proto *p = NULL;
    if (sd_runner_proto_new(&p, &o, &r) < 0) abort();
    int rc = 0;
    for (size_t i = 1; i < size && rc == 0; i += chunk) {
        size_t n = size - i < chunk ? size - i : chunk;
        rc = sd_runner_proto_feed(p, (const char *)data + i, n);
    }
    int hello, done, epochs;
    sd_runner_proto_seen(p, &hello, &done, &epochs);
    if (epochs > o.epochs || (done && epochs != o.epochs)) abort();
    fuzz_check_err(rc);
    sd_runner_proto_free(p);
    sd_runner_result_free(&r);
    return 0;
}
