/* test_spec — workload specs: the shipped workloads parse to the published parameter counts, and bad
 * specs fail with "FILE:LINE:COL: what was expected". */
#include "testutil.h"

#include "core/err.h"
#include "nn/model.h"

static size_t count_params(const char *name, int *layers) {
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", name), 0, "%s", sd_errmsg());
    nn_layer *ls = NULL;
    size_t np = 0;
    int L = nn_model_plan(&w, w.batch, &ls, &np);
    cr_assert_gt(L, 0, "%s", sd_errmsg());
    if (layers) *layers = L;
    cr_assert_eq((long long)np, w.expected_params, "%s: %zu parameters, spec expects %lld", name, np, w.expected_params);
    free(ls);
    sd_workload_free(&w);
    return np;
}

Test(spec, shipped_workloads_parameter_counts) {
    cr_assert_eq(count_params("mnist_mlp", NULL), 669706);
    cr_assert_eq(count_params("mnist_cnn", NULL), 1199882);
    int L;
    cr_assert_eq(count_params("cifar10_vgg", &L), 3441592);
    cr_assert_eq(L, 18);   /* 17 layers + the loss */
}

Test(spec, cifar10_vgg_shapes_and_flops) {
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "cifar10_vgg"), 0, "%s", sd_errmsg());
    nn_layer *ls = NULL;
    size_t np = 0;
    int L = nn_model_plan(&w, 64, &ls, &np);
    cr_assert_eq(L, 18);
    /* conv1 3->50 on 32x32: 2*3*9*50*1024 FLOPs */
    cr_assert_eq(ls[0].op.oc, 50); cr_assert_eq(ls[0].op.oh, 32);
    cr_assert_float_eq(ls[0].flops, 2.0 * 3 * 9 * 50 * 1024, 1);
    cr_assert_eq(ls[3].op.kind, NN_OP_MAXPOOL); cr_assert_eq(ls[3].op.oh, 16);
    cr_assert_eq(ls[12].op.kind, NN_OP_FLATTEN); cr_assert_eq(ls[12].op.oc, 6400);
    cr_assert_eq(ls[13].op.oc, 512); cr_assert_eq(ls[13].op.c, 6400);
    cr_assert_eq(ls[17].op.kind, NN_OP_SOFTMAX_XENT);
    cr_assert_eq(w.optim.kind, NN_OPTIM_SGD);
    cr_assert_float_eq(w.optim.momentum, 0.9f, 1e-7);
    cr_assert_eq(w.batch, 64); cr_assert_eq(w.epochs, 10);
    free(ls);
    sd_workload_free(&w);
}

/* A training step's FLOPs skip the data gradient only where it would flow into the model input: mnist_mlp's
 * first dense layer reads the input through a flatten (a view), so its backward is 1x forward, not 2x. */
Test(spec, training_flops_skip_dx_of_the_input_through_views) {
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "mnist_mlp"), 0, "%s", sd_errmsg());
    nn_layer *ls = NULL;
    size_t np = 0;
    int L = nn_model_plan(&w, 128, &ls, &np);
    cr_assert_eq(ls[0].op.kind, NN_OP_FLATTEN);
    cr_assert_eq(ls[1].op.kind, NN_OP_DENSE);
    cr_assert_eq(nn_layer_has_dx(ls, 1), 0, "dense_1 reads the input through a flatten");
    double fwd, train, want = 0, dense = 0;
    for (int i = 0; i < L; i++) {
        want += 2 * ls[i].flops;
        if (ls[i].op.kind == NN_OP_DENSE) {
            dense++;
            cr_assert_eq(nn_layer_has_dx(ls, i), i != 1, "layer %d", i);
            if (i != 1) want += ls[i].flops;
        }
    }
    cr_assert_eq(dense, 3);
    nn_model_flops(ls, L, &fwd, &train);
    cr_assert_float_eq(train, want, 1e-6 * want, "train FLOPs %.0f, want %.0f", train, want);
    /* counting dense_1's data gradient too would add its forward FLOPs, 2*784*512 an example */
    cr_assert_lt(train, 2 * fwd + (fwd - ls[1].flops) + 0.01 * ls[1].flops);
    free(ls);
    sd_workload_free(&w);
}

