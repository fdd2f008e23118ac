/* The pruned ranking kernel of retrieval.postings.Postings.top, in C.
 *
 * The same algorithm as the numpy path (Postings._top_pruned) in one call per query, with no
 * temporaries per operation: short posting lists are read whole (each of their docs is a candidate
 * with a partial score), long lists are bounded per block of 64 docs by their stored block maxima and
 * counted through their bitmaps; a doc is scored exactly (rank-bm25's expression per (term, doc),
 * summed in query order with repeats) only when an upper bound with a safety margin says it can
 * reach the need-th best doc already scored.
 *
 * Floating point: every expression is rank-bm25 0.2.2's, operation for operation and in the same
 * order (see postings._contributions). Built without fast-math and with -ffp-contract=off (no fused
 * multiply-add), so the scores equal get_scores bit for bit.
 *
 * Arrays come through the buffer protocol (numpy arrays or read-only memory maps). Their formats and
 * lengths are checked once, when a Kernel is made; every index read from them is checked before use,
 * so a damaged cache file raises ValueError instead of reading out of bounds. The computation runs
 * without the GIL (one scratch "flag" array per calling thread).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The interface retrieval.postings calls (its KERNEL_INTERFACE): what Kernel() and Kernel.top take
 * and return, and the build tokenizer's SurfaceTable and chunk_arrays (retrieval.build). Raise it
 * with every change to any of them, so a build left from older source (pip install
 * not re-run) is refused by postings, which then ranks with numpy, instead of being called wrongly.
 * The index build's scatter and probe_table are looked up by name (getattr): a build without them
 * merges and fills the vocabulary table with numpy and Python; raise INTERFACE when they change. */
#define INTERFACE 3

#define SEED_BLOCKS 8 /* blocks scored first (best bounds) when the short terms gave no threshold */
#define MAX_NEED 1000 /* the top-k is an insertion list: larger pages use the numpy path */

enum { OKAPI = 0, BM25L = 1, PLUS = 2 };

typedef struct {
    PyObject_HEAD
    Py_buffer views[10];
    int n_views;
    const int64_t *indptr;
    const int32_t *post_docs;
    const uint16_t *post_tf;
    const double *norm, *idf, *baseline;
    const int32_t *long_slot;
    const uint64_t *long_bits;
    const float *long_bmax;
    const double *long_min;
    Py_ssize_t n_terms, n_post, n_docs, n_words, n_long;
    int variant;
    double k1, delta;
} Kernel;

/* ---------------------------------------------------------------------------------------------- */
/* Buffers */

static int
fmt_is(const Py_buffer *view, const char *codes, Py_ssize_t itemsize)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    return view->itemsize == itemsize && f[0] != '\0' && f[1] == '\0' && strchr(codes, f[0]) != NULL;
}

/* A C-contiguous buffer of the given kind; returns its number of items, -1 with ValueError set. */
static Py_ssize_t
get_view(PyObject *obj, Py_buffer *view, const char *name, const char *codes, Py_ssize_t itemsize,
         int writable)
{
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s: not a C-contiguous%s array", name, writable ? " writable" : "");
        return -1;
    }
    if (!fmt_is(view, codes, itemsize)) {
        PyErr_Format(PyExc_ValueError, "%s: wrong item type (format %s, %zd bytes)", name,
                     view->format ? view->format : "B", view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return view->len / itemsize;
}

#define I64 "lq"
#define I32 "i"
#define U64 "LQ"

/* ---------------------------------------------------------------------------------------------- */
/* Scoring, as rank-bm25 does it */

static inline double
contribution(int variant, double idf, double k1, double delta, double tf, double norm)
{
    if (variant == OKAPI)
        return idf * (tf * (k1 + 1) / (tf + norm));
    if (variant == BM25L) {
        double ctd = tf / norm;
        return idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta);
    }
    return idf * (delta + (tf * (k1 + 1)) / (norm + tf));
}

