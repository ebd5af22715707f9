/* test_limits — sizes, counts, nesting and lengths from outside are bounded, each with a clear
 * one-line error naming the bound: a 10 GB image count in an idx header, a million-layer spec, JSON nested
 * past JV_MAX_DEPTH, a runner that prints without end (protocol reader and a real process), a spec string
 * past its field. (The HTTP body bound is in test_http: it needs the replay server.) */
#include "testutil.h"
#include "core/err.h"
#include "core/jv.h"
#include "data/data.h"
#include "bench/results.h"
#include "db/db.h"
#include "nn/model.h"
#include "render/model.h"
#include "runner/runner.h"

#include <sqlite3.h>
#include <sys/stat.h>

static void one_line(void) { cr_assert_null(strchr(sd_errmsg(), '\n'), "one line: %s", sd_errmsg()); }

static char *spec_with_layers(long n, size_t *len) {
    const char *head = "{\"schema\": \"showdown-workload/1\", \"name\": \"big\", \"data\": {\"dataset\": \"synthetic\", "
                       "\"shape\": [1, 1, 1], \"classes\": 2, \"train\": 10, \"test\": 10}, \"model\": {\"loss\": "
                       "\"softmax_cross_entropy\", \"layers\": [";
    const char *layer = "{\"op\": \"relu\"},";
    const char *tail = "{\"op\": \"dense\", \"units\": 2}]}, \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1}, "
                       "\"batch\": 2, \"epochs\": 1}}";
    size_t cap = strlen(head) + (size_t)n * strlen(layer) + strlen(tail) + 1;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    size_t k = 0;
    memcpy(s, head, strlen(head)); k += strlen(head);
    for (long i = 0; i < n; i++) { memcpy(s + k, layer, strlen(layer)); k += strlen(layer); }
    memcpy(s + k, tail, strlen(tail) + 1); k += strlen(tail);
    *len = k;
    return s;
}

Test(limits, spec_million_layers) {
    size_t len;
    char *s = spec_with_layers(1000000, &len);
    sd_workload w;
    cr_assert_eq(sd_workload_parse(&w, "big.json", s, len), SD_EINPUT, "%s", sd_errmsg());
    cr_assert(strstr(sd_errmsg(), "big.json:1:"), "%s", sd_errmsg());
    cr_assert(strstr(sd_errmsg(), "too many layers (1000001; at most 4096)"), "%s", sd_errmsg());
    one_line();
    free(s);
    /* at the bound it reads */
    s = spec_with_layers(SD_SPEC_MAX_LAYERS - 1, &len);
    cr_assert_eq(sd_workload_parse(&w, "ok.json", s, len), 0, "%s", sd_errmsg());
    cr_assert_eq(w.nlayers, SD_SPEC_MAX_LAYERS);
    sd_workload_free(&w);
    free(s);
}

Test(limits, spec_nesting_depth) {
    size_t n = 100000;
    char *s = malloc(2 * n + 1);
    cr_assert_not_null(s);
    for (size_t i = 0; i < n; i++) { s[i] = '['; s[2 * n - 1 - i] = ']'; }
    s[2 * n] = 0;
    sd_workload w;
    cr_assert_eq(sd_workload_parse(&w, "deep.json", s, 2 * n), SD_ELIMIT);
    cr_assert(strstr(sd_errmsg(), "deep.json:1:129: expected nesting depth at most 128"), "%s", sd_errmsg());
    one_line();
    free(s);
}

Test(limits, spec_string_past_field) {
    char s[512];
    snprintf(s, sizeof s, "{\"schema\": \"showdown-workload/1\", \"name\": \"%0100d\"}", 0);
    sd_workload w;
    cr_assert_eq(sd_workload_parse(&w, "long.json", s, strlen(s)), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "'name' is too long (at most 63 bytes)"), "%s", sd_errmsg());
    one_line();
}

