/* fuzz_published — a results file a stranger published, as `showdown verify` reads it
 * (src/bench/published.c: positioned check, then jansson), then as the report reads results documents
 * (src/render/model.c). */
#include "fuzz.h"
#include "bench/results.h"
#include "render/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *doc = NULL;
    int rc = sd_published_parse(&doc, "published.json", (const char *)data, size);
    if (rc == 0) {
        render_model *m = NULL;
        if (render_model_new(&m) == 0) {
            fuzz_check_err(render_model_add_results_doc(m, doc, "published.json"));
            render_model_date(m);
            render_model_free(m);
        }
        json_decref(doc);
    }
    fuzz_check_err(rc);
    return 0;
}
