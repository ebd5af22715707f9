/* test_dp — data parallel on the CPU: the batch split with remainders, gradient buckets covering every
 * parameter once, the host reduction (mean and weighted), R replicas taking the same step as one model on
 * the whole batch (within float tolerance), replicas staying identical, R = 1 training exactly as
 * nn_train, the same for token and multi-label workloads on two replicas of ref and dnnl (ids and BCE
 * targets uploaded as nn_train does), and the NCCL reduction refusing cleanly where there are no GPUs. */
#include "core/err.h"
#include "nn/backend_impl.h"
#include "data/data.h"
#include "nn/dp.h"
#include "nn/model.h"
#include "nn/train.h"
#include "testutil.h"

#include <math.h>

static char g_dir[512];

/* A small MLP (no dropout, so one model and the replicas see the same function) with the given optimizer. */
static void load_spec(sd_workload *w, const char *optim, int dropout) {
    char path[600];
    tu_tmpdir(g_dir, sizeof g_dir);
    snprintf(path, sizeof path, "%s/dp.json", g_dir);
    char spec[2048];
    snprintf(spec, sizeof spec,
             "{\"schema\": \"showdown-workload/1\", \"name\": \"dp\", \"title\": \"dp test\", \"source\": \"test\",\n"
             " \"data\": {\"dataset\": \"synthetic\", \"shape\": [1, 4, 5], \"classes\": 3, \"train\": 64, \"test\": 32},\n"
             " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
             "   {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 7}, {\"op\": \"relu\"},%s\n"
             "   {\"op\": \"dense\", \"units\": 3}], \"loss\": \"softmax_cross_entropy\"},\n"
             " \"training\": {\"optimizer\": %s, \"batch\": 8, \"epochs\": 2}}\n",
             dropout ? " {\"op\": \"dropout\", \"rate\": 0.3}," : "", optim);
    tu_write_str(path, spec);
    int rc = sd_workload_load(w, g_dir, path);
    cr_assert_eq(rc, 0, "spec: %s", sd_errmsg());
}

static nn_backend *ref_be(void) {
    nn_backend *be = NULL;
    nn_backend_opts o = {.threads = 1, .quiet = 1};
    cr_assert_eq(nn_backend_new(&be, "ref", &o, NULL, 0), 0, "%s", sd_errmsg());
    return be;
}

/* Replica r's back-end: ref, or cudnn on device r (NULL with the reason in sd_errmsg when there is none). */
static nn_backend *replica_be(const char *name, int r) {
    if (strcmp(name, "ref") == 0) return ref_be();
    nn_backend *be = NULL;
    nn_backend_opts o = {.threads = 1, .quiet = 1, .device = r, .autotune = 0, .precision = "fp32"};
    return nn_backend_new(&be, name, &o, NULL, 0) == 0 ? be : NULL;
}

static void download_params(nn_model *m, float *out) {
    cr_assert_eq(m->be->ops->download(m->be, out, m->params, m->nparams * sizeof(float)), 0);
}

Test(dp, split_with_remainders) {
    int sz[NN_DP_MAX], off[NN_DP_MAX];
    cr_assert_eq(nn_dp_split(10, 3, sz, off), 0);
    cr_assert(sz[0] == 4 && sz[1] == 3 && sz[2] == 3, "10 over 3: %d %d %d", sz[0], sz[1], sz[2]);
    cr_assert(off[0] == 0 && off[1] == 4 && off[2] == 7);
    cr_assert_eq(nn_dp_split(8, 4, sz, off), 0);
    for (int r = 0; r < 4; r++) cr_assert(sz[r] == 2 && off[r] == 2 * r);
    for (int B = 1; B <= 40; B++)
        for (int R = 1; R <= B && R <= 9; R++) {
            cr_assert_eq(nn_dp_split(B, R, sz, off), 0);
            int sum = 0;
            for (int r = 0; r < R; r++) {
                cr_assert_eq(off[r], sum);
                cr_assert(sz[r] >= 1 && sz[r] - sz[R - 1] <= 1, "B %d R %d: uneven by more than one", B, R);
                sum += sz[r];
            }
            cr_assert_eq(sum, B);
        }
    cr_assert_eq(nn_dp_split(2, 3, sz, off), SD_EUSAGE);
    cr_assert(strstr(sd_errmsg(), "cannot be split over 3") != NULL, "%s", sd_errmsg());
    cr_assert_eq(nn_dp_split(100, NN_DP_MAX + 1, sz, off), SD_EUSAGE);
}

