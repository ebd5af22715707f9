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
                 "dropout, flatten, batchnorm, avgpool, global_avgpool; or {\"block\": NAME})");
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
