/* jsonfile — the one way showdown reads back a JSON file that it or a publisher wrote (results, scores,
 * regressions, verdicts): read once (a pipe or a FIFO works), bounded by JV_MAX_DOC, optionally checked with
 * positions by jv, then loaded by jansson with duplicate keys refused. Every failure is one line with text. */
#ifndef SD_JSONFILE_H
#define SD_JSONFILE_H

#include <jansson.h>

typedef struct jv_doc jv_doc;

/* *out: the document (an object at the top, else SD_EINPUT), caller decrefs. check (may be NULL) runs on the
 * positioned parse first: what it rejects is not loaded. */
int sd_json_load(const char *path, int (*check)(const jv_doc *d), json_t **out);

#endif
