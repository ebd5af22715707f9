/* imdb — IMDB reviews as token-id sequences in the Keras conventions (keras.datasets.imdb + pad_sequences):
 * the aclImdb text layout (tokenised here as Keras' Tokenizer does, vocabulary ranked by training-set
 * frequency) and the showdown token-id text file; plus seeded synthetic token data. Every problem names
 * the file (and line) it is in. Examples are stored as floats holding the integer ids (exact below 2^24),
 * shape (c, h, w) = (maxlen, 1, 1): the embedding layer's input (nn/backend.h "Sequence tensors"). */
#include "data/data.h"
#include "data/data_impl.h"
#include "nn/kernels.h"
#include "core/err.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMDB_MAX_FILE (1 << 20)          /* bytes of one review */
#define IMDB_MAX_LINE (1 << 22)          /* bytes of one token-file line */

void sd_imdb_opts_default(sd_imdb_opts *o) {
    o->num_words = 0;
    o->maxlen = 0;
    o->start_char = 1;
    o->oov_char = 2;
    o->index_from = 3;
    o->pad_post = 0;
    o->trunc_post = 0;
}

/* ---- a growing int sequence -------------------------------------------------------------------------- */

typedef struct ivec { int32_t *v; size_t n, cap; } ivec;

static int ivec_push(ivec *a, int32_t x) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        int32_t *p = realloc(a->v, cap * sizeof *p);
        if (!p) return sd_err(SD_ENOMEM, "imdb: out of memory");
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* Examples gathered before they are padded into a data set: ids of example i are
 * ids.v[start.v[i] .. start.v[i+1]). */
typedef struct seqs { ivec ids, start, label; } seqs;

static void seqs_free(seqs *s) { free(s->ids.v); free(s->start.v); free(s->label.v); memset(s, 0, sizeof *s); }

/* pad_sequences(maxlen, padding, truncating, value=0) with the num_words cap already applied. */
static int seqs_to_dataset(sd_dataset *out, const seqs *s, const sd_imdb_opts *o, const char *what) {
    const long long n = (long long)s->label.n;
    int maxlen = o->maxlen;
    if (maxlen <= 0) {   /* Keras: the longest sequence */
        for (long long i = 0; i < n; i++) {
            int len = s->start.v[i + 1] - s->start.v[i];
            if (len > maxlen) maxlen = len;
        }
        if (maxlen < 1) maxlen = 1;
    }
    SD_TRY(sd_data_alloc(out, what, n, maxlen, 1, 1));
    int maxlab = 0;
    for (long long i = 0; i < n; i++) {
        const int32_t *ids = s->ids.v + s->start.v[i];
        int len = s->start.v[i + 1] - s->start.v[i];
        float *x = out->x + (size_t)i * maxlen;
        memset(x, 0, sizeof(float) * maxlen);
        if (len > maxlen) {
            if (!o->trunc_post) ids += len - maxlen;     /* 'pre': keep the last maxlen */
            len = maxlen;
        }
        float *dst = o->pad_post ? x : x + (maxlen - len);
        for (int t = 0; t < len; t++) dst[t] = (float)ids[t];
        out->y[i] = s->label.v[i];
        if (s->label.v[i] > maxlab) maxlab = s->label.v[i];
    }
    out->classes = maxlab + 1 < 2 ? 2 : maxlab + 1;
    return 0;
}

/* ---- the token-id file ------------------------------------------------------------------------------- */

/* Format (documented in data.h): first line "showdown-tokens/1"; then one example per line,
 * "LABEL ID ID ...", integers separated by spaces or tabs; '#' starts a comment line; blank lines skipped. */
