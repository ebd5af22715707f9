/* cudnn_load — what stands between a GPU and a running cuDNN back-end, each failure named by its cause: no
 * device, or a driver older than the CUDA runtime (both versions printed); a cuDNN whose sub-libraries do not
 * load (their version checks run when the back-end starts, not mid-run); and the library versions `showdown
 * env` prints. The checks take their inputs as arguments, so tests/test_cudnn.c runs them with stand-ins. */
#include "be_cudnn/cudnn_be.h"
#include "be_cudnn/cu_dl.h"

#include <stdio.h>
#include <stdlib.h>

#define CU_STR_(x) #x
#define CU_STR(x) CU_STR_(x)

void cu_version3(char *buf, size_t len, int v, int major_div, int minor_div) {
    snprintf(buf, len, "%d.%d.%d", v / major_div, (v % major_div) / minor_div, v % minor_div);
}

/* ---- no device, or a driver too old ----------------------------------------------------------------- */

const char *cu_count_phrase(cudaError_t e) {
    switch (e) {
    case cudaErrorInsufficientDriver: return "insufficient driver";
    case cudaErrorNoDevice: return "no device";
    case cudaErrorInitializationError: return "initialization error";
    default: return cudaGetErrorName(e);
    }
}

int cu_min_driver(int cuda_major) {
    switch (cuda_major) {   /* NVIDIA's CUDA toolkit / driver table, Linux */
    case 13: return 580;
    case 12: return 525;
    case 11: return 450;
    default: return 0;
    }
}

/* cudaGetDeviceCount says 35 both with no driver and with one too old for the runtime: the driver's own
 * CUDA version (cudaDriverGetVersion, 0 with none) tells the two apart. */
static int insufficient_driver(int driver) {
    const int rt = CUDART_VERSION, need = cu_min_driver(rt / 1000);
    char need_s[64] = "";
    if (need) snprintf(need_s, sizeof need_s, " (CUDA %d needs a driver %d or newer)", rt / 1000, need);
    if (driver <= 0)
        return sd_err(SD_ENODEV, "no CUDA device: cudaGetDeviceCount returned insufficient driver (35): no NVIDIA "
                      "driver is loaded (cudaDriverGetVersion reports none); this binary's CUDA %d.%d runtime "
                      "needs one%s", rt / 1000, (rt % 1000) / 10, need_s);
    return sd_err(SD_ENODEV, "no CUDA device: cudaGetDeviceCount returned insufficient driver (35): the NVIDIA "
                  "driver supports CUDA %d.%d, this binary's runtime is CUDA %d.%d%s\nHINT: update the NVIDIA "
                  "driver (nvidia-smi shows its version), or build with the CUDA toolkit the driver supports",
                  driver / 1000, (driver % 1000) / 10, rt / 1000, (rt % 1000) / 10, need_s);
}