static inline int
popcount64(uint64_t x)
{
    /* SWAR: without -mpopcnt (not every x86-64 has it) __builtin_popcountll is a libgcc call */
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

/* One query's state. */
typedef struct {
    const Kernel *k;
    /* the query: distinct term ids (rows), the rows in query order, multiplicities, word groups */
    Py_ssize_t nd, nq, nw;
    int64_t *d_tids, *q_rows, *w_ptr, *w_rows;
    double *d_mult;
    int64_t *lo, *hi, *slots;
    /* per call */
    double *tfs;
    int32_t *flag;
    int64_t *best_d;
    double *best_s;
    int32_t *best_c;
    Py_ssize_t size, need;
    int damaged;
} Query;

/* Binary search of doc in post_docs[lo:hi] (ascending): its tf, or 0. */
static inline double
tf_of(const Kernel *k, int64_t lo, int64_t hi, int64_t doc)
{
    int64_t a = lo, b = hi;
    while (a < b) {
        int64_t m = (a + b) >> 1;
        if (k->post_docs[m] < doc)
            a = m + 1;
        else
            b = m;
    }
    if (a < hi && k->post_docs[a] == doc)
        return (double)k->post_tf[a];
    return 0.0;
}

/* Move cursor r to the first posting >= doc (galloping, then binary search); its tf, or 0. */
static inline double
advance(const Kernel *k, int64_t *cur, const int64_t *end, Py_ssize_t r, int64_t doc)
{
    int64_t p = cur[r], hi = end[r];
    const int32_t *pd = k->post_docs;
    if (p < hi && pd[p] < doc) {
        int64_t step = 1;
        while (p + step < hi && pd[p + step] < doc)
            step *= 2;
        int64_t a = p + step / 2 + 1, b = p + step < hi ? p + step : hi;
        while (a < b) {
            int64_t m = (a + b) >> 1;
            if (pd[m] < doc)
                a = m + 1;
            else
                b = m;
        }
        p = a;
        cur[r] = p;
    }
    if (p < hi && pd[p] == doc)
        return (double)k->post_tf[p];
    return 0.0;
}

/* rank-bm25's score of doc from q->tfs (query order, repeats), and the number of words it holds. */
static inline double
sum_doc(const Query *q, int64_t doc, int32_t *count_out)
{
    const Kernel *k = q->k;
    double nrm = k->norm[doc];
    double score = 0.0;
    for (Py_ssize_t i = 0; i < q->nq; i++) {
        int64_t r = q->q_rows[i];
        score += contribution(k->variant, k->idf[q->d_tids[r]], k->k1, k->delta, q->tfs[r], nrm);
    }
    int32_t count = 0;
    for (Py_ssize_t w = 0; w < q->nw; w++) {
        for (int64_t j = q->w_ptr[w]; j < q->w_ptr[w + 1]; j++) {
            if (q->tfs[q->w_rows[j]] > 0) {
                count++;
                break;
            }
        }
    }
    *count_out = count;
    return score;
}

static inline double
exact(Query *q, int64_t doc, int32_t *count)
{
    for (Py_ssize_t r = 0; r < q->nd; r++)
        q->tfs[r] = tf_of(q->k, q->lo[r], q->hi[r], doc);
    return sum_doc(q, doc, count);
}

/* Keep best_* sorted: score desc, words matched desc, doc asc. */
static inline void
insert(Query *q, int64_t doc, double score, int32_t count)
{
    Py_ssize_t pos = q->size, need = q->need;
    int64_t *bd = q->best_d;
    double *bs = q->best_s;
    int32_t *bc = q->best_c;
    while (pos > 0) {
        double s = bs[pos - 1];
        int32_t c = bc[pos - 1];
        int64_t d = bd[pos - 1];
        if (score > s || (score == s && (count > c || (count == c && doc < d))))
            pos--;
        else
            break;
    }
    if (pos >= need)
        return;
    Py_ssize_t end = q->size < need ? q->size : need - 1;
    for (Py_ssize_t i = end; i > pos; i--) {
        bd[i] = bd[i - 1];
        bs[i] = bs[i - 1];
        bc[i] = bc[i - 1];
    }
    bd[pos] = doc;
    bs[pos] = score;
    bc[pos] = count;
    if (q->size < need)
        q->size++;
}

static inline void
score_block(Query *q, Py_ssize_t w, uint64_t bits)
{
    while (bits) {
        int b = __builtin_ctzll(bits);
        bits &= bits - 1;
        int64_t d = (int64_t)w * 64 + b;
        if (q->flag[d])
            continue;
        int32_t count;
        double score = exact(q, d, &count);
        insert(q, d, score, count);
    }
}

/* The k-th smallest of a[0:n] (0 <= k < n), a reordered (Wirth's selection). */
static double
select_kth(double *a, Py_ssize_t n, Py_ssize_t k)
{
    Py_ssize_t l = 0, m = n - 1;
    while (l < m) {
        double x = a[k];
        Py_ssize_t i = l, j = m;
        do {
            while (i < m && a[i] < x)
                i++;
            while (j > l && x < a[j])
                j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k)
            l = i;
        if (k < i)
            m = j;
    }
    return a[k];
}

#define NEED(ptr)         \
    do {                  \
        if ((ptr) == NULL) \
            goto nomem;   \
    } while (0)

/* The search; returns 0, -1 when out of memory, -2 when an array holds an impossible value. */
static int
run(Query *q, const uint8_t *mask, Py_ssize_t *total_out)
{
    const Kernel *k = q->k;
    const Py_ssize_t nd = q->nd, n_words = k->n_words, n_docs = k->n_docs;
    int32_t *flag = q->flag;
    int status = 0;
    int64_t *touched = NULL, *open_ = NULL, *cur = NULL, *end = NULL;
    double *partial = NULL, *block_ub = NULL, *lows = NULL, *bound = NULL;
    uint64_t *uni = NULL, *cbits = NULL;
    uint8_t *done = NULL;
    Py_ssize_t n_cand = 0;

    double cnst = 0.0;
    for (Py_ssize_t r = 0; r < nd; r++)
        cnst += q->d_mult[r] * k->baseline[q->d_tids[r]];
    /* Short terms: every doc is a candidate, with a partial score. */
    Py_ssize_t n_short = 0;
    for (Py_ssize_t r = 0; r < nd; r++)
        if (q->slots[r] < 0)
            n_short += q->hi[r] - q->lo[r];
    NEED(touched = malloc(sizeof(int64_t) * (n_short ? n_short : 1)));
    NEED(partial = malloc(sizeof(double) * (n_short ? n_short : 1)));
    /* flag[d] holds 1 + the candidate's index while it is one (reset before returning). */
    for (Py_ssize_t r = 0; r < nd; r++) {
        if (q->slots[r] >= 0)
            continue;
        int64_t t = q->d_tids[r];
        double base = k->baseline[t], idf = k->idf[t], m = q->d_mult[r];
        for (int64_t j = q->lo[r]; j < q->hi[r]; j++) {
            int64_t d = k->post_docs[j];
            if (d < 0 || d >= n_docs)
                goto damaged;
            double e = m * (contribution(k->variant, idf, k->k1, k->delta, (double)k->post_tf[j], k->norm[d])
                            - base);
            int32_t at = flag[d];
            if (at == 0) {
                touched[n_cand] = d;
                partial[n_cand] = e;
                n_cand++;
                flag[d] = (int32_t)n_cand;
            }
            else if (at < 0 || at > n_cand)
                goto damaged; /* the scratch array was not clear */
            else
                partial[at - 1] += e;
        }
    }
    /* Long terms: block bounds, union bitmap, their least addition. */
    NEED(block_ub = calloc(n_words ? n_words : 1, sizeof(double)));
    NEED(uni = calloc(n_words ? n_words : 1, sizeof(uint64_t)));
    double lb_long = 0.0;
    Py_ssize_t n_long = 0;
    for (Py_ssize_t r = 0; r < nd; r++) {
        int64_t s = q->slots[r];
        if (s < 0)
            continue;
        n_long++;
        double m = q->d_mult[r];
        double lm = k->long_min[s];
        lb_long += m * (lm < 0.0 ? lm : 0.0);
        const float *bm = k->long_bmax + s * n_words;
        const uint64_t *bits = k->long_bits + s * n_words;
        for (Py_ssize_t w = 0; w < n_words; w++) {
            block_ub[w] += m * (double)bm[w];
            uni[w] |= bits[w];
        }
    }
    if (n_long && n_words && (n_docs & 63) && (uni[n_words - 1] >> (n_docs & 63)))
        goto damaged; /* a bit past the last doc */
    if (mask) {
        for (Py_ssize_t w = 0; w < n_words; w++) {
            if (!uni[w])
                continue;
            uint64_t keep = 0;
            Py_ssize_t base = w * 64, stop = base + 64 < n_docs ? base + 64 : n_docs;
            for (Py_ssize_t d = base; d < stop; d++)
                if (mask[d])
                    keep |= (uint64_t)1 << (d - base);
            uni[w] &= keep;
        }
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t w = 0; w < n_words; w++)
        total += popcount64(uni[w]);
    double top_part = 0.0;
    for (Py_ssize_t i = 0; i < n_cand; i++) {
        int64_t d = touched[i];
        if (mask && !mask[d])
            continue;
        if (n_long == 0 || !((uni[d >> 6] >> (d & 63)) & 1))
            total++;
        double a = fabs(partial[i]);
        if (a > top_part)
            top_part = a;
    }
    const Py_ssize_t need = q->need;
    if (need > 0 && total > 0) {
        double ub_max = 0.0;
        for (Py_ssize_t w = 0; w < n_words; w++)
            if (block_ub[w] > ub_max)
                ub_max = block_ub[w];
        double slack = 1e-7 * (1.0 + fabs(cnst) + top_part + ub_max + fabs(lb_long));
        /* Threshold from the candidates' lower bounds. */
        double theta = -INFINITY;
        NEED(lows = malloc(sizeof(double) * (n_cand ? n_cand : 1)));
        Py_ssize_t n_low = 0;
        for (Py_ssize_t i = 0; i < n_cand; i++) {
            if (mask && !mask[touched[i]])
                continue;
            lows[n_low++] = partial[i] + (cnst + lb_long - slack);
        }
        if (n_low >= need)
            theta = select_kth(lows, n_low, n_low - need);
        /* The candidates that can reach it, in doc order (a bitmap), so that each posting list is
         * walked forward once (galloping cursors) rather than binary-searched per candidate. */
        NEED(cbits = calloc(n_words ? n_words : 1, sizeof(uint64_t)));
        NEED(cur = malloc(sizeof(int64_t) * (nd ? nd : 1)));
        NEED(end = malloc(sizeof(int64_t) * (nd ? nd : 1)));
        for (Py_ssize_t i = 0; i < n_cand; i++) {
            int64_t d = touched[i];
            if (mask && !mask[d])
                continue;
            double up = partial[i] + (cnst + slack);
            if (n_long)
                up += block_ub[d >> 6];
            if (up < theta)
                continue;
            cbits[d >> 6] |= (uint64_t)1 << (d & 63);
        }
        for (Py_ssize_t r = 0; r < nd; r++) {
            cur[r] = q->lo[r];
            end[r] = q->hi[r];
        }
        for (Py_ssize_t w = 0; w < n_words; w++) {
            uint64_t bits = cbits[w];
            while (bits) {
                int b = __builtin_ctzll(bits);
                bits &= bits - 1;
                int64_t d = (int64_t)w * 64 + b;
                double up = partial[flag[d] - 1] + (cnst + slack); /* flag[d] >= 1: a candidate */
                if (n_long)
                    up += block_ub[w];
                if (up < theta)
                    continue; /* the threshold rose since */
                for (Py_ssize_t r = 0; r < nd; r++)
                    q->tfs[r] = advance(k, cur, end, r, d);
                int32_t count;
                double score = sum_doc(q, d, &count);
                insert(q, d, score, count);
                if (q->size >= need && q->best_s[need - 1] > theta)
                    theta = q->best_s[need - 1];
            }
        }
        if (n_long) {
            if (q->size >= need)
                theta = q->best_s[need - 1];
            NEED(bound = malloc(sizeof(double) * n_words));
            NEED(done = calloc(n_words, 1));
            Py_ssize_t n_open = 0;
            for (Py_ssize_t w = 0; w < n_words; w++) {
                bound[w] = uni[w] ? block_ub[w] + (cnst + slack) : -INFINITY;
                if (bound[w] >= theta)
                    n_open++;
            }
            if (q->size < need && n_open) {
                /* No threshold yet: score the most promising blocks first (binary searches). */
                NEED(open_ = malloc(sizeof(int64_t) * SEED_BLOCKS));
                Py_ssize_t n_seed = 0;
                for (Py_ssize_t w = 0; w < n_words; w++) {
                    if (!(bound[w] >= theta))
                        continue;
                    /* keep the SEED_BLOCKS best bounds, best first (ties: lower block first) */
                    Py_ssize_t pos = n_seed < SEED_BLOCKS ? n_seed : SEED_BLOCKS;
                    while (pos > 0 && bound[w] > bound[open_[pos - 1]])
                        pos--;
                    if (pos >= SEED_BLOCKS)
                        continue;
                    Py_ssize_t last = n_seed < SEED_BLOCKS ? n_seed : SEED_BLOCKS - 1;
                    for (Py_ssize_t i = last; i > pos; i--)
                        open_[i] = open_[i - 1];
                    open_[pos] = w;
                    if (n_seed < SEED_BLOCKS)
                        n_seed++;
                }
                for (Py_ssize_t i = 0; i < n_seed; i++) {
                    Py_ssize_t w = open_[i];
                    done[w] = 1;
                    score_block(q, w, uni[w]);
                }
                if (q->size >= need)
                    theta = q->best_s[need - 1];
            }
            /* Then every block that can still reach the threshold, in doc order: the posting lists
             * are walked forward (galloping), so a dense query costs about one pass over them. */
            for (Py_ssize_t r = 0; r < nd; r++)
                cur[r] = q->lo[r];
            for (Py_ssize_t w = 0; w < n_words; w++) {
                if (done[w] || bound[w] < theta)
                    continue;
                uint64_t bits = uni[w];
                while (bits) {
                    int b = __builtin_ctzll(bits);
                    bits &= bits - 1;
                    int64_t d = (int64_t)w * 64 + b;
                    if (flag[d])
                        continue; /* a candidate: scored above, or bounded below the threshold */
                    /* This doc's own bound: the block maxima of the long terms it holds. */
                    double up = cnst + slack;
                    for (Py_ssize_t r = 0; r < nd; r++) {
                        int64_t sr = q->slots[r];
                        if (sr >= 0 && ((k->long_bits[sr * n_words + w] >> b) & 1))
                            up += q->d_mult[r] * (double)k->long_bmax[sr * n_words + w];
                    }
                    if (up < theta)
                        continue;
                    for (Py_ssize_t r = 0; r < nd; r++)
                        q->tfs[r] = advance(k, cur, end, r, d);
                    int32_t count;
                    double score = sum_doc(q, d, &count);
                    insert(q, d, score, count);
                    if (q->size >= need)
                        theta = q->best_s[need - 1];
                }
            }
        }
    }
    *total_out = total;
    goto out;
damaged:
    status = -2;
    goto out;
nomem:
    status = -1;
out:
    for (Py_ssize_t i = 0; i < n_cand; i++)
        flag[touched[i]] = 0;
    free(touched);
    free(partial);
    free(block_ub);
    free(uni);
    free(cbits);
    free(lows);
    free(bound);
    free(done);
    free(open_);
    free(cur);
    free(end);
    return status;
}

/* ---------------------------------------------------------------------------------------------- */
/* The Python type */

static void
Kernel_dealloc(Kernel *self)
{
    for (int i = 0; i < self->n_views; i++)
        PyBuffer_Release(&self->views[i]);
    self->n_views = 0;
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
Kernel_init(Kernel *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"indptr",    "post_docs", "post_tf",  "norm",     "idf",   "baseline",
                            "long_slot", "long_bits", "long_bmax", "long_min", "variant", "k1",
                            "delta",     NULL};
    PyObject *obj[10];
    int variant;
    double k1, delta;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOOOOOOidd", names, &obj[0], &obj[1], &obj[2],
                                     &obj[3], &obj[4], &obj[5], &obj[6], &obj[7], &obj[8], &obj[9],
                                     &variant, &k1, &delta))
        return -1;
    for (int i = 0; i < self->n_views; i++)
        PyBuffer_Release(&self->views[i]);
    self->n_views = 0;
    static const struct {
        const char *codes;
        Py_ssize_t size;
    } kinds[10] = {{I64, 8}, {I32, 4}, {"H", 2}, {"d", 8}, {"d", 8},
                   {"d", 8}, {I32, 4}, {U64, 8}, {"f", 4}, {"d", 8}};
    Py_ssize_t len[10];
    for (int i = 0; i < 10; i++) {
        len[i] = get_view(obj[i], &self->views[i], names[i], kinds[i].codes, kinds[i].size, 0);
        if (len[i] < 0)
            return -1;
        self->n_views = i + 1;
    }
    if (variant < OKAPI || variant > PLUS) {
        PyErr_Format(PyExc_ValueError, "variant: %d is not 0 (okapi), 1 (l) or 2 (plus)", variant);
        return -1;
    }
    Py_ssize_t n_terms = len[0] - 1, n_docs = len[3], n_words = (n_docs + 63) / 64, n_long = len[9];
    if (n_terms < 0 || len[4] != n_terms || len[5] != n_terms || len[6] != n_terms) {
        PyErr_SetString(PyExc_ValueError, "indptr, idf, baseline and long_slot disagree on the number of terms");
        return -1;
    }
    if (len[1] != len[2]) {
        PyErr_SetString(PyExc_ValueError, "post_docs and post_tf differ in length");
        return -1;
    }
    if (len[7] != n_long * n_words || len[8] != n_long * n_words) {
        PyErr_SetString(PyExc_ValueError, "long_bits and long_bmax must hold one row of ceil(docs / 64) "
                                          "words per long term");
        return -1;
    }
    if (n_docs >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many documents for int32 doc ids");
        return -1;
    }
    self->indptr = self->views[0].buf;
    self->post_docs = self->views[1].buf;
    self->post_tf = self->views[2].buf;
    self->norm = self->views[3].buf;
    self->idf = self->views[4].buf;
    self->baseline = self->views[5].buf;
    self->long_slot = self->views[6].buf;
    self->long_bits = self->views[7].buf;
    self->long_bmax = self->views[8].buf;
    self->long_min = self->views[9].buf;
    self->n_terms = n_terms;
    self->n_post = len[1];
    self->n_docs = n_docs;
    self->n_words = n_words;
    self->n_long = n_long;
    self->variant = variant;
    self->k1 = k1;
    self->delta = delta;
    return 0;
}

