/* jsonfile — read once, bounded, checked, loaded (jsonfile.h). */
#include "core/jsonfile.h"
#include "core/err.h"
#include "core/jv.h"

#include <stdlib.h>

int sd_json_load(const char *path, int (*check)(const jv_doc *d), json_t **out) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    SD_TRY(jv_read_bounded(path, &text, &len));
    int rc = 0;
    if (check) {
        jv_doc *d = NULL;
        rc = jv_parse(&d, path, text, len);
        if (rc == 0) rc = check(d);
        jv_doc_free(d);
    }
    if (rc == 0) {
        json_error_t e;
        *out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
        /* jansson says nothing when it runs out of memory (no position, no text): say it here */
        if (!*out && (e.line < 1 || !e.text[0]))
            rc = sd_err(SD_ENOMEM, "%s: out of memory loading %zu bytes of JSON", path, len);
        else if (!*out)
            rc = sd_err(SD_EINPUT, "%s:%d:%d: %s", path, e.line, e.column, e.text);
        else if (!json_is_object(*out))
            rc = sd_err(SD_EINPUT, "%s: expected a JSON object at the top", path);
        if (rc && *out) { json_decref(*out); *out = NULL; }
    }
    free(text);
    return rc;
}