int cu_device_count_status(cudaError_t e, int count, int driver) {
    if (e == cudaErrorInsufficientDriver) return insufficient_driver(driver);
    if (e != cudaSuccess)
        return sd_err(SD_ENODEV, "no CUDA device: cudaGetDeviceCount returned %s (%d): %s", cu_count_phrase(e),
                      (int)e, cudaGetErrorString(e));
    if (count <= 0)
        return sd_err(SD_ENODEV, "no CUDA device: cudaGetDeviceCount found %d devices (CUDA_VISIBLE_DEVICES=%s)",
                      count, getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset");
    return 0;
}

/* ---- cuDNN's sub-libraries ------------------------------------------------------------------------------ */

const cu_sublib cu_cudnn_sublibs[CU_NSUBLIBS] = {
    {"libcudnn_graph.so." CU_STR(CUDNN_MAJOR), cudnnGraphVersionCheck},
    {"libcudnn_ops.so." CU_STR(CUDNN_MAJOR), cudnnOpsVersionCheck},
    {"libcudnn_cnn.so." CU_STR(CUDNN_MAJOR), cudnnCnnVersionCheck},
    {"libcudnn_adv.so." CU_STR(CUDNN_MAJOR), cudnnAdvVersionCheck},
};

int cu_check_sublibs(const cu_sublib *libs, int n) {
    for (int i = 0; i < n; i++) {
        cudnnStatus_t st = libs[i].check();
        if (st != CUDNN_STATUS_SUCCESS)
            return sd_err(SD_EBACKEND, "cuDNN: %s does not load or does not match libcudnn.so.%d: %s (%d)\n"
                          "HINT: reinstall cuDNN %d.%d with all its libraries of one version, or put their directory "
                          "in LD_LIBRARY_PATH", libs[i].lib, CUDNN_MAJOR, cudnnGetErrorString(st), (int)st,
                          CUDNN_MAJOR, CUDNN_MINOR);
    }
    return 0;
}

/* ---- versions for `showdown env` ------------------------------------------------------------------------ */

void nn_cudnn_libraries(nn_env_fn add, void *user) {
    char buf[512];
    int v = 0;
    if (cudaRuntimeGetVersion(&v) == cudaSuccess) {
        snprintf(buf, sizeof buf, "%d.%d", v / 1000, (v % 1000) / 10);
        add(user, "lib.cuda_runtime", buf);
    }
    v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess) {
        if (v) snprintf(buf, sizeof buf, "%d.%d", v / 1000, (v % 1000) / 10);
        else snprintf(buf, sizeof buf, "none (no NVIDIA driver)");
        add(user, "lib.cuda_driver", buf);
    }
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) count = 0;
    if (count == 0) {
        /* no device: cuDNN and cuBLAS stay unloaded (a CPU run must not map them); the versions built against */
        snprintf(buf, sizeof buf, "%d.%d.%d (built against; not loaded: no CUDA device)", CUDNN_MAJOR, CUDNN_MINOR,
                 CUDNN_PATCHLEVEL);
        add(user, "lib.cudnn", buf);
        snprintf(buf, sizeof buf, "%d.%d.%d (built against; not loaded: no CUDA device)", CUBLAS_VER_MAJOR,
                 CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
        add(user, "lib.cublas", buf);
    } else {
        if (cu_dl_require(&cu_lib_cudnn) == 0) cu_version3(buf, sizeof buf, (int)cudnnGetVersion(), 10000, 100);
        else snprintf(buf, sizeof buf, "not loadable: %s", cu_lib_cudnn.err);
        add(user, "lib.cudnn", buf);
        int ma = 0, mi = 0, pa = 0;
        if (cu_dl_require(&cu_lib_cublas) == 0 && cublasGetProperty(MAJOR_VERSION, &ma) == CUBLAS_STATUS_SUCCESS &&
            cublasGetProperty(MINOR_VERSION, &mi) == CUBLAS_STATUS_SUCCESS &&
            cublasGetProperty(PATCH_LEVEL, &pa) == CUBLAS_STATUS_SUCCESS)
            snprintf(buf, sizeof buf, "%d.%d.%d", ma, mi, pa);
        else snprintf(buf, sizeof buf, "not loadable: %s", cu_lib_cublas.err);
        add(user, "lib.cublas", buf);
    }
    snprintf(buf, sizeof buf, "%d", count);
    add(user, "gpu_count", buf);
    if (e != cudaSuccess) {
        snprintf(buf, sizeof buf, "no CUDA device: %s", cudaGetErrorString(e));
        add(user, "gpu_note", buf);
        return;
    }
    struct cudaDeviceProp p;
    if (count > 0 && cudaGetDeviceProperties(&p, 0) == cudaSuccess) {
        add(user, "gpu_name", p.name);
        snprintf(buf, sizeof buf, "%zu", p.totalGlobalMem);
        add(user, "gpu_memory_bytes", buf);
    }
}
