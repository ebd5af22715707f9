/* test_results — the results document read back through the results module, as report, nightly, collect
 * and the database read it: runs and their shape, the head, a run's view (absent members NULL / NAN / 0),
 * epochs, nightly's epoch time, and a round trip through the database. */
#include "testutil.h"
#include "bench/results.h"
#include "core/err.h"
#include "core/omp_policy.h"
#include "db/db.h"

#include <math.h>

static json_t *doc_of(const char *text) {
    json_error_t je;
    json_t *d = json_loads(text, 0, &je);
    cr_assert_not_null(d, "%s", je.text);
    return d;
}

static const char *const two_runs =
    "{\"schema\": \"showdown-results/1\", \"created\": \"2026-11-23T20:00:00Z\","
    " \"tool\": {\"name\": \"showdown\", \"version\": \"1.2.3\", \"commit\": \"abc\", \"dirty\": true},"
    " \"environment\": {\"cpu_model\": \"test\"},"
    " \"runs\": ["
    "  {\"workload\": \"mnist_mlp\", \"implementation\": \"native\", \"backend\": \"ref\", \"device\": \"cpu\","
    "   \"status\": \"ok\", \"data\": {\"kind\": \"real\", \"source\": \"idx\", \"train_examples\": 600},"
    "   \"settings\": {\"batch\": 32, \"max_batches\": 5, \"gpus\": 2},"
    "   \"model\": {\"parameters\": 1234},"
    "   \"equivalence\": {\"status\": \"passed\", \"max_rel_diff\": 1e-6},"
    "   \"summary\": {\"first_epoch_s\": {\"median\": 2, \"min\": 1.5, \"max\": 2.5, \"n\": 3},"
    "                 \"steady_epoch_s\": {\"median\": 1, \"min\": 0.9, \"max\": 1.2, \"n\": 3}, \"accuracy\": 0.75},"
    "   \"samples\": [{\"epochs\": [{\"epoch\": 1, \"train_s\": 2, \"accuracy\": 0.5}, {\"train_s\": 1}]},"
    "               {\"epochs\": [{\"epoch\": 1, \"train_s\": 3}]}]},"
    "  {\"workload\": \"mnist_cnn\", \"status\": \"failed\", \"error\": \"boom\","
    "   \"summary\": {\"first_epoch_s\": {\"median\": 4}}}"
    " ]}";

Test(results, runs_and_shape) {
    json_t *d = doc_of(two_runs);
    cr_assert_eq(sd_results_count(d), 2);
    cr_assert(sd_results_has_runs(d));
    cr_assert_eq(sd_results_check_shape(d, "r.json"), 0);
    size_t i, n = 0;
    json_t *run;
    sd_results_foreach(d, i, run) n++;
    cr_assert_eq(n, 2);
    cr_assert_null(sd_results_run(d, 2));
    json_decref(d);

    d = doc_of("{\"runs\": {}}");
    cr_assert(!sd_results_has_runs(d));
    cr_assert_eq(sd_results_check_shape(d, "r.json"), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "r.json: \"runs\" is not an array");
    json_decref(d);
    d = doc_of("{\"runs\": [{}, 3]}");
    cr_assert_eq(sd_results_check_shape(d, "r.json"), SD_EINPUT);
    cr_assert_str_eq(sd_errmsg(), "r.json: runs[1] is not an object");
    json_decref(d);
    d = doc_of("{}");   /* no runs at all: a shape the report accepts, and nothing to count */
    cr_assert_eq(sd_results_check_shape(d, "r.json"), 0);
    cr_assert_eq(sd_results_count(d), 0);
    cr_assert(!sd_results_has_runs(d));
    cr_assert_eq(sd_results_init_runs(d), 0);
    cr_assert(sd_results_has_runs(d));
    cr_assert_eq(sd_results_append(d, json_pack("{s:s}", "workload", "w")), 0);
    cr_assert_eq(sd_results_count(d), 1);
    json_decref(d);
}

