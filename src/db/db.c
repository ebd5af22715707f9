/* db — SQLite results database: open with checks (header, application_id, schema version), forward
 * migrations, runs written in transactions so that a killed run never appears complete. */
#include "db/db.h"
#include "core/err.h"
#include "core/fsutil.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct db {
    sqlite3 *h;
    char *path;
};

/* Migration i brings user_version from i to i + 1. Append only; never edit a released step. */
static const char *const migrations[] = {
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  kind TEXT NOT NULL,"
    "  created TEXT NOT NULL,"
    "  finished TEXT,"
    "  tool_version TEXT, tool_commit TEXT, tool_dirty INTEGER,"
    "  environment TEXT NOT NULL,"          /* JSON */
    "  dir TEXT,"
    "  complete INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX runs_kind ON runs(kind, complete, id);"
    "CREATE TABLE results ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  seq INTEGER NOT NULL,"
    "  workload TEXT NOT NULL, implementation TEXT NOT NULL, backend TEXT NOT NULL,"
    "  device TEXT, status TEXT NOT NULL,"
    "  summary TEXT,"                       /* JSON */
    "  samples TEXT,"                       /* JSON */
    "  run TEXT NOT NULL);"                 /* the whole element of doc.runs, JSON */
    "CREATE INDEX results_run ON results(run_id, seq);"
    "CREATE TABLE scores ("
    "  id INTEGER PRIMARY KEY,"
    "  run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,"
    "  framework TEXT NOT NULL, criterion TEXT NOT NULL, value REAL,"
    "  evidence TEXT,"                      /* JSON */
    "  created TEXT NOT NULL);"
    "CREATE TABLE http_cache ("
    "  url TEXT PRIMARY KEY,"
    "  status INTEGER, etag TEXT, last_modified TEXT,"
    "  fetched TEXT NOT NULL, body BLOB);",
};
#define NMIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))
_Static_assert(NMIGRATIONS == DB_SCHEMA_VERSION, "one migration per schema version");

static int not_ours(const char *path, const char *why) {
    return sd_err(SD_EINPUT, "%s is not a showdown database (%s)", path, why);
}

static int sql_fail(db *d, const char *what) {
    int ec = sqlite3_extended_errcode(d->h);
    if ((ec & 0xff) == SQLITE_NOTADB || (ec & 0xff) == SQLITE_CORRUPT) {
        char why[256];
        snprintf(why, sizeof why, "sqlite: %s", sqlite3_errmsg(d->h));
        return not_ours(d->path, why);
    }
    if ((ec & 0xff) == SQLITE_BUSY || (ec & 0xff) == SQLITE_LOCKED)
        return sd_err(SD_EBUSY, "%s: database is locked by another process (%s)", d->path, what);
    if ((ec & 0xff) == SQLITE_FULL || (ec & 0xff) == SQLITE_IOERR || (ec & 0xff) == SQLITE_CANTOPEN)
        return sd_err(SD_EIO, "%s: %s: %s", d->path, what, sqlite3_errmsg(d->h));
    return sd_err(SD_ERROR, "%s: %s: %s", d->path, what, sqlite3_errmsg(d->h));
}

static int exec(db *d, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(d->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sqlite3_free(msg);
        return sql_fail(d, sql);
    }
    return 0;
}

static int pragma_int(db *d, const char *sql, long long *out) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, sql);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : sql_fail(d, sql);
}

/* An existing path must be a regular, non-empty file that starts with the SQLite header: anything else is not
 * ours to turn into a database. *exists says whether there is a file at all. */
static int check_existing(const char *path, int *exists) {
    struct stat sb;
    *exists = 0;
    if (stat(path, &sb) != 0) return errno == ENOENT ? 0 : sd_err(SD_EIO, "cannot open %s: %s", path, strerror(errno));
    *exists = 1;
    if (S_ISDIR(sb.st_mode)) return not_ours(path, "a directory");
    if (!S_ISREG(sb.st_mode)) return not_ours(path, "not a regular file");
    if (sb.st_size == 0) return not_ours(path, "an empty file; showdown creates its database itself");
    FILE *f = fopen(path, "rb");
    if (!f) return sd_err(SD_EIO, "cannot open %s: %s", path, strerror(errno));
    char h[16] = {0};
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0) return not_ours(path, "no SQLite header");
    return 0;
}

