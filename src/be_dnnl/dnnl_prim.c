/* dnnl_prim — the dnnl back-end's primitive plumbing: a primitive with its argument memories (dstep), reorders
 * between the user's layouts and the ones oneDNN chooses (stage), the shared scratchpad and temporaries. */
#include "be_dnnl/dnnl_be.h"

/* ---- primitive plumbing ---------------------------------------------------------------------------- */

void dn_step_destroy(dstep *s) {
    for (int i = 0; i < s->nargs; i++) dnnl_memory_destroy(s->mem[i]);
    if (s->prim) dnnl_primitive_destroy(s->prim);
    memset(s, 0, sizeof *s);
}

int dn_step_arg(dnnl_ctx *c, dstep *s, int arg, const dnnl_memory_desc_t *md) {
    if (s->nargs == MAX_ARGS) return sd_err(SD_ERROR, "dnnl: too many primitive arguments");
    DNNL_CHECK(dn_memory_create(&s->mem[s->nargs], md, c->eng));
    s->arg[s->nargs++] = arg;
    return 0;
}

int dn_grow(void **buf, size_t *have, size_t need) {
    if (need <= *have) return 0;
    void *p = aligned_alloc(ALIGN, (need + ALIGN - 1) / ALIGN * ALIGN);
    if (!p) return sd_err(SD_ENOMEM, "dnnl: cannot allocate %zu bytes of temporaries", need);
    free(*buf);
    *buf = p;
    *have = need;
    return 0;
}

/* Make the primitive of pd (which it takes ownership of) with a scratchpad argument if it needs one. */
int dn_step_make(dnnl_ctx *c, dstep *s, dnnl_primitive_desc_t pd) {
    s->scratch_idx = -1;
    dnnl_status_t r = dnnl_primitive_create(&s->prim, pd);
    if (r != dnnl_success) {
        dnnl_primitive_desc_destroy(pd);
        return sd_err(SD_EBACKEND, "oneDNN: dnnl_primitive_create returned %d (%s)", (int)r, dnnl_status2str(r));
    }
    dnnl_memory_desc_t smd;
    int rc = dn_md_query(pd, dnnl_query_scratchpad_md, 0, &smd);
    size_t sb = rc == 0 ? dn_md_size(&smd) : 0;
    if (sb > 0) {
        rc = dn_grow(&c->scratch, &c->scratch_bytes, sb);
        if (rc == 0) {
            s->scratch_idx = s->nargs;
            rc = dn_step_arg(c, s, DNNL_ARG_SCRATCHPAD, &smd);
        }
    }
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/* Execute with the data handles in the order the arguments were added (scratchpad excluded). */
int dn_step_run(dnnl_ctx *c, dstep *s, void *const *ptr) {
    dnnl_exec_arg_t a[MAX_ARGS];
    for (int i = 0, k = 0; i < s->nargs; i++) {
        void *p = i == s->scratch_idx ? c->scratch : ptr[k++];
        DNNL_CHECK(dn_memory_set(s->mem[i], p, c->strm));
        a[i].arg = s->arg[i];
        a[i].memory = s->mem[i];
    }
    DNNL_CHECK(dnnl_primitive_execute(s->prim, c->strm, s->nargs, a));
    return 0;
}

size_t dn_bump(size_t *top, size_t bytes) {
    size_t off = *top;
    *top += (bytes + ALIGN - 1) / ALIGN * ALIGN;
    return off;
}

int dn_attr_new(dnnl_primitive_attr_t *attr, int sum) {
    DNNL_CHECK(dnnl_primitive_attr_create(attr));
    DNNL_CHECK(dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user));
    if (sum) {
        dnnl_post_ops_t po;
        DNNL_CHECK(dnnl_post_ops_create(&po));
        dnnl_status_t r1 = dn_post_ops_sum(po);
        dnnl_status_t r2 = r1 == dnnl_success ? dnnl_primitive_attr_set_post_ops(*attr, po) : r1;
        dnnl_post_ops_destroy(po);
        DNNL_CHECK(r2);
    }
    return 0;
}

int dn_pd_new(dnnl_ctx *c, dnnl_primitive_desc_t *pd, const dn_desc *desc, int sum,
              const_dnnl_primitive_desc_t hint) {
    dnnl_primitive_attr_t attr;
    SD_TRY(dn_attr_new(&attr, sum));
    dnnl_status_t r = dn_pd_create(pd, desc, attr, c->eng, hint);
    dnnl_primitive_attr_destroy(attr);
    if (r != dnnl_success)
        return sd_err(SD_EBACKEND, "oneDNN: primitive_desc_create returned %d (%s)\nHINT: run with "
                      "DNNL_VERBOSE=1 to see the primitive oneDNN rejected", (int)r, dnnl_status2str(r));
    return 0;
}

/* A reorder from -> to; sum: accumulate into the destination (dst += src). */
int dn_reorder_make(dnnl_ctx *c, dstep *s, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to,
                    int sum) {
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    SD_TRY(dn_attr_new(&attr, sum));
    dnnl_status_t st = dn_reorder_pd_create(&pd, from, to, c->eng, attr);
    dnnl_primitive_attr_destroy(attr);
    DNNL_CHECK(st);
    SD_TRY(dn_step_make(c, s, pd));
    SD_TRY(dn_step_arg(c, s, DNNL_ARG_FROM, from));
    SD_TRY(dn_step_arg(c, s, DNNL_ARG_TO, to));
    return 0;
}