Test(results, head) {
    json_t *d = doc_of(two_runs);
    sd_results_head h;
    sd_results_head_of(d, &h);
    cr_assert_str_eq(h.created, "2026-11-23T20:00:00Z");
    cr_assert_str_eq(h.version, "1.2.3");
    cr_assert_str_eq(h.commit, "abc");
    cr_assert_eq(h.dirty, 1);
    cr_assert_str_eq(json_string_value(json_object_get(h.environment, "cpu_model")), "test");
    json_t *e = json_pack("{s:s}", "cpu_model", "copy");
    json_t *d2 = sd_results_new_with(&h, e);
    cr_assert_not_null(d2);
    sd_results_head h2;
    sd_results_head_of(d2, &h2);
    cr_assert_str_eq(h2.created, h.created);
    cr_assert_str_eq(h2.version, h.version);
    cr_assert_eq(h2.dirty, 1);
    cr_assert_eq(h2.environment, e);
    cr_assert(sd_results_has_runs(d2));
    cr_assert_eq(sd_results_count(d2), 0);
    json_decref(d2);
    sd_results_head none = {0};
    d2 = sd_results_new_with(&none, json_object());   /* what the database has not: null, not a failure */
    cr_assert_not_null(d2);
    sd_results_head_of(d2, &h2);
    cr_assert_null(h2.created);
    cr_assert_null(h2.version);
    json_decref(d2);
    json_decref(d);
}

Test(results, run_view) {
    json_t *d = doc_of(two_runs);
    sd_run_view v;
    sd_run_view_of(sd_results_run(d, 0), &v);
    cr_assert_str_eq(json_string_value(v.workload), "mnist_mlp");
    cr_assert_str_eq(json_string_value(v.implementation), "native");
    cr_assert_str_eq(json_string_value(v.backend), "ref");
    cr_assert_str_eq(json_string_value(v.device), "cpu");
    cr_assert_str_eq(json_string_value(v.status), "ok");
    cr_assert_null(v.error);
    cr_assert_str_eq(json_string_value(v.data_kind), "real");
    cr_assert_str_eq(json_string_value(v.data_source), "idx");
    cr_assert_eq(v.epoch_examples, 600, "a real set without full_epoch_examples: its train_examples");
    cr_assert_eq(v.batch, 32);
    cr_assert_eq(v.max_batches, 5);
    cr_assert_eq(v.gpus, 2);
    cr_assert_eq(v.parameters, 1234);
    cr_assert_not_null(v.settings);
    cr_assert_str_eq(v.equivalence_status, "passed");
    cr_assert_float_eq(v.equivalence_max_rel_diff, 1e-6, 1e-12);
    cr_assert_float_eq(v.first_epoch_s.median, 2, 1e-12);
    cr_assert_float_eq(v.steady_epoch_s.min, 0.9, 1e-12);
    cr_assert_float_eq(v.steady_epoch_s.max, 1.2, 1e-12);
    cr_assert_eq(v.steady_epoch_s.n, 3);
    cr_assert_float_eq(v.accuracy.median, 0.75, 1e-12, "a bare number is a statistic too");
    cr_assert_float_eq(v.accuracy.max, 0.75, 1e-12);
    cr_assert(isnan(v.val_s.median) && isnan(v.total_s.median) && isnan(v.gflops));
    cr_assert_null(v.framework_name);

    cr_assert_eq(sd_run_nsamples(&v), 2);
    cr_assert_eq(sd_run_nepochs(&v, 0), 2);
    cr_assert_eq(sd_run_nepochs(&v, 1), 1);
    cr_assert_eq(sd_run_nepochs(&v, 2), 0);
    sd_epoch_view e;
    sd_epoch_view_of(&v, 0, 0, &e);
    cr_assert_eq(e.epoch, 1);
    cr_assert_float_eq(e.train_s, 2, 1e-12);
    cr_assert_float_eq(e.accuracy, 0.5, 1e-12);
    cr_assert(isnan(e.loss));
    sd_epoch_view_of(&v, 0, 1, &e);
    cr_assert_eq(e.epoch, 2, "an epoch without a number is counted");
    sd_epoch_view_of(&v, 1, 5, &e);
    cr_assert(isnan(e.train_s));

    sd_run_view_of(sd_results_run(d, 1), &v);
    cr_assert_str_eq(json_string_value(v.status), "failed");
    cr_assert_str_eq(json_string_value(v.error), "boom");
    cr_assert_null(v.implementation);
    cr_assert_null(v.settings);
    cr_assert_eq(v.batch, 0);
    cr_assert_eq(v.epoch_examples, 0);
    cr_assert_eq(sd_run_nsamples(&v), 0);
    cr_assert(isnan(v.first_epoch_s.min));

    sd_run_view_of(NULL, &v);   /* not a run at all: everything absent */
    cr_assert_null(v.workload);
    cr_assert(isnan(v.steady_epoch_s.median));
    json_decref(d);
}