int sd_data_load_tokens(sd_dataset *out, const char *path, const sd_imdb_opts *o) {
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return sd_err(SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *line = malloc(IMDB_MAX_LINE + 2);
    if (!line) { fclose(f); return sd_err(SD_ENOMEM, "%s: out of memory", path); }
    seqs s = {0};
    int rc = 0;
    long lineno = 0;
    int header = 0;
    while (rc == 0 && fgets(line, IMDB_MAX_LINE + 2, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len > IMDB_MAX_LINE) { rc = sd_err(SD_ELIMIT, "%s:%ld: line longer than %d bytes", path, lineno, IMDB_MAX_LINE); break; }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!header) {
            if (strcmp(line, "showdown-tokens/1") != 0) {
                rc = sd_err(SD_EINPUT, "%s:%ld: expected the header \"showdown-tokens/1\" (got \"%.40s\")", path, lineno, line);
                break;
            }
            header = 1;
            continue;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == 0 || *p == '#') continue;
        int field = 0;
        while (*p) {
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (end == p || (*end && *end != ' ' && *end != '\t')) {
                int l = 0;
                while (p[l] && p[l] != ' ' && p[l] != '\t' && l < 20) l++;
                rc = sd_err(SD_EINPUT, "%s:%ld: field %d: expected a non-negative integer (got \"%.*s\")", path, lineno,
                            field + 1, l, p);
                break;
            }
            if (errno == ERANGE || v < 0 || v > 16777215) {
                rc = sd_err(SD_EINPUT, "%s:%ld: field %d: %s %ld out of range [0, 16777215]", path, lineno, field + 1,
                            field ? "token id" : "label", v);
                break;
            }
            if (field == 0) {
                if (v > 255) { rc = sd_err(SD_EINPUT, "%s:%ld: label %ld out of range [0, 255]", path, lineno, v); break; }
                rc = ivec_push(&s.start, (int32_t)s.ids.n);
                if (!rc) rc = ivec_push(&s.label, (int32_t)v);
            } else {
                int32_t id = (int32_t)v;
                if (o->num_words > 0 && id >= o->num_words) id = o->oov_char;
                rc = ivec_push(&s.ids, id);
            }
            if (rc) break;
            field++;
            p = end;
            while (*p == ' ' || *p == '\t') p++;
        }
    }
    if (rc == 0 && ferror(f)) rc = sd_err(SD_EIO, "%s: read error", path);
    if (rc == 0 && !header) rc = sd_err(SD_EINPUT, "%s:1: empty file (expected the header \"showdown-tokens/1\")", path);
    if (rc == 0 && s.label.n == 0) rc = sd_err(SD_EINPUT, "%s: no examples after the header", path);
    if (rc == 0) rc = ivec_push(&s.start, (int32_t)s.ids.n);
    if (rc == 0) rc = seqs_to_dataset(out, &s, o, path);
    if (rc == 0) snprintf(out->source, sizeof out->source, "tokens:%s", path);
    free(line);
    fclose(f);
    seqs_free(&s);
    return rc;
}

/* ---- the aclImdb text layout ------------------------------------------------------------------------- */

/* Keras Tokenizer: lower-case; the characters of its default filter become separators; split on them
 * and on whitespace. The filter is !"#$%&()*+,-./:;<=>?@[\]^_`{|}~ plus tab and newline (the apostrophe
 * is kept, so "don't" is one word; "<br />" gives the word "br"). */
static int is_sep(unsigned char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || (ch < 128 && strchr("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~", ch) && ch);
}

/* Word table: open addressing, word -> index into words[]. */
typedef struct vocab {
    char **words;
    long *count;
    int32_t *rank;       /* after ranking: 1 = most frequent */
    size_t n, cap;       /* words */
    size_t *slot;        /* hash slots: index+1, 0 = empty */
    size_t nslot;
} vocab;

static uint64_t hash_str(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static void vocab_free(vocab *v) {
    for (size_t i = 0; i < v->n; i++) free(v->words[i]);
    free(v->words); free(v->count); free(v->rank); free(v->slot);
    memset(v, 0, sizeof *v);
}

static int vocab_grow(vocab *v) {
    size_t ns = v->nslot ? v->nslot * 2 : 1 << 16;
    size_t *slot = calloc(ns, sizeof *slot);
    if (!slot) return sd_err(SD_ENOMEM, "imdb: out of memory for the vocabulary");
    for (size_t i = 0; i < v->n; i++) {
        size_t h = hash_str(v->words[i], strlen(v->words[i])) & (ns - 1);
        while (slot[h]) h = (h + 1) & (ns - 1);
        slot[h] = i + 1;
    }
    free(v->slot);
    v->slot = slot;
    v->nslot = ns;
    return 0;
}

/* Index of the word (added with count 0 if add and absent), or -1 if absent. */
static long vocab_find(vocab *v, const char *w, size_t len, int add, int *err) {
    if (add && (v->n + 1) * 2 > v->nslot && (*err = vocab_grow(v)) != 0) return -1;
    if (!v->nslot) return -1;
    size_t h = hash_str(w, len) & (v->nslot - 1);
    while (v->slot[h]) {
        const char *s = v->words[v->slot[h] - 1];
        if (strncmp(s, w, len) == 0 && s[len] == 0) return (long)v->slot[h] - 1;
        h = (h + 1) & (v->nslot - 1);
    }
    if (!add) return -1;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4096;
        char **wp = realloc(v->words, cap * sizeof *wp);
        if (wp) v->words = wp;
        long *cp = wp ? realloc(v->count, cap * sizeof *cp) : NULL;
        if (cp) v->count = cp;
        if (!wp || !cp) { *err = sd_err(SD_ENOMEM, "imdb: out of memory for the vocabulary"); return -1; }
        v->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) { *err = sd_err(SD_ENOMEM, "imdb: out of memory for the vocabulary"); return -1; }
    memcpy(copy, w, len);
    copy[len] = 0;
    v->words[v->n] = copy;
    v->count[v->n] = 0;
    v->slot[h] = ++v->n;
    return (long)v->n - 1;
}

