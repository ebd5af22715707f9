#!/usr/bin/env python3
"""gen-cu-dl — writes the lazy-loading stubs for cuDNN, cuBLAS and NCCL (src/be_cudnn/cu_dl_stubs.c,
src/nccl/nccl_dl_stubs.c) from the installed headers: one CU_DL_STUB line per name below, with the header's
exact prototype, that resolves the real function with dlsym on first call (src/be_cudnn/cu_dl.h).
Run it after using a new library function: python3 scripts/gen-cu-dl.py [CUDA_HOME]."""
import re
import subprocess
import sys

CU = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda"

CUDNN = """cudnnActivationBackward cudnnActivationForward cudnnAddTensor cudnnBatchNormalizationBackward
cudnnBatchNormalizationForwardInference cudnnBatchNormalizationForwardTraining cudnnConvolutionBackwardBias
cudnnConvolutionBackwardData cudnnConvolutionBackwardFilter cudnnConvolutionForward cudnnCreate
cudnnCreateActivationDescriptor cudnnCreateConvolutionDescriptor cudnnCreateDropoutDescriptor
cudnnCreateFilterDescriptor cudnnCreatePoolingDescriptor cudnnCreateRNNDataDescriptor cudnnCreateRNNDescriptor
cudnnCreateTensorDescriptor cudnnDeriveBNTensorDescriptor cudnnDestroy cudnnDestroyActivationDescriptor
cudnnDestroyConvolutionDescriptor cudnnDestroyDropoutDescriptor cudnnDestroyFilterDescriptor
cudnnDestroyPoolingDescriptor cudnnDestroyRNNDataDescriptor cudnnDestroyRNNDescriptor cudnnDestroyTensorDescriptor
cudnnAdvVersionCheck cudnnCnnVersionCheck cudnnFindConvolutionBackwardDataAlgorithmEx cudnnFindConvolutionBackwardFilterAlgorithmEx
cudnnFindConvolutionForwardAlgorithmEx cudnnGetConvolution2dForwardOutputDim
cudnnGetConvolutionBackwardDataAlgorithm_v7 cudnnGetConvolutionBackwardDataWorkspaceSize
cudnnGetConvolutionBackwardFilterAlgorithm_v7 cudnnGetConvolutionBackwardFilterWorkspaceSize
cudnnGetConvolution2dDescriptor cudnnGetConvolutionForwardAlgorithm_v7 cudnnGetConvolutionForwardWorkspaceSize
cudnnGetConvolutionMathType cudnnGetPooling2dDescriptor
cudnnGetDropoutDescriptor cudnnGetErrorString cudnnGetFilter4dDescriptor cudnnGetPooling2dForwardOutputDim
cudnnGetRNNDataDescriptor cudnnGetRNNDescriptor_v8 cudnnGraphVersionCheck cudnnOpsVersionCheck cudnnGetRNNTempSpaceSizes cudnnGetRNNWeightParams
cudnnGetRNNWeightSpaceSize cudnnGetTensor4dDescriptor cudnnGetVersion cudnnPoolingBackward cudnnPoolingForward
cudnnRNNBackwardData_v8 cudnnRNNBackwardWeights_v8 cudnnRNNForward cudnnSetActivationDescriptor
cudnnSetConvolution2dDescriptor cudnnSetConvolutionMathType cudnnSetDropoutDescriptor cudnnSetFilter4dDescriptor
cudnnSetPooling2dDescriptor cudnnSetRNNDataDescriptor cudnnSetRNNDescriptor_v8 cudnnSetStream
cudnnSetTensor4dDescriptor cudnnSetTensorNdDescriptor cudnnSoftmaxForward""".split()
CUBLAS = """cublasCreate_v2 cublasDestroy_v2 cublasGemmEx cublasGetProperty cublasGetStatusString cublasGetVersion_v2
cublasSaxpy_v2 cublasSetMathMode cublasSetStream_v2 cublasSgemm_v2""".split()
NCCL = "ncclAllReduce ncclCommDestroy ncclCommInitAll ncclGetErrorString ncclGroupEnd ncclGroupStart".split()

