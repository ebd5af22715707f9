/* cu_dl — the loader behind the generated stubs: one dlopen per library, under a lock, remembered
 * with its error; see cu_dl.h. */
#include "be_cudnn/cu_dl.h"
#include "core/err.h"

#include <cudnn.h>
#include <cublas_v2.h>
#if SD_HAVE_NCCL
#include <nccl.h>
#endif

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define CU_STR_(x) #x
#define CU_STR(x) CU_STR_(x)

cu_lib cu_lib_cudnn = {.soname = "libcudnn.so." CU_STR(CUDNN_MAJOR)};
cu_lib cu_lib_cublas = {.soname = "libcublas.so." CU_STR(CUBLAS_VER_MAJOR)};
#if SD_HAVE_NCCL
cu_lib cu_lib_nccl = {.soname = "libnccl.so." CU_STR(NCCL_MAJOR)};
#else
cu_lib cu_lib_nccl = {.soname = "libnccl.so.2"};
#endif
const char cu_dl_unloaded_text[] = "library not loaded";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *open_lib(cu_lib *lib) {
    void *h = atomic_load_explicit(&lib->handle, memory_order_acquire);
    if (h) return h;
    pthread_mutex_lock(&lock);
    h = atomic_load_explicit(&lib->handle, memory_order_relaxed);
    if (!h && !lib->failed) {
        /* RTLD_LOCAL: the libraries' symbols must not replace our stubs of the same names */
        h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
        if (h) atomic_store_explicit(&lib->handle, h, memory_order_release);
        else {
            const char *e = dlerror();
            snprintf(lib->err, sizeof lib->err, "%s", e ? e : lib->soname);
            lib->failed = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return h;
}

void *cu_dl_sym(cu_lib *lib, const char *name) {
    void *h = open_lib(lib);
    if (!h) return NULL;
    void *p = dlsym(h, name);
    if (!p) {
        pthread_mutex_lock(&lock);
        const char *e = dlerror();
        snprintf(lib->err, sizeof lib->err, "%s: %s", lib->soname, e ? e : name);
        pthread_mutex_unlock(&lock);
    }
    return p;
}

int cu_dl_require(cu_lib *lib) {
    if (open_lib(lib)) return 0;
    return sd_err(SD_EBACKEND, "cannot load %s: %s\nHINT: install it (CUDA %d, cuDNN %d) or put its directory in "
                  "LD_LIBRARY_PATH", lib->soname, lib->err, CUDART_VERSION / 1000, CUDNN_MAJOR);
}

int cu_dl_require_all(cu_lib *lib, const char *const *names) {
    SD_TRY(cu_dl_require(lib));
    for (; *names; names++)
        if (!cu_dl_sym(lib, *names))
            return sd_err(SD_EBACKEND, "%s has no %s (%s): it is older than the headers this binary was built "
                          "with\nHINT: install the cuDNN %d / CUDA %d libraries it was built against", lib->soname,
                          *names, lib->err, CUDNN_MAJOR, CUDART_VERSION / 1000);
    return 0;
}

int cu_dl_loaded(const cu_lib *lib) {
    return atomic_load_explicit(&((cu_lib *)lib)->handle, memory_order_acquire) != NULL;
}
