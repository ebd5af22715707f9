/* fuzz_db — rows read back from the results database (src/db/db.c): the input, split at newlines, is a run
 * row (kind, created, tool version, commit, environment JSON, dir) and result rows (each a run JSON), written
 * as a damaged or hostile database file would hold them; then listed, loaded into a results document,
 * handed to the report's reader and pruned as nightly does. */
#include "fuzz.h"
#include "bench/results.h"
#include "db/db.h"
#include "render/model.h"

#include <sqlite3.h>

#define MAX_FIELDS 64

static void prune_cb(const char *dir, void *user) {
    (void)user;
    if (!dir) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *f[MAX_FIELDS];
    int fl[MAX_FIELDS], nf = 0;
    size_t start = 0;
    for (size_t i = 0; i <= size && nf < MAX_FIELDS; i++) {
        if (i == size || data[i] == '\n') {
            f[nf] = (const char *)data + start;
            fl[nf++] = (int)(i - start);
            start = i + 1;
        }
    }
    if (nf < 6) return 0;
    static db *d;   /* one in-memory database, emptied per input (opening and migrating costs ms) */
    if (!d && db_open(&d, ":memory:") < 0) abort();
    sqlite3 *h = db_sqlite(d);
    sqlite3_exec(h, "DELETE FROM results; DELETE FROM runs", NULL, NULL, NULL);
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(h, "INSERT INTO runs (kind, created, tool_version, tool_commit, environment, dir, complete)"
                          " VALUES (?, ?, ?, ?, ?, ?, 1)", -1, &st, NULL);
    for (int i = 0; i < 6; i++) sqlite3_bind_text(st, i + 1, f[i], fl[i], SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    sqlite3_int64 run = sqlite3_last_insert_rowid(h);
    for (int i = 6; i < nf; i++) {
        sqlite3_prepare_v2(h, "INSERT INTO results (run_id, seq, workload, implementation, backend, status, run)"
                              " VALUES (?, ?, 'w', 'i', 'b', 'ok', ?)", -1, &st, NULL);
        sqlite3_bind_int64(st, 1, run);
        sqlite3_bind_int(st, 2, i);
        sqlite3_bind_text(st, 3, f[i], fl[i], SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    /* the kind as a C string (it may hold a NUL) */
    char kind[64];
    snprintf(kind, sizeof kind, "%.*s", fl[0] < 63 ? fl[0] : 63, f[0]);
    int64_t ids[8];
    int n = 0;
    fuzz_check_err(db_runs_complete(d, kind, 0, ids, 8, &n));
    for (int i = 0; i < n; i++) {
        json_t *doc = NULL;
        int complete, nres;
        fuzz_check_err(db_run_status(d, ids[i], &complete, &nres));
        int rc = sd_results_load(d, ids[i], &doc);
        if (rc == 0) {
            render_model *m = NULL;
            if (render_model_new(&m) == 0) {
                fuzz_check_err(render_model_add_results_doc(m, doc, "database"));
                fuzz_check_err(render_model_add_history(m, doc));
                render_model_free(m);
            }
            json_decref(doc);
        }
        fuzz_check_err(rc);
    }
    fuzz_check_err(db_runs_prune(d, kind, 1, prune_cb, NULL));
    return 0;
}
