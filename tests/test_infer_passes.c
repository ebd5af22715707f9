/* test_infer_passes — the timed inference figure is the fastest of several passes (nn/train.h NN_INFER_*): the
 * rule that decides whether one more pass is timed, and nn_train on the reference back-end recording
 * how many passes they timed (a tiny model's pass takes microseconds: the cap of passes ends it). */
#include "testutil.h"
#include "nn/backend_impl.h"
#include "nn/train.h"
#include "nn/spec.h"
#include "data/data.h"
#include "core/err.h"

Test(infer_passes, the_rule) {
    cr_expect(nn_infer_more(1, 0.01, 0.01), "under a second timed: another pass");
    cr_expect(nn_infer_more(3, 0.2, 0.6), "three passes, but under a second: another");
    cr_expect(!nn_infer_more(5, 0.2, 1.0), "a second timed and three passes done: enough");
    cr_expect(nn_infer_more(1, 1.2, 1.2), "three passes of 1.2 s fit in 5 s: a second one");
    cr_expect(!nn_infer_more(3, 1.2, 3.6), "three passes of 1.2 s: enough");
    cr_expect(!nn_infer_more(1, 2.0, 2.0), "three passes of 2 s do not fit in 5 s: one is the figure");
    cr_expect(!nn_infer_more(NN_INFER_MAX_PASSES, 1e-6, 1e-4), "the cap of passes");
}

static const char *const k_spec =
    "{\"schema\": \"showdown-workload/1\", \"name\": \"infer_passes\", \"title\": \"inference passes\",\n"
    " \"data\": {\"dataset\": \"synthetic\", \"shape\": [1, 4, 4], \"classes\": 3, \"train\": 32, \"test\": 16},\n"
    " \"model\": {\"init\": {\"weights\": \"glorot_uniform\", \"bias\": \"zeros\"}, \"layers\": [\n"
    "   {\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 8}, {\"op\": \"relu\"}, {\"op\": \"dense\", \"units\": 3}],\n"
    "  \"loss\": \"softmax_cross_entropy\"},\n"
    " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1}, \"batch\": 4, \"epochs\": 1}}\n";

Test(infer_passes, train_records_the_fastest_of_its_passes) {
    char dir[] = "/tmp/sd_infer_passes_XXXXXX", path[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/infer_passes.json", dir);
    tu_write_str(path, k_spec);
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, "infer_passes"), 0, "%s", sd_errmsg());
    nn_backend_opts bo = {.threads = 1, .precision = "fp32", .quiet = 1};
    nn_backend *be = NULL;
    cr_assert_eq(nn_backend_new(&be, "ref", &bo, NULL, 0), 0, "%s", sd_errmsg());
    sd_dataset tr, te;
    cr_assert_eq(sd_data_synthetic(&tr, 32, 1, 4, 4, 3, 3, 0), 0, "%s", sd_errmsg());
    cr_assert_eq(sd_data_synthetic(&te, 16, 1, 4, 4, 3, 3, 1), 0, "%s", sd_errmsg());
    nn_train_opts o = {.epochs = 1, .batch = 4, .seed = 9};
    nn_train_result r;
    cr_assert_eq(nn_train(&w, be, &tr, &te, &o, &r), 0, "%s", sd_errmsg());
    printf("infer_passes: %d passes, the fastest %.3g s for %ld images\n", r.infer_passes, r.infer_s, r.infer_images);
    cr_expect_eq(r.infer_passes, NN_INFER_MAX_PASSES, "a pass of microseconds: passes until the cap");
    cr_expect_eq(r.infer_images, 16);
    cr_expect(r.infer_s > 0 && r.infer_s < 0.1, "the fastest pass: %g s", r.infer_s);
    nn_train_result_free(&r);
    sd_dataset_free(&tr);
    sd_dataset_free(&te);
    sd_workload_free(&w);
    remove(path);
    rmdir(dir);
    nn_backend_free(be);
}
