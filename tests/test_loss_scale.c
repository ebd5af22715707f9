/* test_loss_scale — the training loop's dynamic loss scaler (nn/train.c), on the CPU: its state machine
 * (an overflow skips the step and halves the scale, growth after the interval of clean steps, PyTorch's
 * GradScaler defaults), and training steps on the reference back-end (and dnnl where built) with the scaler
 * forced on against unscaled ones: power-of-two scaling is exact in fp32, so without an overflow the
 * parameters, optimizer state and batch-norm statistics must be identical bit for bit; a step whose
 * gradients are NaN leaves them untouched. */
#include "testutil.h"
#include "nn/backend_impl.h"
#include "nn/kernels.h"
#include "nn/model.h"
#include "nn/train.h"
#include "core/err.h"

#include <float.h>
#include <stdint.h>

/* ---- the state machine ------------------------------------------------------------------------------ */

Test(scaler, defaults_are_pytorchs) {
    nn_loss_scaler s;
    nn_loss_scaler_init(&s);
    cr_expect_eq(s.scale, 65536.0f);
    cr_expect_eq(s.growth, 2.0f);
    cr_expect_eq(s.backoff, 0.5f);
    cr_expect_eq(s.interval, 2000);
    cr_expect_eq(s.good, 0);
    cr_expect_eq(s.skipped, 0);
}

Test(scaler, overflow_skips_and_halves) {
    nn_loss_scaler s;
    nn_loss_scaler_init(&s);
    for (int i = 0; i < 5; i++) cr_assert_eq(nn_loss_scaler_update(&s, 0), 1);
    cr_assert_eq(s.good, 5);
    cr_assert_eq(nn_loss_scaler_update(&s, 1), 0, "an overflow skips the step");
    cr_expect_eq(s.scale, 32768.0f);
    cr_expect_eq(s.good, 0, "the clean-step count starts again");
    cr_expect_eq(s.skipped, 1);
    cr_assert_eq(nn_loss_scaler_update(&s, 1), 0);
    cr_expect_eq(s.scale, 16384.0f, "each overflow halves");
    cr_expect_eq(s.skipped, 2);
}

Test(scaler, grows_after_the_interval) {
    nn_loss_scaler s;
    nn_loss_scaler_init(&s);
    for (int i = 0; i < 1999; i++) cr_assert_eq(nn_loss_scaler_update(&s, 0), 1);
    cr_expect_eq(s.scale, 65536.0f, "not before 2000 clean steps");
    cr_assert_eq(nn_loss_scaler_update(&s, 0), 1);
    cr_expect_eq(s.scale, 131072.0f, "doubled at the 2000th");
    cr_expect_eq(s.good, 0);
    /* an overflow in between restarts the count: 1999 clean, 1 overflow, 1999 clean: no growth */
    for (int i = 0; i < 1999; i++) nn_loss_scaler_update(&s, 0);
    nn_loss_scaler_update(&s, 1);
    cr_expect_eq(s.scale, 65536.0f);
    for (int i = 0; i < 1999; i++) nn_loss_scaler_update(&s, 0);
    cr_expect_eq(s.scale, 65536.0f, "the interval counts clean steps in a row");
    nn_loss_scaler_update(&s, 0);
    cr_expect_eq(s.scale, 131072.0f);
    cr_expect_eq(s.skipped, 1);
}

Test(scaler, growth_stays_finite) {
    nn_loss_scaler s;
    nn_loss_scaler_init(&s);
    s.scale = 0x1p127f;
    s.interval = 1;
    nn_loss_scaler_update(&s, 0);
    cr_expect_eq(s.scale, 0x1p127f, "2^128 is inf: the scale stays");
}

Test(scaler, element_flags_inf_and_nan) {
    float x = 3.0f;
    cr_expect_eq(nn_scale_elem(&x, 0.5f), 0);
    cr_expect_eq(x, 1.5f);
    x = FLT_MAX;
    cr_expect_eq(nn_scale_elem(&x, 2.0f), 1, "overflow to inf");
    x = NAN;
    cr_expect_eq(nn_scale_elem(&x, 0x1p-16f), 1, "NaN");
    x = -INFINITY;
    cr_expect_eq(nn_scale_elem(&x, 0x1p-16f), 1, "-inf");
    x = 0x1p-100f;
    cr_expect_eq(nn_scale_elem(&x, 0x1p16f), 0);
    cr_expect_eq(x, 0x1p-84f, "exact");
}

