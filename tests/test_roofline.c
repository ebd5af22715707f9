/* test_roofline — the roofline's counting against hand-computed values for a small spec written here: FLOPs and
 * minimum bytes of every layer in a training step and an inference pass, the optimizer's bytes, and the floor
 * Σ max(FLOPs/peak, bytes/bandwidth) with the Winograd rate where it applies. */
#include "testutil.h"

#include "core/err.h"
#include "nn/roofline.h"

#include <math.h>
#include <string.h>

/* 1x8x8 -> conv 16 3x3 valid (16x6x6) -> relu -> maxpool 2 (16x3x3) -> dropout 0.25 -> flatten (144) -> dense 10
 * -> softmax cross-entropy; SGD with momentum (one state float per parameter). */
static const char *SPEC =
    "{\"schema\": \"showdown-workload/1\", \"name\": \"tiny\", \"title\": \"t\", \"source\": \"s\",\n"
    " \"data\": {\"dataset\": \"synthetic\", \"shape\": [1, 8, 8], \"classes\": 10, \"train\": 64, \"test\": 16},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
    "   {\"op\": \"conv2d\", \"filters\": 16, \"kernel\": 3, \"padding\": \"valid\"},\n"
    "   {\"op\": \"relu\"}, {\"op\": \"maxpool\", \"size\": 2}, {\"op\": \"dropout\", \"rate\": 0.25},\n"
    "   {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 10}],\n"
    "  \"loss\": \"softmax_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1, \"momentum\": 0.9}, \"batch\": 4, \"epochs\": 1}}\n";

enum { N = 4 };

static int plan(sd_workload *w, nn_layer **ls, size_t *np) {
    cr_assert_eq(sd_workload_parse(w, "tiny.json", SPEC, strlen(SPEC)), 0, "%s", sd_errmsg());
    int L = nn_model_plan(w, N, ls, np);
    cr_assert_eq(L, 7, "%s", sd_errmsg());   /* 6 layers + the loss */
    return L;
}

/* expected per layer at batch 4: {fwd flops, fwd bytes, bwd flops, bwd bytes} of the training step */
static const double TRAIN[7][4] = {
    /* conv: 2*1*9*16*36 = 10368 FLOPs an example; x 64, y 576, weights 144+16; no dx (reads the model input) */
    {41472, 4 * (256 + 2304 + 160), 41472, 4 * (2304 + 256 + 160)},
    /* relu: 576 an example; backward reads dy and y, writes dx */
    {2304, 4 * (2304 + 2304), 2304, 4 * (2304 + 2304 + 2304)},
    /* maxpool 2x2: 16*9*4 = 576 an example; backward reads dy and x, writes dx */
    {2304, 4 * (2304 + 576), 2304, 4 * (576 + 2304 + 2304)},
    /* dropout: 144 an example; dy -> dx */
    {576, 4 * (576 + 576), 576, 4 * (576 + 576)},
    {0, 0, 0, 0},   /* flatten: a view */
    /* dense 144 -> 10: 2880 an example, weights 1440+10; backward 2x (dx and dW): dy, x, dW; W, dx */
    {11520, 4 * (576 + 40 + 1450), 23040, 4 * (40 + 576 + 1450 + 1450 + 576)},
    /* loss: 40 an example; logits and labels -> loss; backward -> dlogits */
    {160, 4 * (40 + 4 + 4), 160, 4 * (40 + 4 + 40)},
};

Test(roofline, layer_flops_and_bytes_of_a_training_step) {
    sd_workload w;
    nn_layer *ls;
    size_t np;
    int L = plan(&w, &ls, &np);
    for (int i = 0; i < L; i++) {
        nn_layer_cost c;
        nn_roofline_layer(ls, L, i, NN_PHASE_TRAIN, &c);
        cr_expect_float_eq(c.fwd.flops, TRAIN[i][0], 1e-9, "%s fwd flops %g", ls[i].name, c.fwd.flops);
        cr_expect_float_eq(c.fwd.bytes, TRAIN[i][1], 1e-9, "%s fwd bytes %g", ls[i].name, c.fwd.bytes);
        cr_expect_float_eq(c.bwd.flops, TRAIN[i][2], 1e-9, "%s bwd flops %g", ls[i].name, c.bwd.flops);
        cr_expect_float_eq(c.bwd.bytes, TRAIN[i][3], 1e-9, "%s bwd bytes %g", ls[i].name, c.bwd.bytes);
        cr_expect_eq(c.winograd, 0, "%s: a 1-channel convolution is not Winograd's", ls[i].name);
    }
    /* the optimizer: 1610 parameters; read p, g, v; write p, v; zero g */
    cr_assert_eq(np, 1610);
    nn_cost oc = nn_roofline_optim(np, w.optim.kind);
    cr_expect_float_eq(oc.bytes, 4.0 * 1610 * 5, 1e-9);
    cr_expect_float_eq(oc.flops, 0, 1e-9);
    /* the training FLOPs are the model's own count (nn_model_flops), per example x batch */
    double fwd, train;
    nn_model_flops(ls, L, &fwd, &train);
    nn_machine mc = {.peak = 1e6, .bandwidth = 1e6};
    nn_roofline r;
    nn_roofline_phase(ls, L, np, w.optim.kind, NN_PHASE_TRAIN, &mc, &r);
    cr_expect_float_eq(r.flops, train * N, 1e-6, "%g vs %g", r.flops, train * N);
    cr_expect_float_eq(r.flops, 128192, 1e-9);
    free(ls);
    sd_workload_free(&w);
}