static int open_handle(db **out, const char *path) {
    db *d = calloc(1, sizeof *d);
    SD_ALLOC_CHECK(d);
    *out = d;
    d->path = strdup(path);
    if (!d->path) return sd_err(SD_ENOMEM, "out of memory");
    if (sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
        return sd_err(SD_EIO, "cannot open database %s: %s", path, d->h ? sqlite3_errmsg(d->h) : "out of memory");
    sqlite3_extended_result_codes(d->h, 1);
    sqlite3_busy_timeout(d->h, 10000);
    return 0;
}

/* Bring the schema from version ver to DB_SCHEMA_VERSION, one transaction per step. */
static int migrate(db *d, long long ver) {
    int rc = 0;
    for (long long v = ver; v < DB_SCHEMA_VERSION; v++) {
        char set[96];
        SD_TRY(exec(d, "BEGIN IMMEDIATE"));
        long long now = 0;   /* another process may have migrated meanwhile */
        if ((rc = pragma_int(d, "PRAGMA user_version", &now)) != 0 || now > v) {
            exec(d, "ROLLBACK");
            if (rc) return rc;
            v = now - 1;
            continue;
        }
        snprintf(set, sizeof set, "PRAGMA application_id = %d; PRAGMA user_version = %lld", DB_APPLICATION_ID, v + 1);
        if ((rc = exec(d, migrations[v])) != 0 || (rc = exec(d, set)) != 0 || (rc = exec(d, "COMMIT")) != 0) {
            sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
            return rc;
        }
    }
    return 0;
}

/* A new database is made whole beside path and linked into place, so that path never names a file of ours that
 * is half made (an empty or table-less file at path is then never ours); a concurrent creator's link wins. */
static int create_new(const char *path) {
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.new.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return sd_err(SD_ELIMIT, "path too long: %.60s...", path);
    unlink(tmp);
    db *d = NULL;
    int rc = open_handle(&d, tmp);
    if (rc == 0) rc = migrate(d, 0);
    db_close(d);
    if (rc == 0 && link(tmp, path) != 0 && errno != EEXIST)
        rc = sd_err(SD_EIO, "cannot create database %s: %s", path, strerror(errno));
    unlink(tmp);
    return rc;
}

int db_open(db **out, const char *path) {
    *out = NULL;
    int exists = 0;
    SD_TRY(sd_out_path_ok(path, "database"));
    int mem = strcmp(path, ":memory:") == 0;   /* the fuzzers' database: no file */
    if (!mem) SD_TRY(check_existing(path, &exists));
    if (!exists && !mem) {
        SD_TRY(sd_mkdir_p(path, 1));
        SD_TRY(create_new(path));
        SD_TRY(check_existing(path, &exists));
    }
    db *d = NULL;
    int rc = open_handle(&d, path);
    if (rc) goto fail;
    long long appid = 0, ver = 0, ntables = 0;
    /* the first read of the schema detects a corrupt file */
    SD_TRY_GOTO(rc, pragma_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", &ntables), fail);
    SD_TRY_GOTO(rc, pragma_int(d, "PRAGMA application_id", &appid), fail);
    SD_TRY_GOTO(rc, pragma_int(d, "PRAGMA user_version", &ver), fail);
    if (mem) appid = DB_APPLICATION_ID;   /* made here, empty: migrated below */
    if (appid != DB_APPLICATION_ID) {
        char why[96];
        if (appid) snprintf(why, sizeof why, "SQLite application_id 0x%08llx, expected 0x%08x", appid, DB_APPLICATION_ID);
        else snprintf(why, sizeof why, "an SQLite file with %lld table(s) and no showdown application_id", ntables);
        rc = not_ours(path, why);
        goto fail;
    }
    if (ver > DB_SCHEMA_VERSION) {
        rc = sd_err(SD_EINPUT, "%s was written by a newer showdown (schema %lld; this build knows up to %d)", path,
                    ver, DB_SCHEMA_VERSION);
        goto fail;
    }
    SD_TRY_GOTO(rc, exec(d, "PRAGMA journal_mode = WAL"), fail);
    SD_TRY_GOTO(rc, exec(d, "PRAGMA synchronous = FULL"), fail);
    SD_TRY_GOTO(rc, exec(d, "PRAGMA foreign_keys = ON"), fail);
    SD_TRY_GOTO(rc, migrate(d, ver), fail);
    *out = d;
    return 0;
fail:
    db_close(d);
    return rc;
}

void db_close(db *d) {
    if (!d) return;
    if (d->h) sqlite3_close(d->h);
    free(d->path);
    free(d);
}

const char *db_path(const db *d) { return d->path; }

void *db_sqlite(db *d) { return d->h; }

static char *dump(const json_t *j) {
    return j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY) : NULL;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s) {
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}


int db_run_begin(db *d, const db_run_head *h, const char *kind, const char *dir, int64_t *run_id) {
    static const char *sql = "INSERT INTO runs (kind, created, tool_version, tool_commit, tool_dirty, environment, dir,"
                             " complete) VALUES (?, ?, ?, ?, ?, ?, ?, 0)";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "insert run");
    char *env = dump(h->environment);
    bind_text(st, 1, kind);
    bind_text(st, 2, h->created);
    bind_text(st, 3, h->version);
    bind_text(st, 4, h->commit);
    sqlite3_bind_int(st, 5, h->dirty);
    bind_text(st, 6, env ? env : "{}");
    bind_text(st, 7, dir);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : sql_fail(d, "insert run");
    sqlite3_finalize(st);
    free(env);
    if (rc == 0) *run_id = sqlite3_last_insert_rowid(d->h);
    return rc;
}

