/* test_export — nn/export.h: the .npy encoding (header padded to 64 bytes, dtype and shape spelled as NumPy
 * reads them, data after the header), and nn_export_weights on a small dense workload: the index, every
 * parameter file, and logits equal to a forward pass recomputed here from the exported weights and input. */
#include "core/err.h"
#include "core/fsutil.h"
#include "nn/export.h"
#include "testutil.h"

#include <jansson.h>
#include <math.h>

Test(export, npy_header) {
    float v[6] = {1, 2, 3, 4, 5, 6};
    int shape[2] = {2, 3};
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(nn_npy_encode(v, 0, shape, 2, &buf, &len), 0);
    cr_assert_eq(memcmp(buf, "\x93NUMPY\x01\x00", 8), 0);
    size_t hlen = (unsigned char)buf[8] | ((size_t)(unsigned char)buf[9] << 8);
    cr_assert_eq((10 + hlen) % 64, 0, "header not aligned: %zu", 10 + hlen);
    cr_assert_eq(buf[10 + hlen - 1], '\n');
    cr_assert_not_null(strstr(buf + 10, "'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    cr_assert_eq(len, 10 + hlen + sizeof v);
    cr_assert_eq(memcmp(buf + 10 + hlen, v, sizeof v), 0);
    free(buf);
    int32_t l[3] = {7, 8, 9};
    int s1[1] = {3};
    cr_assert_eq(nn_npy_encode(l, 1, s1, 1, &buf, &len), 0);
    cr_assert_not_null(strstr(buf + 10, "'descr': '<i4', 'fortran_order': False, 'shape': (3,), }"));
    free(buf);
}

static float *npy_data(const char *dir, const char *file, size_t *n) {
    char path[4096], *raw = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cr_assert_eq(sd_read_file(path, 1 << 26, &raw, &len), 0, "cannot read %s", path);
    size_t hlen = (unsigned char)raw[8] | ((size_t)(unsigned char)raw[9] << 8);
    *n = (len - 10 - hlen) / 4;
    float *out = malloc(*n * sizeof(float));
    memcpy(out, raw + 10 + hlen, *n * sizeof(float));
    free(raw);
    return out;
}

Test(export, dense_model_files_and_logits) {
    char dir[512], spec[600], out[700];
    tu_tmpdir(dir, sizeof dir);
    snprintf(spec, sizeof spec, "%s/tiny.json", dir);
    tu_write_str(spec, "{\"schema\": \"showdown-workload/1\", \"name\": \"tiny\", \"data\": {\"dataset\": \"synthetic\","
                       " \"shape\": [1, 2, 3], \"classes\": 3, \"train\": 16, \"test\": 16}, \"model\": {\"layers\": ["
                       "{\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 4}, {\"op\": \"relu\"},"
                       " {\"op\": \"dropout\", \"rate\": 0.5}, {\"op\": \"dense\", \"units\": 3}],"
                       " \"loss\": \"softmax_cross_entropy\"}, \"training\": {\"optimizer\": {\"name\": \"sgd\","
                       " \"lr\": 0.1}, \"batch\": 4, \"epochs\": 1}}");
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, spec), 0, "%s", sd_errmsg());
    sd_dataset d = {0};
    cr_assert_eq(sd_data_synthetic(&d, 16, 1, 2, 3, 3, 7, 1), 0);
    nn_backend *be = NULL;
    nn_backend_opts bo = {.threads = 1, .quiet = 1};
    cr_assert_eq(nn_backend_new(&be, "ref", &bo, NULL, 0), 0);
    snprintf(out, sizeof out, "%s/w", dir);
    cr_assert_eq(nn_export_weights(&w, be, &d, 5, 42, out), 0, "%s", sd_errmsg());

    char ip[800];
    snprintf(ip, sizeof ip, "%s/index.json", out);
    json_error_t je;
    json_t *idx = json_load_file(ip, 0, &je);
    cr_assert_not_null(idx, "%s", je.text);
    cr_assert_str_eq(json_string_value(json_object_get(idx, "schema")), "showdown-weights/1");
    cr_assert_eq(json_integer_value(json_object_get(idx, "parameters")), 6 * 4 + 4 + 4 * 3 + 3);
    json_t *ps = json_object_get(idx, "params");
    cr_assert_eq(json_array_size(ps), 4);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(ps, 0), "layer")), 1);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(ps, 1), "role")), "bias");

    size_t n0, n1, n2, n3, nx, nz;
    float *W1 = npy_data(out, "params_0.npy", &n0), *b1 = npy_data(out, "params_1.npy", &n1);
    float *W2 = npy_data(out, "params_2.npy", &n2), *b2 = npy_data(out, "params_3.npy", &n3);
    float *x = npy_data(out, "input.npy", &nx), *z = npy_data(out, "logits.npy", &nz);
    cr_assert(n0 == 24 && n1 == 4 && n2 == 12 && n3 == 3 && nx == 5 * 6 && nz == 5 * 3);
    cr_assert_eq(memcmp(x, d.x, nx * sizeof(float)), 0, "input is not the first examples of the data");
    for (int e = 0; e < 5; e++) {
        float h[4];
        for (int o = 0; o < 4; o++) {
            double s = b1[o];
            for (int i = 0; i < 6; i++) s += (double)W1[o * 6 + i] * x[e * 6 + i];
            h[o] = s > 0 ? (float)s : 0.0f;   /* relu; dropout is the identity at inference */
        }
        for (int o = 0; o < 3; o++) {
            double s = b2[o];
            for (int i = 0; i < 4; i++) s += (double)W2[o * 4 + i] * h[i];
            cr_assert(fabs(s - z[e * 3 + o]) <= 1e-5 * (1 + fabs(s)), "logit %d,%d: %g vs %g", e, o, s, z[e * 3 + o]);
        }
    }
    free(W1); free(b1); free(W2); free(b2); free(x); free(z);
    json_decref(idx);
    nn_backend_free(be);
    sd_dataset_free(&d);
    sd_workload_free(&w);
}

