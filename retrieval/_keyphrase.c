/* The word pass of retrieval/keyphrase.py in C: the same describe(), for speed.
 *
 * keyphrase.py is the definition; this file computes exactly what its Python path does (tests
 * compare the two on generated text and on every bundled, ICLR and SciFact abstract) for the texts
 * it accepts: those whose opening (the characters describe reads) and name hold only characters
 * below U+3000 whose lowercase is one character and the same in any context (not İ, Σ) and that
 * no case-insensitive regex matches with an ASCII letter (not ı, ſ). For any other text it returns
 * None and the Python path answers. Non-ASCII characters are classed by the functions str and re
 * use themselves (Py_UNICODE_ISSPACE, ISALNUM, ISUPPER, TOLOWER ...). The word lists, weights and
 * excluded characters are not copied: keyphrase.py hands its own to configure() on first use.
 *
 * Scores are integers (a word's probability in units of 2**-20, rounded as the Python path rounds
 * it), so a phrase's value is an exact sum whatever order its words are added in.
 *
 * It holds the GIL throughout (a call is a few microseconds) and uses static buffers. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define KP_VERSION 7 /* keyphrase.py checks it: a stale build is not used */

#define HEAD 1500             /* code points read */
#define TEXT_MAX (3 * HEAD)   /* after dashes are spaced out (x3) or a glued '.' gets its space (x2) */
#define TOK_MAX (TEXT_MAX / 2 + 2)
#define KEY_SLOTS 8192        /* >= twice the most words a text can have (a power of two) */

/* word-list flags */
#define F_BREAK 1
#define F_SUBJECT 2
#define F_THEN 4
#define F_ADVERB_NOT 8
#define F_CONNECTOR 16
#define F_GENERIC 32

/* ---- configuration (from keyphrase.py) ---- */

#define WORD_SLOTS 2048
#define WORD_LEN 32
typedef struct {
    char w[WORD_LEN];
    unsigned char len;
    unsigned char flags;
} word_slot;

static word_slot words_tab[WORD_SLOTS];
#define ACCEPT_BELOW 0x3000                       /* no character from here on is read */
static unsigned char excluded[ACCEPT_BELOW / 8]; /* nor these (a bitmap) */
static int configured = 0;
static int used = 0; /* words in words_tab */
static int min_words, chunk_words, max_words, statement_words, length_up_to;
static double w_bias, w_log_count, w_capital, w_statement, w_generic, w_short, w_at, w_length;
static double w_hyphen, w_paren, w_head, w_early, w_object;
static int early;
#define LOGS 64
static double logs[LOGS]; /* log(i): the same libm values math.log gives, once */
static double threshold, quantum, w_plain;
static double r_sum, r_words, r_top, r_mean, r_at, r_joined, r_before, r_one; /* the rank's weights */
static double r_ing, r_paren, r_statement, r_hyphen, r_capitals, r_acronym;    /* and its words' */
static int64_t length_q, second_min_q;

static uint32_t hash_bytes(const char *s, int n) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static word_slot *word_find(const char *s, int n, int insert) {
    uint32_t h = hash_bytes(s, n) & (WORD_SLOTS - 1);
    for (;;) {
        word_slot *slot = &words_tab[h];
        if (slot->len == 0) return insert ? slot : NULL;
        if (slot->len == n && memcmp(slot->w, s, n) == 0) return slot;
        h = (h + 1) & (WORD_SLOTS - 1);
    }
}

static int add_words(PyObject *iterable, unsigned char flag) {
    PyObject *it = PyObject_GetIter(iterable);
    if (it == NULL) return -1;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        Py_ssize_t n;
        const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &n) : NULL;
        if (s == NULL || n == 0 || n >= WORD_LEN || (Py_ssize_t)strlen(s) != n ||
            PyUnicode_MAX_CHAR_VALUE(item) > 127 || used >= WORD_SLOTS / 2) {
            Py_DECREF(item);
            Py_DECREF(it);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "word lists: short ASCII strings only");
            return -1;
        }
        word_slot *slot = word_find(s, (int)n, 1);
        if (slot->len == 0) {
            memcpy(slot->w, s, n);
            slot->len = (unsigned char)n;
            used++;
        }
        slot->flags |= flag;
        Py_DECREF(item);
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *kp_configure(PyObject *self, PyObject *args) {
    PyObject *brk, *subjects, *then, *adverb_not, *connectors, *generic, *exclude;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOO(iiiii)(dddddddd)(dddddi)(ddd)(LL)(dddddddd)(dddddd)", &exclude, &brk, &subjects, &then,
                          &adverb_not, &connectors, &generic, &min_words, &chunk_words, &max_words,
                          &statement_words, &length_up_to, &w_bias, &w_log_count, &w_capital, &w_statement,
                          &w_generic, &w_short, &w_at, &w_length, &w_hyphen, &w_paren, &w_head,
                          &w_early, &w_object, &early, &threshold, &quantum, &w_plain,
                          &length_q, &second_min_q, &r_sum, &r_words, &r_top, &r_mean, &r_at, &r_joined,
                          &r_before, &r_one, &r_ing, &r_paren, &r_statement, &r_hyphen, &r_capitals,
                          &r_acronym))
        return NULL;
    configured = 0;
    used = 0;
    memset(words_tab, 0, sizeof words_tab);
    memset(excluded, 0, sizeof excluded);
    {
        PyObject *it = PyObject_GetIter(exclude), *item;
        if (it == NULL) return NULL;
        while ((item = PyIter_Next(it)) != NULL) {
            long c = PyLong_AsLong(item);
            Py_DECREF(item);
            if (c == -1 && PyErr_Occurred()) break;
            if (c >= 128 && c < ACCEPT_BELOW) excluded[c >> 3] |= (unsigned char)(1u << (c & 7));
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) return NULL;
    }
    if (add_words(brk, F_BREAK) || add_words(subjects, F_SUBJECT) || add_words(then, F_THEN) ||
        add_words(adverb_not, F_ADVERB_NOT) || add_words(connectors, F_CONNECTOR) ||
        add_words(generic, F_GENERIC))
        return NULL;
    if (min_words < 1 || chunk_words < 1 || max_words < 2 || max_words > 64 || statement_words < 0 ||
        chunk_words > 64) {
        PyErr_SetString(PyExc_ValueError, "configure: a count out of range");
        return NULL;
    }
    for (int i = 1; i < LOGS; i++) logs[i] = log((double)i);
    configured = 1;
    Py_RETURN_NONE;
}

/* ---- per-call state (static: the GIL is held) ---- */

static Py_UCS4 t[TEXT_MAX + 4];  /* the text as describe reads it */
static Py_UCS4 lo[TEXT_MAX + 4]; /* the same, ASCII letters lowercased */
static Py_ssize_t n_t;

static int tok_s[TOK_MAX], tok_e[TOK_MAX];
static unsigned char tok_quote[TOK_MAX]; /* the word holds ' or U+2019 */
static int opens[TOK_MAX];               /* where a word (\b\w) opens with w, p or s: a subject may */
static int n_opens;
static int every[TOK_MAX]; /* the key of each word, -1 for a break word */
static int n_tok;

/* content words: the core's span, whether shown in parentheses, its key */
static int cw_s[TOK_MAX], cw_e[TOK_MAX], cw_key[TOK_MAX];
static unsigned char cw_paren[TOK_MAX];
static int cw_ini[TOK_MAX];            /* its initials: ini_buf[cw_ini:cw_ini + cw_ini_n] */
static unsigned char cw_ini_n[TOK_MAX];
static char ini_buf[TEXT_MAX];
static int n_cw, n_ini;
#define W_HYPHEN 1
#define W_PAREN 2
#define W_ING 4