Test(roofline, inference_runs_no_dropout_no_backward_no_optimizer) {
    sd_workload w;
    nn_layer *ls;
    size_t np;
    int L = plan(&w, &ls, &np);
    double flops = 0, bytes = 0;
    for (int i = 0; i < L; i++) {
        nn_layer_cost c;
        nn_roofline_layer(ls, L, i, NN_PHASE_INFER, &c);
        cr_expect_float_eq(c.bwd.flops + c.bwd.bytes, 0, 1e-12, "%s has a backward at inference", ls[i].name);
        double ef = i == 3 ? 0 : TRAIN[i][0], eb = i == 3 ? 0 : TRAIN[i][1];   /* dropout: identity */
        cr_expect_float_eq(c.fwd.flops, ef, 1e-9, "%s", ls[i].name);
        cr_expect_float_eq(c.fwd.bytes, eb, 1e-9, "%s", ls[i].name);
        flops += c.fwd.flops;
        bytes += c.fwd.bytes;
    }
    nn_machine mc = {.peak = 1e6, .bandwidth = 1e6};
    nn_roofline r;
    cr_assert_eq(nn_roofline_workload(&w, N, NN_PHASE_INFER, &mc, &r), 0, "%s", sd_errmsg());
    cr_expect_float_eq(r.flops, 57760, 1e-9);
    cr_expect_float_eq(r.bytes, 49288, 1e-9);
    cr_expect_float_eq(r.flops, flops, 1e-9);
    cr_expect_float_eq(r.bytes, bytes, 1e-9);
    /* floor: max per kernel — conv 41472, relu 18432, maxpool 11520, dense 11520, loss 192 (at 1 MFLOP/s, 1 MB/s) */
    cr_expect_float_eq(r.floor_s, (41472 + 18432 + 11520 + 11520 + 192) * 1e-6, 1e-12, "%.9f", r.floor_s);
    free(ls);
    sd_workload_free(&w);
}

/* Σ max(FLOPs/peak, bytes/bw) per kernel, not max(Σ FLOPs/peak, Σ bytes/bw): it lies between the two sides'
 * larger and their sum. */
Test(roofline, training_floor_is_the_sum_of_per_kernel_maxima) {
    sd_workload w;
    nn_layer *ls;
    size_t np;
    int L = plan(&w, &ls, &np);
    nn_machine mc = {.peak = 1e6, .bandwidth = 1e6};
    nn_roofline r;
    nn_roofline_phase(ls, L, np, w.optim.kind, NN_PHASE_TRAIN, &mc, &r);
    double fwd = 41472 + 18432 + 11520 + 4608 + 11520 + 192, bwd = 41472 + 27648 + 20736 + 4608 + 23040 + 336;
    double opt = 32200;
    cr_expect_float_eq(r.floor_s, (fwd + bwd + opt) * 1e-6, 1e-12, "%.9f", r.floor_s);
    cr_expect_float_eq(r.compute_s, 128192e-6, 1e-12);
    cr_expect_float_eq(r.bytes, 49288 + 4608 + 75968 + 4608 + 32200, 1e-9, "%g", r.bytes);
    cr_expect_float_eq(r.memory_s, r.bytes * 1e-6, 1e-12);
    cr_expect(r.floor_s >= fmax(r.compute_s, r.memory_s) && r.floor_s <= r.compute_s + r.memory_s);
    /* twice the bandwidth and the peak: half the floor */
    nn_machine m2 = {.peak = 2e6, .bandwidth = 2e6};
    nn_roofline r2;
    cr_assert_eq(nn_roofline_workload(&w, N, NN_PHASE_TRAIN, &m2, &r2), 0, "%s", sd_errmsg());
    cr_expect_float_eq(r2.floor_s, r.floor_s / 2, 1e-12);
    /* an unmeasured bandwidth leaves the compute side alone */
    nn_machine m3 = {.peak = 1e6, .bandwidth = NAN};
    nn_roofline_phase(ls, L, np, w.optim.kind, NN_PHASE_TRAIN, &m3, &r2);
    cr_expect_float_eq(r2.floor_s, r.compute_s, 1e-12);
    free(ls);
    sd_workload_free(&w);
}