/* An int term id from a Python object, checked against the vocabulary. */
static int
term_id(const Kernel *k, PyObject *item, int64_t *out)
{
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < 0 || v >= k->n_terms) {
        PyErr_Format(PyExc_ValueError, "term id %lld out of range (%zd terms)", v, k->n_terms);
        return -1;
    }
    *out = v;
    return 0;
}

static Py_ssize_t
row_of(const int64_t *tids, Py_ssize_t n, int64_t t)
{
    for (Py_ssize_t r = 0; r < n; r++)
        if (tids[r] == t)
            return r;
    return -1;
}

PyDoc_STRVAR(top_doc,
"top(ids, words, mask, need, flag) -> (docs, scores, total)\n\n"
"The top ``need`` docs (1 <= need <= 1000) for the term ids ``ids`` (query order, repeats\n"
"included), each word of ``words`` (a tuple of the term ids that hold it; None: each distinct\n"
"id is a word) counting as matched\n"
"when a doc holds one of them; ``mask`` (None, or one bool per doc) keeps only the docs it marks.\n"
"``flag``: a writable int32 scratch array of one zero per doc, zero again on return (one per\n"
"thread). Returns the docs in order (list), their scores by doc (dict) and the number of hits.\n"
"Every id in ``words`` must be in ``ids``.");