Test(dp, buckets_cover_every_parameter_once) {
    const size_t ns[] = {0, 1, 2, 7, 97, 1000, 1001, 669706};
    const size_t bs[] = {1, 2, 3, 64, 1000, 4096, 6553600};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof bs / sizeof bs[0]; j++) {
            if (ns[i] / bs[j] > 100000) continue;
            nn_bucket *b = NULL;
            int nb = nn_dp_buckets(ns[i], bs[j], &b);
            cr_assert_geq(nb, 0);
            cr_assert_eq((size_t)nb, (ns[i] + bs[j] - 1) / bs[j], "n %zu bucket %zu: %d buckets", ns[i], bs[j], nb);
            size_t next = 0;
            for (int k = 0; k < nb; k++) {
                cr_assert_eq(b[k].off, next, "gap or overlap at bucket %d", k);
                cr_assert(b[k].len >= 1 && b[k].len <= bs[j]);
                next += b[k].len;
            }
            cr_assert_eq(next, ns[i], "buckets cover %zu of %zu", next, ns[i]);
            free(b);
        }
    nn_bucket *b = NULL;
    cr_assert_eq(nn_dp_buckets(10, 0, &b), SD_EUSAGE);
}

Test(dp, host_reduction_mean_and_weighted) {
    nn_backend *bes[3] = {ref_be(), ref_be(), ref_be()};
    float *d[3];
    const float v[3][5] = {{1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}, {-2, 0, 2, 4, 6}};
    for (int r = 0; r < 3; r++) {
        cr_assert_eq(nn_dev_alloc(bes[r], (void **)&d[r], sizeof v[r]), 0);
        cr_assert_eq(bes[r]->ops->upload(bes[r], d[r], v[r], sizeof v[r]), 0);
    }
    nn_reducer *red = NULL;
    cr_assert_eq(nn_reducer_host_new(&red, bes, 3), 0);
    cr_assert_eq(red->ops->allreduce(red, d, 5, NULL), 0);
    for (int r = 0; r < 3; r++) {
        float out[5];
        bes[r]->ops->download(bes[r], out, d[r], sizeof out);
        for (int i = 0; i < 5; i++) {
            float want = (v[0][i] + v[1][i] + v[2][i]) / 3.0f;
            cr_assert_float_eq(out[i], want, 1e-5, "rank %d [%d]: %g, want %g", r, i, out[i], want);
        }
    }
    const float w[3] = {0.5f, 0.25f, 0.25f};   /* the mean is now in every buffer: weights summing to 1 keep it */
    cr_assert_eq(red->ops->allreduce(red, d, 5, w), 0);
    float out[5];
    bes[2]->ops->download(bes[2], out, d[2], sizeof out);
    cr_assert_float_eq(out[4], (5 + 50 + 6) / 3.0f, 1e-5);
    for (int r = 0; r < 3; r++) bes[r]->ops->upload(bes[r], d[r], v[r], sizeof v[r]);
    cr_assert_eq(red->ops->allreduce(red, d, 5, w), 0);
    bes[1]->ops->download(bes[1], out, d[1], sizeof out);
    cr_assert_float_eq(out[1], 0.5f * 2 + 0.25f * 20 + 0.25f * 0, 1e-5);
    nn_reducer_free(red);
    for (int r = 0; r < 3; r++) { nn_dev_free(bes[r], d[r], sizeof v[r]); nn_backend_free(bes[r]); }
}

/* R replicas on a global batch of B (remainders included) against one model on the whole batch, on one_name
 * (the replicas' back-end on the CPU; ref for cudnn replicas). The one model's batch goes through
 * nn_train_upload_batch (token ids, BCE targets), as nn_train's does. */