/* chunks: first content word, how many, the connector before (span in lo, or -1), linked */
static int ch_first[TOK_MAX], ch_n[TOK_MAX], ch_bs[TOK_MAX], ch_be[TOK_MAX];
static int ch_at[TOK_MAX]; /* the index of its first word in the text's words */
static unsigned char ch_linked[TOK_MAX];
/* what the rank asks of its first chunk_words words: W_HYPHEN, W_PAREN (one of them), W_ING (the
 * last ends in "ing"), and how many open with A-Z */
static unsigned char ch_look[TOK_MAX];
static int ch_caps[TOK_MAX];
static int n_ch;

/* keys: span in lo, hash, features, score */
static int k_s[TOK_MAX], k_len[TOK_MAX], k_count[TOK_MAX];
static uint32_t k_hash[TOK_MAX];
static unsigned char k_cap[TOK_MAX], k_stmt[TOK_MAX], k_scored[TOK_MAX];
/* and the word score's: where first said, how many uses end a chunk, ever hyphenated, ever "(SSL)",
 * in the statement's object */
static int k_pos[TOK_MAX], k_ends[TOK_MAX];
static unsigned char k_hyph[TOK_MAX], k_par[TOK_MAX], k_obj[TOK_MAX];
static int64_t k_score[TOK_MAX];
static unsigned k_mark[TOK_MAX];
static unsigned mark_stamp = 0;
static int n_key;
static int key_slot[KEY_SLOTS];
static uint32_t key_mask; /* the table in use: a power of two >= twice the words, cleared per call */

/* candidates: value, chunk (and the chunk before it when joined, else -1), the connector shown
 * before the candidate (a chunk whose ch_bs is that connector, or -1) */
static int64_t c_val[2 * TOK_MAX];
static double c_rank[2 * TOK_MAX];
static int c_a[2 * TOK_MAX], c_b[2 * TOK_MAX], c_before[2 * TOK_MAX];
static int n_c;

static int stated;          /* the first word after the statement's verb, -1 when there is none */
static char letters[128];   /* the name's capitals (A-Z), lowercased, in order */
static int n_letters;

/* Character classes as str and re have them (the same CPython functions for non-ASCII); ASCII
 * from a table (filled at import from the same definitions) */
#define C_SPACE 1
#define C_ALNUM 2
#define C_WORD 4
#define C_PUNCT 8
#define C_UPPER 16
#define C_LOWER 32
static unsigned char cls[128];
static Py_UCS4 lower_ascii[128]; /* to_lower */
static inline int is_space(Py_UCS4 c) { return c < 128 ? cls[c] & C_SPACE : Py_UNICODE_ISSPACE(c); }
static inline int is_alnum(Py_UCS4 c) { return c < 128 ? cls[c] & C_ALNUM : Py_UNICODE_ISALNUM(c); }
static inline int is_word(Py_UCS4 c) { return c < 128 ? cls[c] & C_WORD : Py_UNICODE_ISALNUM(c); }
static inline int is_lower_az(Py_UCS4 c) { return c >= 'a' && c <= 'z'; }
static inline int is_upper_az(Py_UCS4 c) { return c >= 'A' && c <= 'Z'; }
static inline int is_upper_cased(Py_UCS4 c) { /* upper or title case: str.islower says no */
    return c < 128 ? cls[c] & C_UPPER : Py_UNICODE_ISUPPER(c) || Py_UNICODE_ISTITLE(c);
}
static inline int is_lower_cased(Py_UCS4 c) { return c < 128 ? cls[c] & C_LOWER : Py_UNICODE_ISLOWER(c); }
static inline Py_UCS4 to_lower(Py_UCS4 c) { return c < 128 ? (is_upper_az(c) ? c + 32 : c) : Py_UNICODE_TOLOWER(c); }

static void fill_classes(void) {
    for (int c = 0; c < 128; c++) {
        lower_ascii[c] = to_lower((Py_UCS4)c);
        int space = c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31);
        int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        int punct = c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' || c == '(' ||
                    c == ')' || c == '[' || c == ']' || c == '{' || c == '}' || c == '"' || c == '\'' ||
                    c == '*';
        cls[c] = (unsigned char)((space ? C_SPACE : 0) | (alnum ? C_ALNUM : 0) |
                                 (alnum || c == '_' ? C_WORD : 0) | (punct ? C_PUNCT : 0) |
                                 (is_upper_az((Py_UCS4)c) ? C_UPPER : 0) |
                                 (is_lower_az((Py_UCS4)c) ? C_LOWER : 0));
    }
}

/* The characters read here: below ACCEPT_BELOW, less those keyphrase.py excludes (configure): a
 * character whose lowercase is not one character (İ), Σ (its lowercase depends on the next one),
 * and those a case-insensitive regex matches with an ASCII letter (ı, ſ, K). */
static inline int accepted(Py_UCS4 c) {
    return c < 128 || (c < ACCEPT_BELOW && !(excluded[c >> 3] & (1u << (c & 7))));
}

static inline int is_punct(Py_UCS4 c) { /* keyphrase._PUNCT */
    if (c < 128) return cls[c] & C_PUNCT;
    return c == 0x201C || c == 0x201D || c == 0x2018 || c == 0x2019;
}

/* the flags of a word (a span of lo) in the word lists, 0 when in none: word_find's look-up,
 * hashing and comparing the code points in place */
#define FNV_BASIS 2166136261u
#define FNV_PRIME 16777619u
static int word_flags(const Py_UCS4 *s, int n, uint32_t h) { /* h: the FNV hash of the ASCII s */
    if (n <= 0 || n >= WORD_LEN) return 0;
    for (h &= WORD_SLOTS - 1;; h = (h + 1) & (WORD_SLOTS - 1)) {
        const word_slot *slot = &words_tab[h];
        if (slot->len == 0) return 0;
        if (slot->len != n) continue;
        int i = 0;
        while (i < n && (unsigned char)slot->w[i] == s[i]) i++;
        if (i == n) return slot->flags;
    }
}

static int flags_of(const Py_UCS4 *s, int n) {
    if (n <= 0 || n >= WORD_LEN) return 0;
    uint32_t h = FNV_BASIS;
    for (int i = 0; i < n; i++) {
        if (s[i] > 127) return 0;
        h = (h ^ s[i]) * FNV_PRIME;
    }
    return word_flags(s, n, h);
}

static inline int span_eq(const Py_UCS4 *a, int an, const Py_UCS4 *b, int bn) {
    return an == bn && memcmp(a, b, (size_t)an * sizeof(Py_UCS4)) == 0;
}

static uint32_t hash_ucs4(const Py_UCS4 *s, int n) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) h = (h ^ (uint32_t)s[i]) * 16777619u;
    return h;
}

/* the id of the key lo[s:s+n], made when new (insert) */
static int key_id(int s, int n, uint32_t h, int insert) { /* h: hash_ucs4(lo + s, n) */
    uint32_t i = h & key_mask;
    for (;;) {
        int id = key_slot[i];
        if (id == 0) {
            if (!insert) return -1;
            id = n_key++;
            key_slot[i] = id + 1;
            k_s[id] = s;
            k_len[id] = n;
            k_hash[id] = h;
            k_count[id] = 0;
            k_cap[id] = k_stmt[id] = k_scored[id] = 0;
            k_ends[id] = 0;
            k_hyph[id] = k_par[id] = k_obj[id] = 0;
            k_mark[id] = 0;
            return id;
        }
        id--;
        if (k_hash[id] == h && span_eq(lo + k_s[id], k_len[id], lo + s, n)) return id;
        i = (i + 1) & key_mask;
    }
}