static PyObject *
Kernel_top(Kernel *self, PyObject *args)
{
    PyObject *ids_obj, *words_obj, *mask_obj, *flag_obj;
    Py_ssize_t need;
    if (!PyArg_ParseTuple(args, "OOOnO", &ids_obj, &words_obj, &mask_obj, &need, &flag_obj))
        return NULL;
    if (need < 1 || need > MAX_NEED)
        return PyErr_Format(PyExc_ValueError, "need: %zd is not in 1..%d", need, MAX_NEED);
    PyObject *ids = PySequence_Fast(ids_obj, "ids must be a sequence");
    if (ids == NULL)
        return NULL;
    PyObject *words = NULL; /* None: each distinct term is a word */
    if (words_obj != Py_None && (words = PySequence_Fast(words_obj, "words must be a sequence")) == NULL) {
        Py_DECREF(ids);
        return NULL;
    }
    PyObject *result = NULL;
    Py_buffer mask_view = {0}, flag_view = {0};
    int have_mask = 0, have_flag = 0;
    Query q;
    memset(&q, 0, sizeof q);
    q.k = self;
    q.need = need;
    Py_ssize_t nq = PySequence_Fast_GET_SIZE(ids), nw = words ? PySequence_Fast_GET_SIZE(words) : nq;
    Py_ssize_t n_wrows = words ? 0 : nq;
    for (Py_ssize_t w = 0; words != NULL && w < nw; w++) {
        PyObject *word = PySequence_Fast_GET_ITEM(words, w);
        Py_ssize_t n = PySequence_Size(word);
        if (n < 0)
            goto fail;
        n_wrows += n;
    }
    Py_ssize_t nq1 = nq ? nq : 1;
    q.d_tids = PyMem_Malloc(sizeof(int64_t) * nq1);
    q.q_rows = PyMem_Malloc(sizeof(int64_t) * nq1);
    q.d_mult = PyMem_Malloc(sizeof(double) * nq1);
    q.lo = PyMem_Malloc(sizeof(int64_t) * nq1);
    q.hi = PyMem_Malloc(sizeof(int64_t) * nq1);
    q.slots = PyMem_Malloc(sizeof(int64_t) * nq1);
    q.tfs = PyMem_Malloc(sizeof(double) * nq1);
    q.w_ptr = PyMem_Malloc(sizeof(int64_t) * (nw + 1));
    q.w_rows = PyMem_Malloc(sizeof(int64_t) * (n_wrows ? n_wrows : 1));
    q.best_d = PyMem_Malloc(sizeof(int64_t) * need);
    q.best_s = PyMem_Malloc(sizeof(double) * need);
    q.best_c = PyMem_Malloc(sizeof(int32_t) * need);
    if (!q.d_tids || !q.q_rows || !q.d_mult || !q.lo || !q.hi || !q.slots || !q.tfs || !q.w_ptr
        || !q.w_rows || !q.best_d || !q.best_s || !q.best_c) {
        PyErr_NoMemory();
        goto fail;
    }
    /* Distinct terms in order of first appearance, each query term's row, multiplicities. */
    for (Py_ssize_t i = 0; i < nq; i++) {
        int64_t t;
        if (term_id(self, PySequence_Fast_GET_ITEM(ids, i), &t) < 0)
            goto fail;
        Py_ssize_t r = row_of(q.d_tids, q.nd, t);
        if (r < 0) {
            r = q.nd++;
            q.d_tids[r] = t;
            q.d_mult[r] = 0.0;
            int64_t lo = self->indptr[t], hi = self->indptr[t + 1];
            int32_t s = self->long_slot[t];
            if (lo < 0 || hi < lo || hi > self->n_post || s < -1 || s >= self->n_long) {
                PyErr_Format(PyExc_ValueError, "the index's arrays are damaged (term %lld)", (long long)t);
                goto fail;
            }
            q.lo[r] = lo;
            q.hi[r] = hi;
            q.slots[r] = s;
        }
        q.q_rows[i] = r;
        q.d_mult[r] += 1.0;
    }
    q.nq = nq;
    q.w_ptr[0] = 0;
    Py_ssize_t j = 0;
    if (words == NULL) { /* each distinct term is a word */
        nw = q.nd;
        for (Py_ssize_t w = 0; w < nw; w++) {
            q.w_rows[w] = w;
            q.w_ptr[w + 1] = w + 1;
        }
    }
    for (Py_ssize_t w = 0; words != NULL && w < nw; w++) {
        PyObject *word = PySequence_Fast(PySequence_Fast_GET_ITEM(words, w), "a word must be a sequence");
        if (word == NULL)
            goto fail;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(word);
        if (j + n > n_wrows) {
            Py_DECREF(word);
            PyErr_SetString(PyExc_ValueError, "words changed while read");
            goto fail;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            int64_t t;
            if (term_id(self, PySequence_Fast_GET_ITEM(word, i), &t) < 0) {
                Py_DECREF(word);
                goto fail;
            }
            Py_ssize_t r = row_of(q.d_tids, q.nd, t);
            if (r < 0) {
                Py_DECREF(word);
                PyErr_Format(PyExc_ValueError, "term id %lld of a word is not among the ids", (long long)t);
                goto fail;
            }
            q.w_rows[j++] = r;
        }
        Py_DECREF(word);
        q.w_ptr[w + 1] = j;
    }
    q.nw = nw;
    const uint8_t *mask = NULL;
    if (mask_obj != Py_None) {
        Py_ssize_t n = get_view(mask_obj, &mask_view, "mask", "?", 1, 0);
        if (n < 0)
            goto fail;
        have_mask = 1;
        if (n != self->n_docs) {
            PyErr_Format(PyExc_ValueError, "mask of %zd papers for an index of %zd", n, self->n_docs);
            goto fail;
        }
        mask = mask_view.buf;
    }
    Py_ssize_t n_flag = get_view(flag_obj, &flag_view, "flag", I32, 4, 1);
    if (n_flag < 0)
        goto fail;
    have_flag = 1;
    if (n_flag < self->n_docs) {
        PyErr_Format(PyExc_ValueError, "flag: %zd slots for %zd docs", n_flag, self->n_docs);
        goto fail;
    }
    q.flag = flag_view.buf;
    Py_ssize_t total = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = run(&q, mask, &total);
    Py_END_ALLOW_THREADS
    if (status == -1) {
        PyErr_NoMemory();
        goto fail;
    }
    if (status == -2) {
        PyErr_SetString(PyExc_ValueError, "the index's arrays are damaged (a doc id or bit out of range)");
        goto fail;
    }
    PyObject *docs = PyList_New(q.size);
    PyObject *scores = PyDict_New();
    if (docs == NULL || scores == NULL) {
        Py_XDECREF(docs);
        Py_XDECREF(scores);
        goto fail;
    }
    for (Py_ssize_t i = 0; i < q.size; i++) {
        PyObject *d = PyLong_FromLongLong(q.best_d[i]);
        PyObject *s = d ? PyFloat_FromDouble(q.best_s[i]) : NULL;
        if (s == NULL || PyDict_SetItem(scores, d, s) < 0) {
            Py_XDECREF(d);
            Py_XDECREF(s);
            Py_DECREF(docs);
            Py_DECREF(scores);
            goto fail;
        }
        Py_DECREF(s);
        PyList_SET_ITEM(docs, i, d);
    }
    result = Py_BuildValue("(NNn)", docs, scores, total);
fail:
    if (have_mask)
        PyBuffer_Release(&mask_view);
    if (have_flag)
        PyBuffer_Release(&flag_view);
    PyMem_Free(q.d_tids);
    PyMem_Free(q.q_rows);
    PyMem_Free(q.d_mult);
    PyMem_Free(q.lo);
    PyMem_Free(q.hi);
    PyMem_Free(q.slots);
    PyMem_Free(q.tfs);
    PyMem_Free(q.w_ptr);
    PyMem_Free(q.w_rows);
    PyMem_Free(q.best_d);
    PyMem_Free(q.best_s);
    PyMem_Free(q.best_c);
    Py_DECREF(ids);
    Py_XDECREF(words);
    return result;
}

static PyMethodDef Kernel_methods[] = {
    {"top", (PyCFunction)Kernel_top, METH_VARARGS, top_doc},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(Kernel_doc,
"Kernel(indptr, post_docs, post_tf, norm, idf, baseline, long_slot, long_bits, long_bmax,\n"
"       long_min, variant, k1, delta)\n\n"
"The ranking kernel over one index's arrays (held, not copied): int64 indptr, int32 post_docs,\n"
"uint16 post_tf, float64 norm (per doc), idf and baseline (per term), int32 long_slot, uint64\n"
"long_bits and float32 long_bmax (one row of ceil(docs / 64) per long term), float64 long_min;\n"
"variant 0 (okapi), 1 (l) or 2 (plus), k1 and the effective delta.");

static PyTypeObject KernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrieval._kernel.Kernel",
    .tp_basicsize = sizeof(Kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = Kernel_doc,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Kernel_init,
    .tp_dealloc = (destructor)Kernel_dealloc,
    .tp_methods = Kernel_methods,
};

/* ---------------------------------------------------------------------------------------------- */
/* The index build's tokenizer (retrieval.build.ChunkTokenizer): the surface words of a chunk's
 * fields, each looked up in a table of the words this tokenizer knows (bytes -> surface id), and
 * the chunk's postings and phrase positions from the per-surface-word term tables. The numpy path
 * of ChunkTokenizer is the definition; these give the same arrays. */

#define PREFETCH 8 /* look-ups ahead that the scan prefetches a slot for */
#define HEAD 16 /* a word of up to this many bytes is kept whole in its slot (zero-padded) */

typedef struct {
    uint64_t hash; /* the word's hash (0: an empty slot; a hash of 0 is stored as 1) */
    int32_t sid;   /* surface id; -1 - k while pending (the k-th new word of the last scan) */
    int32_t len;
    union {
        unsigned char word[HEAD];    /* len <= HEAD: the word */
        struct {
            unsigned char head[8];   /* len > HEAD: its first bytes, */
            int64_t off;             /* and where it is in the arena */
        } big;
    } u;
} Slot; /* 32 bytes: a look-up reads one cache line (two for a long word) */

typedef struct {
    PyObject_HEAD
    Slot *slots;
    Py_ssize_t cap, count;
    char *arena; /* the words longer than HEAD */
    Py_ssize_t arena_len, arena_cap;
    Py_ssize_t *pending; /* slots of the last scan's new words, in order */
    Py_ssize_t n_pending, pending_cap;
    unsigned char keep[256];  /* ASCII byte -> its byte in surface_bytes (lowercased, ' ' if no word char) */
    unsigned char shape[256]; /* ASCII byte -> 'a' (letter or digit), '-' (joiner ' or -) or ' ' */
} SurfaceTable;

static uint64_t
word_hash(const unsigned char *w, Py_ssize_t n)
{
    uint64_t h = 0x243F6A8885A308D3ULL ^ ((uint64_t)n * 0x9E3779B97F4A7C15ULL);
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, w + i, 8);
        h = (h ^ x) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t x = 0;
        memcpy(&x, w + i, (size_t)(n - i));
        h = (h ^ x) * 0xC2B2AE3D27D4EB4FULL;
        h ^= h >> 31;
    }
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 32;
    return h ? h : 1;
}

static int
table_grow(SurfaceTable *t)
{
    Py_ssize_t cap = t->cap ? t->cap * 2 : 1 << 14;
    Slot *slots = PyMem_Calloc((size_t)cap, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t mask = cap - 1;
    for (Py_ssize_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].hash)
            continue;
        Py_ssize_t j = (Py_ssize_t)(t->slots[i].hash & (uint64_t)mask);
        while (slots[j].hash)
            j = (j + 1) & mask;
        slots[j] = t->slots[i];
        if (slots[j].sid < 0) /* a pending word (-1 - k): its slot moved */
            t->pending[-1 - slots[j].sid] = j;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 0;
}

/* The surface id of word w (hash h: word_hash's), or -1 - k (pending), adding it as the next new
 * word when unknown; INT64_MIN / 2 with an exception set on failure. */