/* Memory: the back-end's peak (peak_bytes) and the process's peak RSS (peak_rss_bytes) are read apart, the
 * largest of the samples each; a best-setting run writes its processes' RSS as peak_rss_bytes; a best-setting run
 * of results older than peak_rss_bytes held its RSS in peak_bytes and is read as RSS. */
Test(results, memory_peaks_back_end_and_process) {
    json_t *d = doc_of("{\"runs\": ["
                       " {\"workload\": \"w\", \"samples\": [{\"peak_bytes\": 100, \"peak_rss_bytes\": 5000},"
                       "                                  {\"peak_bytes\": 300, \"peak_rss_bytes\": 4000}]},"
                       " {\"workload\": \"w\", \"source\": \"bench-cpu\", \"samples\": [{\"peak_bytes\": 7000}]}]}");
    sd_run_view v;
    sd_run_view_of(sd_results_run(d, 0), &v);
    cr_expect_eq(v.peak_bytes, 300);
    cr_expect_eq(v.peak_rss_bytes, 5000);
    sd_run_view_of(sd_results_run(d, 1), &v);
    cr_expect_eq(v.peak_rss_bytes, 7000, "an older best-setting run's peak_bytes is its RSS");
    cr_expect_eq(v.peak_bytes, 0);
    json_decref(d);

    json_t *pub = doc_of("{\"workload\": \"w\", \"implementation\": \"pytorch\", \"source\": \"bench-cpu\","
                         " \"settings\": {\"setting\": \"compile\"}}");
    sd_run_view p;
    sd_run_view_of(pub, &p);
    const long long rss[2] = {600LL << 20, 650LL << 20};
    double ips[2] = {100, 110};
    sd_setting_run s = {.workload = "w", .implementation = "pytorch", .python = "python3", .version = "2.15",
                        .published = &p, .train = sd_stat_of(ips, 2), .peak_rss_bytes = rss, .nrepeats = 2};
    d = sd_results_new();
    cr_assert_eq(sd_results_add_setting_run(d, &s), 0);
    sd_run_view_of(sd_results_run(d, 0), &v);
    cr_expect_eq(v.peak_rss_bytes, 650LL << 20);
    cr_expect_eq(v.peak_bytes, 0);
    json_decref(d);
    json_decref(pub);
}

Test(results, epoch_time) {
    json_t *d = doc_of(two_runs);
    sd_stat s;
    const char *metric;
    cr_assert(sd_run_epoch_time(sd_results_run(d, 0), &s, &metric));
    cr_assert_str_eq(metric, "steady_epoch_s");
    cr_assert_float_eq(s.median, 1, 1e-12);
    cr_assert_float_eq(s.max, 1.2, 1e-12);
    cr_assert(sd_run_epoch_time(sd_results_run(d, 1), &s, &metric), "first epoch when there is no steady state");
    cr_assert_str_eq(metric, "first_epoch_s");
    cr_assert_float_eq(s.median, 4, 1e-12);
    cr_assert_float_eq(s.max, 0, 1e-12, "members absent from the statistic read as 0");
    json_t *bare = doc_of("{\"summary\": {\"steady_epoch_s\": 3}}");
    cr_assert(!sd_run_epoch_time(bare, &s, &metric), "a bare number is not compared across nights");
    json_decref(bare);
    json_decref(d);
}