static void check_equivalence_data(const char *bename, const char *one_name, const sd_workload *w,
                                   const sd_dataset *data, int B, int R, int steps, double tol) {
    nn_backend *one_be = replica_be(one_name, 0);
    cr_assert_not_null(one_be, "%s: %s", one_name, sd_errmsg());
    nn_model *one = NULL;
    cr_assert_eq(nn_model_build(&one, w, one_be, B, 42), 0, "%s", sd_errmsg());
    nn_backend *bes[NN_DP_MAX];
    for (int r = 0; r < R; r++) {
        bes[r] = replica_be(bename, r);
        cr_assert_not_null(bes[r], "%s replica %d: %s", bename, r, sd_errmsg());
    }
    nn_reducer *red = NULL;
    if (strcmp(bename, "cudnn") != 0) cr_assert_eq(nn_reducer_host_new(&red, bes, R), 0);
    else cr_assert_eq(nn_reducer_nccl_new(&red, bes, R), 0, "%s", sd_errmsg());
    nn_dp *dp = NULL;
    cr_assert_eq(nn_dp_new(&dp, w, bes, R, B, 42, red, 5), 0, "%s", sd_errmsg());   /* 5: many small buckets */
    cr_assert_gt(dp->nbuckets, 10);
    const size_t per = (size_t)w->in_c * w->in_h * w->in_w;
    float *loss = malloc(sizeof(float) * (size_t)B), *l1 = malloc(sizeof(float) * (size_t)B);
    for (int s = 0; s < steps; s++) {
        const float *x = data->x + (size_t)s * B * per;
        const int32_t *y = data->y + (size_t)s * B;
        cr_assert_eq(nn_train_upload_batch(one, x, y), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_model_forward(one, 1, 99), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_model_backward(one), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_model_step(one), 0, "%s", sd_errmsg());
        cr_assert_eq(one_be->ops->download(one_be, l1, one->loss, sizeof(float) * (size_t)B), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_dp_step(dp, x, y, 99, loss), 0, "%s: %s", w->name, sd_errmsg());
        for (int i = 0; i < B; i++)
            cr_assert_float_eq(loss[i], l1[i], 1e2 * tol, "%s step %d example %d loss %g, one model's %g", w->name, s,
                               i, loss[i], l1[i]);
    }
    size_t n = one->nparams;
    float *p1 = malloc(n * sizeof(float)), *pr = malloc(n * sizeof(float)), *p0 = malloc(n * sizeof(float));
    download_params(one, p1);
    double maxdiff = 0, maxabs = 0;
    for (int r = 0; r < R; r++) {
        download_params(dp->m[r], pr);
        if (r == 0) memcpy(p0, pr, n * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)pr[i] - p1[i]);
            if (!(d <= maxdiff)) maxdiff = d;   /* NaN fails */
            if (fabs(p1[i]) > maxabs) maxabs = fabs(p1[i]);
            cr_assert_eq(memcmp(&pr[i], &p0[i], sizeof(float)), 0, "replica %d differs from replica 0 at %zu", r, i);
        }
    }
    cr_assert_lt(maxdiff, tol * (1 + maxabs), "%s on %s, B %d R %d: parameters differ by %g from one model's", w->name,
                 bename, B, R, maxdiff);
    /* and the step really moved the parameters (the comparison is not between two untouched models) */
    float *init = malloc(n * sizeof(float));
    cr_assert_eq(nn_model_init_params(one->layers, one->nlayers, n, w->weight_init, w->bias_init, 42, init), 0);
    double moved = 0;
    for (size_t i = 0; i < n; i++) moved += fabs((double)p1[i] - init[i]);
    cr_assert_gt(moved, 1e-3, "parameters did not move");
    free(init); free(p0); free(p1); free(pr); free(loss); free(l1);
    nn_dp_free(dp);
    nn_reducer_free(red);
    for (int r = 0; r < R; r++) nn_backend_free(bes[r]);
    nn_model_free(one);
    nn_backend_free(one_be);
}

static void check_equivalence_on(const char *bename, const char *optim, int B, int R, int steps, double tol) {
    sd_workload w;
    load_spec(&w, optim, 0);
    sd_dataset data = {0};
    cr_assert_eq(sd_data_synthetic(&data, B * steps, w.in_c, w.in_h, w.in_w, w.classes, 7, 0), 0);
    check_equivalence_data(bename, "ref", &w, &data, B, R, steps, tol);
    sd_dataset_free(&data);
    sd_workload_free(&w);
}

static void check_equivalence(const char *optim, int B, int R, int steps) {
    check_equivalence_on("ref", optim, B, R, steps, 1e-5);
}

