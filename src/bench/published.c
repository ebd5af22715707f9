/* published — reads a results file someone else published (the input of `showdown verify`): checked with
 * positions (file:line:column) by jv against the results module's rules (sd_published_check: names a rerun
 * passes on to bench are safe names, so a stranger's file cannot point outside), then loaded with jansson. */
#include "bench/results.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/jv.h"

#include <stdlib.h>

int sd_published_parse(json_t **out, const char *name, const char *text, size_t len) {
    *out = NULL;
    jv_doc *d = NULL;
    SD_TRY(jv_parse(&d, name, text, len));
    int rc = sd_published_check(d);
    jv_doc_free(d);
    if (rc < 0) return rc;
    json_error_t je;
    *out = json_loadb(text, len, 0, &je);
    if (!*out) return sd_err(SD_EINPUT, "%s:%d:%d: %s", name, je.line, je.column, je.text);
    return 0;
}

int sd_published_load(json_t **out, const char *path) {
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    SD_TRY(sd_read_file(path, JV_MAX_DOC, &text, &len));
    int rc = sd_published_parse(out, path, text, len);
    free(text);
    return rc;
}