Test(results, database_round_trip) {
    char dir[256], path[300];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/t.db", dir);
    db *h = NULL;
    cr_assert_eq(db_open(&h, path), 0, "%s", sd_errmsg());
    json_t *d = doc_of(two_runs);
    int64_t id = 0;
    cr_assert_eq(sd_results_db_begin(h, d, "bench", NULL, &id), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_results_store(h, id, d, 0, 1), 0, "%s", sd_errmsg());
    json_t *back = NULL;
    cr_assert_eq(sd_results_load(h, id, &back), 0, "%s", sd_errmsg());
    sd_results_head a, b;
    sd_results_head_of(d, &a);
    sd_results_head_of(back, &b);
    cr_assert_str_eq(b.created, a.created);
    cr_assert_str_eq(b.version, a.version);
    cr_assert_str_eq(b.commit, a.commit);
    cr_assert_eq(b.dirty, a.dirty);
    cr_assert(json_equal(b.environment, a.environment));
    cr_assert_eq(sd_results_count(back), 2);
    for (size_t i = 0; i < 2; i++) cr_assert(json_equal(sd_results_run(back, i), sd_results_run(d, i)), "run %zu", i);
    cr_assert(json_is_true(json_object_get(back, "complete")));
    cr_assert_eq(json_integer_value(json_object_get(back, "run_id")), id);
    json_decref(back);
    json_decref(d);
    db_close(h);
    unlink(path);
    rmdir(dir);
}

/* ---- what verify reads: identity, environments, and which files it accepts ------------------------------- */

static const sd_ident *ident(const sd_ident *l, int n, const char *what) {
    for (int i = 0; i < n; i++)
        if (strcmp(l[i].what, what) == 0) return &l[i];
    return NULL;
}

Test(results, identity_of_a_runner_and_a_publication) {
    json_t *run = doc_of("{\"implementation\": \"pytorch\", \"backend_env\": {\"framework\": \"pytorch\", \"version\": \"1.13.0a0\","
                         " \"interpreter\": \"/usr/bin/python3\", \"python\": \"3.11.2\", \"cudnn\": null, \"threads\": 2,"
                         " \"runner\": \"workloads/runners/pytorch_runner.py\", \"torch_dir\": \"/x\", \"parameters\": 5},"
                         " \"settings\": {\"precision\": \"fp32\", \"threads\": 4, \"batch\": 128, \"max_batches\": null}}");
    sd_ident l[SD_IDENT_MAX];
    int n = sd_run_identity(run, l, SD_IDENT_MAX);
    cr_assert_str_eq(ident(l, n, "framework")->value, "pytorch");
    cr_assert_str_eq(ident(l, n, "framework version")->value, "1.13.0a0");
    cr_assert_str_eq(ident(l, n, "interpreter")->value, "/usr/bin/python3");
    cr_assert_str_eq(ident(l, n, "python")->value, "3.11.2");
    cr_assert_str_eq(ident(l, n, "cudnn")->value, "null");
    cr_assert_str_eq(ident(l, n, "threads")->value, "2", "the runner's own record comes first");
    cr_assert_not(ident(l, n, "threads")->setting);
    cr_assert_str_eq(ident(l, n, "precision")->value, "fp32");
    cr_assert(ident(l, n, "precision")->setting);
    cr_assert_str_eq(ident(l, n, "max_batches")->value, "null");
    cr_assert_null(ident(l, n, "runner"), "where the runner lives is not what was measured");
    cr_assert_null(ident(l, n, "torch_dir"));
    cr_assert_null(ident(l, n, "parameters"));
    json_decref(run);
    json_t *pub = doc_of("{\"framework\": {\"name\": \"Caffe2\", \"version\": null}, \"settings\": {\"batch\": 64}}");
    n = sd_run_identity(pub, l, SD_IDENT_MAX);
    cr_assert_str_eq(ident(l, n, "framework")->value, "Caffe2");
    cr_assert_str_eq(ident(l, n, "framework version")->value, "null");
    cr_assert_str_eq(ident(l, n, "batch")->value, "64");
    cr_assert_null(ident(l, n, "precision"));
    json_decref(pub);
}

