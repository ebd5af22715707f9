/* fuzz_http — what a server sends (src/http/http.c, http_api.c). The first byte picks: 0 a Link header
 * (rel="next"), 1 a numeric header (Retry-After, X-RateLimit-*), 2 a GitHub repository answer, 3 a GitHub
 * search answer (total_count), 4 a StackExchange answer (items[0].count), 5 the HTTP cache file as read
 * back by http_client_new. A first byte of 250 or more picks GitHub statistics instead (even: commit_activity,
 * odd: contributors), keeping the meaning of the older regression inputs. */
#include "fuzz.h"
#include "http/http.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char *s = fuzz_cstr(data + 1, size - 1);
    size_t n = size - 1;
    if (data[0] >= 250) {
        http_response r = {0};
        r.body = s;
        r.len = n;
        r.status = 200;
        http_stats st = {0};
        if (data[0] % 2 == 0) fuzz_check_err(http_commit_activity_from(&r, 1736035200, &st));
        else fuzz_check_err(http_contributors_from(&r, 1736035200, &st));
        if (st.weeks_active_13 < 0 || st.weeks_active_13 > 1000000 || st.bus_factor_365 < 0) abort();
        free(s);
        return 0;
    }
    switch (data[0] % 6) {
    case 0: {
        char next[2048];
        http_link_next(s, next, sizeof next);
        if (strlen(next) >= sizeof next) abort();
        char small[8];
        http_link_next(s, small, sizeof small);
        break;
    }
    case 1: {
        double v;
        http_header_num(s, &v);
        break;
    }
    case 2: case 3: case 4: {
        http_response r = {0};
        r.body = s;
        r.len = n;
        r.status = 200;
        snprintf(r.fetched, sizeof r.fetched, "2026-01-01T00:00:00Z");
        if (data[0] % 6 == 2) {
            http_repo_meta m;
            fuzz_check_err(http_repo_meta_from(&r, "http://127.0.0.1/repos/o/n", &m));
        } else {
            http_value v;
            fuzz_check_err(http_count_from(&r, data[0] % 6 == 4, &v));
        }
        break;
    }
    default: {
        static char path[64];
        if (!path[0]) snprintf(path, sizeof path, "/tmp/showdown-fuzz-http-%ld.json", (long)getpid());
        FILE *f = fopen(path, "wb");
        if (!f) abort();
        fwrite(s, 1, n, f);
        fclose(f);
        http_opts o = {0};
        o.cache_path = path;
        http_client *c = NULL;
        int rc = http_client_new(&c, &o);
        fuzz_check_err(rc);
        http_client_free(c);
        unlink(path);
        break;
    }
    }
    free(s);
    return 0;
}