static int mark_complete(db *d, int64_t run_id) {
    sqlite3_stmt *st;
    const char *sql = "UPDATE runs SET complete = 1, finished = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?";
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "complete run");
    sqlite3_bind_int64(st, 1, run_id);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : sql_fail(d, "complete run");
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_changes(d->h) != 1) rc = sd_err(SD_ERROR, "%s: no run %lld", d->path, (long long)run_id);
    return rc;
}

/* A result's eight columns, workload to run, bound from parameter i on (the insert's and the update's order). */
static void bind_cols(sqlite3_stmt *st, int i, const db_result_cols *c, const char *sum, const char *smp,
                      const char *all) {
    bind_text(st, i, c->workload ? c->workload : "?");
    bind_text(st, i + 1, c->implementation ? c->implementation : "?");
    bind_text(st, i + 2, c->backend ? c->backend : "?");
    bind_text(st, i + 3, c->device);
    bind_text(st, i + 4, c->status ? c->status : "ok");
    bind_text(st, i + 5, sum);
    bind_text(st, i + 6, smp);
    bind_text(st, i + 7, all);
}

int db_run_add_result(db *d, int64_t run_id, const db_result_cols *c, const json_t *run, int last) {
    static const char *sql = "INSERT INTO results (run_id, seq, workload, implementation, backend, device, status,"
                             " summary, samples, run) VALUES (?, (SELECT count(*) FROM results WHERE run_id = ?1),"
                             " ?, ?, ?, ?, ?, ?, ?, ?)";
    SD_TRY(exec(d, "BEGIN IMMEDIATE"));
    sqlite3_stmt *st = NULL;
    char *sum = dump(c->summary), *smp = dump(c->samples), *all = dump(run);
    int rc = 0;
    if (!all) { rc = sd_err(SD_ENOMEM, "cannot serialise a result"); goto done; }
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) { rc = sql_fail(d, "insert result"); goto done; }
    sqlite3_bind_int64(st, 1, run_id);
    bind_cols(st, 2, c, sum, smp, all);
    if (sqlite3_step(st) != SQLITE_DONE) { rc = sql_fail(d, "insert result"); goto done; }
    if (last) SD_TRY_GOTO(rc, mark_complete(d, run_id), done);
    rc = exec(d, "COMMIT");
done:
    if (st) sqlite3_finalize(st);
    if (rc) sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    free(sum); free(smp); free(all);
    return rc;
}

int db_run_replace_result(db *d, int64_t run_id, int64_t seq, const db_result_cols *c, const json_t *run) {
    static const char *sql = "UPDATE results SET workload = ?, implementation = ?, backend = ?, device = ?, status = ?,"
                             " summary = ?, samples = ?, run = ? WHERE run_id = ? AND seq = ?";
    sqlite3_stmt *st = NULL;
    char *sum = dump(c->summary), *smp = dump(c->samples), *all = dump(run);
    int rc = 0;
    if (!all) { rc = sd_err(SD_ENOMEM, "cannot serialise a result"); goto done; }
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) { rc = sql_fail(d, "replace result"); goto done; }
    bind_cols(st, 1, c, sum, smp, all);
    sqlite3_bind_int64(st, 9, run_id);
    sqlite3_bind_int64(st, 10, seq);
    if (sqlite3_step(st) != SQLITE_DONE) { rc = sql_fail(d, "replace result"); goto done; }
    if (sqlite3_changes(d->h) != 1)
        rc = sd_err(SD_ERROR, "%s: run %lld has no result %lld to replace", d->path, (long long)run_id, (long long)seq);
done:
    if (st) sqlite3_finalize(st);
    free(sum); free(smp); free(all);
    return rc;
}

int db_run_finish(db *d, int64_t run_id) { return mark_complete(d, run_id); }

int db_runs_complete(db *d, const char *kind, int64_t except, int64_t *ids, int max, int *n) {
    sqlite3_stmt *st;
    *n = 0;
    const char *sql = "SELECT id FROM runs WHERE kind = ? AND complete = 1 AND id != ? ORDER BY id DESC LIMIT ?";
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "list runs");
    bind_text(st, 1, kind);
    sqlite3_bind_int64(st, 2, except);
    sqlite3_bind_int(st, 3, max);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) ids[(*n)++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? 0 : sql_fail(d, "list runs");
}