Test(results, environments_and_rerun_settings) {
    json_t *d = doc_of("{\"environment\": {\"cpu_model\": \"A\", \"cores\": 2, \"hostname\": \"h\","
                       " \"gpu\": {\"count\": 0, \"note\": \"none\"}, \"libraries\": {\"pytorch\": \"1\"}},"
                       " \"runs\": [{\"environment\": {\"gpu\": {\"name\": \"K80\", \"count\": 4}},"
                       "  \"settings\": {\"epochs\": 3, \"threads\": 2, \"seed\": 7, \"autotune\": false, \"precision\": \"tf32\"},"
                       "  \"backend_env\": {\"interpreter\": \"/venv/bin/python\"}}]}");
    json_t *e = sd_results_run_env(d, sd_results_run(d, 0));
    sd_env_view v;
    sd_env_view_of(e, &v);
    cr_assert_str_eq(v.cpu_model, "A");
    cr_assert_str_eq(v.gpu_name, "K80", "the run's own hardware overrides the document's");
    cr_assert_eq(v.gpu_count, 4);
    cr_assert_str_eq(v.gpu_note, "none");
    cr_assert_eq(v.cores, 2);
    cr_assert_str_eq(v.hostname, "h");
    cr_assert_null(v.omp_wait_policy, "not recorded: NULL");
    cr_assert_str_eq(json_string_value(json_object_get(v.libraries, "pytorch")), "1");
    json_decref(e);
    sd_run_view rv;
    sd_run_view_of(sd_results_run(d, 0), &rv);
    cr_assert_eq(rv.epochs, 3);
    cr_assert_eq(rv.threads, 2);
    cr_assert_eq(rv.seed, 7);
    cr_assert_eq(rv.autotune, 0);
    cr_assert_str_eq(rv.precision, "tf32");
    cr_assert_str_eq(rv.interpreter, "/venv/bin/python");
    json_decref(d);
}

static int published(const char *runs) {
    char doc[2048];
    snprintf(doc, sizeof doc, "{\"schema\": \"showdown-results/1\", \"runs\": [%s]}", runs);
    json_t *j = NULL;
    int rc = sd_published_parse(&j, "pub.json", doc, strlen(doc));
    json_decref(j);
    return rc;
}

Test(results, published_files_verify_accepts) {
    static const char *const names = "\"workload\": \"mnist_mlp\", \"implementation\": \"tensorflow\", \"backend\": \"auto\"";
    char runs[1024];
    snprintf(runs, sizeof runs, "{%s, \"status\": \"unavailable\", \"error\": \"not installed\"}", names);
    cr_assert_eq(published(runs), 0, "bench's unavailable run: %s", sd_errmsg());
    snprintf(runs, sizeof runs, "{%s, \"status\": \"ok\", \"summary\": {\"steady_epoch_s\": null, "
             "\"first_epoch_s\": {\"median\": 1.5, \"n\": 1}}}", names);
    cr_assert_eq(published(runs), 0, "a null statistic is absent: %s", sd_errmsg());
    snprintf(runs, sizeof runs, "{%s, \"status\": \"ok\", \"summary\": {\"inference_s_per_1000_images\": {\"median\": 0.2}}}",
             names);
    cr_assert_eq(published(runs), 0, "an inference run: %s", sd_errmsg());
    snprintf(runs, sizeof runs, "{%s, \"status\": \"ok\", \"summary\": {\"accuracy\": {\"median\": 0.5}}}", names);
    cr_assert_eq(published(runs), 0, "bench's run without a time figure is shown n/a: %s", sd_errmsg());
    snprintf(runs, sizeof runs, "{%s, \"summary\": {\"accuracy\": {\"median\": 0.5}}}", names);
    cr_assert_eq(published(runs), SD_EINPUT, "a publication's cell needs a time figure");
    cr_assert(strstr(sd_errmsg(), "summary has no time metric"), "%s", sd_errmsg());
    snprintf(runs, sizeof runs, "{%s, \"status\": \"ok\"}", names);
    cr_assert_eq(published(runs), SD_EINPUT, "a measured run needs its summary");
    cr_assert_eq(published(""), SD_EINPUT);
    cr_assert(strstr(sd_errmsg(), "pub.json:1:") && strstr(sd_errmsg(), "no runs"), "%s", sd_errmsg());
}