static int64_t
table_id(SurfaceTable *t, const unsigned char *w, Py_ssize_t n, uint64_t h, PyObject *new_words)
{
    unsigned char key[HEAD] = {0};
    memcpy(key, w, (size_t)(n < HEAD ? n : 8));
    Py_ssize_t mask = t->cap - 1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)mask);
    for (Slot *s = &t->slots[j]; s->hash; s = &t->slots[j = (j + 1) & mask]) {
        if (s->hash != h || s->len != n)
            continue;
        if (n <= HEAD ? memcmp(s->u.word, key, HEAD) == 0
                      : memcmp(s->u.big.head, w, 8) == 0 &&
                            memcmp(t->arena + s->u.big.off, w + 8, (size_t)(n - 8)) == 0)
            return s->sid;
    }
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "a word longer than 2 GiB");
        return INT64_MIN / 2;
    }
    PyObject *b = PyBytes_FromStringAndSize((const char *)w, n);
    if (b == NULL || PyList_Append(new_words, b) < 0) {
        Py_XDECREF(b);
        return INT64_MIN / 2;
    }
    Py_DECREF(b);
    if (n > HEAD && t->arena_len + n > t->arena_cap) {
        Py_ssize_t cap = t->arena_cap ? t->arena_cap : 1 << 16;
        while (cap < t->arena_len + n)
            cap *= 2;
        char *a = PyMem_Realloc(t->arena, (size_t)cap);
        if (a == NULL) {
            PyErr_NoMemory();
            return INT64_MIN / 2;
        }
        t->arena = a; t->arena_cap = cap;
    }
    if (t->n_pending == t->pending_cap) {
        Py_ssize_t cap = t->pending_cap ? t->pending_cap * 2 : 1024;
        Py_ssize_t *p = PyMem_Realloc(t->pending, (size_t)cap * sizeof(Py_ssize_t));
        if (p == NULL) {
            PyErr_NoMemory();
            return INT64_MIN / 2;
        }
        t->pending = p; t->pending_cap = cap;
    }
    if (t->n_pending >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many new words in one scan");
        return INT64_MIN / 2;
    }
    Slot *s = &t->slots[j];
    int32_t id = (int32_t)(-1 - t->n_pending);
    s->hash = h; s->len = (int32_t)n; s->sid = id;
    if (n <= HEAD) {
        memcpy(s->u.word, key, HEAD);
    } else {
        memcpy(s->u.big.head, w, 8);
        memcpy(t->arena + t->arena_len, w + 8, (size_t)(n - 8));
        s->u.big.off = t->arena_len;
        t->arena_len += n - 8;
    }
    t->pending[t->n_pending++] = j;
    t->count++;
    if (t->count * 2 > t->cap && table_grow(t) < 0)
        return INT64_MIN / 2;
    return id;
}

typedef struct {
    char *data;
    Py_ssize_t len, cap; /* in bytes */
} Grow;

static int
grow_reserve(Grow *g, Py_ssize_t extra)
{
    if (g->len + extra <= g->cap)
        return 0;
    Py_ssize_t cap = g->cap ? g->cap : 4096;
    while (cap < g->len + extra)
        cap *= 2;
    char *d = PyMem_Realloc(g->data, (size_t)cap);
    if (d == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    g->data = d; g->cap = cap;
    return 0;
}

static int
grow_i64(Grow *g, int64_t v)
{
    if (grow_reserve(g, 8) < 0)
        return -1;
    memcpy(g->data + g->len, &v, 8);
    g->len += 8;
    return 0;
}

static PyObject *
grow_bytearray(Grow *g)
{
    PyObject *out = PyByteArray_FromStringAndSize(g->data ? g->data : "", g->len);
    PyMem_Free(g->data);
    g->data = NULL; g->len = g->cap = 0;
    return out;
}

/* The words of s (separated by spaces) into sid; returns the number of words, -1 on error. */
static Py_ssize_t
scan_words(SurfaceTable *t, const unsigned char *s, Py_ssize_t n, Grow *sid, PyObject *new_words)
{
    Py_ssize_t words = 0, i = 0;
    while (i < n) {
        while (i < n && s[i] == ' ')
            i++;
        Py_ssize_t a = i;
        while (i < n && s[i] != ' ')
            i++;
        if (i > a) {
            int64_t id = table_id(t, s + a, i - a, word_hash(s + a, i - a), new_words);
            if (id == INT64_MIN / 2 || grow_i64(sid, id) < 0)
                return -1;
            words++;
        }
    }
    return words;
}

static int
SurfaceTable_init(SurfaceTable *t, PyObject *args, PyObject *Py_UNUSED(kwds))
{
    Py_buffer keep, shape;
    if (!PyArg_ParseTuple(args, "y*y*", &keep, &shape))
        return -1;
    int ok = keep.len == 256 && shape.len == 256;
    if (ok) {
        memcpy(t->keep, keep.buf, 256);
        memcpy(t->shape, shape.buf, 256);
    }
    PyBuffer_Release(&keep);
    PyBuffer_Release(&shape);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "SurfaceTable(keep, shape): two 256-byte maps");
        return -1;
    }
    if (t->cap == 0 && table_grow(t) < 0)
        return -1;
    return 0;
}

static void
SurfaceTable_dealloc(SurfaceTable *t)
{
    PyMem_Free(t->slots);
    PyMem_Free(t->arena);
    PyMem_Free(t->pending);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

PyDoc_STRVAR(scan_doc,
"scan(fields, surface_bytes) -> (sid, words, new)\n\n"
"The surface id of every surface word of the fields (a list of str), in order, as int64 in a\n"
"bytearray; the number of words per field (int64, bytearray); and the words this table did not know,\n"
"as bytes in order of first appearance. A new word's id is -1 - (its place in new) until resolve().\n"
"An ASCII field without a backslash whose every ' and - joins two letters or digits is read here\n"
"(lowercased, each other character a space, as surface_bytes reads it); any other field is given\n"
"to surface_bytes and its words are the runs of non-space bytes of what it returns.");

static PyObject *
SurfaceTable_scan(SurfaceTable *t, PyObject *args)
{
    PyObject *fields, *fallback;
    if (!PyArg_ParseTuple(args, "O!O", &PyList_Type, &fields, &fallback))
        return NULL;
    if (t->n_pending) {
        PyErr_SetString(PyExc_RuntimeError, "SurfaceTable.scan: the last scan's new words are not resolved");
        return NULL;
    }
    Grow sid = {0}, counts = {0};
    Py_ssize_t arena0 = t->arena_len;
    unsigned char *word = NULL;
    Py_ssize_t *starts = NULL;
    uint64_t *hashes = NULL;
    Py_ssize_t word_cap = 0;
    PyObject *new_words = PyList_New(0);
    if (new_words == NULL)
        return NULL;
    Py_ssize_t n_fields = PyList_GET_SIZE(fields);
    for (Py_ssize_t f = 0; f < n_fields; f++) {
        PyObject *s = PyList_GET_ITEM(fields, f);
        if (!PyUnicode_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "SurfaceTable.scan: fields must be str");
            goto fail;
        }
        Py_ssize_t words = -1;
        int fast = PyUnicode_IS_ASCII(s);
        const unsigned char *d = fast ? PyUnicode_1BYTE_DATA(s) : NULL;
        Py_ssize_t n = fast ? PyUnicode_GET_LENGTH(s) : 0;
        for (Py_ssize_t i = 0; fast && i < n; i++) {
            unsigned char c = d[i];
            if (c == '\\')
                fast = 0;
            else if (t->shape[c] == '-' && (i == 0 || i + 1 == n || t->shape[d[i - 1]] != 'a' ||
                                             t->shape[d[i + 1]] != 'a'))
                fast = 0;
        }
        if (fast) {
            /* the words (mapped bytes, one after the other) and their hashes first; then the look-ups,
             * each slot prefetched a few words ahead (the table is bigger than the caches) */
            if (n >= word_cap) {
                PyMem_Free(word);
                PyMem_Free(starts);
                PyMem_Free(hashes);
                word_cap = n + 64;
                word = PyMem_Malloc((size_t)word_cap);
                starts = PyMem_Malloc((size_t)(word_cap / 2 + 2) * sizeof(Py_ssize_t));
                hashes = PyMem_Malloc((size_t)(word_cap / 2 + 2) * sizeof(uint64_t));
                if (word == NULL || starts == NULL || hashes == NULL) {
                    PyErr_NoMemory();
                    goto fail;
                }
            }
            words = 0;
            Py_ssize_t i = 0, at = 0;
            while (i < n) {
                while (i < n && t->keep[d[i]] == ' ')
                    i++;
                Py_ssize_t a = at;
                while (i < n && t->keep[d[i]] != ' ')
                    word[at++] = t->keep[d[i++]];
                if (at > a) {
                    starts[words] = a;
                    hashes[words++] = word_hash(word + a, at - a);
                }
            }
            starts[words] = at;
            if (grow_reserve(&sid, 8 * words) < 0)
                goto fail;
            for (Py_ssize_t q = 0; q < words; q++) {
                if (q + PREFETCH < words)
                    __builtin_prefetch(&t->slots[hashes[q + PREFETCH] & (uint64_t)(t->cap - 1)]);
                int64_t id = table_id(t, word + starts[q], starts[q + 1] - starts[q], hashes[q], new_words);
                if (id == INT64_MIN / 2)
                    goto fail;
                memcpy(sid.data + sid.len, &id, 8);
                sid.len += 8;
            }
        } else {
            PyObject *b = PyObject_CallOneArg(fallback, s);
            if (b == NULL)
                goto fail;
            if (!PyBytes_Check(b)) {
                Py_DECREF(b);
                PyErr_SetString(PyExc_TypeError, "SurfaceTable.scan: surface_bytes must return bytes");
                goto fail;
            }
            words = scan_words(t, (const unsigned char *)PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), &sid,
                               new_words);
            Py_DECREF(b);
            if (words < 0)
                goto fail;
        }
        if (grow_i64(&counts, words) < 0)
            goto fail;
    }
    PyMem_Free(word);
    PyMem_Free(starts);
    PyMem_Free(hashes);
    PyObject *a = grow_bytearray(&sid), *b = grow_bytearray(&counts);
    if (a == NULL || b == NULL) {
        Py_XDECREF(a); Py_XDECREF(b); Py_DECREF(new_words);
        return NULL;
    }
    return Py_BuildValue("(NNN)", a, b, new_words);