Test(scaler, on_for_fp16_only_unless_asked) {
    nn_backend be = {0};
    nn_train_opts o = {0};
    const char *prec[] = {NULL, "fp32", "tf32", "bf16", "fp16"};
    for (int i = 0; i < 5; i++) {
        be.opts.precision = prec[i];
        o.loss_scaling = 0;
        cr_expect_eq(nn_train_loss_scaling(&be, &o), i == 4, "precision %s", prec[i] ? prec[i] : "(none)");
        o.loss_scaling = 1;
        cr_expect_eq(nn_train_loss_scaling(&be, &o), 1);
        o.loss_scaling = -1;
        cr_expect_eq(nn_train_loss_scaling(&be, &o), 0);
    }
}

/* ---- training steps with and without the scaler ------------------------------------------------------ */

static void spec_tmp(char *dir, const char *name, const char *json) {
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    tu_write_str(path, json);
}
static void spec_tmp_done(const char *dir, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    remove(path);
    rmdir(dir);
}

/* conv (no bias) + batch norm + relu + dropout + max pooling + dense, softmax cross-entropy, Adam */
static const char *const k_conv_spec =
    "{\"schema\": \"showdown-workload/1\", \"name\": \"scaled_conv\", \"title\": \"loss scaling, conv\",\n"
    " \"data\": {\"dataset\": \"synthetic\", \"shape\": [3, 9, 8], \"classes\": 5, \"train\": 64, \"test\": 16},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
    "   {\"op\": \"conv2d\", \"filters\": 6, \"kernel\": 3, \"padding\": 1, \"bias\": false}, {\"op\": \"batchnorm\"},\n"
    "   {\"op\": \"relu\"}, {\"op\": \"dropout\", \"rate\": 0.3},\n"
    "   {\"op\": \"conv2d\", \"filters\": 7, \"kernel\": 3, \"stride\": 2}, {\"op\": \"relu\"},\n"
    "   {\"op\": \"maxpool\", \"size\": 2}, {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 12},\n"
    "   {\"op\": \"relu\"}, {\"op\": \"dense\", \"units\": 5}],\n"
    "  \"loss\": \"softmax_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"adam\", \"lr\": 0.01}, \"batch\": 6, \"epochs\": 1}}\n";

/* embedding + GRU + LSTM + dense, sigmoid binary cross-entropy (the other loss), SGD with momentum */
static const char *const k_rnn_spec =
    "{\"schema\": \"showdown-workload/1\", \"name\": \"scaled_rnn\", \"title\": \"loss scaling, recurrent\",\n"
    " \"data\": {\"dataset\": \"synthetic\", \"shape\": [7, 1, 1], \"classes\": 3, \"train\": 64, \"test\": 16},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
    "   {\"op\": \"embedding\", \"vocab\": 20, \"units\": 6},\n"
    "   {\"op\": \"gru\", \"units\": 5, \"return_sequences\": true}, {\"op\": \"lstm\", \"units\": 4},\n"
    "   {\"op\": \"dense\", \"units\": 3}],\n"
    "  \"loss\": \"sigmoid_binary_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.5, \"momentum\": 0.9}, \"batch\": 5, \"epochs\": 1}}\n";

static nn_backend *open_be(const char *name) {
    if (!nn_backend_compiled(name)) TU_SKIP("%s: not compiled into this build (%s)", name, nn_backend_list());
    nn_backend_opts o = {.threads = 2, .autotune = 1, .precision = "fp32", .quiet = 1};
    nn_backend *be = NULL;
    cr_assert_eq(nn_backend_new(&be, name, &o, NULL, 0), 0, "%s: %s", name, sd_errmsg());
    return be;
}

