/* fuzz_results — showdown-results/1 documents read back (src/bench/results.c printers, the report's reader
 * src/render/model.c for results and history): whatever a results file or a --results argument holds. */
#include "fuzz.h"
#include "bench/results.h"
#include "render/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_error_t je;
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
    if (!doc) return 0;
    render_model *m = NULL;
    if (render_model_new(&m) == 0) {
        fuzz_check_err(render_model_add_results_doc(m, doc, "results.json"));
        fuzz_check_err(render_model_add_history(m, doc));
        render_model_date(m);
        render_model_env(m, "cpu_model");
        render_model_free(m);
    }
    if (json_is_object(doc)) {
        sd_results_print_table(fuzz_devnull(), doc);
        sd_results_print_overhead(fuzz_devnull(), doc);
    }
    json_decref(doc);
    return 0;
}