/* An idx header claiming 2.5e9 images of 2x2 (10 GB): refused before anything is allocated. */
Test(limits, idx_ten_gigabyte_count) {
    uint8_t im[16] = {0, 0, 8, 3, 0x95, 0x02, 0xF9, 0x00, 0, 0, 0, 2, 0, 0, 0, 2};   /* 2500000000 images */
    uint8_t lb[8] = {0, 0, 8, 1, 0, 0, 0, 1};
    sd_dataset d;
    cr_assert_eq(sd_data_parse_idx(&d, "images.idx", im, sizeof im, "labels.idx", lb, sizeof lb), SD_ELIMIT);
    cr_assert(strstr(sd_errmsg(), "images.idx: header says 2500000000 images, past the limit of 10000000 examples"),
              "%s", sd_errmsg());
    one_line();
}

/* A count within the bound but a body that is not there: the buffer grows with the data, so the claim
 * costs nothing and the error says how much the file really has. */
Test(limits, idx_claim_without_body) {
    uint8_t im[16 + 4] = {0, 0, 8, 3, 0, 0x98, 0x96, 0x80, 0, 0, 0, 2, 0, 0, 0, 2};   /* 10000000 images */
    uint8_t lb[8] = {0, 0, 8, 1, 0, 0x98, 0x96, 0x80};
    sd_dataset d;
    cr_assert_eq(sd_data_parse_idx(&d, "images.idx", im, sizeof im, "labels.idx", lb, sizeof lb), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "truncated: header says 10000000 images of 2x2 (40000000 bytes after the 16-byte "
                                  "header), file has 4"), "%s", sd_errmsg());
    one_line();
}

static sd_runner_opts proto_opts(size_t max_output) {
    sd_runner_opts o = {0};
    o.framework = "fake";
    o.epochs = 1;
    o.classes = 2;
    o.max_output = max_output;
    return o;
}

Test(limits, runner_output_bound_protocol) {
    sd_runner_opts o = proto_opts(1u << 20);
    sd_runner_result r;
    sd_runner_proto *p;
    cr_assert_eq(sd_runner_proto_new(&p, &o, &r), 0);
    const char *hello = "{\"event\":\"hello\",\"framework\":\"fake\",\"version\":\"1\",\"device\":\"cpu\",\"parameters\":1}\n";
    cr_assert_eq(sd_runner_proto_feed(p, hello, strlen(hello)), 0, "%s", sd_errmsg());
    const char *prog = "{\"event\":\"progress\"}\n";
    int rc = 0;
    long lines = 0;
    while ((rc = sd_runner_proto_feed(p, prog, strlen(prog))) == 0) lines++;
    cr_assert_eq(rc, SD_ELIMIT);
    cr_assert(lines > 1000 && lines < 60000, "%ld lines", lines);
    cr_assert_str_eq(sd_errmsg(), "protocol error: fake runner printed more than 1048576 bytes (the bound on a runner's output)");
    sd_runner_proto_free(p);
    sd_runner_result_free(&r);
}

Test(limits, runner_line_bound_protocol) {
    sd_runner_opts o = proto_opts(0);
    sd_runner_result r;
    sd_runner_proto *p;
    cr_assert_eq(sd_runner_proto_new(&p, &o, &r), 0);
    char *big = malloc(SD_RUNNER_MAX_LINE + 10);
    memset(big, 'x', SD_RUNNER_MAX_LINE + 10);
    cr_assert_eq(sd_runner_proto_feed(p, big, SD_RUNNER_MAX_LINE + 10), SD_ELIMIT);
    cr_assert(strstr(sd_errmsg(), "output line 1 is longer than 1048576 bytes"), "%s", sd_errmsg());
    one_line();
    free(big);
    sd_runner_proto_free(p);
    sd_runner_result_free(&r);
}

/* A real runner process that prints valid progress lines without end (the idle timeout never fires):
 * stopped at the output bound and killed. */