/* The OpenMP wait policy a recorded note names, as verify compares it: the reason is not part of it, showdown's
 * passive and a user's OMP_WAIT_POLICY=passive are one policy, a user's other settings are their own. */
Test(results, omp_policy_kinds) {
    static const struct { const char *note, *kind; } k[] = {
        {"spin (libgomp default): no other runnable task when showdown started", "spin"},
        {"spin (libgomp default): /proc/stat unreadable", "spin"},
        {"passive: 2 other runnable tasks when showdown started", "passive"},
        {"set:passive: 1 other runnable task when showdown started", "passive"},
        {"passive: as the published results (verify --rerun)", "passive"},
        {"OMP_WAIT_POLICY=PASSIVE (from the environment)", "passive"},
        {"OMP_WAIT_POLICY=active (from the environment)", "OMP_WAIT_POLICY=active"},
        {"OMP_WAIT_POLICY=active GOMP_SPINCOUNT=10 (from the environment)", "OMP_WAIT_POLICY=active GOMP_SPINCOUNT=10"},
        {"OMP_WAIT_POLICY=active: as the published results (verify --rerun)", "OMP_WAIT_POLICY=active"},
    };
    char kind[128];
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        cr_assert(sd_omp_policy_kind(k[i].note, kind, sizeof kind), "%s", k[i].note);
        cr_assert_str_eq(kind, k[i].kind, "%s", k[i].note);
    }
    cr_assert_not(sd_omp_policy_kind("unknown", kind, sizeof kind));
    cr_assert_not(sd_omp_policy_kind(NULL, kind, sizeof kind));
    cr_assert_not(sd_omp_policy_kind("", kind, sizeof kind));
    json_t *d = doc_of("{\"environment\": {\"omp_wait_policy\": \"passive: 1 other runnable task\"}, \"runs\": [{}]}");
    json_t *e = sd_results_run_env(d, sd_results_run(d, 0));
    sd_env_view v;
    sd_env_view_of(e, &v);
    cr_assert_str_eq(v.omp_wait_policy, "passive: 1 other runnable task");
    json_decref(e);
    json_decref(d);
}

/* Two processes of one cell become one run: samples numbered on, each with its host speed and the run's the
 * median; the summary over all of them; the same-model check failed when a later process failed it; an inference
 * run's pass statistics likewise. */
