/* fuzz_tokens — the showdown-tokens/1 token-id file of the IMDB workloads (src/data/imdb.c), with the
 * Keras defaults plus a vocabulary cap and maxlen, as imdb_gru reads it. */
#include "fuzz.h"
#include "data/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sd_imdb_opts o;
    sd_imdb_opts_default(&o);
    o.num_words = 30000;
    o.maxlen = 150;
    sd_dataset d;
    int rc = sd_data_parse_tokens(&d, "train.tok", data, size, &o);
    if (rc == 0) {
        if (d.n < 1 || d.classes < 2 || d.classes > 256) abort();
        sd_dataset_free(&d);
    }
    fuzz_check_err(rc);
    return 0;
}