static inline int ends_plural(const Py_UCS4 *s, int n) { /* len > 3, ends 's', not 'ss'/'us'/'is' */
    return n > 3 && s[n - 1] == 's' && s[n - 2] != 's' && s[n - 2] != 'u' && s[n - 2] != 'i';
}

/* keyphrase._score: the word's probability of being in the real title, less threshold, quantised */
static int64_t score_q(int k, int generic, int n_words) {
    int count = k_count[k];
    double z = w_bias + w_log_count * (count < LOGS ? logs[count] : log((double)count));
    z = z + (k_cap[k] ? w_capital : 0.0);
    z = z + (k_stmt[k] ? w_statement : 0.0);
    z = z + (generic ? w_generic : 0.0);
    z = z + (k_len[k] <= 3 ? w_short : 0.0);
    z = z + w_at * ((double)k_pos[k] / (double)n_words);
    z = z + w_length * (k_len[k] < LOGS ? logs[k_len[k]] : log((double)k_len[k]));
    z = z + (k_hyph[k] ? w_hyphen : 0.0);
    z = z + (k_par[k] ? w_paren : 0.0);
    z = z + w_head * ((double)k_ends[k] / (double)count);
    z = z + (k_pos[k] < early ? w_early : 0.0);
    z = z + (k_obj[k] ? w_object : 0.0);
    double p = 1.0 / (1.0 + exp(-z)) - threshold;
    return (int64_t)floor(p * quantum + 0.5);
}

/* a case-insensitive ASCII literal at t[i:] */
static int literal_at(Py_ssize_t i, const char *lit) {
    for (; *lit; lit++, i++) {
        if (i >= n_t || lo[i] != (Py_UCS4)*lit) return 0; /* lo[i] == to_lower(t[i]) */
    }
    return 1;
}

/* the end of a verb of the statement ("propose", "designs") at t[i:], followed by a word boundary,
 * or -1 */
static Py_ssize_t verb_at(Py_ssize_t i) {
    static const char *verbs[] = {"propose", "introduce", "present", "develop", "design", "devise",
                                  "build", "construct", "create"};
    for (size_t v = 0; v < sizeof verbs / sizeof *verbs; v++) {
        if (!literal_at(i, verbs[v])) continue;
        Py_ssize_t e = i + (Py_ssize_t)strlen(verbs[v]);
        if (e < n_t && (t[e] == 's' || t[e] == 'S')) {
            if (e + 1 >= n_t || !is_word(t[e + 1])) return e + 1;
            return -1;
        }
        if (e >= n_t || !is_word(t[e])) return e;
        return -1;
    }
    return -1;
}

/* keyphrase._STATEMENT.search(text).end(), or -1 */
static Py_ssize_t statement_end(void) {
    static const char *subjects[] = {"we", "paper", "work", "study"};
    for (int o = 0; o < n_opens; o++) { /* the places p where is_word(t[p]) && !is_word(t[p - 1]) */
        Py_ssize_t p = opens[o];         /* and lo[p] (what literal_at compares) opens a subject */
        for (size_t k = 0; k < 4; k++) {
            if (!literal_at(p, subjects[k])) continue;
            Py_ssize_t q = p + (Py_ssize_t)strlen(subjects[k]);
            if (q >= n_t || !is_space(t[q])) break;
            while (q < n_t && is_space(t[q])) q++;
            /* (?:\w+\s+)? greedy: one whole word and its spaces, then the verb */
            Py_ssize_t r = q;
            while (r < n_t && is_word(t[r])) r++;
            if (r > q && r < n_t && is_space(t[r])) {
                Py_ssize_t s = r;
                while (s < n_t && is_space(t[s])) s++;
                Py_ssize_t e = verb_at(s);
                if (e >= 0) return e;
            }
            Py_ssize_t e = verb_at(q);
            if (e >= 0) return e;
            break; /* no other subject matches here */
        }
    }
    return -1;
}

/* the number of words starting before position p */
static int words_before(Py_ssize_t p) {
    int lo_i = 0, hi = n_tok;
    while (lo_i < hi) {
        int mid = (lo_i + hi) / 2;
        if (tok_s[mid] < p) lo_i = mid + 1;
        else hi = mid;
    }
    return lo_i;
}

/* mark a candidate's keys (the first chunk_words keys of its chunks, less skip) with stamp; returns
 * how many distinct keys and adds their scores to *sum */
static int64_t mark_top; /* the highest score mark_chunk added since it was reset */

static int mark_chunk(int c, int skip, unsigned stamp, int64_t *sum, int *distinct) {
    int n = ch_n[c] < chunk_words ? ch_n[c] : chunk_words;
    for (int j = 0; j < n; j++) {
        int k = cw_key[ch_first[c] + j];
        if (k == skip || k_mark[k] == stamp) continue;
        k_mark[k] = stamp;
        *sum += k_score[k];
        if (k_score[k] > mark_top) mark_top = k_score[k];
        (*distinct)++;
    }
    return n;
}

static unsigned next_stamp(void) {
    if (++mark_stamp == 0) { /* wrapped: clear */
        memset(k_mark, 0, sizeof k_mark);
        mark_stamp = 1;
    }
    return mark_stamp;
}

/* candidate i: chunk a (and b before it, or -1); its value and its rank (keyphrase.py's rank(), the
 * same operations in the same order, so the same double) */
static void value_of(int i, int a, int b, int skip, int before) {
    unsigned stamp = next_stamp();
    int64_t sum = 0;
    int distinct = 0;
    mark_top = INT64_MIN;
    if (b >= 0) mark_chunk(b, skip, stamp, &sum, &distinct);
    mark_chunk(a, skip, stamp, &sum, &distinct);
    int64_t v = sum + length_q * (distinct < length_up_to ? distinct : length_up_to);
    int64_t share_q = (int64_t)floor(threshold * quantum + 0.5); /* round(): threshold * quantum > 0 */
    double total = (double)(sum + distinct * share_q) / quantum;
    double top = distinct ? (double)(mark_top + share_q) / quantum : 0.0;
    double mean = distinct ? total / distinct : 0.0;
    double r = (double)v / quantum + r_sum * total;
    r = r + r_words * distinct;
    r = r + r_top * top;
    r = r + r_mean * mean;
    r = r + r_at * ((double)ch_at[b >= 0 ? b : a] / (double)n_tok);
    if (b >= 0) r = r + r_joined;
    if (ch_bs[before] >= 0) r = r + r_before;
    if (b < 0 && (ch_n[a] < chunk_words ? ch_n[a] : chunk_words) == 1) r = r + r_one;
    /* its words (b's then a's): the last ends in "ing", one in parentheses, one hyphenated, how
     * many open with A-Z, whether their initials spell the name (keyphrase._spells) */
    int look = ch_look[a] | (b >= 0 ? ch_look[b] & ~W_ING : 0);
    int capitals = ch_caps[a] + (b >= 0 ? ch_caps[b] : 0);
    int spelled = 0, first = 1;
    for (int part = 0; part < 2 && n_letters >= 2 && first >= 0; part++) {
        int c = part == 0 ? b : a;
        if (c < 0) continue;
        int n = ch_n[c] < chunk_words ? ch_n[c] : chunk_words;
        for (int j = 0; j < n && first >= 0; j++) {
            int w = ch_first[c] + j;
            for (int q = cw_ini[w]; q < cw_ini[w] + cw_ini_n[w]; q++) {
                char ini = ini_buf[q];
                if (first) {
                    if (ini != letters[0]) { first = -1; break; } /* not spelled */
                    first = 0;
                }
                if (spelled < n_letters && ini == letters[spelled]) spelled++;
            }
        }
    }
    if (look & W_ING) r = r + r_ing;
    if (look & W_PAREN) r = r + r_paren;
    int at = ch_at[b >= 0 ? b : a];
    if (stated >= 0 && stated <= at && at < stated + statement_words) r = r + r_statement;
    if (look & W_HYPHEN) r = r + r_hyphen;
    r = r + r_capitals * capitals;
    if (n_letters >= 2 && first == 0 && spelled == n_letters) r = r + r_acronym;
    c_val[i] = v;
    c_rank[i] = r;
}

