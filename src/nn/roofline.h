/* roofline — the time floor of a workload's phases on one machine: per layer, the FLOPs the model counts
 * (nn_layer.flops, nn_layer_has_dx) and the fewest bytes a layer-by-layer schedule must move, and
 * floor = Σ max(FLOPs / peak, bytes / bandwidth) over every layer's forward and backward and the optimizer.
 * Pure arithmetic on a plan: no back-end, no timing; the caller brings the machine's measured limits. */
#ifndef SD_NN_ROOFLINE_H
#define SD_NN_ROOFLINE_H

#include "nn/model.h"

typedef enum nn_phase { NN_PHASE_TRAIN = 0, NN_PHASE_INFER } nn_phase;

/* The machine's limits. Rates of 0 or less (or NaN) are "not measured": that side of the max is left out. */
typedef struct nn_machine {
    double peak;        /* FLOP/s: the measured sgemm ceiling */
    double wino_fwd;    /* FLOP/s, counted as a direct convolution's, of a Winograd convolution forward and */
    double wino_bwd;    /* backward (nn_roofline_winograd shapes); used where above peak */
    double bandwidth;   /* bytes/s: a STREAM triad over arrays far larger than the last-level cache */
    double cache_bandwidth;   /* bytes/s: the same triad over arrays that fit the last-level cache, */
    double cache_bytes;       /* whose size this is: a kernel moving no more than it is counted at that rate */
} nn_machine;

/* One kernel's work for one batch. */
typedef struct nn_cost { double flops, bytes; } nn_cost;

/* A layer in a phase: fwd (the forward of that phase: training forward, or inference), bwd (zero at
 * inference and for views). */
typedef struct nn_layer_cost {
    nn_cost fwd, bwd;
    int winograd;       /* 1: a convolution Winograd can run, counted at the machine's Winograd rate */
} nn_layer_cost;

/* A phase's totals for one batch. floor_s = Σ max(compute, memory) per kernel, so it is at least the larger of
 * compute_s and memory_s and at most their sum. */
typedef struct nn_roofline {
    double flops, bytes;
    double compute_s, memory_s;   /* Σ FLOPs/peak and Σ bytes/bandwidth alone */
    double floor_s;
} nn_roofline;

/* 1 if op is a convolution oneDNN's Winograd F(4x4,3x3) takes here: 3x3, stride 1, 16+ channels in and out, an
 * output of at least one 4x4 tile (the shapes be_dnnl runs it on with --autotune). */
int nn_roofline_winograd(const nn_op *op);
/* Layer i of a plan (nn_model_plan at its batch) in phase. */
void nn_roofline_layer(const nn_layer *layers, int nlayers, int i, nn_phase phase, nn_layer_cost *out);
/* The optimizer step over nparams parameters: read parameters, gradients and state, write parameters and state,
 * zero the gradients; no FLOPs counted (a few per parameter: memory-bound by far). */
nn_cost nn_roofline_optim(size_t nparams, nn_optim_kind kind);
/* max(flops / rate, bytes / bandwidth) in seconds; winograd picks the machine's Winograd rate when faster, and
 * bytes that fit the last-level cache move at the cache's rate when that is known and faster (a floor must not
 * charge memory traffic a cache-resident working set does not cause).
 * compute_s / memory_s (may be NULL) get the two sides. */
double nn_roofline_time(const nn_cost *c, const nn_machine *mc, int winograd, int backward, double *compute_s,
                        double *memory_s);
/* A phase of a plan: every layer and, in training, the optimizer. */
void nn_roofline_phase(const nn_layer *layers, int nlayers, size_t nparams, nn_optim_kind optim, nn_phase phase,
                       const nn_machine *mc, nn_roofline *out);
/* The same from a workload spec at batch (what the report calls with a run's recorded machine): plans it, and
 * fails with SD_EINPUT for a training phase of an inference workload. */
int nn_roofline_workload(const sd_workload *w, int batch, nn_phase phase, const nn_machine *mc, nn_roofline *out);

#endif