/* A token model: the exported logits are those of the exported ids (they reach the embedding through its ids
 * buffer, as in training), and the embedding table, whose size is no multiple of its units' count in rows here,
 * is written whole. */
Test(export, token_model_reads_the_exported_ids) {
    char dir[512], spec[600], out[700];
    tu_tmpdir(dir, sizeof dir);
    snprintf(spec, sizeof spec, "%s/tok.json", dir);
    tu_write_str(spec, "{\"schema\": \"showdown-workload/1\", \"name\": \"tok\", \"data\": {\"dataset\": \"imdb\","
                       " \"shape\": [5, 1, 1], \"classes\": 2, \"train\": 16, \"test\": 16}, \"model\": {\"layers\": ["
                       "{\"op\": \"embedding\", \"vocab\": 11, \"units\": 3, \"range\": [1, 4]}, {\"op\": \"flatten\"},"
                       " {\"op\": \"dense\", \"units\": 2}], \"loss\": \"softmax_cross_entropy\"},"
                       " \"training\": {\"optimizer\": {\"name\": \"sgd\", \"lr\": 0.1}, \"batch\": 4,"
                       " \"epochs\": 1}}");
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, spec), 0, "%s", sd_errmsg());
    sd_dataset d = {0};
    cr_assert_eq(sd_data_synthetic_tokens(&d, 16, 5, 11, 2, 7, 1), 0, "%s", sd_errmsg());
    nn_backend *be = NULL;
    nn_backend_opts bo = {.threads = 1, .quiet = 1};
    cr_assert_eq(nn_backend_new(&be, "ref", &bo, NULL, 0), 0);
    snprintf(out, sizeof out, "%s/w", dir);
    cr_assert_eq(nn_export_weights(&w, be, &d, 4, 42, out), 0, "%s", sd_errmsg());
    size_t ne, nw, nb, nx, nz;
    float *E = npy_data(out, "params_0.npy", &ne), *W = npy_data(out, "params_1.npy", &nw);
    float *b = npy_data(out, "params_2.npy", &nb);
    float *x = npy_data(out, "input.npy", &nx), *z = npy_data(out, "logits.npy", &nz);
    cr_assert(ne == 11 * 3 && nw == 2 * 9 && nb == 2 && nx == 4 * 5 && nz == 4 * 2, "%zu %zu %zu %zu %zu", ne, nw, nb,
              nx, nz);
    int differ = 0;
    for (int e = 0; e < 4; e++) {
        for (int o = 0; o < 2; o++) {
            double s = b[o];
            for (int t = 0; t < 3; t++)
                for (int u = 0; u < 3; u++) s += (double)W[o * 9 + t * 3 + u] * E[(int)x[e * 5 + 1 + t] * 3 + u];
            cr_assert(fabs(s - z[e * 2 + o]) <= 1e-5 * (1 + fabs(s)), "logit %d,%d: %g vs %g", e, o, s, z[e * 2 + o]);
        }
        differ |= z[e * 2] != z[0] || z[e * 2 + 1] != z[1];
    }
    cr_assert(differ, "every example has the same logits");
    free(E); free(W); free(b); free(x); free(z);
    nn_backend_free(be);
    sd_dataset_free(&d);
    sd_workload_free(&w);
}