Test(roofline, winograd_rate_where_it_applies_and_only_when_faster) {
    nn_op op = {.kind = NN_OP_CONV2D, .n = 1, .c = 16, .h = 8, .w = 8, .oc = 16, .oh = 8, .ow = 8, .kh = 3, .kw = 3,
                .sh = 1, .sw = 1, .ph = 1, .pw = 1};
    cr_expect(nn_roofline_winograd(&op));
    nn_op o2 = op; o2.c = 8;                         cr_expect(!nn_roofline_winograd(&o2));   /* few channels */
    o2 = op; o2.sh = o2.sw = 2; o2.oh = o2.ow = 4;   cr_expect(!nn_roofline_winograd(&o2));   /* stride 2 */
    o2 = op; o2.oh = o2.ow = 2;                      cr_expect(!nn_roofline_winograd(&o2));   /* under one tile */
    o2 = op; o2.kh = o2.kw = 1;                      cr_expect(!nn_roofline_winograd(&o2));   /* 1x1 */
    nn_cost c = {.flops = 1000, .bytes = 100};
    nn_machine mc = {.peak = 100, .wino_fwd = 400, .wino_bwd = 200, .bandwidth = 1000};
    double tc, tm;
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 1, 0, &tc, &tm), 2.5, 1e-12);
    cr_expect_float_eq(tm, 0.1, 1e-12);
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 1, 1, NULL, NULL), 5.0, 1e-12);
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 0, 0, NULL, NULL), 10.0, 1e-12);
    mc.wino_fwd = 50;   /* a Winograd slower than the sgemm ceiling does not raise the floor */
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 1, 0, NULL, NULL), 10.0, 1e-12);
    c.bytes = 50000;    /* memory-bound: the bandwidth decides */
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 1, 0, NULL, NULL), 50.0, 1e-12);
    /* bytes that fit the last-level cache move at the cache's rate; more than it, at memory's */
    mc.cache_bandwidth = 10000;
    mc.cache_bytes = 50000;
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 1, 0, NULL, NULL), 10.0, 1e-12);   /* compute 10 s vs 5 s */
    c.bytes = 50001;
    cr_expect_float_eq(nn_roofline_time(&c, &mc, 1, 0, NULL, NULL), 50.001, 1e-12);
}

Test(roofline, an_inference_workload_has_no_training_floor) {
    sd_workload w;
    nn_layer *ls;
    size_t np;
    plan(&w, &ls, &np);
    free(ls);
    w.mode = SD_MODE_INFERENCE;
    nn_machine mc = {.peak = 1e6, .bandwidth = 1e6};
    nn_roofline r;
    cr_expect_eq(nn_roofline_workload(&w, N, NN_PHASE_TRAIN, &mc, &r), SD_EINPUT);
    sd_workload_free(&w);
}

/* An LSTM reading the model input has no data gradient to compute, but its backward still carries the state's
 * gradient through W_h from each step to the one before: the weight gradients (1x forward) plus (T-1) 2GH^2 an
 * example; as the first layer after another, 2x forward. T 5, F 3, H 4, G 4. */
Test(roofline, recurrent_backward_counts_the_state_gradient) {
    static const char *spec =
        "{\"schema\": \"showdown-workload/1\", \"name\": \"rnn\", \"title\": \"t\", \"source\": \"s\",\n"
        " \"data\": {\"dataset\": \"synthetic\", \"shape\": [5, 1, 3], \"classes\": 4, \"train\": 64, \"test\": 16},\n"
        " \"model\": {\"layers\": [{\"op\": \"lstm\", \"units\": 4, \"return_sequences\": true},\n"
        "   {\"op\": \"lstm\", \"units\": 4}],\n"
        "  \"loss\": \"softmax_cross_entropy\"},\n"
        " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1}, \"batch\": 4, \"epochs\": 1}}\n";
    sd_workload w;
    cr_assert_eq(sd_workload_parse(&w, "rnn.json", spec, strlen(spec)), 0, "%s", sd_errmsg());
    nn_layer *ls;
    size_t np;
    const int L = nn_model_plan(&w, N, &ls, &np);
    cr_assert_eq(L, 3, "%s", sd_errmsg());
    const double fwd1 = 5 * (2.0 * 4 * 4 * (3 + 4) + 8.0 * 4 * 4), fwd2 = 5 * (2.0 * 4 * 4 * (4 + 4) + 8.0 * 4 * 4);
    nn_layer_cost c;
    nn_roofline_layer(ls, L, 0, NN_PHASE_TRAIN, &c);
    cr_expect_float_eq(c.fwd.flops, N * fwd1, 1e-9, "first lstm fwd flops %g", c.fwd.flops);
    cr_expect_float_eq(c.bwd.flops, N * (fwd1 + 4 * 2.0 * 4 * 4 * 4), 1e-9, "first lstm bwd flops %g", c.bwd.flops);
    nn_roofline_layer(ls, L, 1, NN_PHASE_TRAIN, &c);
    cr_expect_float_eq(c.bwd.flops, N * 2 * fwd2, 1e-9, "second lstm bwd flops %g", c.bwd.flops);
    double f, t;
    nn_model_flops(ls, L, &f, &t);
    cr_expect_float_eq(t, f + fwd1 + 4 * 2.0 * 4 * 4 * 4 + 2 * fwd2 + 4.0 * 4, 1e-9, "train flops %g", t);
    free(ls);
    sd_workload_free(&w);
}