/* phrase assembly */
typedef struct {
    const Py_UCS4 *s; /* the word's characters (t for a surface, lo for a connector) */
    int n;
    int paren;
} pword;

static int add_chunk_words(pword *out, int at, int c) {
    int n = ch_n[c] < chunk_words ? ch_n[c] : chunk_words;
    for (int j = 0; j < n; j++) {
        int w = ch_first[c] + j;
        out[at].s = t + cw_s[w];
        out[at].n = cw_e[w] - cw_s[w];
        out[at].paren = cw_paren[w];
        at++;
    }
    return at;
}

static inline int pw_ends(const pword *p, const char *suffix) {
    int m = (int)strlen(suffix);
    if (p->paren) return m == 1 && suffix[0] == ')';
    if (p->n < m) return 0;
    for (int i = 0; i < m; i++)
        if (p->s[p->n - m + i] != (Py_UCS4)suffix[i]) return 0;
    return 1;
}

static int pw_is_break(const pword *p) {
    if (p->paren) return 0; /* "(HOI)": no word list holds parentheses */
    Py_UCS4 buf[WORD_LEN];
    if (p->n <= 0 || p->n >= WORD_LEN) return 0;
    for (int i = 0; i < p->n; i++) buf[i] = to_lower(p->s[i]);
    return (flags_of(buf, p->n) & F_BREAK) != 0;
}

/* t and lo from the first hn characters of a str's data: dashes spaced out, a glued full stop
 * ("performance.To") given its space; -1 for a character this pass does not read. The same pass
 * splits the words (tok_s, tok_e, tok_quote: str.split) and notes where a subject may open (opens). */
static inline unsigned char class_of(Py_UCS4 c) {
    if (c < 128) return cls[c];
    return (unsigned char)((Py_UNICODE_ISSPACE(c) ? C_SPACE : 0) | (Py_UNICODE_ISALNUM(c) ? C_WORD : 0));
}

#define CLASS_ASCII(c) cls[c]
#define EMIT(C, L, CLASS)                                                                          \
    do {                                                                                           \
        Py_UCS4 c_ = (C), l_ = (L);                                                                \
        unsigned char f_ = CLASS(c_);                                                              \
        t[nt_] = c_;                                                                               \
        lo[nt_] = l_;                                                                              \
        if (f_ & C_SPACE) {                                                                        \
            if (in_word) tok_e[ntok_++] = (int)nt_, in_word = 0;                                   \
        } else {                                                                                   \
            if (!in_word) tok_s[ntok_] = (int)nt_, tok_quote[ntok_] = 0, in_word = 1;              \
            if (c_ == '\'' || c_ == 0x2019) tok_quote[ntok_] = 1;                                  \
        }                                                                                          \
        if ((f_ & C_WORD) && !after_word && (l_ == 'w' || l_ == 'p' || l_ == 's'))                 \
            opens[nopens_++] = (int)nt_;                                                           \
        after_word = f_ & C_WORD;                                                                  \
        nt_++;                                                                                     \
    } while (0)

#define LOAD_TEXT(READ, WIDE, CLASS)                                                               \
    do {                                                                                           \
        int in_word = 0, after_word = 0;                                                           \
        Py_ssize_t nt_ = 0; /* (locals: a store to tok_e or opens could be one to a global) */     \
        int ntok_ = 0, nopens_ = 0;                                                                \
        for (Py_ssize_t i = 0; i < hn; i++) {                                                      \
            Py_UCS4 c = READ(i);                                                                   \
            if (WIDE && !accepted(c)) return -1;                                                   \
            if (after_word && (CLASS(c) & C_WORD)) {                                               \
                /* a word character after one (most of a text): inside a word, no quote, no dash, \
                 * no full stop, no place a subject opens: only the two stores */                  \
                t[nt_] = c;                                                                        \
                lo[nt_] = WIDE ? to_lower(c) : lower_ascii[c];                                     \
                nt_++;                                                                             \
                continue;                                                                          \
            }                                                                                      \
            if (WIDE && (c == 0x2014 || c == 0x2013)) {                                            \
                EMIT(' ', ' ', CLASS);                                                             \
                EMIT(c, WIDE ? to_lower(c) : lower_ascii[c], CLASS);                               \
                EMIT(' ', ' ', CLASS);                                                             \
            } else if (c == '.' && i >= 3 && i + 2 < hn && is_lower_az(READ(i - 1)) &&             \
                       is_lower_az(READ(i - 2)) && is_lower_az(READ(i - 3)) &&                     \
                       is_upper_az(READ(i + 1)) && is_lower_az(READ(i + 2))) {                     \
                EMIT('.', '.', CLASS);                                                             \
                EMIT(' ', ' ', CLASS);                                                             \
            } else {                                                                               \
                EMIT(c, WIDE ? to_lower(c) : lower_ascii[c], CLASS);                               \
            }                                                                                      \
        }                                                                                          \
        if (in_word) tok_e[ntok_++] = (int)nt_;                                                    \
        n_t = nt_;                                                                                 \
        n_tok = ntok_;                                                                             \
        n_opens = nopens_;                                                                         \
    } while (0)

static int load_text_1(const void *data, Py_ssize_t hn, int ascii) {
    const Py_UCS1 *d = (const Py_UCS1 *)data;
#define READ1(i) ((Py_UCS4)d[i])
    if (ascii) /* nothing to check, no dash, a table's class and lowercase */
        LOAD_TEXT(READ1, 0, CLASS_ASCII);
    else
        LOAD_TEXT(READ1, 1, class_of);
#undef READ1
    return 0;
}

static int load_text_n(int kind, const void *data, Py_ssize_t hn) {
    /* one loop per kind: no switch on the kind at each character */
    if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *d = (const Py_UCS2 *)data;
#define READ2(i) ((Py_UCS4)d[i])
        LOAD_TEXT(READ2, 1, class_of);
#undef READ2
    } else {
        const Py_UCS4 *d = (const Py_UCS4 *)data;
#define READ4(i) (d[i])
        LOAD_TEXT(READ4, 1, class_of);
#undef READ4
    }
    return 0;
}