/* An inference workload (no loss, no labels buffer): the export's "logits" are the model's output features. */
Test(export, inference_model_exports_its_features) {
    char dir[512], spec[600], out[700];
    tu_tmpdir(dir, sizeof dir);
    snprintf(spec, sizeof spec, "%s/feat.json", dir);
    tu_write_str(spec, "{\"schema\": \"showdown-workload/2\", \"name\": \"feat\","
                       " \"data\": {\"dataset\": \"synthetic\", \"shape\": [1, 2, 3]},"
                       " \"model\": {\"layers\": [{\"op\": \"flatten\"}, {\"op\": \"dense\", \"units\": 4}],"
                       " \"loss\": \"none\"},"
                       " \"inference\": {\"batch\": 2, \"images\": 8, \"warmup\": 1}}");
    sd_workload w;
    cr_assert_eq(sd_workload_load(&w, dir, spec), 0, "%s", sd_errmsg());
    sd_dataset d = {0};
    cr_assert_eq(sd_data_synthetic(&d, 8, 1, 2, 3, 1, 7, 1), 0);
    nn_backend *be = NULL;
    nn_backend_opts bo = {.threads = 1, .quiet = 1};
    cr_assert_eq(nn_backend_new(&be, "ref", &bo, NULL, 0), 0);
    snprintf(out, sizeof out, "%s/w", dir);
    cr_assert_eq(nn_export_weights(&w, be, &d, 2, 42, out), 0, "%s", sd_errmsg());
    size_t nw, nb, nx, nz;
    float *W = npy_data(out, "params_0.npy", &nw), *b = npy_data(out, "params_1.npy", &nb);
    float *x = npy_data(out, "input.npy", &nx), *z = npy_data(out, "logits.npy", &nz);
    cr_assert(nw == 24 && nb == 4 && nx == 2 * 6 && nz == 2 * 4, "%zu %zu %zu %zu", nw, nb, nx, nz);
    for (int e = 0; e < 2; e++)
        for (int o = 0; o < 4; o++) {
            double s = b[o];
            for (int i = 0; i < 6; i++) s += (double)W[o * 6 + i] * x[e * 6 + i];
            cr_assert(fabs(s - z[e * 4 + o]) <= 1e-5 * (1 + fabs(s)), "feature %d,%d: %g vs %g", e, o, s, z[e * 4 + o]);
        }
    free(W); free(b); free(x); free(z);
    nn_backend_free(be);
    sd_dataset_free(&d);
    sd_workload_free(&w);
}