Test(dp, replicas_equal_one_model_sgd_even) {
    check_equivalence("{\"name\": \"sgd\", \"lr\": 0.1, \"momentum\": 0.9}", 8, 2, 3);
}
Test(dp, replicas_equal_one_model_sgd_remainder) {
    check_equivalence("{\"name\": \"sgd\", \"lr\": 0.1, \"momentum\": 0.9}", 7, 3, 3);
}
Test(dp, replicas_equal_one_model_adam_remainder) {
    check_equivalence("{\"name\": \"adam\", \"lr\": 0.01}", 11, 4, 2);
}

/* Small stand-ins for the workloads whose input is not a plain float tensor (no dropout: the replicas and the
 * one model then compute the same function): imdb_gru (token ids into an embedding, a GRU), babi_rnn (two
 * embeddings reading ranges of the ids, an LSTM repeated into a residual sum, an LSTM) and densenet121_xray
 * (a concat block, sigmoid binary cross-entropy on float targets; no batch norm, whose statistics are per
 * replica). Replicas must upload ids and targets as nn_train does. */
static const char k_imdb_spec[] =
    "{\"schema\": \"showdown-workload/1\", \"name\": \"dp_imdb\", \"title\": \"t\", \"source\": \"test\",\n"
    " \"data\": {\"dataset\": \"imdb\", \"shape\": [12, 1, 1], \"classes\": 2, \"train\": 64, \"test\": 32},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
    "   {\"op\": \"embedding\", \"vocab\": 40, \"units\": 6}, {\"op\": \"gru\", \"units\": 5},\n"
    "   {\"op\": \"dense\", \"units\": 2}], \"loss\": \"softmax_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"adam\", \"lr\": 0.01}, \"batch\": 8, \"epochs\": 1}}\n";
static const char k_babi_spec[] =
    "{\"schema\": \"showdown-workload/2\", \"name\": \"dp_babi\", \"title\": \"t\", \"source\": \"test\",\n"
    " \"data\": {\"dataset\": \"babi\", \"shape\": [10, 1, 1], \"classes\": 9, \"train\": 64, \"test\": 32},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"},\n"
    "  \"blocks\": {\"sq\": {\"connection\": \"residual\",\n"
    "    \"layers\": [{\"op\": \"embedding\", \"vocab\": 9, \"units\": 4, \"range\": [0, 8]}],\n"
    "    \"projection\": [{\"op\": \"embedding\", \"vocab\": 9, \"units\": 4, \"range\": [8, 10]},\n"
    "                   {\"op\": \"lstm\", \"units\": 4}, {\"op\": \"repeat_vector\", \"times\": 8}]}},\n"
    "  \"layers\": [{\"block\": \"sq\", \"project\": true}, {\"op\": \"lstm\", \"units\": 5},\n"
    "             {\"op\": \"dense\", \"units\": 9}], \"loss\": \"softmax_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"adam\", \"lr\": 0.01}, \"batch\": 8, \"epochs\": 1}}\n";
static const char k_bce_spec[] =
    "{\"schema\": \"showdown-workload/2\", \"name\": \"dp_bce\", \"title\": \"t\", \"source\": \"test\",\n"
    " \"data\": {\"dataset\": \"synthetic\", \"shape\": [2, 6, 6], \"classes\": 4, \"train\": 64, \"test\": 32},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"},\n"
    "  \"blocks\": {\"dl\": {\"connection\": \"concat\", \"layers\": [{\"op\": \"relu\"},\n"
    "    {\"op\": \"conv2d\", \"filters\": 2, \"kernel\": 3, \"padding\": 1, \"bias\": false}]}},\n"
    "  \"layers\": [{\"op\": \"conv2d\", \"filters\": 3, \"kernel\": 3, \"padding\": 1},\n"
    "             {\"block\": \"dl\", \"repeat\": 2}, {\"op\": \"avgpool\", \"size\": 2, \"stride\": 2},\n"
    "             {\"op\": \"global_avgpool\"}, {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 4}],\n"
    "  \"loss\": \"sigmoid_binary_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.5, \"momentum\": 0.9}, \"batch\": 8, \"epochs\": 1}}\n";

static void load_spec_text(sd_workload *w, const char *text) {
    char path[600];
    tu_tmpdir(g_dir, sizeof g_dir);
    snprintf(path, sizeof path, "%s/dp_spec.json", g_dir);
    tu_write_str(path, text);
    cr_assert_eq(sd_workload_load(w, g_dir, path), 0, "spec: %s", sd_errmsg());
}