static PyObject *kp_describe(PyObject *self, PyObject *args) {
    PyObject *head, *name;
    (void)self;
    if (!PyArg_ParseTuple(args, "UO", &head, &name)) return NULL;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "_keyphrase.configure() was not called");
        return NULL;
    }
    if (name != Py_None && !PyUnicode_Check(name)) Py_RETURN_NONE;
    /* the name, lowercased (and its key); only accepted characters */
    Py_UCS4 nm[WORD_LEN * 4];
    int nm_n = 0, has_name = 0;
    if (name != Py_None && PyUnicode_GET_LENGTH(name) > 0) {
        Py_ssize_t nn = PyUnicode_GET_LENGTH(name);
        if (nn >= (Py_ssize_t)(sizeof nm / sizeof *nm)) Py_RETURN_NONE;
        int kind = PyUnicode_KIND(name);
        const void *data = PyUnicode_DATA(name);
        for (Py_ssize_t i = 0; i < nn; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (!accepted(c)) Py_RETURN_NONE;
            nm[i] = to_lower(c);
        }
        nm_n = (int)nn;
        has_name = 1;
    }
    n_letters = 0; /* the name's capitals, for the rank */
    if (has_name) {
        int kind = PyUnicode_KIND(name);
        const void *data = PyUnicode_DATA(name);
        for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(name); i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (is_upper_az(c)) letters[n_letters++] = (char)(c + 32);
        }
    }

    /* the text: the first HEAD code points; dashes spaced out; "performance.To" -> ". " */
    Py_ssize_t hn = PyUnicode_GET_LENGTH(head);
    if (hn > HEAD) hn = HEAD;
    {
        int kind = PyUnicode_KIND(head);
        const void *data = PyUnicode_DATA(head);
        int r = kind == PyUnicode_1BYTE_KIND
                    ? load_text_1(data, hn, PyUnicode_IS_ASCII(head))
                    : load_text_n(kind, data, hn);
        if (r < 0) Py_RETURN_NONE;
    }

    if (n_tok < min_words) return PyUnicode_FromString("");

    /* the pass: chunks, keys, capitals */
    n_cw = n_ch = n_key = n_ini = 0;
    key_mask = 255;
    while (key_mask + 1 < 2 * (uint32_t)n_tok) key_mask = key_mask * 2 + 1;
    memset(key_slot, 0, (key_mask + 1) * sizeof *key_slot);
    int surface_n = 0, surface_first = 0, surface_at = 0; /* the open chunk */
    int surface_look = 0, surface_caps = 0;
    int gap_s = -1, gap_e = -1;           /* the connector just read */
    int adjacent = 0, before_s = -1, before_e = -1, linked = 0;
    int starts = 1, after_subject = 0, after_that = 0;
#define CLOSE_CHUNK()                                                                              \
    do {                                                                                           \
        ch_first[n_ch] = surface_first;                                                            \
        ch_at[n_ch] = surface_at;                                                                  \
        ch_n[n_ch] = surface_n;                                                                    \
        ch_bs[n_ch] = before_s;                                                                    \
        ch_be[n_ch] = before_e;                                                                    \
        ch_linked[n_ch] = (unsigned char)linked;                                                   \
        ch_look[n_ch] = (unsigned char)surface_look;                                               \
        ch_caps[n_ch] = surface_caps;                                                              \
        k_ends[cw_key[surface_first + surface_n - 1]]++;                                           \
        n_ch++;                                                                                    \
        surface_n = 0;                                                                             \
    } while (0)
    for (int i = 0; i < n_tok; i++) {
        int ws = tok_s[i], we = tok_e[i];
        int cs = ws, ce = we;
        while (cs < ce && is_punct(t[cs])) cs++;
        while (ce > cs && is_punct(t[ce - 1])) ce--;
        const Py_UCS4 *low = lo + cs;
        int ln = ce - cs;
        /* one hash for the word, its singular (the key) and their word-list flags */
        int pl = ends_plural(low, ln);
        uint32_t h_key = FNV_BASIS, wide = 0;
        for (int j = 0; j < ln - pl; j++) {
            wide |= low[j];
            h_key = (h_key ^ low[j]) * FNV_PRIME;
        }
        uint32_t h_word = pl ? (h_key ^ low[ln - 1]) * FNV_PRIME : h_key; /* low[ln - 1] == 's' */
        int ascii = wide < 128;
        int fl = ascii ? word_flags(low, ln, h_word) : 0; /* flags_of(low, ln) */
        int is_break = (fl & F_BREAK) || span_eq(low, ln, nm, nm_n);
        if (!is_break) {
            int dollar = 0;
            if (ln > 0 && t[cs] == '$') {
                for (int j = cs; j + 1 < ce; j++)
                    if (t[j] == '$' && t[j + 1] == '-') { dollar = 1; break; }
            }
            if (!(ln > 0 && (is_alnum(t[cs]) || dollar))) is_break = 1;
        }
        if (!is_break && tok_quote[i]) is_break = 1; /* ' or U+2019 in the word */
        if (!is_break && after_subject) is_break = 1;
        if (!is_break && after_that && ln >= 1 && low[ln - 1] == 's' &&
            !(ln == 1 || low[ln - 2] == 's' || low[ln - 2] == 'u' || low[ln - 2] == 'i'))
            is_break = 1;
        if (!is_break && ln > 4 && low[ln - 2] == 'l' && low[ln - 1] == 'y' && !(fl & F_ADVERB_NOT))
            is_break = 1;
        int kn = ln; /* the length of `lower` as the Python path holds it after the branch */
        if (is_break) {
            every[i] = -1;
            int ended = 0;
            if (surface_n) {
                CLOSE_CHUNK();
                ended = 1;
            }
            if (fl & F_CONNECTOR) {
                gap_s = cs;
                gap_e = ce;
                adjacent = ended;
            } else {
                gap_s = gap_e = -1;
                adjacent = 0;
            }
        } else {
            if (surface_n && (t[ws] == '(' || t[ws] == '[')) {
                /* "Human Feedback (Safe RLHF)": a parenthesis of several words is a chunk of its own */
                int r = we;
                while (r > ws && (t[r - 1] == '.' || t[r - 1] == ',' || t[r - 1] == ';' ||
                                  t[r - 1] == ':'))
                    r--;
                if (!(r > ws && (t[r - 1] == ')' || t[r - 1] == ']'))) {
                    CLOSE_CHUNK();
                    gap_s = gap_e = -1;
                    adjacent = 0;
                }
            }
            if (!surface_n) {
                before_s = gap_s;
                before_e = gap_e;
                linked = adjacent;
                surface_first = n_cw;
                surface_at = i;
                surface_look = surface_caps = 0;
            }
            if (pl) kn = ln - 1;
            int k = key_id(cs, kn, pl ? h_key : h_word, 1);
            int paren = 0;
            /* core[0] != lower[0] or not core[1:].islower() */
            int cased = 0, upper = 0, hyphen = 0;
            int ini = n_ini; /* its initials (keyphrase._spells): an ASCII letter opening a part */
            int spell = n_letters >= 2; /* (only asked then) */
            if (spell && (is_lower_az(t[cs]) || is_upper_az(t[cs]))) ini_buf[n_ini++] = (char)lo[cs];
            for (int j = cs + 1; j < ce; j++) {
                if (is_upper_cased(t[j])) upper = 1;
                else if (is_lower_cased(t[j])) cased = 1;
                else if (t[j] == '-') {
                    hyphen = 1;
                    if (spell && j + 1 < ce && (is_lower_az(t[j + 1]) || is_upper_az(t[j + 1])))
                        ini_buf[n_ini++] = (char)lo[j + 1];
                }
            }
            if (t[cs] != low[0] || upper || !cased) {
                if (!starts) k_cap[k] = 1;
                if (t[ws] == '(' || t[ws] == '[') {
                    int r = we;
                    while (r > ws && (t[r - 1] == '.' || t[r - 1] == ',' || t[r - 1] == ';' ||
                                      t[r - 1] == ':'))
                        r--;
                    if (t[r - 1] == ')' || t[r - 1] == ']') paren = 1;
                }
            }
            if (k_count[k] == 0) k_pos[k] = i;
            k_count[k]++;
            k_hyph[k] |= (unsigned char)hyphen;
            k_par[k] |= (unsigned char)paren;
            cw_s[n_cw] = cs;
            cw_e[n_cw] = ce;
            cw_key[n_cw] = k;
            cw_paren[n_cw] = (unsigned char)paren;
            /* what the rank asks of a word (as shown: "(SSL)" opens with "(" and ends with ")") */
            if (paren) n_ini = ini; /* a word in parentheses has no initials */
            cw_ini[n_cw] = ini;
            cw_ini_n[n_cw] = (unsigned char)(n_ini - ini);
            if (surface_n < chunk_words) { /* the words a candidate takes */
                int ing = !paren && ce - cs >= 3 && t[ce - 3] == 'i' && t[ce - 2] == 'n' && t[ce - 1] == 'g';
                surface_look = (surface_look & ~W_ING) | (hyphen ? W_HYPHEN : 0) | (paren ? W_PAREN : 0) |
                               (ing ? W_ING : 0);
                surface_caps += !paren && is_upper_az(t[cs]);
            }
            n_cw++;
            surface_n++;
            every[i] = k;
        }
        /* "we design", "we then design", "MoFit constructs": a verb comes next */
        int kfl = kn == ln ? fl : ascii ? word_flags(low, kn, h_key) : 0; /* flags_of(low, kn) */
        after_subject = (kfl & F_SUBJECT) || span_eq(low, kn, nm, nm_n) ||
                        (after_subject && (kfl & F_THEN));
        after_that = kn == 4 && low[0] == 't' && low[1] == 'h' && low[2] == 'a' && low[3] == 't';
        Py_UCS4 last = t[we - 1];
        starts = last == '.' || last == '!' || last == '?';
        if (starts || last == ',' || last == ';' || last == ':' || last == ')' || last == ']') {
            if (surface_n) CLOSE_CHUNK();
            gap_s = gap_e = -1;
            adjacent = 0;
        }
    }
    if (surface_n) CLOSE_CHUNK();
