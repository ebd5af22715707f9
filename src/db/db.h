/* db — the results database (SQLite, default out/showdown.db): runs, results, scores and the HTTP
 * cache, in a schema versioned by PRAGMA user_version and migrated forward on open. WAL journal. A run
 * is inserted incomplete and its `complete` flag is set in the same transaction as its last result, so
 * a run killed at any point (SIGINT, SIGTERM, kill -9, disk full) never appears complete and earlier
 * runs are untouched. A file that is not ours (empty, foreign, not SQLite) gives "FILE is not a showdown database
 * (why)" and is never written; a new database appears at its path whole. */
#ifndef SD_DB_H
#define SD_DB_H

#include <jansson.h>
#include <stdint.h>

#define DB_DEFAULT_PATH "out/showdown.db"
#define DB_SCHEMA_VERSION 1
#define DB_APPLICATION_ID 0x53444442   /* "SDDB" */

typedef struct db db;

/* Open (creating and migrating as needed) the database at path; creates the parent directory.
 * SD_EINPUT with "PATH is not a showdown database (...)" for a corrupt, foreign or newer file. */
int db_open(db **out, const char *path);
void db_close(db *d);
const char *db_path(const db *d);
/* The sqlite3 handle, for tests and the fuzzers that write rows as a damaged or hostile file would hold. */
void *db_sqlite(db *d);

/* A run's head: the tool and environment of the results document it stores. */
typedef struct db_run_head {
    const char *created, *version, *commit;
    int dirty;
    const json_t *environment;
} db_run_head;
/* The indexed columns of one stored result; the whole result is kept as JSON beside them. */
typedef struct db_result_cols {
    const char *workload, *implementation, *backend, *device, *status;
    const json_t *summary, *samples;
} db_result_cols;

/* Start a run, complete = 0. kind: "bench", "nightly", "verify"; dir: the run's output directory or NULL.
 * (bench/results.h: sd_results_db_begin takes a results document.) */
int db_run_begin(db *d, const db_run_head *h, const char *kind, const char *dir, int64_t *run_id);
/* Store one result (ok or failed) with its columns. last = 1 marks the run complete in the same transaction. */
int db_run_add_result(db *d, int64_t run_id, const db_result_cols *c, const json_t *run, int last);
/* Replace the result stored seq-th (0-based, as stored) of a run, columns and all: a cell measured again. */
int db_run_replace_result(db *d, int64_t run_id, int64_t seq, const db_result_cols *c, const json_t *run);
/* Mark a run complete on its own (a run with no results). */
int db_run_finish(db *d, int64_t run_id);

/* Complete runs of kind, newest first, excluding run `except` (0: none); up to max ids into ids. */
int db_runs_complete(db *d, const char *kind, int64_t except, int64_t *ids, int max, int *n);
/* Is the run complete? (*complete = -1 if there is no such run.) */
int db_run_status(db *d, int64_t run_id, int *complete, int *nresults);
/* Read a run back: head() once (its strings and environment live during the call; kind may be NULL), then
 * result() for each stored result in order (the callee owns the reference). A non-zero return stops the read and
 * is returned. The results document is rebuilt from these by sd_results_load (bench/results.h). */
typedef struct db_run_reader {
    int (*head)(void *user, const db_run_head *h, const char *kind, int complete);
    int (*result)(void *user, json_t *run);
    void *user;
} db_run_reader;
int db_run_read(db *d, int64_t run_id, const db_run_reader *r);
/* Keep the newest `keep` complete runs of kind; delete the older ones (and incomplete ones older than
 * the newest kept). For each deleted run with a directory that no remaining run names, cb(dir, user) is called first. */
int db_runs_prune(db *d, const char *kind, int keep, void (*cb)(const char *dir, void *user), void *user);

#endif
