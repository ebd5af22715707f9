/* fuzz_score — scoring data (src/score/score_data.c, score_method.c): the first byte picks the reader
 * (0 a framework file scoring/frameworks/ *.json, 1 the snapshot scoring/snapshot.json, 2 the method
 * scoring/method.json), the rest is the file. A snapshot that reads is then scored against the
 * repository's method and frameworks (loaded once from scoring/ when run from the repository root). */
#include "fuzz.h"
#include "score/score_data.h"

static score_method g_method;
static score_inputs g_inputs;
static int g_have;
static score_snapshot g_snap;
static score_framework g_fw;
static score_method g_m2;
static score_fw g_out[SCORE_MAX_FW];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    g_have = score_method_load(&g_method, "scoring/method.json") == 0 &&
             score_inputs_load(&g_inputs, "scoring/frameworks", "scoring/ops.json") == 0;
    sd_err_clear();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int rc;
    switch (data[0] % 3) {
    case 0:
        rc = score_framework_parse(&g_fw, "framework.json", text, len);
        break;
    case 1:
        rc = score_snapshot_parse(&g_snap, "snapshot.json", text, len);
        if (rc == 0 && g_have) {
            fuzz_check_err(score_build(&g_method, &g_inputs, &g_snap, g_out));
            fuzz_check_err(score_compute(&g_method, g_out, (size_t)g_inputs.nfw));
        }
        break;
    default:
        rc = score_method_parse(&g_m2, "method.json", text, len);
        break;
    }
    fuzz_check_err(rc);
    return 0;
}