#undef CLOSE_CHUNK

    /* features: the statement window and its object (the first chunk after its verb) */
    Py_ssize_t m = statement_end();
    stated = -1;
    if (m >= 0) {
        int at = words_before(m);
        stated = at;
        for (int i = at; i < at + statement_words && i < n_tok; i++)
            if (every[i] >= 0) k_stmt[every[i]] = 1;
        for (int c = 0; c < n_ch; c++)
            if (ch_at[c] >= at) {
                for (int j = 0; j < ch_n[c]; j++) k_obj[cw_key[ch_first[c] + j]] = 1;
                break;
            }
    }
    int64_t plain = (int64_t)floor((w_plain - threshold) * quantum + 0.5);
    for (int k = 0; k < n_key; k++) {
        int generic = (flags_of(lo + k_s[k], k_len[k]) & F_GENERIC) != 0;
        k_score[k] = score_q(k, generic, n_tok);
        k_scored[k] = k_score[k] > plain;
    }

    /* candidates */
    int skip = -1;
    if (has_name) {
        int sn = ends_plural(nm, nm_n) ? nm_n - 1 : nm_n;
        /* the key of the name, if the text has it */
        uint32_t h = hash_ucs4(nm, sn);
        for (uint32_t i = h & key_mask;; i = (i + 1) & key_mask) {
            int id = key_slot[i];
            if (id == 0) break;
            id--;
            if (k_hash[id] == h && span_eq(lo + k_s[id], k_len[id], nm, sn)) {
                skip = id;
                break;
            }
        }
    }
    n_c = 0;
    int previous = -1;
    for (int c = 0; c < n_ch; c++) {
        int n = ch_n[c] < chunk_words ? ch_n[c] : chunk_words;
        int any = 0;
        for (int j = 0; j < n; j++)
            if (k_scored[cw_key[ch_first[c] + j]]) { any = 1; break; }
        if (!any) {
            previous = -1;
            continue;
        }
        value_of(n_c, c, -1, skip, c);
        c_a[n_c] = c;
        c_b[n_c] = -1;
        c_before[n_c] = c;
        n_c++;
        if (ch_linked[c] && previous >= 0) {
            value_of(n_c, c, previous, skip, previous);
            c_a[n_c] = c;
            c_b[n_c] = previous;
            c_before[n_c] = previous;
            n_c++;
        }
        previous = c;
    }
    if (n_c == 0) return PyUnicode_FromString("");
    int best = 0;
    for (int i = 1; i < n_c; i++)
        if (c_rank[i] > c_rank[best]) best = i;
    if (c_val[best] <= 0) return PyUnicode_FromString("");
    /* the second phrase: joined by its connector, disjoint from the first, of two words or more */
    unsigned used = next_stamp();
    {
        int64_t ignore = 0;
        int d = 0;
        if (c_b[best] >= 0) mark_chunk(c_b[best], skip, used, &ignore, &d);
        mark_chunk(c_a[best], skip, used, &ignore, &d);
    }
    int second = -1;
    for (int i = 0; i < n_c; i++) {
        if (ch_bs[c_before[i]] < 0 || c_val[i] <= second_min_q) continue;
        if (c_b[i] < 0 && ch_n[c_a[i]] == 1) continue; /* one word: "... of learning" */
        if (second >= 0 && c_val[i] <= c_val[second]) continue;
        int disjoint = 1;
        for (int part = 0; part < 2 && disjoint; part++) {
            int c = part == 0 ? c_a[i] : c_b[i];
            if (c < 0) continue;
            int n = ch_n[c] < chunk_words ? ch_n[c] : chunk_words;
            for (int j = 0; j < n; j++) {
                int k = cw_key[ch_first[c] + j];
                if (k != skip && k_mark[k] == used) { disjoint = 0; break; }
            }
        }
        if (disjoint) second = i;
    }

    pword phrase[4 * 64 + 4];
    int np = 0;
    if (c_b[best] >= 0) {
        np = add_chunk_words(phrase, np, c_b[best]);
        phrase[np].s = lo + ch_bs[c_a[best]];
        phrase[np].n = ch_be[c_a[best]] - ch_bs[c_a[best]];
        phrase[np].paren = 0;
        np++;
    }
    np = add_chunk_words(phrase, np, c_a[best]);
    if (second >= 0) {
        int sn = ch_n[c_a[second]] < chunk_words ? ch_n[c_a[second]] : chunk_words;
        if (c_b[second] >= 0) {
            int pn = ch_n[c_b[second]] < chunk_words ? ch_n[c_b[second]] : chunk_words;
            sn += pn + 1;
        }
        if (np + 1 + sn <= max_words) {
            int bc = c_before[second];
            phrase[np].s = lo + ch_bs[bc];
            phrase[np].n = ch_be[bc] - ch_bs[bc];
            phrase[np].paren = 0;
            np++;
            if (c_b[second] >= 0) {
                np = add_chunk_words(phrase, np, c_b[second]);
                int ac = c_a[second];
                phrase[np].s = lo + ch_bs[ac];
                phrase[np].n = ch_be[ac] - ch_bs[ac];
                phrase[np].paren = 0;
                np++;
            }
            np = add_chunk_words(phrase, np, c_a[second]);
        }
    }
    if (np > max_words) np = max_words;
    while (np > 0 && (pw_is_break(&phrase[np - 1]) ||
                      (np > 2 && (pw_ends(&phrase[np - 1], "ing") || pw_ends(&phrase[np - 1], "ed")) &&
                       pw_ends(&phrase[np - 2], "s") &&
                       !pw_ends(&phrase[np - 2], "series")))) /* "time series forecasting" */
        np--;
    if (np < 2) return PyUnicode_FromString("");

    Py_ssize_t total = np;
    for (int i = 0; i < np; i++) total += phrase[i].n + 2;
    Py_UCS4 *out = PyMem_Malloc((size_t)total * sizeof(Py_UCS4));
    if (out == NULL) return PyErr_NoMemory();
    Py_ssize_t on = 0;
    for (int i = 0; i < np; i++) {
        if (i) out[on++] = ' ';
        if (phrase[i].paren) out[on++] = '(';
        memcpy(out + on, phrase[i].s, (size_t)phrase[i].n * sizeof(Py_UCS4));
        on += phrase[i].n;
        if (phrase[i].paren) out[on++] = ')';
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, on);
    PyMem_Free(out);
    return result;
}

