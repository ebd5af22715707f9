/* dp_nonccl — builds without NCCL (no CUDA, or no nccl.h under CU): the NCCL reduction says why it is
 * missing. nccl/nccl.c replaces these when NCCL is compiled in. */
#include "nn/dp.h"
#include "core/err.h"

#if !SD_HAVE_NCCL
int nn_nccl_compiled(void) { return 0; }

int nn_reducer_nccl_new(nn_reducer **out, nn_backend *const *bes, int n) {
    (void)bes;
    *out = NULL;
    return sd_err(SD_EUNSUPPORTED, "%d-GPU data parallel needs NCCL, and this build has none (CUDA with nccl.h and "
                                   "libnccl under CU, then make config)", n);
}
#endif