/* B x steps examples for w: token ids drawn from its vocabulary when it starts with an embedding. */
static void spec_data(const sd_workload *w, int vocab, int n, sd_dataset *d) {
    if (vocab) cr_assert_eq(sd_data_synthetic_tokens(d, n, w->in_c, vocab, w->classes, 7, 0), 0, "%s", sd_errmsg());
    else cr_assert_eq(sd_data_synthetic(d, n, w->in_c, w->in_h, w->in_w, w->classes, 7, 0), 0, "%s", sd_errmsg());
}

/* Two replicas on the CPU back-end bename against one model on the same back-end, over three steps. */
static void check_spec_on(const char *bename, const char *spec, int vocab, int B) {
    if (!nn_backend_compiled(bename)) TU_SKIP("%s: not compiled into this build", bename);
    sd_workload w;
    load_spec_text(&w, spec);
    const int steps = 3;
    sd_dataset data = {0};
    spec_data(&w, vocab, B * steps, &data);
    check_equivalence_data(bename, bename, &w, &data, B, 2, steps, strcmp(bename, "ref") ? 1e-4 : 1e-5);
    sd_dataset_free(&data);
    sd_workload_free(&w);
}

Test(dp_tokens, imdb_gru_ref) { check_spec_on("ref", k_imdb_spec, 40, 8); }
Test(dp_tokens, imdb_gru_dnnl) { check_spec_on("dnnl", k_imdb_spec, 40, 8); }
Test(dp_tokens, babi_rnn_ref) { check_spec_on("ref", k_babi_spec, 9, 7); }   /* 7: replicas of 4 and 3 */
Test(dp_tokens, babi_rnn_dnnl) { check_spec_on("dnnl", k_babi_spec, 9, 7); }
Test(dp_tokens, bce_multilabel_ref) { check_spec_on("ref", k_bce_spec, 0, 8); }
Test(dp_tokens, bce_multilabel_dnnl) { check_spec_on("dnnl", k_bce_spec, 0, 8); }

Test(dp, one_replica_trains_as_nn_train) {
    sd_workload w;
    load_spec(&w, "{\"name\": \"rmsprop\", \"lr\": 0.01}", 1);   /* with dropout: replica 0 draws nn_train's masks */
    sd_dataset train = {0}, test = {0};
    cr_assert_eq(sd_data_synthetic(&train, 64, w.in_c, w.in_h, w.in_w, w.classes, 3, 0), 0);
    cr_assert_eq(sd_data_synthetic(&test, 32, w.in_c, w.in_h, w.in_w, w.classes, 3, 1), 0);
    nn_train_opts o = {.epochs = 2, .batch = 8, .seed = 5, .shuffle = 1};
    nn_backend *be = ref_be();
    nn_train_result a, b;
    cr_assert_eq(nn_train(&w, be, &train, &test, &o, &a), 0, "%s", sd_errmsg());
    nn_reducer *red = NULL;
    cr_assert_eq(nn_reducer_host_new(&red, &be, 1), 0);
    cr_assert_eq(nn_dp_train(&w, &be, 1, red, &train, &test, &o, &b), 0, "%s", sd_errmsg());
    for (int e = 0; e < 2; e++) {
        cr_assert_eq(a.epochs[e].loss, b.epochs[e].loss, "epoch %d loss %g vs %g", e + 1, a.epochs[e].loss, b.epochs[e].loss);
        cr_assert_eq(a.epochs[e].accuracy, b.epochs[e].accuracy);
        cr_assert_eq(a.epochs[e].train_images, b.epochs[e].train_images);
    }
    /* two replicas: twice the images per step, same number of examples per epoch budget */
    nn_backend *bes[2] = {be, ref_be()};
    nn_reducer *red2 = NULL;
    cr_assert_eq(nn_reducer_host_new(&red2, bes, 2), 0);
    nn_train_result c;
    cr_assert_eq(nn_dp_train(&w, bes, 2, red2, &train, &test, &o, &c), 0, "%s", sd_errmsg());
    cr_assert_eq(c.epochs[0].train_images, 64);   /* 4 global batches of 2 x 8 */
    cr_assert(c.epochs[1].loss > 0 && c.epochs[1].loss < 10);
    nn_train_result_free(&a); nn_train_result_free(&b); nn_train_result_free(&c);
    nn_reducer_free(red); nn_reducer_free(red2);
    nn_backend_free(bes[1]);
    nn_backend_free(be);
    sd_dataset_free(&train); sd_dataset_free(&test);
    sd_workload_free(&w);
}