fail:
    /* forget this scan's new words: the table stays as it was before the call */
    for (Py_ssize_t k = t->n_pending - 1; k >= 0; k--) {
        Py_ssize_t j = t->pending[k], mask = t->cap - 1;
        /* remove slot j (backward-shift deletion keeps the probe chains intact) */
        t->slots[j].hash = 0;
        Py_ssize_t i = (j + 1) & mask;
        while (t->slots[i].hash) {
            Py_ssize_t home = (Py_ssize_t)(t->slots[i].hash & (uint64_t)mask);
            if (((i - home) & mask) >= ((i - j) & mask)) {
                t->slots[j] = t->slots[i];
                t->slots[i].hash = 0;
                if (t->slots[j].sid < 0) /* a pending word that moved */
                    t->pending[-1 - t->slots[j].sid] = j;
                j = i;
            }
            i = (i + 1) & mask;
        }
        t->count--;
    }
    t->arena_len = arena0;
    t->n_pending = 0;
    PyMem_Free(word);
    PyMem_Free(starts);
    PyMem_Free(hashes);
    PyMem_Free(sid.data);
    PyMem_Free(counts.data);
    Py_DECREF(new_words);
    return NULL;
}

PyDoc_STRVAR(resolve_doc,
"resolve(ids, sid)\n\n"
"Give the last scan's new words their surface ids (ids: int64, one per new word, in order) and\n"
"replace the pending ids (-1 - k) in sid (that scan's int64 bytearray) by them.");

static PyObject *
SurfaceTable_resolve(SurfaceTable *t, PyObject *args)
{
    PyObject *ids_obj, *sid_obj;
    if (!PyArg_ParseTuple(args, "OO", &ids_obj, &sid_obj))
        return NULL;
    Py_buffer ids, sid;
    Py_ssize_t n_ids = get_view(ids_obj, &ids, "ids", "ql", 8, 0);
    if (n_ids < 0)
        return NULL;
    Py_ssize_t n_sid = get_view(sid_obj, &sid, "sid", "ql", 8, 1);
    if (n_sid < 0) {
        PyBuffer_Release(&ids);
        return NULL;
    }
    if (n_ids != t->n_pending) {
        PyBuffer_Release(&ids);
        PyBuffer_Release(&sid);
        PyErr_SetString(PyExc_ValueError, "SurfaceTable.resolve: one id per new word and an int64 sid");
        return NULL;
    }
    const int64_t *id = ids.buf;
    int64_t *s = sid.buf;
    for (Py_ssize_t k = 0; k < n_ids; k++)
        if (id[k] < 0 || id[k] > INT32_MAX) {
            PyBuffer_Release(&ids);
            PyBuffer_Release(&sid);
            PyErr_SetString(PyExc_ValueError, "SurfaceTable.resolve: an id out of range");
            return NULL;
        }
    for (Py_ssize_t k = 0; k < n_ids; k++)
        t->slots[t->pending[k]].sid = (int32_t)id[k];
    for (Py_ssize_t i = 0; i < n_sid; i++)
        if (s[i] < 0) {
            if (-1 - s[i] >= n_ids) {
                PyBuffer_Release(&ids);
                PyBuffer_Release(&sid);
                PyErr_SetString(PyExc_ValueError, "SurfaceTable.resolve: a pending id out of range");
                return NULL;
            }
            s[i] = id[-1 - s[i]];
        }
    t->n_pending = 0;
    PyBuffer_Release(&ids);
    PyBuffer_Release(&sid);
    Py_RETURN_NONE;
}

static PyObject *
SurfaceTable_len(SurfaceTable *t, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromSsize_t(t->count);
}

static PyMethodDef SurfaceTable_methods[] = {
    {"scan", (PyCFunction)SurfaceTable_scan, METH_VARARGS, scan_doc},
    {"resolve", (PyCFunction)SurfaceTable_resolve, METH_VARARGS, resolve_doc},
    {"size", (PyCFunction)SurfaceTable_len, METH_NOARGS, "The number of words in the table."},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(SurfaceTable_doc,
"SurfaceTable(keep, shape)\n\n"
"The surface words a ChunkTokenizer knows (bytes -> surface id), in an open-addressing table.\n"
"keep: 256 bytes, an ASCII byte's byte in surface_bytes (lowercased; b' ' for a character that is\n"
"no part of a word); shape: 256 bytes, b'a' for a letter or digit, b'-' for a joiner (' and -),\n"
"b' ' otherwise (surface_bytes's test of whether a text's joiners all join).");

static PyTypeObject SurfaceTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "retrieval._kernel.SurfaceTable",
    .tp_basicsize = sizeof(SurfaceTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = SurfaceTable_doc,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)SurfaceTable_init,
    .tp_dealloc = (destructor)SurfaceTable_dealloc,
    .tp_methods = SurfaceTable_methods,
};

PyDoc_STRVAR(chunk_arrays_doc,
"chunk_arrays(sid, words, index_flat, index_len, phrase_flat, phrase_len, n_terms, keep_tokens)\n"
"    -> (ordered, doc_len, stream_len, post_df, post_docs, post_tf, pos_count, positions, tokens)\n"
"    or None\n\n"
"A chunk's arrays (ChunkTokenizer._to_chunk's) from the surface id of each of its words (sid,\n"
"int64) and the number of words per field (words, int64: title, abstract, title, ...), through the\n"
"tokenizer's per-surface-word tables (int64: flat term ids and their counts). Each result is a\n"
"bytearray: ordered (int64: the tokenizer's term ids of the chunk's terms, in order of first\n"
"appearance among the index tokens), doc_len (int32), stream_len (int64), post_df (int64),\n"
"post_docs (int32, term-major, docs ascending), post_tf (uint16, or uint32 when a frequency needs\n"
"it: then the last item is 4), pos_count (int64), positions (int32, by term, ascending), tokens\n"
"(int32 chunk term ids of every index token, or None). None when a phrase term is not among the\n"
"chunk's index terms or the stream needs int64 positions (the numpy path then gives the arrays).");

enum { UNSEEN = -3, SINGLE = -2, GENERAL = -1 };