/* Stage between a user layout and a chosen one; the copy lives at a fresh offset of the op's temporaries.
 * in = 1: user -> chosen (inputs); in = 0: chosen -> user (outputs). force: always reorder (dw += ...). */
int dn_stage_make(dnnl_ctx *c, stage *st, const dnnl_memory_desc_t *user, const dnnl_memory_desc_t *chosen,
                  int in, int sum, size_t *top) {
    memset(st, 0, sizeof *st);
    if (!sum && dn_md_equal(user, chosen)) return 0;
    st->on = 1;
    st->off = dn_bump(top, dn_md_size(chosen));
    return in ? dn_reorder_make(c, &st->r, user, chosen, 0) : dn_reorder_make(c, &st->r, chosen, user, sum);
}

/* Input: returns the buffer the primitive reads (the user's, or the reordered copy). */
int dn_stage_in(dnnl_ctx *c, stage *st, const void *user, void **out) {
    if (!st->on) { *out = (void *)user; return 0; }
    void *dst = (char *)c->tmp + st->off;
    void *p[2] = {(void *)user, dst};
    SD_TRY(dn_step_run(c, &st->r, p));
    *out = dst;
    return 0;
}

/* Output: the buffer the primitive writes; dn_stage_out_done reorders it into the user's. */
void *dn_stage_out(dnnl_ctx *c, stage *st, void *user) {
    return st->on ? (char *)c->tmp + st->off : user;
}
int dn_stage_out_done(dnnl_ctx *c, stage *st, void *user) {
    if (!st->on) return 0;
    void *p[2] = {(char *)c->tmp + st->off, user};
    return dn_step_run(c, &st->r, p);
}

void dn_stage_destroy(stage *st) { if (st->on) dn_step_destroy(&st->r); }

int dn_md_tag(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag) {
    return dn_md_tag_dt(md, nd, dims, dnnl_f32, tag);
}
int dn_md_strides(dnnl_memory_desc_t *md, int nd, const dnnl_dims_t dims, const dnnl_dims_t strides) {
    return dn_md_strides_dt(md, nd, dims, dnnl_f32, strides);
}

/* The oneDNN tag of an activation layout (nn/backend.h nn_fmt). */
dnnl_format_tag_t dn_fmt_tag(int fmt) {
    return fmt == NN_FMT_NCHW16C ? dnnl_nChw16c : fmt == NN_FMT_NCHW8C ? dnnl_nChw8c : fmt == NN_FMT_NHWC ? dnnl_nhwc
                                                                                                     : dnnl_nchw;
}

/* Threads: oneDNN's OpenMP build uses omp_get_max_threads() of the calling thread. */
void dn_threads_on(dnnl_ctx *c) {
    if (omp_get_max_threads() != c->threads) omp_set_num_threads(c->threads);
}

int dn_strm_wait(dnnl_ctx *c) {
    DNNL_CHECK(dnnl_stream_wait(c->strm));
    return 0;
}

/* oneDNN's name of the implementation pd runs ("jit:avx2", "ref:any"); NULL when it does not say */
static const char *pd_impl(const_dnnl_primitive_desc_t pd) {
    const char *name = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) == dnnl_success ? name : NULL;
}

int dn_pd_is_ref(const_dnnl_primitive_desc_t pd) {
    const char *name = pd_impl(pd);
    return name && strncmp(name, "ref", 3) == 0;
}

void dn_note_impl(dnnl_ctx *c, const char *what, const_dnnl_primitive_t prim) {
    const_dnnl_primitive_desc_t pd;
    if (dnnl_primitive_get_primitive_desc(prim, &pd) != dnnl_success) return;
    const char *name = pd_impl(pd);
    if (name) dn_note_host(c, what, name);
}

/* Name a kernel in the environment (backend_impl) once: "what name" */
void dn_note_host(dnnl_ctx *c, const char *what, const char *name) {
    char item[64];
    snprintf(item, sizeof item, "%s %s", what, name);
    const size_t n = strlen(item);
    for (const char *at = strstr(c->impl, item); at; at = strstr(at + 1, item))   /* whole items: not a prefix */
        if ((at == c->impl || (at - c->impl >= 2 && at[-2] == ',')) && (at[n] == ',' || at[n] == '\0')) return;
    size_t l = strlen(c->impl);
    snprintf(c->impl + l, sizeof c->impl - l, "%s%s", l ? ", " : "", item);
}

/* Right padding that makes oneDNN's output size (floor division) equal the op's. */
int dn_pad_r(int in, int k, int s, int pl, int out, int *pr) {
    int p = (out - 1) * s + k - in - pl;
    if (p < 0) p = 0;
    if ((in + pl + p - k) / s + 1 != out)
        return sd_err(SD_EUNSUPPORTED, "dnnl: window %d stride %d pad %d maps %d to %d, not %d", k, s, pl, in,
                      (in + pl + p - k) / s + 1, out);
    *pr = p;
    return 0;
}