/* Write text to DIR/bad.json, load it, and expect the error message "DIR/bad.json:" + rest. */
static void expect_error(const char *text, int code, const char *rest) {
    char dir[256], path[512], want[1024];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    tu_write_str(path, text);
    sd_workload w;
    int rc = sd_workload_load(&w, dir, path);
    snprintf(want, sizeof want, "%s:%s", path, rest);
    cr_assert_eq(rc, code, "rc %d, message: %s", rc, sd_errmsg());
    cr_assert_str_eq(sd_errmsg(), want);
    unlink(path);
    rmdir(dir);
}

#define HEAD "{\n  \"schema\": \"showdown-workload/1\",\n  \"name\": \"t\",\n" \
             "  \"data\": {\"dataset\": \"mnist\", \"shape\": [1, 28, 28], \"classes\": 10, \"train\": 100, \"test\": 100},\n"
#define MODEL "  \"model\": {\"layers\": [{\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 10}], \"loss\": \"softmax_cross_entropy\"},\n"
#define TRAIN "  \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1}, \"batch\": 10, \"epochs\": 1}\n}\n"

Test(spec, valid_minimal) {
    char dir[256], path[512];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ok.json", dir);
    tu_write_str(path, HEAD MODEL TRAIN);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, path), 0, "%s", sd_errmsg());
    cr_assert_eq(w.nlayers, 2);
    sd_workload_free(&w);
}

Test(spec, unknown_key) {
    expect_error(HEAD MODEL
                 "  \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lrate\": 0.1}, \"batch\": 10, \"epochs\": 1}\n}\n",
                 SD_EINPUT, "6:45: unknown key 'lrate' in sgd optimizer (expected one of: name, lr, momentum)");
}

Test(spec, wrong_type) {
    expect_error(HEAD MODEL
                 "  \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1}, \"batch\": \"64\", \"epochs\": 1}\n}\n",
                 SD_EINPUT, "6:66: expected an integer for 'batch' in training (got string)");
}

Test(spec, out_of_range) {
    expect_error(HEAD
                 "  \"model\": {\"layers\": [{\"op\": \"flatten\"}, {\"op\": \"dropout\", \"rate\": 1.5}, {\"op\": \"dense\", \"units\": 10}], \"loss\": \"softmax_cross_entropy\"},\n"
                 TRAIN,
                 SD_EINPUT, "5:69: value 1.5 of 'rate' in dropout layer out of range [0, 1]");
}

Test(spec, unknown_layer_op) {
    expect_error(HEAD
                 "  \"model\": {\"layers\": [{\"op\": \"flatten\"}, {\"op\": \"dense2\", \"units\": 10}], \"loss\": \"softmax_cross_entropy\"},\n"
                 TRAIN,
                 SD_EINPUT, "5:50: unknown layer op 'dense2' (expected one of: dense, conv2d, maxpool, relu, "
                 "dropout, flatten, batchnorm, avgpool, global_avgpool, embedding, gru, lstm, repeat_vector; or "
                 "{\"block\": NAME})");
}

/* The op table (nn/op.c) has a row for every kind: distinct names, the primitives each needs (none for the
 * flatten view), and a spec name for exactly the ops a spec writes as layers (not the joins, not the losses). */
Test(spec, op_table_has_a_row_per_kind) {
    for (int k = 0; k < NN_OP_COUNT; k++) {
        const nn_op_info *in = nn_op_info_of((nn_op_kind)k);
        cr_assert_str_neq(in->name, "?", "op %d has no row in the op table", k);
        for (int j = 0; j < k; j++) cr_assert_str_neq(in->name, nn_op_name((nn_op_kind)j), "op %d", k);
        cr_assert_eq(in->fwd == 0, k == NN_OP_FLATTEN, "%s", in->name);
        cr_assert_eq(in->bwd == 0, k == NN_OP_FLATTEN, "%s", in->name);
        cr_assert_eq(sd_spec_op_name((nn_op_kind)k) == NULL, (in->flags & (NN_OPF_JOIN | NN_OPF_LOSS)) != 0, "%s",
                     in->name);
    }
    cr_assert_str_eq(nn_op_name(NN_OP_COUNT), "?");
    cr_assert_str_eq(sd_spec_op_name(NN_OP_REPEAT), "repeat_vector");
    cr_assert_str_eq(nn_op_name(NN_OP_REPEAT), "repeat");
}