static PyObject *
chunk_arrays(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *o[6];
    Py_ssize_t n_global;
    int keep_tokens;
    if (!PyArg_ParseTuple(args, "OOOOOOnp", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &n_global, &keep_tokens))
        return NULL;
    static const char *names[6] = {"sid", "words", "index_flat", "index_len", "phrase_flat", "phrase_len"};
    Py_buffer v[6];
    Py_ssize_t n[6];
    int got = 0;
    PyObject *result = NULL;
    int64_t *istart = NULL, *pstart = NULL, *ordered = NULL, *stream_len = NULL, *df = NULL, *pc = NULL;
    int32_t *lut = NULL, *last = NULL, *slot = NULL, *tokens = NULL, *doc_len = NULL;
    int32_t *e_term = NULL, *e_doc = NULL, *post_docs = NULL, *positions = NULL, *s_term = NULL, *slut = NULL;
    int32_t *s_pos = NULL;
    uint32_t *e_tf = NULL, *post_tf = NULL;
    for (; got < 6; got++) {
        n[got] = get_view(o[got], &v[got], names[got], "ql", 8, 0);
        if (n[got] < 0)
            goto done;
    }
    const int64_t *sid = v[0].buf, *words = v[1].buf, *iflat = v[2].buf, *ilen = v[3].buf;
    const int64_t *pflat = v[4].buf, *plen = v[5].buf;
    Py_ssize_t n_words = n[0], n_fields = n[1], n_surface = n[3];
    if (n_fields % 2 || n[5] != n_surface || n_global < 0) {
        PyErr_SetString(PyExc_ValueError, "chunk_arrays: two fields per doc, one length per surface word");
        goto done;
    }
    Py_ssize_t n_docs = n_fields / 2;
    istart = PyMem_Malloc((size_t)(n_surface + 1) * sizeof(int64_t));
    pstart = PyMem_Malloc((size_t)(n_surface + 1) * sizeof(int64_t));
    lut = PyMem_Malloc((size_t)(n_global + 1) * sizeof(int32_t));
    slut = PyMem_Malloc((size_t)(n_surface + 1) * sizeof(int32_t));
    doc_len = PyMem_Calloc((size_t)n_docs + 1, sizeof(int32_t));
    stream_len = PyMem_Calloc((size_t)n_docs + 1, sizeof(int64_t));
    if (!istart || !pstart || !lut || !slut || !doc_len || !stream_len) {
        PyErr_NoMemory();
        goto done;
    }
    istart[0] = pstart[0] = 0;
    for (Py_ssize_t i = 0; i < n_surface; i++) {
        if (ilen[i] < 0 || plen[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "chunk_arrays: a negative length");
            goto done;
        }
        istart[i + 1] = istart[i] + ilen[i];
        pstart[i + 1] = pstart[i] + plen[i];
    }
    if (istart[n_surface] != n[2] || pstart[n_surface] != n[4]) {
        PyErr_SetString(PyExc_ValueError, "chunk_arrays: the flat tables do not match their lengths");
        goto done;
    }
    /* count the tokens; check every id before use */
    int64_t n_tok = 0, n_phr = 0, w_total = 0;
    int bad = 0;
    for (Py_ssize_t f = 0; f < n_fields && !bad; f++) {
        bad = words[f] < 0 || words[f] > n_words;
        w_total += words[f];
    }
    if (bad || w_total != n_words) {
        PyErr_SetString(PyExc_ValueError, "chunk_arrays: the word counts do not add up to the words");
        goto done;
    }
    /* slut, per surface word of the chunk: SINGLE (one index token, the same one phrase token: most
     * words), then that term's chunk id once known; GENERAL for any other word */
    for (Py_ssize_t i = 0; i <= n_surface; i++)
        slut[i] = UNSEEN;
    for (Py_ssize_t w = 0; w < n_words; w++) {
        int64_t s = sid[w];
        if (s < 0 || s >= n_surface) {
            PyErr_SetString(PyExc_ValueError, "chunk_arrays: a surface id out of range");
            goto done;
        }
        if (slut[s] == UNSEEN)
            slut[s] = ilen[s] == 1 && plen[s] == 1 && iflat[istart[s]] == pflat[pstart[s]] ? SINGLE : GENERAL;
        if (slut[s] == SINGLE) {
            n_tok++;
            n_phr++;
        } else {
            n_tok += ilen[s];
            n_phr += plen[s];
        }
    }
    for (Py_ssize_t j = 0; j < n[2]; j++)
        if (iflat[j] < 0 || iflat[j] >= n_global) {
            PyErr_SetString(PyExc_ValueError, "chunk_arrays: a term id out of range");
            goto done;
        }
    for (Py_ssize_t j = 0; j < n[4]; j++)
        if (pflat[j] < 0 || pflat[j] >= n_global) {
            PyErr_SetString(PyExc_ValueError, "chunk_arrays: a term id out of range");
            goto done;
        }
    if (n_phr + 2 * (int64_t)n_docs >= INT32_MAX || n_tok >= INT32_MAX || n_docs >= INT32_MAX) {
        result = Py_NewRef(Py_None); /* int64 positions: the numpy path */
        goto done;
    }
    for (Py_ssize_t i = 0; i <= n_global; i++)
        lut[i] = -1;
    tokens = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(int32_t));
    ordered = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(int64_t));
    last = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(int32_t));
    slot = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(int32_t));
    e_term = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(int32_t));
    e_doc = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(int32_t));
    e_tf = PyMem_Malloc((size_t)(n_tok + 1) * sizeof(uint32_t));
    if (!tokens || !ordered || !last || !slot || !e_term || !e_doc || !e_tf) {
        PyErr_NoMemory();
        goto done;
    }
    /* index tokens: chunk term ids by first appearance, and the (term, doc) entries in doc order */
    int32_t n_terms = 0;
    Py_ssize_t t_at = 0, n_entries = 0, w = 0;
    uint32_t tf_max = 0;
    for (Py_ssize_t d = 0; d < n_docs; d++) {
        Py_ssize_t end = w + words[2 * d] + words[2 * d + 1];
        Py_ssize_t before = t_at;
        for (; w < end; w++) {
            int64_t s = sid[w];
            int32_t known = slut[s];
            int64_t j = known == GENERAL ? istart[s] : 0, j_end = known == GENERAL ? istart[s + 1] : 1;
            for (; j < j_end; j++) {
                int32_t l = known;
                if (l < 0) {
                    int64_t g = known == SINGLE ? iflat[istart[s]] : iflat[j];
                    l = lut[g];
                    if (l < 0) {
                        l = lut[g] = n_terms;
                        ordered[n_terms] = g;
                        last[n_terms] = -1;
                        n_terms++;
                    }
                    if (known == SINGLE)
                        slut[s] = l;
                }
                tokens[t_at++] = l;
                if (last[l] != (int32_t)d) {
                    last[l] = (int32_t)d;
                    slot[l] = (int32_t)n_entries;
                    e_term[n_entries] = l;
                    e_doc[n_entries] = (int32_t)d;
                    e_tf[n_entries] = 1;
                    n_entries++;
                } else {
                    e_tf[slot[l]]++;
                }
            }
        }
        doc_len[d] = (int32_t)(t_at - before);
    }
    /* postings: a stable counting sort of the entries by term (docs stay ascending) */
    df = PyMem_Calloc((size_t)n_terms + 1, sizeof(int64_t));
    post_docs = PyMem_Malloc((size_t)n_entries * sizeof(int32_t) + 4);
    post_tf = PyMem_Malloc((size_t)n_entries * sizeof(uint32_t) + 4);
    pc = PyMem_Calloc((size_t)n_terms + 1, sizeof(int64_t));
    s_term = PyMem_Malloc((size_t)(n_phr + 1) * sizeof(int32_t));
    s_pos = PyMem_Malloc((size_t)(n_phr + 1) * sizeof(int32_t));
    positions = PyMem_Malloc((size_t)(n_phr + 1) * sizeof(int32_t));
    if (!df || !post_docs || !post_tf || !pc || !s_term || !s_pos || !positions) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t e = 0; e < n_entries; e++) {
        df[e_term[e]]++;
        if (e_tf[e] > tf_max)
            tf_max = e_tf[e];
    }
    int64_t acc = 0;
    for (int32_t l = 0; l < n_terms; l++) { /* slot: the next free place per term */
        slot[l] = (int32_t)acc;
        acc += df[l];
    }
    for (Py_ssize_t e = 0; e < n_entries; e++) {
        int32_t at = slot[e_term[e]]++;
        post_docs[at] = e_doc[e];
        post_tf[at] = e_tf[e];
    }
    /* the phrase stream: a gap after every field; positions by term, ascending */
    int64_t p = 0, k = 0;
    w = 0;
    for (Py_ssize_t f = 0; f < n_fields; f++) {
        Py_ssize_t end = w + words[f];
        int64_t before = k;
        for (; w < end; w++) {
            int64_t s = sid[w];
            if (slut[s] >= 0) { /* a single-token word: its term, seen among the index tokens */
                s_term[k] = slut[s];
                s_pos[k++] = (int32_t)p++;
                pc[slut[s]]++;
                continue;
            }
            for (int64_t j = pstart[s]; j < pstart[s + 1]; j++) {
                int32_t l = lut[pflat[j]];
                if (l < 0) { /* not an index term of the chunk: the numpy path decides */
                    result = Py_NewRef(Py_None);
                    goto done;
                }
                s_term[k] = l;
                s_pos[k++] = (int32_t)p++;
                pc[l]++;
            }
        }
        p++;
        stream_len[f / 2] += k - before + 1; /* phrase tokens per doc, plus the two gaps */
    }
    acc = 0;
    for (int32_t l = 0; l < n_terms; l++) {
        slot[l] = (int32_t)acc;
        acc += pc[l];
    }
    for (int64_t q = 0; q < k; q++)
        positions[slot[s_term[q]]++] = s_pos[q];
    /* the results */
    PyObject *r[9] = {NULL};
    int wide = tf_max >= 65536;
    r[0] = PyByteArray_FromStringAndSize((const char *)ordered, (Py_ssize_t)n_terms * 8);
    r[1] = PyByteArray_FromStringAndSize((const char *)doc_len, n_docs * 4);
    r[2] = PyByteArray_FromStringAndSize((const char *)stream_len, n_docs * 8);
    r[3] = PyByteArray_FromStringAndSize((const char *)df, (Py_ssize_t)n_terms * 8);
    r[4] = PyByteArray_FromStringAndSize((const char *)post_docs, n_entries * 4);
    if (wide) {
        r[5] = PyByteArray_FromStringAndSize((const char *)post_tf, n_entries * 4);
    } else {
        r[5] = PyByteArray_FromStringAndSize(NULL, n_entries * 2);
        if (r[5] != NULL) {
            uint16_t *tf16 = (uint16_t *)PyByteArray_AS_STRING(r[5]);
            for (Py_ssize_t e = 0; e < n_entries; e++)
                tf16[e] = (uint16_t)post_tf[e];
        }
    }
    r[6] = PyByteArray_FromStringAndSize((const char *)pc, (Py_ssize_t)n_terms * 8);
    r[7] = PyByteArray_FromStringAndSize((const char *)positions, (Py_ssize_t)k * 4);
    r[8] = keep_tokens ? PyByteArray_FromStringAndSize((const char *)tokens, (Py_ssize_t)t_at * 4)
                       : Py_NewRef(Py_None);
    int ok = 1;
    for (int i = 0; i < 9; i++)
        ok &= r[i] != NULL;
    if (ok)
        result = Py_BuildValue("(NNNNNNNNN)", r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]);
    else
        for (int i = 0; i < 9; i++)
            Py_XDECREF(r[i]);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    PyMem_Free(istart); PyMem_Free(pstart); PyMem_Free(lut); PyMem_Free(slut); PyMem_Free(doc_len); PyMem_Free(stream_len);
    PyMem_Free(tokens); PyMem_Free(ordered); PyMem_Free(last); PyMem_Free(slot); PyMem_Free(e_term);
    PyMem_Free(e_doc); PyMem_Free(e_tf); PyMem_Free(df); PyMem_Free(post_docs); PyMem_Free(post_tf);
    PyMem_Free(pc); PyMem_Free(s_term); PyMem_Free(s_pos); PyMem_Free(positions);
    return result;
}