static float *host_copy(nn_backend *be, const float *dev, size_t n) {
    float *h = malloc(sizeof(float) * (n ? n : 1));
    cr_assert_not_null(h);
    cr_assert_eq(be->ops->sync(be), 0, "%s", sd_errmsg());
    cr_assert_eq(be->ops->download(be, h, dev, sizeof(float) * n), 0, "%s", sd_errmsg());
    return h;
}

/* The batch of step k: pixels in [0,1) or token ids in [0, vocab); labels in [0, classes). */
static void batch_of(const sd_workload *w, int k, int vocab, float *x, int32_t *y) {
    uint64_t r = 0x5eed0000ULL + (uint64_t)k;
    const size_t per = (size_t)w->in_c * w->in_h * w->in_w;
    for (size_t i = 0; i < per * (size_t)w->batch; i++) {
        r = nn_hash64(r);
        x[i] = vocab ? (float)(r % (uint64_t)vocab) : (float)(r >> 40) * (1.0f / 16777216.0f);
    }
    for (int b = 0; b < w->batch; b++) y[b] = (int32_t)(nn_hash64(r + (uint64_t)b) % (uint64_t)w->classes);
}

typedef struct state { float *params, *opt, *stats; long step; } state;

static state state_of(nn_model *m) {
    state s = {host_copy(m->be, m->params, m->nparams), host_copy(m->be, m->state, m->nstate),
               m->nstats ? host_copy(m->be, m->stats, m->nstats) : NULL, m->step};
    return s;
}
static void state_free(state *s) { free(s->params); free(s->opt); free(s->stats); }

static void expect_same(const nn_model *m, const state *a, const state *b, const char *what) {
    cr_expect_eq(a->step, b->step, "%s: step %ld vs %ld", what, a->step, b->step);
    size_t diff = 0;
    for (size_t i = 0; i < m->nparams; i++) diff += memcmp(&a->params[i], &b->params[i], sizeof(float)) != 0;
    cr_expect_eq(diff, 0, "%s: %zu of %zu parameters differ", what, diff, m->nparams);
    diff = 0;
    for (size_t i = 0; i < m->nstate; i++) diff += memcmp(&a->opt[i], &b->opt[i], sizeof(float)) != 0;
    cr_expect_eq(diff, 0, "%s: %zu of %zu optimizer state floats differ", what, diff, m->nstate);
    if (m->nstats) cr_expect(memcmp(a->stats, b->stats, sizeof(float) * m->nstats) == 0, "%s: statistics differ", what);
}

/* The backward pass really ran scaled: every layer's output gradient (the logits' one included) in the scaled
 * model is exactly s times the unscaled model's. */
static void expect_gradients_scaled(nn_model *plain, nn_model *scaled, float s) {
    int checked = 0;
    for (int i = 0; i < plain->nlayers - 1; i++) {
        const nn_layer *l = &plain->layers[i];
        if (!l->dy || !scaled->layers[i].dy || !plain->written[i]) continue;   /* not written in this pass */
        const size_t n = (size_t)l->op.n * l->op.oc * l->op.oh * l->op.ow;
        float *a = malloc(sizeof(float) * n), *b = malloc(sizeof(float) * n);
        cr_assert(a && b);
        cr_assert_eq(plain->be->ops->sync(plain->be), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_model_download_y(plain, i, 1, a), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_model_download_y(scaled, i, 1, b), 0, "%s", sd_errmsg());
        size_t diff = 0, nonzero = 0;
        for (size_t k = 0; k < n; k++) {
            diff += b[k] != a[k] * s;
            nonzero += a[k] != 0.0f;
        }
        cr_expect_eq(diff, 0, "layer %s: %zu of %zu output gradients are not %g times the unscaled ones", l->name,
                     diff, n, (double)s);
        checked += nonzero > 0;
        free(a);
        free(b);
    }
    cr_expect_gt(checked, 1, "no layer's output gradient was checked");
}

/* Three training steps of spec on be, unscaled and with the scaler (default scale 65536): identical state after
 * each; then a step with NaN gradients: the scaled model skips it (state unchanged, scale halved, gradients
 * cleared). */