static const vocab *g_sort_vocab;   /* qsort has no context argument in C11 */
static int by_freq(const void *a, const void *b) {
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    long ci = g_sort_vocab->count[i], cj = g_sort_vocab->count[j];
    if (ci != cj) return ci > cj ? -1 : 1;
    return strcmp(g_sort_vocab->words[i], g_sort_vocab->words[j]);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted .txt file names of dir (caller frees names[i] and names). */
static int list_txt(const char *dir, char ***names_out, size_t *n_out) {
    *names_out = NULL;
    *n_out = 0;
    DIR *d = opendir(dir);
    if (!d) return sd_err(SD_EIO, "%s: cannot open the directory: %s (expected the aclImdb layout "
                          "DIR/{train,test}/{pos,neg}/*.txt)", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".txt") != 0) continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) { rc = sd_err(SD_ENOMEM, "%s: out of memory", dir); break; }
            names = p;
        }
        if (!(names[n] = strdup(e->d_name))) { rc = sd_err(SD_ENOMEM, "%s: out of memory", dir); break; }
        n++;
    }
    closedir(d);
    if (rc == 0 && n == 0) rc = sd_err(SD_EINPUT, "%s: no .txt files", dir);
    if (rc) {
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        return rc;
    }
    qsort(names, n, sizeof *names, cmp_str);
    *names_out = names;
    *n_out = n;
    return 0;
}

/* Read a whole review (<= IMDB_MAX_FILE bytes); a NUL byte is an error (not a text file). */
static int read_review(const char *path, char *buf, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return sd_err(SD_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t n = fread(buf, 1, IMDB_MAX_FILE + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) return sd_err(SD_EIO, "%s: read error", path);
    if (n > IMDB_MAX_FILE) return sd_err(SD_ELIMIT, "%s: longer than %d bytes (not a review?)", path, IMDB_MAX_FILE);
    long line = 1;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == 0) return sd_err(SD_EINPUT, "%s:%ld: NUL byte at offset %zu: not a text file", path, line, i);
        if (buf[i] == '\n') line++;
    }
    buf[n] = 0;
    *len = n;
    return 0;
}

/* Tokenise buf; pass 0 counts words into v, pass 1 appends their ids to s. */
static int tokenise(char *buf, size_t len, vocab *v, int pass, seqs *s, const sd_imdb_opts *o) {
    for (size_t i = 0; i < len; i++)
        if (buf[i] >= 'A' && buf[i] <= 'Z') buf[i] = (char)(buf[i] - 'A' + 'a');
    int err = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && is_sep((unsigned char)buf[i])) i++;
        size_t j = i;
        while (j < len && !is_sep((unsigned char)buf[j])) j++;
        if (j > i) {
            long k = vocab_find(v, buf + i, j - i, pass == 0, &err);
            if (err) return err;
            if (pass == 0) v->count[k]++;
            else {
                /* words unseen in training, and ranks past the cap, are out of vocabulary */
                int32_t id = k < 0 ? o->oov_char : v->rank[k] + o->index_from;
                if (k >= 0 && o->num_words > 0 && id >= o->num_words) id = o->oov_char;
                SD_TRY(ivec_push(&s->ids, id));
            }
        }
        i = j;
    }
    return 0;
}

/* One split (train or test): neg files (label 0) then pos files (label 1), each in name order. */
static int read_split(const char *dir, const char *split, vocab *v, int pass, seqs *s, const sd_imdb_opts *o,
                      char *buf) {
    static const char *const cls[2] = {"neg", "pos"};
    for (int c = 0; c < 2; c++) {
        char sub[1024];
        snprintf(sub, sizeof sub, "%s/%s/%s", dir, split, cls[c]);
        char **names;
        size_t n;
        SD_TRY(list_txt(sub, &names, &n));
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", sub, names[i]);
            size_t len;
            rc = read_review(path, buf, &len);
            if (rc == 0 && pass == 1) {
                rc = ivec_push(&s->start, (int32_t)s->ids.n);
                if (!rc) rc = ivec_push(&s->label, c);
                if (!rc && o->start_char >= 0) rc = ivec_push(&s->ids, o->start_char);
            }
            if (rc == 0) rc = tokenise(buf, len, v, pass, s, o);
        }
        for (size_t i = 0; i < n; i++) free(names[i]);
        free(names);
        SD_TRY(rc);
    }
    return 0;
}