Test(results, merge_processes_of_a_cell) {
    json_t *into = doc_of(
        "{\"status\": \"ok\", \"host_speed\": 0.8, \"settings\": {\"epochs\": 2, \"repeat\": 1},"
        " \"model\": {\"forward_flops_per_example\": 1e6, \"train_flops_per_example\": 3e6},"
        " \"equivalence\": {\"status\": \"passed\"},"
        " \"samples\": [{\"repeat\": 1, \"metric\": \"accuracy\", \"epochs\": ["
        "   {\"train_s\": 2.0, \"val_s\": 0.5, \"accuracy\": 0.5, \"train_images\": 100},"
        "   {\"train_s\": 1.0, \"val_s\": 0.3, \"accuracy\": 0.6, \"train_images\": 100}]}]}");
    json_t *from = doc_of(
        "{\"status\": \"ok\", \"host_speed\": 1.0, \"settings\": {\"epochs\": 2, \"repeat\": 1},"
        " \"equivalence\": {\"status\": \"failed\", \"max_rel_diff\": 0.5},"
        " \"samples\": [{\"repeat\": 1, \"epochs\": ["
        "   {\"train_s\": 3.0, \"val_s\": 0.7, \"accuracy\": 0.7, \"train_images\": 100},"
        "   {\"train_s\": 2.0, \"val_s\": 0.5, \"accuracy\": 0.8, \"train_images\": 100}]}]}");
    cr_assert_eq(sd_results_merge_run(into, from), 0);
    cr_assert_eq(sd_results_merge_run(into, from), 0, "a third process");
    const json_t *samples = json_object_get(into, "samples");
    cr_assert_eq(json_array_size(samples), 3);
    for (size_t k = 0; k < 3; k++)
        cr_assert_eq(json_integer_value(json_object_get(json_array_get(samples, k), "repeat")), (json_int_t)k + 1);
    cr_assert_float_eq(json_real_value(json_object_get(json_array_get(samples, 0), "host_speed")), 0.8, 1e-12);
    cr_assert_float_eq(json_real_value(json_object_get(into, "host_speed")), 1.0, 1e-12, "median of 0.8, 1, 1");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(into, "settings"), "repeat")), 3);
    sd_run_view v;
    sd_run_view_of(into, &v);
    cr_assert_eq(v.steady_epoch_s.n, 3);
    cr_assert_float_eq(v.steady_epoch_s.median, 2.0, 1e-12);
    cr_assert_float_eq(v.steady_epoch_s.min, 1.0, 1e-12);
    cr_assert_float_eq(v.first_epoch_s.median, 3.0, 1e-12);
    cr_assert_float_eq(v.accuracy.median, 0.8, 1e-12);
    cr_assert_float_eq(v.train_images_per_s.max, 100.0, 1e-9, "100 images in the fastest steady epoch, 1 s");
    cr_assert_float_eq(v.train_gflops.max, 0.3, 1e-9, "100 images/s x 3 MFLOP");
    cr_assert_str_eq(v.equivalence_status, "failed", "a process that failed the check fails the run");
    json_decref(from);

    json_t *inf = doc_of("{\"status\": \"ok\", \"mode\": \"inference\", \"settings\": {\"epochs\": 0},"
                         " \"model\": {\"forward_flops_per_example\": 2e9},"
                         " \"samples\": [{\"repeat\": 1, \"epochs\": [], \"inference_s\": 2.0, \"inference_images\": 1000}]}");
    json_t *inf2 = doc_of("{\"status\": \"ok\", \"samples\": [{\"repeat\": 1, \"epochs\": [], \"inference_s\": 4.0,"
                          " \"inference_images\": 1000}]}");
    cr_assert_eq(sd_results_merge_run(inf, inf2), 0);
    sd_run_view_of(inf, &v);
    cr_assert_eq(v.inference_s_per_1000.n, 2);
    cr_assert_float_eq(v.inference_s_per_1000.median, 3.0, 1e-12);
    cr_assert_float_eq(v.inference_gflops.max, 1000.0, 1e-9, "1,000 images x 2 GFLOP in 2 s");
    cr_assert(!isfinite(v.steady_epoch_s.median) || v.steady_epoch_s.n == 0, "no training statistics");
    json_t *bare = doc_of("{\"status\": \"ok\"}");
    cr_assert_eq(sd_results_merge_run(inf, bare), SD_EINPUT, "a run without samples");
    json_decref(bare);
    json_decref(inf2);
    json_decref(inf);
    json_decref(into);
}