static void scaled_equals_unscaled(const char *be_name, const char *name, const char *spec, int vocab) {
    nn_backend *be = open_be(be_name);
    char dir[] = "/tmp/sd_loss_scale_XXXXXX";
    spec_tmp(dir, name, spec);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, name), 0, "%s", sd_errmsg());
    nn_model *plain = NULL, *scaled = NULL;
    setenv("SD_NO_BUFFER_REUSE", "1", 1);   /* every layer's gradient is read after the pass */
    cr_assert_eq(nn_model_build(&plain, &w, be, w.batch, 42), 0, "%s", sd_errmsg());
    cr_assert_eq(nn_model_build(&scaled, &w, be, w.batch, 42), 0, "%s", sd_errmsg());
    unsetenv("SD_NO_BUFFER_REUSE");
    const size_t nx = (size_t)w.batch * w.in_c * w.in_h * w.in_w;
    float *x = malloc(sizeof(float) * nx);
    int32_t *y = malloc(sizeof(int32_t) * (size_t)w.batch);
    cr_assert(x && y);
    nn_loss_scaler sc;
    nn_loss_scaler_init(&sc);
    for (int k = 0; k < 3; k++) {
        batch_of(&w, k, vocab, x, y);
        int stepped = -1;
        cr_assert_eq(nn_train_upload_batch(plain, x, y), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_train_step(plain, NULL, 1000 + (uint64_t)k, &stepped), 0, "%s", sd_errmsg());
        cr_expect_eq(stepped, 1);
        cr_assert_eq(nn_train_upload_batch(scaled, x, y), 0, "%s", sd_errmsg());
        cr_assert_eq(nn_train_step(scaled, &sc, 1000 + (uint64_t)k, &stepped), 0, "%s", sd_errmsg());
        cr_expect_eq(stepped, 1, "%s %s step %d: skipped at scale %g", be_name, name, k, (double)sc.scale);
        cr_assert_eq(be->ops, plain->be->ops, "the back-end's table is back after the backward pass");
        if (k == 0) expect_gradients_scaled(plain, scaled, sc.scale);
        state a = state_of(plain), b = state_of(scaled);
        char what[96];
        snprintf(what, sizeof what, "%s %s after step %d", be_name, name, k + 1);
        expect_same(plain, &a, &b, what);
        printf("%s %s step %d: scaled (x%g) and unscaled identical over %zu parameters\n", be_name, name, k + 1,
               (double)sc.scale, plain->nparams);
        state_free(&a);
        state_free(&b);
    }
    cr_expect_eq(sc.scale, 65536.0f);
    cr_expect_eq(sc.skipped, 0);
    /* NaN gradients: a NaN in the last dense layer's weights makes the logits, the loss and every gradient NaN
     * (not in the input: a NaN fed to dnnl's host GRU/LSTM trips UBSan in its exp, be_dnnl/dnnl_rnn.c) */
    batch_of(&w, 3, vocab, x, y);
    const nn_layer *top = NULL;
    for (int i = 0; i < scaled->nlayers; i++) if (scaled->layers[i].op.kind == NN_OP_DENSE) top = &scaled->layers[i];
    cr_assert_not_null(top);
    const float nanv = NAN;
    cr_assert_eq(be->ops->upload(be, scaled->params + top->w_off, &nanv, sizeof nanv), 0, "%s", sd_errmsg());
    state before = state_of(scaled);
    int stepped = -1;
    cr_assert_eq(nn_train_upload_batch(scaled, x, y), 0, "%s", sd_errmsg());
    cr_assert_eq(nn_train_step(scaled, &sc, 2000, &stepped), 0, "%s", sd_errmsg());
    cr_expect_eq(stepped, 0, "%s %s: a NaN gradient must skip the step", be_name, name);
    cr_expect_eq(sc.scale, 32768.0f);
    cr_expect_eq(sc.skipped, 1);
    state after = state_of(scaled);
    char what[96];
    snprintf(what, sizeof what, "%s %s: the skipped step", be_name, name);
    /* the statistics move in the forward pass (batch norm's running mean takes the NaN), not by the step */
    for (size_t i = 0; i < scaled->nparams; i++)
        if (memcmp(&before.params[i], &after.params[i], sizeof(float)) != 0) {
            cr_expect_fail("%s: parameter %zu changed", what, i);
            break;
        }
    cr_expect(memcmp(before.opt, after.opt, sizeof(float) * scaled->nstate) == 0, "%s: optimizer state changed", what);
    cr_expect_eq(before.step, after.step, "%s: step count moved", what);
    float *g = host_copy(be, scaled->grads, scaled->nparams);
    size_t nz = 0;
    for (size_t i = 0; i < scaled->nparams; i++) nz += g[i] != 0.0f;
    cr_expect_eq(nz, 0, "%s: %zu gradients not cleared", what, nz);
    free(g);
    state_free(&before);
    state_free(&after);
    printf("%s %s: NaN gradients skipped the step, scale now %g\n", be_name, name, (double)sc.scale);
    free(x);
    free(y);
    nn_model_free(plain);
    nn_model_free(scaled);
    sd_workload_free(&w);
    spec_tmp_done(dir, name);
    nn_backend_free(be);
}