# What a stub returns when the library cannot be loaded, by return type.
FAIL = {"cudnnStatus_t": "CUDNN_STATUS_NOT_INITIALIZED", "cublasStatus_t": "CUBLAS_STATUS_NOT_INITIALIZED",
        "ncclResult_t": "ncclSystemError", "size_t": "0", "const char*": "cu_dl_unloaded_text"}


def declarations(headers):
    src = "".join(f"#include <{h}>\n" for h in headers)
    pp = subprocess.run(["gcc", "-E", "-P", f"-I{CU}/include", "-x", "c", "-"], input=src, text=True,
                        capture_output=True, check=True).stdout
    pp = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", pp)
    pp = re.sub(r"\s+", " ", pp)
    return [d.strip() for d in re.split(r"[;{}]", pp)]


def wrap(start, items, end, indent, width=116):
    """start + items joined by ", " + end, broken between items so no line passes width."""
    lines, cur = [], start
    for i, it in enumerate(items):
        piece = it + ("," if i + 1 < len(items) else end)
        if len(cur) + len(piece) + 1 > width and cur.strip() and not cur.endswith("("):
            lines.append(cur.rstrip())
            cur = " " * indent
        cur += piece + " "
    if not items:
        cur += end
    lines.append(cur.rstrip())
    return "\n".join(lines)


def stub(decls, name, lib):
    for d in decls:
        m = re.match(r"^(?:extern )?(.*?)\b" + re.escape(name) + r"\s*\((.*)\)$", d)
        if not m:
            continue
        ret = re.sub(r"\s*\*", "*", m.group(1).strip())
        params = m.group(2).strip()
        if params in ("", "void"):
            names = []
        else:
            names = []
            for p in params.split(","):
                ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[.*?\]", "", p))
                names.append(ids[-1])
        if ret not in FAIL:
            sys.exit(f"gen-cu-dl: no failure value for return type '{ret}' of {name}")
        plist = ", ".join(q.strip() for q in params.split(",")) if names else "void"
        return f"CU_DL_STUB({lib}, {ret}, {name}, {FAIL[ret]}, ({plist}), ({', '.join(names)}))\n"
    sys.exit(f"gen-cu-dl: {name} not declared in the headers")


HEAD = """/* {what} — generated by scripts/gen-cu-dl.py from the {hdr} headers (do not edit): each
 * line defines a function with the header's prototype that calls the library's own, resolved with dlsym on
 * first use (CU_DL_STUB, cu_dl.h), so the binary starts and runs CPU work without the library; it returns
 * {fail} when the library cannot be loaded. */
"""


def names(var, lst):
    """The stubbed names, NULL-terminated: cu_dl_require_all checks the installed library has each."""
    return wrap(f"const char *const {var}[] = {{", [f'"{n}"' for n in lst] + ["NULL"], "};", 4) + "\n"


def main():
    decls = declarations(["cudnn.h", "cublas_v2.h"])
    with open("src/be_cudnn/cu_dl_stubs.c", "w") as f:
        f.write(HEAD.format(what="cu_dl_stubs", hdr="cuDNN and cuBLAS", fail="NOT_INITIALIZED"))
        f.write('#include "be_cudnn/cu_dl.h"\n\n#include <cudnn.h>\n#include <cublas_v2.h>\n\n')
        f.write("".join(stub(decls, n, "cu_lib_cudnn") for n in CUDNN))
        f.write("\n")
        f.write("".join(stub(decls, n, "cu_lib_cublas") for n in CUBLAS))
        f.write("\n" + names("cu_dl_cudnn_names", CUDNN) + "\n" + names("cu_dl_cublas_names", CUBLAS))
    decls = declarations(["nccl.h"])
    with open("src/nccl/nccl_dl_stubs.c", "w") as f:
        f.write(HEAD.format(what="nccl_dl_stubs", hdr="NCCL", fail="ncclSystemError"))
        f.write('#include "be_cudnn/cu_dl.h"\n\n#include <nccl.h>\n\n')
        f.write("".join(stub(decls, n, "cu_lib_nccl") for n in NCCL))
        f.write("\n" + names("cu_dl_nccl_names", NCCL))


main()