Test(dp, nccl_refuses_cleanly_without_gpus) {
    nn_backend *be = ref_be();
    nn_backend *bes[2] = {be, be};
    nn_reducer *red = NULL;
    int rc = nn_reducer_nccl_new(&red, bes, 2);
    if (rc == 0) {   /* a machine with two GPUs: make gpu-check exercises it */
        nn_reducer_free(red);
        nn_backend_free(be);
        return;
    }
    cr_assert(rc == (nn_nccl_compiled() ? SD_ENODEV : SD_EUNSUPPORTED), "rc %d: %s", rc, sd_errmsg());
    cr_assert(strstr(sd_errmsg(), nn_nccl_compiled() ? "2 GPUs requested" : "needs NCCL") != NULL, "%s", sd_errmsg());
    cr_assert_null(red);
    nn_backend_free(be);
}

/* make gpu-check (scripts/gpu-check.sh) runs these on a machine with two or more GPUs: NCCL's average of
 * known buffers, then two cudnn replicas reduced by NCCL against one reference model on the whole batch. */
static int two_gpus(void) {
    nn_backend *be[2] = {NULL, NULL};
    nn_backend_opts o = {.quiet = 1, .autotune = 0, .precision = "fp32"};
    int rc = 0;
    for (int r = 0; r < 2 && rc == 0; r++) {
        o.device = r;
        rc = nn_backend_new(&be[r], "cudnn", &o, NULL, 0);
    }
    nn_backend_free(be[0]);
    nn_backend_free(be[1]);
    /* only a missing device is a skip; a back-end that fails to start on a present GPU is a failure */
    if (rc == SD_ENODEV) printf("skipped: data parallel on GPUs: %s\n", sd_errmsg());
    else cr_assert_eq(rc, 0, "cudnn replica could not be created (%s): %s", sd_status_name(rc), sd_errmsg());
    return rc == 0;
}

Test(dp_gpu, nccl_average) {
    if (!nn_nccl_compiled()) TU_SKIP("data parallel on GPUs: this build has no NCCL");
    if (!two_gpus()) cr_skip_test("fewer than two CUDA devices");
    nn_backend *bes[2] = {replica_be("cudnn", 0), replica_be("cudnn", 1)};
    nn_reducer *red = NULL;
    cr_assert_eq(nn_reducer_nccl_new(&red, bes, 2), 0, "%s", sd_errmsg());
    const size_t n = 1000003;   /* odd, larger than one NCCL chunk */
    float *h = malloc(n * sizeof(float)), *d[2];
    for (int r = 0; r < 2; r++) {
        for (size_t i = 0; i < n; i++) h[i] = (float)(r + 1) * (float)(i % 97);
        cr_assert_eq(red->ops->select(red, r), 0);
        cr_assert_eq(nn_dev_alloc(bes[r], (void **)&d[r], n * sizeof(float)), 0);
        cr_assert_eq(bes[r]->ops->upload(bes[r], d[r], h, n * sizeof(float)), 0);
    }
    cr_assert_eq(red->ops->allreduce(red, d, n, NULL), 0, "%s", sd_errmsg());
    for (int r = 0; r < 2; r++) {
        cr_assert_eq(red->ops->select(red, r), 0);
        cr_assert_eq(bes[r]->ops->download(bes[r], h, d[r], n * sizeof(float)), 0);
        for (size_t i = 0; i < n; i += 101) cr_assert_float_eq(h[i], 1.5f * (float)(i % 97), 1e-4);
        nn_dev_free(bes[r], d[r], n * sizeof(float));
    }
    free(h);
    nn_reducer_free(red);
    for (int r = 0; r < 2; r++) { red = NULL; nn_backend_free(bes[r]); }
}

Test(dp_gpu, nccl_replicas_equal_one_model) {
    if (!nn_nccl_compiled()) TU_SKIP("data parallel on GPUs: this build has no NCCL");
    if (!two_gpus()) cr_skip_test("fewer than two CUDA devices");
    check_equivalence_on("cudnn", "{\"name\": \"sgd\", \"lr\": 0.1, \"momentum\": 0.9}", 8, 2, 3, 1e-4);
}
