/* env — the environment fingerprint every result carries: CPU (model, flags, cores), memory, OS, kernel,
 * compiler, the versions of the libraries this binary links (oneDNN, CUDA, cuDNN, cuBLAS from the
 * back-ends that were built) and the GPUs. Keys only grow; existing ones keep their meaning. */
#include "bench/results.h"
#include "core/omp_policy.h"
#include "nn/backend.h"

#include <cairo.h>
#include <curl/curl.h>
#include <git2.h>
#include <omp.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

static void read_field(const char *path, const char *key, char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[8192];
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) != 0) continue;
        char *v = line + kl;
        while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=' || *v == '"') v++;
        size_t l = strlen(v);
        while (l && (v[l - 1] == '\n' || v[l - 1] == '"' || v[l - 1] == ' ')) v[--l] = 0;
        snprintf(out, n, "%s", v);
        break;
    }
    fclose(f);
}

/* "lib.X" keys from the back-ends go to libraries.X; the others (gpu_*) to the gpu object. */
static void lib_add(void *user, const char *k, const char *v) {
    json_t **pair = user;
    if (strncmp(k, "lib.", 4) == 0) json_object_set_new(pair[0], k + 4, json_string(v));
    else {
        const char *key = strncmp(k, "gpu_", 4) == 0 ? k + 4 : k;
        char *end = NULL;
        long long n = strtoll(v, &end, 10);
        json_object_set_new(pair[1], key, end && end != v && *end == 0 ? json_integer(n) : json_string(v));
    }
}

json_t *sd_env_fingerprint(void) {
    json_t *e = json_object();
    char buf[8192];
    read_field("/proc/cpuinfo", "model name", buf, sizeof buf);
    json_object_set_new(e, "cpu_model", json_string(buf[0] ? buf : "unknown"));
    read_field("/proc/cpuinfo", "flags", buf, sizeof buf);
    const char *interesting[] = {"avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16", "fma", NULL};
    char flags[256] = "";
    for (int i = 0; interesting[i]; i++) {
        char pat[32];
        snprintf(pat, sizeof pat, " %s ", interesting[i]);
        char padded[8200];
        snprintf(padded, sizeof padded, " %s ", buf);
        if (strstr(padded, pat)) {
            if (flags[0]) strncat(flags, ",", sizeof flags - strlen(flags) - 1);
            strncat(flags, interesting[i], sizeof flags - strlen(flags) - 1);
        }
    }
    json_object_set_new(e, "cpu_flags", json_string(flags));
    json_object_set_new(e, "cpu_flags_all", json_string(buf));
    char cc[64];
    read_field("/proc/cpuinfo", "cpu cores", cc, sizeof cc);
    char *end = NULL;
    long phys = cc[0] ? strtol(cc, &end, 10) : 0;
    if (phys > 0 && end && *end == 0) json_object_set_new(e, "cpu_cores_per_socket", json_integer(phys));
    json_object_set_new(e, "cores", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    json_object_set_new(e, "memory_bytes", json_integer((json_int_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE)));
    read_field("/etc/os-release", "PRETTY_NAME", buf, sizeof buf);
    json_object_set_new(e, "os", json_string(buf[0] ? buf : "unknown"));
    if (gethostname(buf, sizeof buf - 1) == 0) {   /* which node of a cluster ran the cell */
        buf[sizeof buf - 1] = 0;
        json_object_set_new(e, "hostname", json_string(buf));
    }
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        json_object_set_new(e, "kernel", json_string(buf));
    }
#ifdef __VERSION__
    snprintf(buf, sizeof buf, "gcc-compatible %s", __VERSION__);
    json_object_set_new(e, "compiler", json_string(buf));
#endif
    json_object_set_new(e, "omp_wait_policy", json_string(sd_omp_policy_note()));   /* core/omp_policy.h */
    json_t *lib = json_object();
    json_object_set_new(lib, "libcurl", json_string(curl_version_info(CURLVERSION_NOW)->version));
    int ma, mi, rv;
    git_libgit2_version(&ma, &mi, &rv);
    snprintf(buf, sizeof buf, "%d.%d.%d", ma, mi, rv);
    json_object_set_new(lib, "libgit2", json_string(buf));
    json_object_set_new(lib, "cairo", json_string(cairo_version_string()));
    json_object_set_new(lib, "jansson", json_string(JANSSON_VERSION));
    json_object_set_new(lib, "sqlite", json_string(sqlite3_libversion()));
    json_object_set_new(lib, "zlib", json_string(zlibVersion()));
    snprintf(buf, sizeof buf, "%d", _OPENMP);
    json_object_set_new(lib, "openmp", json_string(buf));
    json_t *gpu = json_object();
    json_t *pair[2] = {lib, gpu};
    nn_backend_libraries(lib_add, pair);
    json_object_set_new(e, "libraries", lib);
    if (json_object_size(gpu) == 0) json_object_set_new(gpu, "note", json_string("no GPU back-end built"));
    json_object_set_new(e, "gpu", gpu);
    return e;
}
