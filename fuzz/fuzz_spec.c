/* fuzz_spec — workload specs (src/nn/spec.c, workloads/NAME.json): parse, then plan the model (shape
 * inference, parameter and FLOP counts) as bench and --describe do with a spec from outside. */
#include "fuzz.h"
#include "nn/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sd_workload w;
    int rc = sd_workload_parse(&w, "fuzz.json", (const char *)data, size);
    if (rc == 0) {
        nn_layer *layers = NULL;
        size_t nparams = 0;
        int n = nn_model_plan(&w, w.batch, &layers, &nparams);
        if (n >= 0) {
            double fwd, train;
            nn_model_flops(layers, n, &fwd, &train);
            nn_model_describe(fuzz_devnull(), &w, layers, n, nparams);
        }
        fuzz_check_err(n);
        free(layers);
        sd_workload_free(&w);
    }
    fuzz_check_err(rc);
    return 0;
}