Test(spec, missing_key) {
    expect_error(HEAD
                 "  \"model\": {\"layers\": [{\"op\": \"flatten\"}, {\"op\": \"dense\"}], \"loss\": \"softmax_cross_entropy\"},\n"
                 TRAIN,
                 SD_EINPUT, "5:43: missing key 'units' in dense layer");
}

Test(spec, syntax_error) {
    expect_error("{\n  \"schema\": \"showdown-workload/1\",\n  \"name\": \"t\"\n  \"data\": 1\n}\n", SD_EINPUT,
                 "4:3: expected ',' or '}' (got '\"')");
}

/* Shape errors are found by the planner, still positioned at the layer in the file. */
static void expect_plan_error(const char *text, const char *rest) {
    char dir[256], path[512], want[1024];
    tu_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/f.json", dir);
    tu_write_str(path, text);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, path), 0, "%s", sd_errmsg());
    nn_layer *ls = NULL;
    size_t np;
    cr_assert_eq(nn_model_plan(&w, 10, &ls, &np), SD_EINPUT);
    snprintf(want, sizeof want, "%s:%s", path, rest);
    cr_assert_str_eq(sd_errmsg(), want);
    sd_workload_free(&w);
    unlink(path);
    rmdir(dir);
}

Test(spec, last_layer_must_match_classes) {
    expect_plan_error(HEAD
                      "  \"model\": {\"layers\": [{\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 7}], \"loss\": \"softmax_cross_entropy\"},\n"
                      TRAIN, "5:43: the last layer must output one value per class (10); this dense outputs 7");
}

Test(spec, dense_needs_flatten) {
    expect_plan_error(HEAD "  \"model\": {\"layers\": [{\"op\": \"dense\", \"units\": 10}], \"loss\": \"softmax_cross_entropy\"},\n" TRAIN,
                      "5:24: dense layer after a 1x28x28 feature map needs a flatten layer first");
}

Test(spec, kernel_larger_than_input) {
    expect_plan_error(HEAD "  \"model\": {\"layers\": [{\"op\": \"conv2d\", \"filters\": 4, \"kernel\": 29}, {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 10}], \"loss\": \"softmax_cross_entropy\"},\n" TRAIN,
                      "5:24: conv2d kernel 29x29 is larger than the padded input 28x28");
}

Test(spec, unknown_workload_name) {
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "no_such_workload"), SD_EUSAGE);
    cr_assert_str_eq(sd_errmsg(), "no workload 'no_such_workload' (no file workloads/no_such_workload.json)");
    cr_assert_eq(sd_workload_load(&w, "workloads", "Mnist-MLP"), SD_EUSAGE);
    cr_assert_str_eq(sd_errmsg(), "workload name 'Mnist-MLP' may hold only a-z, 0-9 and _ (or give a path to a .json file)");
}

/* ---- version 2: blocks, parameters, repeats, connections ---------------------------------- */

Test(spec, graph_workloads_parameter_counts) {
    cr_assert_eq(count_params("resnet50_features", NULL), 23508032);
    cr_assert_eq(count_params("densenet121_xray", NULL), 6968206);
    cr_assert_eq(count_params("resnet18_cifar", NULL), 11173962);
    cr_assert_eq(count_params("vgg16_cifar", NULL), 14728266);
}

Test(spec, resnet50_expands_to_a_dag) {
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, "workloads", "resnet50_features"), 0, "%s", sd_errmsg());
    cr_assert_eq(w.mode, SD_MODE_INFERENCE);
    cr_assert_eq(w.loss, NN_LOSS_NONE);
    cr_assert_eq(w.batch, 32); cr_assert_eq(w.infer_images, 1280); cr_assert_eq(w.warmup_passes, 1);
    nn_layer *ls = NULL;
    size_t np = 0;
    int L = nn_model_plan(&w, 2, &ls, &np);
    int adds = 0, bns = 0, convs = 0;
    for (int i = 0; i < L; i++) {
        adds += ls[i].op.kind == NN_OP_ADD;
        bns += ls[i].op.kind == NN_OP_BATCHNORM;
        convs += ls[i].op.kind == NN_OP_CONV2D;
        if (ls[i].op.kind == NN_OP_ADD) cr_assert_eq(ls[i].ninputs, 2);
    }
    cr_assert_eq(adds, 16);            /* 3 + 4 + 6 + 3 bottlenecks */
    cr_assert_eq(convs, 53);           /* stem + 16 x 3 + 4 projections */
    cr_assert_eq(bns, 53);
    cr_assert_eq(ls[L - 1].op.oc, 2048);   /* no loss layer: the features */
    cr_assert_gt(nn_model_nstats(ls, L), 0);   /* running mean and variance, outside the parameters */
    free(ls);
    sd_workload_free(&w);
}

