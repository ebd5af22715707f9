/* report_sections — what the section builders share (private to report_build.c and report_*.c): the
 * figure constructors, the facts drawn from the inputs that several sections state, and each family's
 * builders, dispatched by the one table of section kinds in report_build.c. */
#ifndef SD_RENDER_REPORT_SECTIONS_H
#define SD_RENDER_REPORT_SECTIONS_H

#include "render/report_int.h"

/* n zeroed elements of T from the report's arena (one spare byte so that n = 0 is not NULL). */
#define NEW(d, T, n) ((T *)render_alloc((d)->a, (size_t)(n) * sizeof(T) + 1))

/* ---- figures (report_blocks.c) ------------------------------------------------------------------------- */
/* A figure numbered in its sequence ("Table 3. title", "Figure 2. title"); NULL when out of memory. */
render_fig *rb_new_fig(rdoc *d, render_fig_kind k, const char *id, const char *title);
/* An nr x nc table, every value NAN (missing) and one decimal. */
render_table *rb_new_table(rdoc *d, int nr, int nc);
/* ng groups of ns bars, every value NAN. */
render_bar *rb_new_bar(rdoc *d, int ng, int ns);
/* Append a figure (NULL: out of memory) and count it. */
int rb_add_fig(rdoc *d, render_fig *f);
/* Decimals for times up to max: 2 under 10 s, 1 under 1000 s, else 0. */
int rb_time_decimals(double max);

/* ---- facts about the inputs (report_facts.c) ----------------------------------------------------------- */
/* "reference C", "oneDNN", "cuDNN" for a back-end's short name; others as given; NULL for NULL. */
const char *rb_backend_name(const char *b);
/* The GPU model without count, vendor and variant ("Tesla V100-SXM2-16GB" -> "V100"). */
const char *rb_gpu_short(rdoc *d, const char *dev);
/* The column of a run in the benchmark tables: its device, GPUs as "4×V100". */
const char *rb_device_of(rdoc *d, const rm_run *r);
/* The row of a run: its implementation, with the back-end for native runs ("native · oneDNN"). */
const char *rb_row_of(rdoc *d, const rm_run *r);
/* A run's setting as text, or NULL. */
const char *rb_run_setting(const rm_run *r, const char *key);
/* A setting's positive integer value ("10"), else 0. */
int rb_pos_int(const char *s);
/* The machine the results were measured on, or NULL. */
const char *rb_env_device(const rdoc *d);
/* The native engine's back-ends measured, "reference C, oneDNN", or NULL. */
const char *rb_backends_list(rdoc *d);
/* The workloads of every run in order of appearance (at most max); their count. */
int rb_workloads(const rdoc *d, const char **out, int max);
/* Framework-criterion values without data. */
int rb_n_missing_criteria(const rdoc *d);
/* The latest date of the input files of a kind ("scores", "results"), or NULL. */
const char *rb_kind_date(const rdoc *d, const char *kind);
/* Index of s in a[0..*n), appended when absent; -1 when a is full (max). */
int rb_idx_of(const char **a, int *n, const char *s, int max);
/* The word a table cell shows for a run that has no figures. */
const char *rb_status_word(const rm_run *r);
int rb_is_native(const rm_run *r);
int rb_is_gpu(const rm_run *r);      /* run by the cuDNN back-end: device memory, GPU clocks */
int rb_is_measured(const rm_run *r);   /* not published, not failed */
/* measured while the host ran below SD_HOST_SLOW (its canary, after the waits ran out): a quiet rerun runs faster */
int rb_ran_slow(const rm_run *r);
/* Seconds for one full epoch of the data set (*projected = 1 when projected from cut epochs); NAN if unknown. */
double rb_full_epoch_s(const rm_run *r, int *projected);
/* The file name of a path. */
const char *rb_base(const char *p);

/* ---- shared by the families ---------------------------------------------------------------------------- */
/* Where the scores come from, for the note of every figure drawn from them (report_scores.c). */
const char *rb_scores_note(rdoc *d);
/* The native floor of a workload: its fastest measured native run, or NULL (report_frameworks.c). */
const rm_run *rb_native_floor(const rdoc *d, const char *wl);
/* A framework's version as its runner reported it, cut at '+', or NULL. */
const char *rb_fw_version(rdoc *d, const char *impl);
/* "native · oneDNN", or a framework with its version ("pytorch 2.1.0"). */
const char *rb_impl_label(rdoc *d, const rm_run *r);
/* Frameworks (not native) with a run in the results, in order; measured[i]: whether any run has figures. */
int rb_framework_names(const rdoc *d, const char **names, int *measured, int max);
/* The run of impl on workload wl (a measured one first, else a failed one), or NULL. */
const rm_run *rb_run_of(const rdoc *d, const char *wl, const char *impl);
/* Workloads that have a native floor and at least one framework run. */
int rb_framework_workloads(rdoc *d, const char **out, int max);
/* Frameworks whose every run was "unavailable" (not installed here), "a, b", or NULL. */
const char *rb_not_installed(rdoc *d);
/* Page 1's ranking of the frameworks by time relative to native over the workload phases (report_showdown.c),
 * or NULL when there is nothing to rank. */
const char *rb_framework_ranking(rdoc *d);
/* Whether a measured framework version is known to be behind its current release. */
int rb_outdated(const char *impl, const char *version);

/* ---- the section builders, one per kind (render_section_kinds): 0 built, 1 no data, <0 error ------------ */
int rb_sec_cover(rdoc *d, const rt_section *s);          /* report_summary.c: the cover and page 1's summary */
int rb_sec_podium(rdoc *d, const rt_section *s);         /* report_scores.c */
int rb_sec_radars(rdoc *d, const rt_section *s);
int rb_sec_criteria(rdoc *d, const rt_section *s);
int rb_sec_bench_tables(rdoc *d, const rt_section *s);   /* report_bench.c */
int rb_sec_bench_charts(rdoc *d, const rt_section *s);
int rb_sec_accuracy(rdoc *d, const rt_section *s);
int rb_sec_first_steady(rdoc *d, const rt_section *s);
int rb_sec_frameworks(rdoc *d, const rt_section *s);     /* report_frameworks.c */
int rb_sec_showdown(rdoc *d, const rt_section *s);       /* report_showdown.c: the grids per phase, Keras's back-ends */
int rb_sec_phase_tables(rdoc *d, const rt_section *s);
int rb_sec_precision(rdoc *d, const rt_section *s);      /* bf16 against fp32 per framework and workload phase */
int rb_sec_methodology(rdoc *d, const rt_section *s);    /* report_appendix.c */
int rb_sec_verification(rdoc *d, const rt_section *s);
int rb_sec_regressions(rdoc *d, const rt_section *s);
int rb_sec_history(rdoc *d, const rt_section *s);

#endif