int sd_data_load_imdb_text(sd_dataset *train, sd_dataset *test, const char *dir, const sd_imdb_opts *o) {
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    char *buf = malloc(IMDB_MAX_FILE + 2);
    if (!buf) return sd_err(SD_ENOMEM, "imdb: out of memory");
    vocab v = {0};
    seqs s[2];
    memset(s, 0, sizeof s);
    size_t *order = NULL;
    int rc = read_split(dir, "train", &v, 0, NULL, o, buf);     /* vocabulary from the training reviews */
    if (rc == 0) {
        order = malloc((v.n ? v.n : 1) * sizeof *order);
        v.rank = malloc((v.n ? v.n : 1) * sizeof *v.rank);
        if (!order || !v.rank) rc = sd_err(SD_ENOMEM, "imdb: out of memory");
    }
    if (rc == 0) {
        for (size_t i = 0; i < v.n; i++) order[i] = i;
        g_sort_vocab = &v;
        qsort(order, v.n, sizeof *order, by_freq);   /* frequency, ties by byte order: deterministic */
        for (size_t r = 0; r < v.n; r++) v.rank[order[r]] = (int32_t)(r + 1);
        rc = read_split(dir, "train", &v, 1, &s[0], o, buf);
    }
    if (rc == 0) rc = read_split(dir, "test", &v, 1, &s[1], o, buf);
    for (int k = 0; k < 2 && rc == 0; k++) {
        rc = ivec_push(&s[k].start, (int32_t)s[k].ids.n);
        char what[1100];
        snprintf(what, sizeof what, "%s/%s", dir, k ? "test" : "train");
        if (rc == 0) rc = seqs_to_dataset(k ? test : train, &s[k], o, what);
        if (rc == 0) {
            sd_dataset *d = k ? test : train;
            d->classes = 2;
            snprintf(d->source, sizeof d->source, "aclImdb:%s (%s, %zu words in the training vocabulary)", dir,
                     k ? "test" : "train", v.n);
        }
    }
    if (rc) { sd_dataset_free(train); sd_dataset_free(test); }
    free(order);
    free(buf);
    vocab_free(&v);
    seqs_free(&s[0]);
    seqs_free(&s[1]);
    return rc;
}

/* ---- synthetic token sequences ----------------------------------------------------------------------- */

int sd_data_synthetic_tokens(sd_dataset *out, int n, int maxlen, int vocab_size, int classes, uint64_t seed,
                             int split) {
    memset(out, 0, sizeof *out);
    if (split != 0 && split != 1) return sd_err(SD_EUSAGE, "synthetic tokens: split %d: expected 0 or 1", split);
    if (classes < 2 || classes > 256) return sd_err(SD_EINPUT, "synthetic tokens: %d classes: expected 2..256", classes);
    if (vocab_size < 4)
        return sd_err(SD_EINPUT, "synthetic tokens: vocabulary %d too small (at least 4: pad, start, oov, a word)", vocab_size);
    SD_TRY(sd_data_alloc(out, "synthetic tokens", n, maxlen, 1, 1));
    /* Per example: a label, a length (maxlen with probability 0.7 — most IMDB reviews are longer than the
     * published 150 — else uniform in [maxlen/4, maxlen]), the start token 1, then tokens that with
     * probability 0.3 come from the label's own block of (up to 64) ids and otherwise uniformly from [3, vocab);
     * zero-padded at the end. Pure function of (seed, split, i). */
    const uint64_t key = nn_hash64(seed ^ nn_hash64(0x70c5ULL + (uint64_t)split));
    int block = (vocab_size - 3) / (2 * classes);   /* ids particular to a label: at most 64 of them */
    if (block > 64) block = 64;
    if (block < 1) block = 1;
    for (int i = 0; i < n; i++) {
        uint64_t h = nn_hash64(key ^ nn_hash64((uint64_t)i));
        const int y = (int)(h % (uint64_t)classes);
        int len = (h >> 56) < 179 ? maxlen : maxlen / 4 + (int)((h >> 16) % (uint64_t)(maxlen - maxlen / 4 + 1));
        if (len < 1) len = 1;
        float *x = out->x + (size_t)i * maxlen;
        memset(x, 0, sizeof(float) * maxlen);
        x[0] = 1.0f;
        for (int t = 1; t < len; t++) {
            uint64_t r = nn_hash64(h ^ nn_hash64((uint64_t)t));
            int id;
            if ((r & 1023) < 307) id = 3 + (y * block + (int)((r >> 10) % (uint64_t)block)) % (vocab_size - 3);
            else id = 3 + (int)((r >> 10) % (uint64_t)(vocab_size - 3));
            x[t] = (float)id;
        }
        out->y[i] = y;
    }
    out->classes = classes;
    out->synthetic = 1;
    snprintf(out->source, sizeof out->source, "synthetic tokens seed=%llu split=%s vocab=%d",
             (unsigned long long)seed, split ? "test" : "train", vocab_size);
    return 0;
}