Test(limits, runner_prints_without_end, .timeout = 120) {
    char dir[256], prog[512];
    tu_tmpdir(dir, sizeof dir);
    snprintf(prog, sizeof prog, "%s/chatty", dir);
    tu_write_str(prog, "#!/bin/sh\necho '{\"event\":\"hello\",\"framework\":\"fake\",\"version\":\"1\",\"device\":\"cpu\",\"parameters\":1}'\n"
                       "exec yes '{\"event\":\"progress\"}'\n");
    chmod(prog, 0755);
    sd_runner_data data = {.kind = SD_RUNNER_DATA_SYNTHETIC, .train_n = 4, .test_n = 4, .c = 1, .h = 1, .w = 1, .classes = 2};
    sd_runner_opts o = proto_opts(4u << 20);
    o.program = prog;
    o.spec_path = "none.json";
    o.data = &data;
    o.batch = 1;
    o.timeout_s = 60;
    sd_runner_result r;
    cr_assert_eq(sd_runner_run(&o, &r), SD_ELIMIT, "%s", sd_errmsg());
    cr_assert_str_eq(sd_errmsg(), "protocol error: fake runner printed more than 4194304 bytes (the bound on a runner's output)");
    remove(prog);
    rmdir(dir);
}

/* Found by fuzz_spec (fuzz/regress/spec/flatten-int-overflow.json): a 4096x4096x4096 input flattened
 * overflowed int in shape inference; the input shape is now bounded like every layer's output. */
Test(limits, spec_input_shape) {
    const char *s = "{\"schema\": \"showdown-workload/1\", \"name\": \"x\", \"data\": {\"dataset\": \"synthetic\", "
                    "\"shape\": [4096, 4096, 4096], \"classes\": 2, \"train\": 10, \"test\": 10}}";
    sd_workload w;
    cr_assert_eq(sd_workload_parse(&w, "x.json", s, strlen(s)), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "x.json:1:90: input shape 4096x4096x4096 has 68719476736 values per example (at most 1e9)"),
              "%s", sd_errmsg());
}

/* A results file cannot make the report's epoch table quadratic: samples x epochs is bounded. */
Test(limits, results_samples_by_epochs) {
    json_t *samples = json_array(), *many = json_array();
    for (int e = 0; e < 2000; e++) json_array_append_new(many, json_object());
    json_array_append_new(samples, json_pack("{s:o}", "epochs", many));
    for (int s = 0; s < 2000; s++) json_array_append_new(samples, json_object());
    json_t *doc = json_pack("{s:s,s:[{s:s,s:o}]}", "schema", "showdown-results/1", "runs", "workload", "w", "samples", samples);
    render_model *m;
    cr_assert_eq(render_model_new(&m), 0);
    cr_assert_eq(render_model_add_results_doc(m, doc, "big.json"), SD_ELIMIT);
    cr_assert_str_eq(sd_errmsg(), "big.json: a run with 2001 samples of up to 2000 epochs is past the bound of 1000000 values");
    render_model_free(m);
    json_decref(doc);
}

Test(limits, cifar10_from_memory) {
    static uint8_t rec[2 * 3073];
    rec[0] = 3; rec[3073] = 9;
    sd_dataset d;
    cr_assert_eq(sd_data_parse_cifar10(&d, "b.bin", rec, sizeof rec), 0, "%s", sd_errmsg());
    cr_assert_eq(d.n, 2);
    cr_assert_eq(d.y[1], 9);
    sd_dataset_free(&d);
    cr_assert_eq(sd_data_parse_cifar10(&d, "b.bin", rec, sizeof rec - 1), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "b.bin: size 6145 bytes is not a whole number of 3073-byte records"), "%s", sd_errmsg());
    rec[3073] = 10;
    cr_assert_eq(sd_data_parse_cifar10(&d, "b.bin", rec, sizeof rec), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "b.bin: record 1: label 10 (CIFAR-10 labels are 0..9)");
}

/* A damaged database row (text that is not UTF-8) is an input error naming the run, not "out of memory". */
Test(limits, db_row_not_utf8) {
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/s.db", dir);
    db *d;
    cr_assert_eq(db_open(&d, path), 0, "%s", sd_errmsg());
    cr_assert_eq(sqlite3_exec(db_sqlite(d), "INSERT INTO runs (kind, created, environment, complete) VALUES "
                              "('bench', X'C328', '{}', 1)", NULL, NULL, NULL), SQLITE_OK);
    json_t *doc = NULL;
    cr_assert_eq(sd_results_load(d, 1, &doc), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "s.db: run 1: unreadable row (a text column is not UTF-8)"), "%s", sd_errmsg());
    db_close(d);
}
