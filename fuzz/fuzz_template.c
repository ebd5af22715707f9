/* fuzz_template — report templates (src/render/template.c, templates/NAME.json): sections, parts and
 * {placeholder} text checked with positions. */
#include "fuzz.h"
#include "render/template.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    render_arena *a = NULL;
    if (render_arena_new(&a) < 0) abort();
    render_template *t = NULL;
    int rc = render_template_parse(a, "template.json", (const char *)data, size, &t);
    if (rc == 0) {
        if (!t || t->nsections < 1) abort();
        for (int i = 0; i < t->nsections; i++) render_template_kind_name(t->sections[i].kind);
    }
    fuzz_check_err(rc);
    render_arena_free(a);
    return 0;
}