int db_run_status(db *d, int64_t run_id, int *complete, int *nresults) {
    sqlite3_stmt *st;
    const char *sql = "SELECT complete, (SELECT count(*) FROM results WHERE run_id = runs.id) FROM runs WHERE id = ?";
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "run status");
    sqlite3_bind_int64(st, 1, run_id);
    int r = sqlite3_step(st);
    *complete = -1;
    *nresults = 0;
    if (r == SQLITE_ROW) {
        *complete = sqlite3_column_int(st, 0);
        *nresults = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : sql_fail(d, "run status");
}

static json_t *load_json_col(sqlite3_stmt *st, int col) {
    const char *t = (const char *)sqlite3_column_text(st, col);
    return t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
}

int db_run_read(db *d, int64_t run_id, const db_run_reader *r) {
    sqlite3_stmt *st;
    const char *sql = "SELECT created, tool_version, tool_commit, tool_dirty, environment, kind, complete FROM runs"
                      " WHERE id = ?";
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "load run");
    sqlite3_bind_int64(st, 1, run_id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return sd_err(SD_EINPUT, "%s: no run %lld", d->path, (long long)run_id);
    }
    json_t *env = load_json_col(st, 4);
    db_run_head h = {(const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                     (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3), env};
    int rc = r->head(r->user, &h, (const char *)sqlite3_column_text(st, 5), sqlite3_column_int(st, 6));
    json_decref(env);
    sqlite3_finalize(st);
    if (rc) return rc;
    if (sqlite3_prepare_v2(d->h, "SELECT run FROM results WHERE run_id = ? ORDER BY seq", -1, &st, NULL) != SQLITE_OK)
        return sql_fail(d, "load results");
    sqlite3_bind_int64(st, 1, run_id);
    int q = SQLITE_DONE;
    while (rc == 0 && (q = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *run = load_json_col(st, 0);
        if (run) rc = r->result(r->user, run);
    }
    sqlite3_finalize(st);
    if (rc == 0 && q != SQLITE_DONE) rc = sql_fail(d, "load results");
    return rc;
}

int db_runs_prune(db *d, const char *kind, int keep, void (*cb)(const char *dir, void *user), void *user) {
    if (keep < 1) keep = 1;
    sqlite3_stmt *st;
    /* the oldest of the keep newest complete runs of this kind; none is pruned until there are keep of them */
    const char *sql = "SELECT coalesce(min(id), 0), count(*) FROM"
                      " (SELECT id FROM runs WHERE kind = ?1 AND complete = 1 ORDER BY id DESC LIMIT ?2)";
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "prune runs");
    bind_text(st, 1, kind);
    sqlite3_bind_int(st, 2, keep);
    int r = sqlite3_step(st);
    int64_t oldest_kept = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    int nkept = r == SQLITE_ROW ? sqlite3_column_int(st, 1) : 0;
    sqlite3_finalize(st);
    if (r != SQLITE_ROW) return sql_fail(d, "prune runs");
    if (nkept < keep) return 0;
    /* everything of this kind older than it; a directory that a run staying in the database also names (a
     * folder name used again) is not this run's alone and stays */
    sql = "SELECT id, dir, EXISTS (SELECT 1 FROM runs s WHERE s.dir = r.dir AND NOT (s.kind = ?1 AND s.id < ?2))"
          " FROM runs r WHERE kind = ?1 AND id < ?2";
    if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) return sql_fail(d, "prune runs");
    bind_text(st, 1, kind);
    sqlite3_bind_int64(st, 2, oldest_kept);
    int64_t ids[1024];
    int n = 0;
    while ((r = sqlite3_step(st)) == SQLITE_ROW && n < 1024) {
        ids[n++] = sqlite3_column_int64(st, 0);
        const char *dir = (const char *)sqlite3_column_text(st, 1);
        if (dir && cb && !sqlite3_column_int(st, 2)) cb(dir, user);
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE && r != SQLITE_ROW) return sql_fail(d, "prune runs");
    SD_TRY(exec(d, "BEGIN IMMEDIATE"));
    for (int i = 0; i < n; i++) {
        if (sqlite3_prepare_v2(d->h, "DELETE FROM runs WHERE id = ?", -1, &st, NULL) != SQLITE_OK) {
            int rc = sql_fail(d, "delete run");
            exec(d, "ROLLBACK");
            return rc;
        }
        sqlite3_bind_int64(st, 1, ids[i]);
        r = sqlite3_step(st);
        sqlite3_finalize(st);
        if (r != SQLITE_DONE) { int rc = sql_fail(d, "delete run"); exec(d, "ROLLBACK"); return rc; }
    }
    return exec(d, "COMMIT");
}