#define HEAD2 "{\n  \"schema\": \"showdown-workload/2\",\n  \"name\": \"t\",\n" \
              "  \"data\": {\"dataset\": \"synthetic\", \"shape\": [2, 8, 8], \"classes\": 3, \"train\": 100, \"test\": 100},\n"

static void load_text(const char *text, sd_workload *w, char *dir, char *path) {
    tu_tmpdir(dir, 256);
    snprintf(path, 512, "%s/g.json", dir);
    tu_write_str(path, text);
    cr_assert_eq(sd_workload_load(w, dir, path), 0, "%s", sd_errmsg());
}

Test(spec, blocks_repeat_residual_and_concat) {
    char dir[256], path[512];
    sd_workload w;
    load_text(HEAD2
              "  \"model\": {\"blocks\": {\n"
              "    \"res\": {\"params\": {\"f\": 4, \"s\": 1}, \"connection\": \"residual\",\n"
              "            \"layers\": [{\"op\": \"conv2d\", \"filters\": \"$f\", \"kernel\": 3, \"stride\": \"$s\", \"padding\": 1}, {\"op\": \"batchnorm\"}],\n"
              "            \"projection\": [{\"op\": \"conv2d\", \"filters\": \"$f\", \"kernel\": 1, \"stride\": \"$s\"}],\n"
              "            \"after\": [{\"op\": \"relu\"}]},\n"
              "    \"dense\": {\"connection\": \"concat\", \"layers\": [{\"op\": \"conv2d\", \"filters\": 2, \"kernel\": 1}]},\n"
              "    \"stage\": {\"params\": {\"f\": 6}, \"layers\": [{\"block\": \"res\", \"f\": \"$f\", \"s\": 2, \"project\": true}, {\"block\": \"dense\", \"repeat\": 3}]}},\n"
              "   \"layers\": [{\"block\": \"res\", \"f\": 2, \"repeat\": 2}, {\"block\": \"stage\"}, {\"op\": \"global_avgpool\"},\n"
              "              {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 3}], \"loss\": \"sigmoid_binary_cross_entropy\"},\n"
              TRAIN, &w, dir, path);
    /* res x2: (conv, bn, add, relu) x2 = 8; stage: res with projection = 5, dense x3 = 6; then 3 */
    cr_assert_eq(w.nlayers, 8 + 5 + 6 + 3, "%d layers", w.nlayers);
    cr_assert_eq(w.loss, NN_LOSS_SIGMOID_BCE);
    cr_assert_eq(w.layers[2].kind, NN_OP_ADD);
    cr_assert_eq(w.layers[2].inputs[0], 1); cr_assert_eq(w.layers[2].inputs[1], -1);   /* the model input */
    cr_assert_eq(w.layers[10].kind, NN_OP_CONV2D); cr_assert_eq(w.layers[10].inputs[0], 7);   /* projection of the stage input */
    cr_assert_eq(w.layers[10].sh, 2); cr_assert_eq(w.layers[10].units, 6);
    cr_assert_eq(w.layers[11].kind, NN_OP_ADD);
    cr_assert_eq(w.layers[14].kind, NN_OP_CONCAT);
    cr_assert_eq(w.layers[14].inputs[0], 12); cr_assert_eq(w.layers[14].inputs[1], 13);
    nn_layer *ls = NULL;
    size_t np = 0;
    int L = nn_model_plan(&w, 4, &ls, &np);
    cr_assert_gt(L, 0, "%s", sd_errmsg());
    cr_assert_eq(ls[18].op.oc, 6 + 3 * 2);   /* three concats of 2 channels onto 6 */
    cr_assert_eq(ls[18].op.oh, 4);
    cr_assert_eq(ls[L - 1].op.kind, NN_OP_SIGMOID_BCE);
    free(ls);
    sd_workload_free(&w);
    unlink(path);
    rmdir(dir);
}