/* ---- the title chooser's look of a candidate (retrieval.text._t_look, the same numbers) ---------- */

static int look_space(unsigned char c) { return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31); }

static int look_strip(unsigned char c) {
    return c == '.' || c == ',' || c == ';' || c == ':' || c == '(' || c == ')' || c == '[' || c == ']' ||
           c == '"' || c == '\'' || c == '*';
}

/* where needle is in hay from ``from`` on (the first place), or -1 (glibc's memmem: a pair-of-bytes
   hash for short needles, a few times faster than a memchr of the first byte and a memcmp) */
static Py_ssize_t look_find(const char *hay, Py_ssize_t hn, const char *needle, Py_ssize_t nn,
                            Py_ssize_t from) {
    if (from > hn) return -1;
    if (nn == 0) return from;
    const char *p = memmem(hay + from, (size_t)(hn - from), needle, (size_t)nn);
    return p == NULL ? -1 : p - hay;
}

/* str.count: the non-overlapping occurrences */
static Py_ssize_t look_count(const char *hay, Py_ssize_t hn, const char *needle, Py_ssize_t nn) {
    Py_ssize_t n = 0, at = 0;
    while ((at = look_find(hay, hn, needle, nn, at)) != -1) {
        n++;
        at += nn;
    }
    return n;
}

/* The region's index: every place of lower (but the last three) chained by the hash of the four
   bytes there, in order (ix_head[h] the first, ix_next[i] the next), so a count or a find of a needle
   of four bytes or more reads only the places that open with its first four. Built once per region:
   the chooser looks at both candidates in the same region (the same str object, kept referenced so
   it cannot be another string at the same address). */
static PyObject *ix_text = NULL;
static int *ix_next = NULL;
static Py_ssize_t ix_cap = 0;
#define IX_MAX_BITS 14
static int ix_head[1 << IX_MAX_BITS];
static int ix_bits = 0;

static inline uint32_t ix_hash(const char *p, int bits) {
    uint32_t x;
    memcpy(&x, p, 4);
    return (x * 2654435761u) >> (32 - bits);
}

static int ix_build(PyObject *lower, const char *L, Py_ssize_t ln) {
    if (ln > ix_cap) {
        int *grown = PyMem_Realloc(ix_next, (size_t)ln * sizeof(int));
        if (grown == NULL) return -1;
        ix_next = grown;
        ix_cap = ln;
    }
    int bits = 6;
    while (bits < IX_MAX_BITS && ((Py_ssize_t)1 << bits) < ln) bits++;
    ix_bits = bits;
    memset(ix_head, 0xff, sizeof(int) << bits);
    for (Py_ssize_t i = ln - 4; i >= 0; i--) {
        uint32_t h = ix_hash(L + i, bits);
        ix_next[i] = ix_head[h];
        ix_head[h] = (int)i;
    }
    Py_INCREF(lower);
    Py_XSETREF(ix_text, lower);
    return 0;
}

static inline int ix_at(const char *L, int i, const char *P, Py_ssize_t m) { /* L[i:i + m] == P */
    uint32_t a, b;
    memcpy(&a, L + i, 4);
    memcpy(&b, P, 4);
    return a == b && (m == 4 || memcmp(L + i + 4, P + 4, (size_t)m - 4) == 0);
}

/* str.count of a needle of 4 bytes or more (the leftmost non-overlapping places), by the index */
static Py_ssize_t ix_count(const char *L, Py_ssize_t ln, const char *P, Py_ssize_t m) {
    Py_ssize_t n = 0, free_at = 0;
    for (int i = ix_head[ix_hash(P, ix_bits)]; i >= 0; i = ix_next[i]) {
        if (i >= free_at && i + m <= ln && ix_at(L, i, P, m)) {
            n++;
            free_at = i + m;
        }
    }
    return n;
}

/* the first place of a needle of 4 bytes or more that ends by ``limit``, or -1 */
static Py_ssize_t ix_find(const char *L, Py_ssize_t limit, const char *P, Py_ssize_t m) {
    for (int i = ix_head[ix_hash(P, ix_bits)]; i >= 0; i = ix_next[i]) {
        if (i + m > limit) return -1; /* (the chain is in order) */
        if (ix_at(L, i, P, m)) return i;
    }
    return -1;
}

/* The three word sets (stop, clause, generic) as one table of flags, built when they are frozensets
   of ASCII str (immutable: kept referenced, rebuilt only for others); else the sets are asked. */
#define LS_SLOTS 1024
#define LS_LEN 24
typedef struct {
    char w[LS_LEN];
    unsigned char len, flags;
} ls_slot;
static ls_slot ls_tab[LS_SLOTS];
static PyObject *ls_src[3] = {NULL, NULL, NULL};
static int ls_ready = 0; /* the table holds ls_src's words */