/* ---------------------------------------------------------------------------------------------- */
/* The index merge's scatter (retrieval.build.Merger.finish): a chunk's entries, grouped by its
 * terms, copied into the corpus-wide CSR array at each term's next free slot, with a base added.
 * The numpy path (build._destinations and a fancy assignment) is the definition; this writes the
 * same values to the same slots, one memcpy (or one add loop) per (chunk, term) run. */

PyDoc_STRVAR(scatter_doc,
"scatter(out, cursor, ids, counts, values, base, advance)\n\n"
"For each i: counts[i] entries of values (the next ones, in order), plus base, go to\n"
"out[cursor[ids[i]]:...], and (when advance) cursor[ids[i]] advances by counts[i]. out and\n"
"values: one item type (uint16, int32, uint32 or int64; base only for the signed ones); cursor:\n"
"writable int64; ids (distinct) and counts: int32. Every slot is checked: ValueError instead of a\n"
"write out of bounds.");

static PyObject *
scatter(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *o[5];
    long long base;
    int advance;
    if (!PyArg_ParseTuple(args, "OOOOOLp", &o[0], &o[1], &o[2], &o[3], &o[4], &base, &advance))
        return NULL;
    Py_buffer out, cur, idv, cnt, val;
    int got = 0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(o[0], &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "out: not a C-contiguous writable array");
        return NULL;
    }
    got = 1;
    Py_ssize_t size = out.itemsize;
    const char *codes = size == 2 ? "H" : size == 4 ? "iI" : size == 8 ? I64 : "";
    if (!*codes || !fmt_is(&out, codes, size)) {
        PyErr_SetString(PyExc_ValueError, "out: wrong item type");
        goto done;
    }
    int is_signed = fmt_is(&out, "ilq", size);
    if (base != 0 && !is_signed) {
        PyErr_SetString(PyExc_ValueError, "base: only for signed items");
        goto done;
    }
    Py_ssize_t n_out = out.len / size;
    Py_ssize_t n_cur = get_view(o[1], &cur, "cursor", I64, 8, 1);
    if (n_cur < 0)
        goto done;
    got = 2;
    Py_ssize_t n_ids = get_view(o[2], &idv, "ids", I32, 4, 0);
    if (n_ids < 0)
        goto done;
    got = 3;
    Py_ssize_t n_cnt = get_view(o[3], &cnt, "counts", I32, 4, 0);
    if (n_cnt < 0)
        goto done;
    got = 4;
    Py_ssize_t n_val = get_view(o[4], &val, "values", codes, size, 0);
    if (n_val < 0)
        goto done;
    got = 5;
    if (n_ids != n_cnt) {
        PyErr_SetString(PyExc_ValueError, "scatter: one count per id");
        goto done;
    }
    if (val.format && out.format && strcmp(val.format, out.format) != 0 &&
        fmt_is(&val, "ilq", size) != is_signed) {
        PyErr_SetString(PyExc_ValueError, "values: not out's item type");
        goto done;
    }
    int64_t *cursor = cur.buf;
    const int32_t *ids = idv.buf, *counts = cnt.buf;
    char *dst = out.buf;
    const char *src = val.buf;
    Py_ssize_t at = 0;
    /* every run checked first, so that nothing is written when one is wrong (ids are distinct per
     * chunk; the second pass checks again, in case they are not) */
    for (Py_ssize_t i = 0; i < n_ids; i++) {
        int32_t t = ids[i], c = counts[i];
        if (t < 0 || t >= n_cur || c < 0 || c > n_val - at) {
            PyErr_SetString(PyExc_ValueError, "scatter: an id or a count out of range");
            goto done;
        }
        if (cursor[t] < 0 || cursor[t] > (int64_t)n_out - c) {
            PyErr_SetString(PyExc_ValueError, "scatter: a slot out of range");
            goto done;
        }
        at += c;
    }
    if (at != n_val) {
        PyErr_SetString(PyExc_ValueError, "scatter: the counts do not add up to the values");
        goto done;
    }
    at = 0;
    /* without advance, the arrays that share the cursor are written first, the last one advances */
    for (Py_ssize_t i = 0; i < n_ids; i++) {
        int32_t t = ids[i], c = counts[i];
        int64_t d = cursor[t];
        if (d < 0 || d > (int64_t)n_out - c) {
            PyErr_SetString(PyExc_ValueError, "scatter: a slot out of range (an id repeated)");
            goto done;
        }
        if (base == 0) {
            memcpy(dst + d * size, src + at * size, (size_t)c * (size_t)size);
        } else if (size == 4) {
            int32_t *w = (int32_t *)dst + d;
            const int32_t *r = (const int32_t *)src + at;
            for (int32_t k = 0; k < c; k++)
                w[k] = (int32_t)((int64_t)r[k] + base);
        } else {
            int64_t *w = (int64_t *)dst + d;
            const int64_t *r = (const int64_t *)src + at;
            for (int32_t k = 0; k < c; k++)
                w[k] = r[k] + (int64_t)base;
        }
        if (advance)
            cursor[t] = d + c;
        at += c;
    }
    result = Py_NewRef(Py_None);
done:
    if (got >= 5) PyBuffer_Release(&val);
    if (got >= 4) PyBuffer_Release(&cnt);
    if (got >= 3) PyBuffer_Release(&idv);
    if (got >= 2) PyBuffer_Release(&cur);
    PyBuffer_Release(&out);
    return result;
}

PyDoc_STRVAR(probe_table_doc,
"probe_table(table, hashes)\n\n"
"The stored vocabulary's open-addressing table (retrieval.postings.vocabulary_arrays): term id i\n"
"goes to the first slot from hashes[i] & (len(table) - 1) on (linear probing) that holds -1, in id\n"
"order. table: writable int32, a power of two longer than hashes, all -1; hashes: uint32.");

static PyObject *
probe_table(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *o[2];
    if (!PyArg_ParseTuple(args, "OO", &o[0], &o[1]))
        return NULL;
    Py_buffer tv, hv;
    Py_ssize_t size = get_view(o[0], &tv, "table", I32, 4, 1);
    if (size < 0)
        return NULL;
    Py_ssize_t n = get_view(o[1], &hv, "hashes", "I", 4, 0);
    if (n < 0) {
        PyBuffer_Release(&tv);
        return NULL;
    }
    PyObject *result = NULL;
    int32_t *table = tv.buf;
    const uint32_t *hashes = hv.buf;
    if (size == 0 || (size & (size - 1)) != 0 || n >= size || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "probe_table: the table's length is a power of two above the terms'");
        goto done;
    }
    for (Py_ssize_t s = 0; s < size; s++) {
        if (table[s] != -1) {
            PyErr_SetString(PyExc_ValueError, "probe_table: the table is not empty");
            goto done;
        }
    }
    size_t mask = (size_t)size - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t h = hashes[i] & mask;
        while (table[h] >= 0)
            h = (h + 1) & mask;
        table[h] = (int32_t)i;
    }
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&hv);
    PyBuffer_Release(&tv);
    return result;
}

static PyMethodDef module_methods[] = {
    {"chunk_arrays", chunk_arrays, METH_VARARGS, chunk_arrays_doc},
    {"scatter", scatter, METH_VARARGS, scatter_doc},
    {"probe_table", probe_table, METH_VARARGS, probe_table_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "retrieval._kernel",
    .m_doc = "The pruned BM25 ranking kernel of retrieval.postings (rank-bm25's exact scores).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit__kernel(void)
{
    if (PyType_Ready(&KernelType) < 0 || PyType_Ready(&SurfaceTableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&KernelType);
    if (PyModule_AddObject(m, "Kernel", (PyObject *)&KernelType) < 0) {
        Py_DECREF(&KernelType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&SurfaceTableType);
    if (PyModule_AddObject(m, "SurfaceTable", (PyObject *)&SurfaceTableType) < 0) {
        Py_DECREF(&SurfaceTableType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