#define BLK(b, l) HEAD2 "  \"model\": {\"blocks\": {" b "},\n   \"layers\": [" l "], \"loss\": \"softmax_cross_entropy\"},\n" TRAIN

Test(spec, block_errors) {
    expect_error(BLK("\"b\": {\"layers\": [{\"op\": \"relu\"}]}", "{\"block\": \"c\"}"), SD_EINPUT,
                 "6:25: unknown block 'c' (define it under model.blocks)");
    expect_error(BLK("\"b\": {\"layers\": [{\"op\": \"conv2d\", \"filters\": \"$g\", \"kernel\": 1}]}", "{\"block\": \"b\"}"),
                 SD_EINPUT, "5:69: unknown parameter '$g' in conv2d layer (not a parameter of the enclosing block)");
    expect_error(BLK("\"b\": {\"params\": {\"f\": 2}, \"layers\": [{\"op\": \"relu\"}]}", "{\"block\": \"b\", \"g\": 3}"), SD_EINPUT,
                 "6:30: unknown key 'g' in use of block 'b' (expected one of: block, repeat, project, f)");
    expect_error(BLK("\"b\": {\"layers\": [{\"block\": \"b\"}]}", "{\"block\": \"b\"}"), SD_EINPUT,
                 "5:41: blocks nest deeper than 8 (does block 'b' use itself?)");
    expect_error(BLK("\"b\": {\"layers\": [{\"op\": \"relu\"}], \"connection\": \"sum\"}", "{\"block\": \"b\"}"), SD_EINPUT,
                 "5:72: unknown connection 'sum' (expected residual, concat or none)");
    expect_error(BLK("\"b\": {\"layers\": [{\"op\": \"relu\"}], \"connection\": \"residual\"}", "{\"block\": \"b\", \"project\": true}"),
                 SD_EINPUT, "6:41: block 'b' has no 'projection' layers to project with");
    expect_error(BLK("\"b\": {\"params\": {\"f\": 0}, \"layers\": [{\"op\": \"conv2d\", \"filters\": \"$f\", \"kernel\": 1}]}", "{\"block\": \"b\"}"),
                 SD_EINPUT, "5:89: value 0 of 'filters' (from $f) in conv2d layer out of range [1, 65536]");
}

Test(spec, expansion_is_bounded) {
    /* 10 x 10 x 10 x 10 relus: more than SD_SPEC_MAX_LAYERS, stopped with a clear error */
    expect_error(BLK("\"a\": {\"layers\": [{\"op\": \"relu\", \"repeat\": 10}]}, \"b\": {\"layers\": [{\"block\": \"a\", \"repeat\": 10}]},"
                     " \"c\": {\"layers\": [{\"block\": \"b\", \"repeat\": 10}]}",
                     "{\"block\": \"c\", \"repeat\": 10}"),
                 SD_EINPUT, "5:41: too many layers after expanding blocks and repeats (at most 4096)");
}

Test(spec, residual_shape_mismatch_names_the_fix) {
    char dir[256], path[512];
    sd_workload w;
    load_text(BLK("\"r\": {\"connection\": \"residual\", \"layers\": [{\"op\": \"conv2d\", \"filters\": 5, \"kernel\": 1}]}",
                  "{\"block\": \"r\"}, {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 3}"), &w, dir, path);
    nn_layer *ls = NULL;
    size_t np;
    cr_assert_eq(nn_model_plan(&w, 2, &ls, &np), SD_EINPUT);
    char want[1024];
    snprintf(want, sizeof want, "%s:6:15: add of a 5x8x8 and a 2x8x8 tensor: shapes differ (a residual block whose "
             "shape changes needs \"project\": true)", path);
    cr_assert_str_eq(sd_errmsg(), want);
    sd_workload_free(&w);
    unlink(path);
    rmdir(dir);
}