Test(scaled_step, ref_conv, .timeout = 300) { scaled_equals_unscaled("ref", "scaled_conv", k_conv_spec, 0); }
Test(scaled_step, ref_rnn, .timeout = 300) { scaled_equals_unscaled("ref", "scaled_rnn", k_rnn_spec, 20); }
Test(scaled_step, dnnl_conv, .timeout = 300) { scaled_equals_unscaled("dnnl", "scaled_conv", k_conv_spec, 0); }
Test(scaled_step, dnnl_rnn, .timeout = 300) { scaled_equals_unscaled("dnnl", "scaled_rnn", k_rnn_spec, 20); }

/* nn_train end to end: the scaler forced on gives the same epochs (loss, accuracy) as off, and says so in the
 * result (final scale, nothing skipped); off, the result carries no scale. */
Test(scaled_train, ref_epochs_identical, .timeout = 300) {
    nn_backend *be = open_be("ref");
    char dir[] = "/tmp/sd_loss_scale_XXXXXX";
    spec_tmp(dir, "scaled_conv", k_conv_spec);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, "scaled_conv"), 0, "%s", sd_errmsg());
    sd_dataset tr, te;
    cr_assert_eq(sd_data_synthetic(&tr, 60, w.in_c, w.in_h, w.in_w, w.classes, 3, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic(&te, 18, w.in_c, w.in_h, w.in_w, w.classes, 3, 1), 0, "%s", sd_errmsg());
    nn_train_result r[2];
    for (int v = 0; v < 2; v++) {
        nn_train_opts o = {.epochs = 2, .batch = w.batch, .seed = 9, .shuffle = 1, .loss_scaling = v ? 1 : -1};
        cr_assert_eq(nn_train(&w, be, &tr, &te, &o, &r[v]), 0, "%s", sd_errmsg());
    }
    for (int e = 0; e < 2; e++) {
        printf("ref scaled_conv epoch %d: loss %.9g / %.9g (unscaled / scaled), accuracy %.4f / %.4f\n", e + 1,
               r[0].epochs[e].loss, r[1].epochs[e].loss, r[0].epochs[e].accuracy, r[1].epochs[e].accuracy);
        cr_expect_eq(r[0].epochs[e].loss, r[1].epochs[e].loss, "epoch %d training loss", e + 1);
        cr_expect_eq(r[0].epochs[e].val_loss, r[1].epochs[e].val_loss, "epoch %d validation loss", e + 1);
        cr_expect_eq(r[0].epochs[e].accuracy, r[1].epochs[e].accuracy, "epoch %d accuracy", e + 1);
    }
    cr_expect_eq(r[0].loss_scale, 0.0f);
    cr_expect_eq(r[1].loss_scale, 65536.0f);
    cr_expect_eq(r[1].skipped_steps, 0);
    nn_train_result_free(&r[0]);
    nn_train_result_free(&r[1]);
    sd_dataset_free(&tr);
    sd_dataset_free(&te);
    sd_workload_free(&w);
    spec_tmp_done(dir, "scaled_conv");
    nn_backend_free(be);
}