static inline uint32_t ls_hash(const char *s, Py_ssize_t n) {
    uint32_t h = 2166136261u;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int ls_flags(const char *w, Py_ssize_t n) {
    if (n >= LS_LEN) return 0;
    for (uint32_t h = ls_hash(w, n) & (LS_SLOTS - 1);; h = (h + 1) & (LS_SLOTS - 1)) {
        ls_slot *s = &ls_tab[h];
        if (!s->len) return 0;
        if (s->len == n && memcmp(s->w, w, (size_t)n) == 0) return s->flags;
    }
}

/* 1: the table holds these sets; 0: they cannot be tabled (ask them); -1: an error */
static int ls_use(PyObject *const *sets) {
    if (ls_ready && sets[0] == ls_src[0] && sets[1] == ls_src[1] && sets[2] == ls_src[2]) return 1;
    ls_ready = 0;
    Py_ssize_t total = 0;
    for (int k = 0; k < 3; k++) {
        if (!PyFrozenSet_CheckExact(sets[k])) return 0;
        total += PySet_GET_SIZE(sets[k]);
    }
    if (total > LS_SLOTS / 2) return 0;
    memset(ls_tab, 0, sizeof ls_tab);
    for (int k = 0; k < 3; k++) {
        PyObject *it = PyObject_GetIter(sets[k]), *key;
        if (it == NULL) return -1;
        while ((key = PyIter_Next(it)) != NULL) {
            Py_DECREF(key); /* (the set holds it) */
            if (!PyUnicode_CheckExact(key)) break;
            if (!PyUnicode_IS_ASCII(key)) continue; /* no ASCII word equals it */
            Py_ssize_t n = PyUnicode_GET_LENGTH(key);
            if (n == 0) continue; /* (a word is never empty) */
            if (n >= LS_LEN) break;
            const char *w = (const char *)PyUnicode_1BYTE_DATA(key);
            uint32_t h = ls_hash(w, n) & (LS_SLOTS - 1);
            while (ls_tab[h].len && !(ls_tab[h].len == n && memcmp(ls_tab[h].w, w, (size_t)n) == 0))
                h = (h + 1) & (LS_SLOTS - 1);
            memcpy(ls_tab[h].w, w, (size_t)n);
            ls_tab[h].len = (unsigned char)n;
            ls_tab[h].flags |= (unsigned char)(1 << k);
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) return -1;
        if (key != NULL) return 0; /* a word it cannot table: ask the sets */
    }
    for (int k = 0; k < 3; k++) {
        Py_INCREF(sets[k]);
        Py_XSETREF(ls_src[k], sets[k]);
    }
    ls_ready = 1;
    return 1;
}

static PyObject *look_numbers(const double *v) {
    PyObject *tuple = PyTuple_New(8);
    if (tuple == NULL) return NULL;
    for (int k = 0; k < 8; k++) {
        PyObject *f = PyFloat_FromDouble(v[k]);
        if (f == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, k, f);
    }
    return tuple;
}

static PyObject *kp_look(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "look(title, lower, first, stop, clause, generic)");
        return NULL;
    }
    PyObject *title = args[0], *lower = args[1], *first = args[2];
    PyObject *stop = args[3], *clause = args[4], *generic = args[5];
    if (!PyUnicode_Check(title) || !PyUnicode_Check(lower) || !PyUnicode_Check(first) ||
        !PyAnySet_Check(stop) || !PyAnySet_Check(clause) || !PyAnySet_Check(generic)) {
        PyErr_SetString(PyExc_TypeError, "look(str, str, str, set, set, set)");
        return NULL;
    }
    if (!PyUnicode_IS_ASCII(title) || !PyUnicode_IS_ASCII(lower) || !PyUnicode_IS_ASCII(first))
        Py_RETURN_NONE; /* the Python path */
    int tabled = ls_use(args + 3);
    if (tabled < 0) return NULL;
    const char *src = (const char *)PyUnicode_1BYTE_DATA(title);
    Py_ssize_t tn = PyUnicode_GET_LENGTH(title);
    const char *L = (const char *)PyUnicode_1BYTE_DATA(lower);
    Py_ssize_t ln = PyUnicode_GET_LENGTH(lower);
    const char *F = (const char *)PyUnicode_1BYTE_DATA(first);
    Py_ssize_t fn = PyUnicode_GET_LENGTH(first);
    if (lower != ix_text && ix_build(lower, L, ln) < 0) return PyErr_NoMemory();
    /* the first sentence is lower's opening (as the chooser cuts it): a find in it is one in lower */
    int first_in_lower = fn <= ln && memcmp(F, L, (size_t)fn) == 0;
    char small[512];
    char *t = (size_t)tn * 2 + 2 <= sizeof small ? small : PyMem_Malloc((size_t)tn * 2 + 2);
    if (t == NULL) return PyErr_NoMemory(); /* (the title lowercased, then the opening words) */
    for (Py_ssize_t i = 0; i < tn; i++) {
        unsigned char c = (unsigned char)src[i];
        t[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    char *opening = t + tn + 1;
    Py_ssize_t on = 0;
    long n = 0, c = 0, often = 0, in_first = 0, clauses = 0, generics = 0;
    double logs = 0.0;
    Py_ssize_t i = 0;
    while (i < tn) {
        while (i < tn && look_space((unsigned char)t[i])) i++;
        Py_ssize_t s = i;
        while (i < tn && !look_space((unsigned char)t[i])) i++;
        Py_ssize_t e = i;
        while (s < e && look_strip((unsigned char)t[s])) s++;
        while (e > s && look_strip((unsigned char)t[e - 1])) e--;
        if (s == e) continue;
        Py_ssize_t wn = e - s;
        const char *w = t + s;
        n++;
        if (n <= 2) {
            if (n == 2) opening[on++] = ' ';
            memcpy(opening + on, w, (size_t)wn);
            on += wn;
        }
        int in_clause, in_generic, in_stop;
        if (tabled) {
            int f = ls_flags(w, wn);
            in_stop = wn > 3 ? f & 1 : 1;
            in_clause = (f >> 1) & 1;
            in_generic = (f >> 2) & 1;
        } else {
            PyObject *u = PyUnicode_FromStringAndSize(w, wn);
            if (u == NULL) goto fail;
            in_clause = PySet_Contains(clause, u), in_generic = PySet_Contains(generic, u);
            in_stop = wn > 3 ? PySet_Contains(stop, u) : 1;
            Py_DECREF(u);
            if (in_clause < 0 || in_generic < 0 || in_stop < 0) goto fail;
        }
        clauses += in_clause;
        generics += in_generic;
        if (!in_stop) {
            c++;
            Py_ssize_t stem = w[wn - 1] == 's' ? wn - 1 : wn;
            Py_ssize_t prefix = stem - 2 > 4 ? stem - 2 : 4;
            if (prefix > stem) prefix = stem;
            Py_ssize_t times = prefix >= 4 ? ix_count(L, ln, w, prefix) : look_count(L, ln, w, prefix);
            if (times) logs += log((double)times);
            often += times >= 3;
            /* (wn > 3 here) */
            in_first += (first_in_lower ? ix_find(L, fn, w, wn) : look_find(F, fn, w, wn, 0)) != -1;
        }
    }
    Py_ssize_t at = n < 2 ? -1 : on >= 4 ? ix_find(L, ln, opening, on) : look_find(L, ln, opening, on, 0);
    if (t != small) PyMem_Free(t);
    if (!n) {
        const double none[8] = {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0};
        return look_numbers(none);
    }
    const double v[8] = {log(1.0 + (double)n), c ? logs / (double)c : 0.0,
                         c ? (double)often / (double)c : 0.0, c ? (double)in_first / (double)c : 0.0,
                         at >= 0 ? (double)at / (double)ln : 1.0, (double)(clauses < 3 ? clauses : 3),
                         (double)generics / (double)n, (double)c / (double)n};
    return look_numbers(v);
fail:
    if (t != small) PyMem_Free(t);
    return NULL;
}

static PyMethodDef methods[] = {
    {"configure", kp_configure, METH_VARARGS,
     "configure(break, subjects, then, adverb_not, connectors, generic, counts, weights, "
     "(threshold, quantum), (length_q, second_min_q), (the rank's 8 weights), (its words' 6)): keyphrase.py's "
     "word lists and numbers."},
    {"describe", kp_describe, METH_VARARGS,
     "describe(head, name) -> str | None: keyphrase.describe, or None for a text this path does "
     "not read (characters other than ASCII and a few punctuation marks)."},
    {"look", (PyCFunction)(void (*)(void))kp_look, METH_FASTCALL,
     "look(title, lower, first, stop, clause, generic) -> tuple | None: retrieval.text._t_look's "
     "eight numbers, or None for a text other than ASCII (the Python path)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_keyphrase", "The word pass of retrieval.keyphrase in C.", -1, methods,
    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__keyphrase(void) {
    fill_classes();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddIntConstant(m, "VERSION", KP_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "HEAD", HEAD) < 0 ||
        PyModule_AddIntConstant(m, "BELOW", ACCEPT_BELOW) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
