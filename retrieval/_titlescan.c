/* The keyword scan of the derived-title rules (retrieval/text.py, _t_sites) in C.
 *
 * hits(text) finds what `re.finditer(" (?:w1|w2|...)", text)` finds for the keywords given to
 * configure() (in that order: the first one that matches at a place wins, as in a regex
 * alternation), left to right, each match starting after the previous one's end; it returns the
 * matches as (start, end, kind) triples, kind the number configure() gave with the keyword. The keywords are plain lowercase ASCII words (a
 * space inside is a literal space), so a match is a character-for-character comparison: the same
 * answer the regex gives, for any str. The regex costs an engine attempt at every space of the
 * 1,500-character title region; this loop, a comparison.
 *
 * openings(text, hi) finds what two more of the rules' regexes find in text[:hi], the name-like
 * words of an abstract's opening when it makes no statement:
 *   _T_NAME        [A-Z](?:[a-z]*[A-Z0-9][\w+*-]*|[a-z]+-[A-Z][\w-]*)      ("FLATTEN", "GeneOH")
 *   _T_LOWER_CAMEL  [a-z]{1,2}[A-Z][A-Za-z0-9-]*[a-z0-9]  (after a space)   ("iTransformer")
 * as two lists of (start, end), the matches of finditer(text, 0, hi) each. The classes are ASCII
 * but \w (str.isalnum() or "_", as re has it for a str pattern); neither pattern backtracks into a
 * different match (its repeated classes are disjoint from what follows them, or the last [a-z0-9]
 * of a run ends the match), so a left-to-right reading finds the same ones.
 *
 * cut(text, pos) finds where the rules' _T_CUT (a phrase's first clause break) first matches in
 * text from pos, as `_T_CUT.search(text, pos).start()` (-1 for none):
 *   ,\s*(?:c1|c2|...)\b     a comma, then one of the words configure_cut() gave first
 *   \s(?:s1|s2|...)\b       a space, then one of the second words (a space in one: \s+)
 *   [;:.!?](?:\s|$)         a sentence or clause mark, then a space or the end
 *   \s[-–—]\s               a dash between spaces
 * with \s str.isspace() and \w str.isalnum() or "_", as re has them for a str pattern. The words
 * open with a letter, so \s* and \s+ never give back a space to what follows them.
 *
 * glued(text) finds where _t_unglue puts a space: after each full stop (not the first character)
 * that a lowercase letter or ")" comes before and a capital and a lowercase letter after, the ends of
 * the matches of `\.(?=[A-Z][a-z])` from 1 (the classes ASCII) that pass that test, in text order.
 *
 * sites(head, lower, limit) is the whole of text.py's _t_sites_rules (statements and names
 * introduced explicitly), with its regexes read by hand; it returns None where it leaves the
 * decision to the rules (see the comment above it). front(head, lower, statements) is the first
 * three loops of _t_candidates (_t_front_rules), calling text.py for their rare branches.
 *
 * retrieval/text.py keeps the regexes as the definition and the fallback (tests compare the two).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_KEYWORDS 64
#define MAX_LENGTH 32

static int n_keywords = 0;
static Py_UCS4 keywords[MAX_KEYWORDS][MAX_LENGTH];
static Py_UCS1 ascii[MAX_KEYWORDS][MAX_LENGTH]; /* the same, for 1-byte strings */
static Py_ssize_t lengths[MAX_KEYWORDS];
static PyObject *kinds[MAX_KEYWORDS]; /* (ints, held) */
static long kind_of[MAX_KEYWORDS];    /* the same as C ints */
static unsigned char opens[256]; /* opens[c]: how many keywords start with character c */
static unsigned char by_first[128][MAX_KEYWORDS]; /* by_first[c]: those keywords, in order */
static unsigned char pairs[128][128]; /* pairs[c][d]: a keyword opens with c then d (each has two or more) */

static PyObject *configure(PyObject *self, PyObject *args) {
    PyObject *words, *kind_list;
    if (!PyArg_ParseTuple(args, "OO", &words, &kind_list)) return NULL;
    PyObject *seq = PySequence_Fast(words, "configure() takes a sequence of keywords");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_KEYWORDS || PySequence_Size(kind_list) != n) {
        Py_DECREF(seq);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "too many keywords, or not a kind each");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *kind = PySequence_GetItem(kind_list, k);
        if (kind == NULL || !PyLong_Check(kind)) {
            Py_XDECREF(kind);
            Py_DECREF(seq);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a kind is an int");
            return NULL;
        }
        kind_of[k] = PyLong_AsLong(kind);
        Py_XSETREF(kinds[k], kind);
    }
    n_keywords = 0;
    memset(opens, 0, sizeof opens);
    memset(pairs, 0, sizeof pairs);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *word = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyUnicode_Check(word) || PyUnicode_READY(word) < 0) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "a keyword is a str");
            return NULL;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(word);
        if (len < 2 || len > MAX_LENGTH) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a keyword has 2 to 32 characters");
            return NULL;
        }
        for (Py_ssize_t j = 0; j < len; j++) {
            keywords[k][j] = PyUnicode_READ_CHAR(word, j);
            if (keywords[k][j] > 127) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_ValueError, "a keyword is ASCII");
                return NULL;
            }
            ascii[k][j] = (Py_UCS1)keywords[k][j];
        }
        lengths[k] = len;
        by_first[ascii[k][0]][opens[ascii[k][0]]++] = (unsigned char)k;
        pairs[ascii[k][0]][ascii[k][1]] = 1;
    }
    n_keywords = (int)n;
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

/* the keyword that matches right after the space at i, or -1 */
static int keyword_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i) {
    if (i + 1 >= n) return -1;
    Py_UCS4 first = PyUnicode_READ(kind, data, i + 1);
    if (first > 127 || !opens[first]) return -1;
    for (int f = 0; f < opens[first]; f++) { /* the keywords that start so, in order */
        int k = by_first[first][f];
        Py_ssize_t len = lengths[k];
        if (i + 1 + len > n) continue;
        if (kind == PyUnicode_1BYTE_KIND) { /* (in place: most differ at the second character) */
            const Py_UCS1 *at = (const Py_UCS1 *)data + i + 1, *w = ascii[k];
            Py_ssize_t j = 1;
            while (j < len && at[j] == w[j]) j++;
            if (j == len) return k;
            continue;
        }
        Py_ssize_t j = 1;
        while (j < len && PyUnicode_READ(kind, data, i + 1 + j) == keywords[k][j]) j++;
        if (j == len) return k;
    }
    return -1;
}

/* what configure_sites() gave: the subjects after "this" and the statement words' first three
 * letters (lowercase ASCII) */
#define MAX_SUBJECTS 8
#define MAX_STARTS 128
static int n_subjects = 0, n_starts = 0;
static Py_UCS1 subjects[MAX_SUBJECTS][MAX_LENGTH];
static Py_ssize_t subject_lengths[MAX_SUBJECTS];
static Py_UCS1 starts[MAX_STARTS][3];

static int ascii_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, const Py_UCS1 *w, Py_ssize_t len) {
    if (i + len > n) return 0;
    for (Py_ssize_t j = 0; j < len; j++)
        if (PyUnicode_READ(kind, data, i + j) != w[j]) return 0;
    return 1;
}

/* whether _t_sites passes over the hit (kind value kv, the keyword ending at e) whatever came
 * before it: see text.py's _t_site_hits */
static int passed_over(int kind, const void *data, Py_ssize_t n, long kv, Py_ssize_t e) {
    if (kv == 4) return 0;
    if (e >= n || PyUnicode_READ(kind, data, e) != ' ') return 1; /* "well", "ours" */
    if (kv > 1) return 0;
    Py_ssize_t at = e + 1;
    if (kv == 0) { /* "this" then paper/work/study/article */
        int m = 0;
        while (m < n_subjects && !ascii_at(kind, data, n, at, subjects[m], subject_lengths[m])) m++;
        if (m == n_subjects) return 1;
        at += subject_lengths[m]; /* (the subject's own last character is its space) */
    }
    for (int k = 0; k < n_starts; k++)
        if (ascii_at(kind, data, n, at, starts[k], 3)) return 0;
    return 1;
}

/* the next keyword hit at or after i (its start, the keyword's index in *found), or -1; with
 * sites, those _t_sites passes over are skipped (each still read: the next starts after it) */
static Py_ssize_t next_hit(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, int sites, int *found) {
    while (i < n) {
        if (kind == PyUnicode_1BYTE_KIND) {
            /* to the next space that a keyword's first character follows (any other space
             * starts no match, nor one the first two characters of none follow) */
            const Py_UCS1 *d = (const Py_UCS1 *)data;
            while (i + 2 < n && !(d[i] == ' ' && d[i + 1] < 128 && d[i + 2] < 128 && pairs[d[i + 1]][d[i + 2]])) i++;
            if (i + 2 >= n) return -1;
        } else {
            while (i < n && PyUnicode_READ(kind, data, i) != ' ') i++; /* to the next space */
            if (i >= n) return -1;
        }
        int k = keyword_at(kind, data, n, i);
        if (k < 0) {
            i++;
            continue;
        }
        if (sites && passed_over(kind, data, n, kind_of[k], i + 1 + lengths[k])) {
            i += 1 + lengths[k];
            continue;
        }
        *found = k;
        return i;
    }
    return -1;
}

static PyObject *scan(PyObject *arg, int sites) {
    if (!PyUnicode_Check(arg) || PyUnicode_READY(arg) < 0) {
        PyErr_SetString(PyExc_TypeError, "hits() takes a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    Py_ssize_t i = 0;
    int found;
    while ((i = next_hit(kind, data, n, i, sites, &found)) >= 0) {
        PyObject *triple = Py_BuildValue("(nnO)", i, i + 1 + lengths[found], kinds[found]);
        if (triple == NULL || PyList_Append(out, triple) < 0) {
            Py_XDECREF(triple);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(triple);
        i += 1 + lengths[found];
    }
    return out;
}

static PyObject *hits(PyObject *self, PyObject *arg) { return scan(arg, 0); }
static PyObject *site_hits(PyObject *self, PyObject *arg) { return scan(arg, 1); }

static int read_ascii(PyObject *word, Py_UCS1 *out, Py_ssize_t *len) {
    if (!PyUnicode_Check(word) || PyUnicode_READY(word) < 0 || !PyUnicode_IS_ASCII(word) ||
        PyUnicode_GET_LENGTH(word) < 1 || PyUnicode_GET_LENGTH(word) > MAX_LENGTH) {
        PyErr_SetString(PyExc_ValueError, "a subject or start is ASCII, 1 to 32 characters");
        return -1;
    }
    *len = PyUnicode_GET_LENGTH(word);
    memcpy(out, PyUnicode_1BYTE_DATA(word), (size_t)*len);
    return 0;
}

static PyObject *configure_sites(PyObject *self, PyObject *args) {
    PyObject *subject_seq, *start_seq;
    if (!PyArg_ParseTuple(args, "OO", &subject_seq, &start_seq)) return NULL;
    PyObject *a = PySequence_Fast(subject_seq, "configure_sites() takes two sequences of str");
    if (a == NULL) return NULL;
    PyObject *b = PySequence_Fast(start_seq, "configure_sites() takes two sequences of str");
    if (b == NULL) {
        Py_DECREF(a);
        return NULL;
    }
    Py_ssize_t na = PySequence_Fast_GET_SIZE(a), nb = PySequence_Fast_GET_SIZE(b);
    int ok = na <= MAX_SUBJECTS && nb <= MAX_STARTS;
    if (!ok) PyErr_SetString(PyExc_ValueError, "too many subjects or starts");
    n_subjects = n_starts = 0;
    for (Py_ssize_t k = 0; ok && k < na; k++) {
        PyObject *w = PySequence_Fast_GET_ITEM(a, k);
        ok = read_ascii(w, subjects[k], &subject_lengths[k]) == 0;
        if (ok && subjects[k][subject_lengths[k] - 1] != ' ') {
            PyErr_SetString(PyExc_ValueError, "a subject ends with a space");
            ok = 0;
        }
    }
    for (Py_ssize_t k = 0; ok && k < nb; k++) {
        Py_UCS1 buf[MAX_LENGTH];
        Py_ssize_t len;
        ok = read_ascii(PySequence_Fast_GET_ITEM(b, k), buf, &len) == 0;
        if (ok && len != 3) {
            PyErr_SetString(PyExc_ValueError, "a start has three characters");
            ok = 0;
        }
        if (ok) memcpy(starts[k], buf, 3);
    }
    Py_DECREF(a);
    Py_DECREF(b);
    if (!ok) return NULL;
    n_subjects = (int)na;
    n_starts = (int)nb;
    Py_RETURN_NONE;
}

/* head_noun_at(head, obj): where _t_after_head_noun_of tries _T_NAMED (text.py's _t_head_noun_at):
 * of the first seven words of head[obj:obj+100] (str.split), the first of words 0-2, or 0-5 with
 * a comma after it, that is a head-noun form (configure_head_nouns(); less its commas), then the
 * first place from obj where the word after it is found (head.find); -1 for none */
#define MAX_NOUNS 256
static int n_nouns = 0;
static Py_UCS1 nouns[MAX_NOUNS][MAX_LENGTH];
static Py_ssize_t noun_lengths[MAX_NOUNS];

static PyObject *configure_head_nouns(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "configure_head_nouns() takes a sequence of str");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_NOUNS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many head nouns");
        return NULL;
    }
    n_nouns = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (read_ascii(PySequence_Fast_GET_ITEM(seq, k), nouns[k], &noun_lengths[k]) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    n_nouns = (int)n;
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

static int is_noun(int kind, const void *data, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t len = e - s;
    if (len < 1 || len > MAX_LENGTH) return 0;
    Py_UCS4 first = PyUnicode_READ(kind, data, s);
    for (int k = 0; k < n_nouns; k++) {
        if (noun_lengths[k] != len || nouns[k][0] != first) continue;
        Py_ssize_t j = 1;
        while (j < len && PyUnicode_READ(kind, data, s + j) == nouns[k][j]) j++;
        if (j == len) return 1;
    }
    return 0;
}

static PyObject *head_noun_at(PyObject *self, PyObject *args) {
    PyObject *head;
    Py_ssize_t obj;
    if (!PyArg_ParseTuple(args, "Un", &head, &obj)) return NULL;
    if (obj < 0) {
        PyErr_SetString(PyExc_ValueError, "head_noun_at() takes a position >= 0");
        return NULL;
    }
    int kind = PyUnicode_KIND(head);
    const void *data = PyUnicode_DATA(head);
    Py_ssize_t n = PyUnicode_GET_LENGTH(head);
    Py_ssize_t hi = obj + 100 < n ? obj + 100 : n; /* head[obj : obj + 100] */
    Py_ssize_t ws[7], we[7];
    int words = 0;
    Py_ssize_t i = obj;
    while (words < 7) { /* split(None, 7)[:7]: the first seven (an eighth piece is the rest) */
        while (i < hi && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        if (i >= hi) break;
        ws[words] = i;
        while (i < hi && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) i++;
        we[words++] = i;
    }
    int last = words - 1 < 6 ? words - 1 : 6;
    for (int k = 0; k < last; k++) {
        Py_ssize_t e = we[k];
        if (PyUnicode_READ(kind, data, e - 1) == ',') {
            while (e > ws[k] && PyUnicode_READ(kind, data, e - 1) == ',') e--; /* rstrip(",") */
        } else if (k >= 3) {
            continue;
        }
        if (!is_noun(kind, data, ws[k], e)) continue;
        PyObject *next = PyUnicode_Substring(head, ws[k + 1], we[k + 1]);
        if (next == NULL) return NULL;
        Py_ssize_t at = PyUnicode_Find(head, next, obj, PY_SSIZE_T_MAX, 1);
        Py_DECREF(next);
        if (at == -2) return NULL;
        return PyLong_FromSsize_t(at);
    }
    return PyLong_FromLong(-1);
}

static inline int is_az(Py_UCS4 c) { return c >= 'a' && c <= 'z'; }
static inline int is_AZ(Py_UCS4 c) { return c >= 'A' && c <= 'Z'; }
static inline int is_09(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int is_w(Py_UCS4 c) { /* re's \w for a str pattern */
    return c < 128 ? is_az(c) || is_AZ(c) || is_09(c) || c == '_' : Py_UNICODE_ISALNUM(c);
}

/* the end of a _T_NAME match at i (text[i] is a capital), or -1 */
static Py_ssize_t name_at(int kind, const void *data, Py_ssize_t hi, Py_ssize_t i) {
#define AT(j) PyUnicode_READ(kind, data, j)
    Py_ssize_t j = i + 1;
    while (j < hi && is_az(AT(j))) j++;
    if (j < hi && (is_AZ(AT(j)) || is_09(AT(j)))) { /* [a-z]*[A-Z0-9][\w+*-]* */
        j++;
        while (j < hi) {
            Py_UCS4 c = AT(j);
            if (!(is_w(c) || c == '+' || c == '*' || c == '-')) break;
            j++;
        }
        return j;
    }
    /* [a-z]+-[A-Z][\w-]* */
    if (j > i + 1 && j + 1 < hi && AT(j) == '-' && is_AZ(AT(j + 1))) {
        j += 2;
        while (j < hi && (is_w(AT(j)) || AT(j) == '-')) j++;
        return j;
    }
    return -1;
}

/* the end of a _T_LOWER_CAMEL match at i (text[i] is a space), or -1 */
static Py_ssize_t lower_camel_at(int kind, const void *data, Py_ssize_t hi, Py_ssize_t i) {
    Py_ssize_t j = i + 1;
    if (!(j < hi && is_az(AT(j)))) return -1;
    j++;
    if (j < hi && is_az(AT(j))) j++; /* [a-z]{1,2}: one would leave this [a-z] for [A-Z] */
    if (!(j < hi && is_AZ(AT(j)))) return -1;
    j++; /* the capital */
    Py_ssize_t end = -1;   /* [A-Za-z0-9-]*[a-z0-9]: up to the run's last [a-z0-9] */
    while (j < hi) {
        Py_UCS4 c = AT(j);
        if (is_az(c) || is_09(c)) end = j + 1;
        else if (!(is_AZ(c) || c == '-')) break;
        j++;
    }
    return end;
#undef AT
}

static int add_span(PyObject *list, Py_ssize_t start, Py_ssize_t end) {
    PyObject *pair = Py_BuildValue("(nn)", start, end);
    if (pair == NULL) return -1;
    int r = PyList_Append(list, pair);
    Py_DECREF(pair);
    return r;
}

static PyObject *openings(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t hi;
    if (!PyArg_ParseTuple(args, "Un", &text, &hi)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (hi > n) hi = n;
    if (hi < 0) hi = 0;
    PyObject *names = PyList_New(0), *camels = PyList_New(0);
    if (names == NULL || camels == NULL) goto fail;
    for (Py_ssize_t i = 0; i < hi;) { /* _T_NAME.finditer(text, 0, hi) */
        Py_ssize_t e = is_AZ(PyUnicode_READ(kind, data, i)) ? name_at(kind, data, hi, i) : -1;
        if (e < 0) {
            i++;
            continue;
        }
        if (add_span(names, i, e) < 0) goto fail;
        i = e;
    }
    for (Py_ssize_t i = 0; i < hi;) { /* _T_LOWER_CAMEL.finditer(text, 0, hi) */
        Py_ssize_t e = PyUnicode_READ(kind, data, i) == ' ' ? lower_camel_at(kind, data, hi, i) : -1;
        if (e < 0) {
            i++;
            continue;
        }
        if (add_span(camels, i, e) < 0) goto fail;
        i = e;
    }
    return Py_BuildValue("(NN)", names, camels);
fail:
    Py_XDECREF(names);
    Py_XDECREF(camels);
    return NULL;
}

static PyObject *glued(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "glued() takes a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
#define AT(j) PyUnicode_READ(kind, data, j)
    for (Py_ssize_t i = 1; i + 2 < n; i++) {
        i = PyUnicode_FindChar(arg, '.', i, n - 2, 1); /* to the next full stop */
        if (i == -2) {
            Py_DECREF(out);
            return NULL;
        }
        if (i < 0) break;
        Py_UCS4 before = AT(i - 1);
        if (is_AZ(AT(i + 1)) && is_az(AT(i + 2)) && (before == ')' || is_az(before))) {
            PyObject *end = PyLong_FromSsize_t(i + 1);
            if (end == NULL || PyList_Append(out, end) < 0) {
                Py_XDECREF(end);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(end);
        }
    }
#undef AT
    return out;
}

/* the words of _T_CUT's first two branches (plain lowercase ASCII; a space: \s+) */
#define MAX_CUT_WORDS 32
static char cut_words[2][MAX_CUT_WORDS][MAX_LENGTH + 1];
static int cut_lengths[2][MAX_CUT_WORDS];
static int n_cut_words[2] = {0, 0};
static int cut_configured = 0;

static int read_cut_words(PyObject *words, int which) {
    PyObject *seq = PySequence_Fast(words, "configure_cut() takes two sequences of words");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_CUT_WORDS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many words");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *word = PySequence_Fast_GET_ITEM(seq, k);
        Py_ssize_t len = PyUnicode_Check(word) ? PyUnicode_GET_LENGTH(word) : -1;
        if (len < 1 || len > MAX_LENGTH || !PyUnicode_IS_ASCII(word)) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a word is an ASCII str of 1 to 32 characters");
            return -1;
        }
        const char *chars = (const char *)PyUnicode_DATA(word);
        if (!(chars[0] >= 'a' && chars[0] <= 'z')) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a word opens with a lowercase letter");
            return -1;
        }
        memcpy(cut_words[which][k], chars, (size_t)len);
        cut_words[which][k][len] = 0;
        cut_lengths[which][k] = (int)len;
    }
    n_cut_words[which] = (int)n;
    Py_DECREF(seq);
    return 0;
}

static PyObject *configure_cut(PyObject *self, PyObject *args) {
    PyObject *after_comma, *after_space;
    if (!PyArg_ParseTuple(args, "OO", &after_comma, &after_space)) return NULL;
    cut_configured = 0;
    if (read_cut_words(after_comma, 0) < 0 || read_cut_words(after_space, 1) < 0) return NULL;
    cut_configured = 1;
    Py_RETURN_NONE;
}

/* whether one of the words of list `which` is at i, followed by \b */
static int cut_word_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, int which) {
#define AT(j) PyUnicode_READ(kind, data, j)
    if (i >= n || !is_az(AT(i))) return 0;
    for (int k = 0; k < n_cut_words[which]; k++) {
        const char *w = cut_words[which][k];
        Py_ssize_t j = i;
        int ok = 1;
        for (int m = 0; m < cut_lengths[which][k] && ok; m++) {
            if (w[m] == ' ') { /* \s+ */
                if (j >= n || !Py_UNICODE_ISSPACE(AT(j))) ok = 0;
                while (ok && j < n && Py_UNICODE_ISSPACE(AT(j))) j++;
            } else if (j < n && AT(j) == (Py_UCS4)w[m]) {
                j++;
            } else {
                ok = 0;
            }
        }
        if (ok && !(j < n && is_w(AT(j)))) return 1; /* \b after a letter */
    }
    return 0;
}

static Py_ssize_t cut_scan(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos) {
#define AT(j) PyUnicode_READ(kind, data, j)
    if (pos < 0) pos = 0;
    for (Py_ssize_t i = pos; i < n; i++) {
        Py_UCS4 c = AT(i);
        if (c == ',') {
            Py_ssize_t j = i + 1;
            while (j < n && Py_UNICODE_ISSPACE(AT(j))) j++;
            if (cut_word_at(kind, data, n, j, 0)) return i;
        } else if (c == ';' || c == ':' || c == '.' || c == '!' || c == '?') {
            if (i + 1 == n || Py_UNICODE_ISSPACE(AT(i + 1))) return i;
        } else if (Py_UNICODE_ISSPACE(c)) {
            if (cut_word_at(kind, data, n, i + 1, 1)) return i;
            if (i + 2 < n && (AT(i + 1) == '-' || AT(i + 1) == 0x2013 || AT(i + 1) == 0x2014) &&
                Py_UNICODE_ISSPACE(AT(i + 2)))
                return i;
        }
    }
    return -1;
#undef AT
}

static PyObject *cut(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "Un", &text, &pos)) return NULL;
    if (!cut_configured) {
        PyErr_SetString(PyExc_RuntimeError, "configure_cut() was not called");
        return NULL;
    }
    return PyLong_FromSsize_t(
        cut_scan(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), pos));
}

/* sites(head, lower, limit): text.py's _t_sites_rules (the contribution statements and the names
 * introduced explicitly) in one pass, or None where this pass does not decide and the rules must
 * run: a non-ASCII letter where _T_LEAD (case-insensitive) compares one, a lowercase long form
 * after a head noun (_T_LOWER_NAMED), a lowercase name that _t_lower_apposed would try, a
 * non-ASCII word where _t_after_head_noun or _t_compound_adjective reads one. Each regex of the
 * rules is read here as the engine reads it, alternatives and options in its order of trying
 * (where a repetition could give back characters, what follows them cannot match, so the
 * greedy reading is the match):
 *   _T_STATEMENT  (?:(?:adverbs) )?(?P<v>verb forms)(?:e?s|e)?(?=[\s:,])[\s:]*      (on lower)
 *   _T_LEAD       (?:that\s+|how\s+|a\s+way\s+to\s+)?(?:(?:a|an|...)\s+)?(?:(?:novel|...)[,\s]+
 *                 (?:and\s+|yet\s+)?)*                                            (re.I, on head)
 *   _T_INTRODUCED, _T_NAMED, _T_NAME_AT  as text.py spells them
 * with [A-Z] [a-z] [0-9] ASCII, \s str.isspace(), \w str.isalnum() or "_", \d str.isdecimal(),
 * as re has them for a str pattern. configure_rules() gives the words (text.py's tuples). */
#define NOCH 0x110000
#define MAX_WORDS 64
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
} Txt;

static inline Py_UCS4 CH(const Txt *t, Py_ssize_t i) {
    return i >= 0 && i < t->n ? PyUnicode_READ(t->kind, t->data, i) : NOCH;
}
static inline int WS(Py_UCS4 c) { return c != NOCH && Py_UNICODE_ISSPACE(c); }
static inline int W(Py_UCS4 c) { return c != NOCH && is_w(c); }
static inline Py_ssize_t skip_ws(const Txt *t, Py_ssize_t i) {
    while (WS(CH(t, i))) i++;
    return i;
}
static inline Py_ssize_t skip_run(const Txt *t, Py_ssize_t i) { /* [\w-]* */
    for (Py_UCS4 c = CH(t, i); W(c) || c == '-'; c = CH(t, ++i)) {
    }
    return i;
}
static inline int quote_open(Py_UCS4 c) { return c == '"' || c == 0x201C || c == '*'; }  /* ["“*] */
static inline int quote_close(Py_UCS4 c) { return c == '"' || c == 0x201D || c == '*'; } /* ["”*] */

/* the literal (ASCII) s at i, exactly */
static int lit(const Txt *t, Py_ssize_t i, const char *s, Py_ssize_t len) {
    if (i < 0 || i + len > t->n) return 0;
    for (Py_ssize_t k = 0; k < len; k++)
        if (PyUnicode_READ(t->kind, t->data, i + k) != (Py_UCS4)(unsigned char)s[k]) return 0;
    return 1;
}

/* the lowercase ASCII literal s at i, case-insensitively as re.I reads it: 1, 0, or -1 where a
 * non-ASCII character is compared (re.I may match it: K, ſ) */
static int ci_lit(const Txt *t, Py_ssize_t i, const char *s, Py_ssize_t len) {
    for (Py_ssize_t k = 0; k < len; k++) {
        Py_UCS4 c = CH(t, i + k);
        if (c == NOCH) return 0;
        if (c > 127) return -1;
        if (c >= 'A' && c <= 'Z') c += 32;
        if (c != (Py_UCS4)(unsigned char)s[k]) return 0;
    }
    return 1;
}

typedef struct {
    int n;
    char w[MAX_WORDS][MAX_LENGTH + 1];
    Py_ssize_t len[MAX_WORDS];
} Words;

static Words st_adverbs, st_forms, lead_openers, lead_determiners, lead_adjectives, lead_joins, lead_first,
    intro_kinds, named_words;
static char form_introduces[MAX_WORDS]; /* st_forms[k] is in _T_INTRO_VERBS */
static PyObject *generic_set = NULL, *noun_any_set = NULL, *naming_links_set = NULL;
static int rules_configured = 0;

static int read_words(PyObject *dict, const char *key, Words *out) {
    PyObject *seq = PyDict_GetItemString(dict, key); /* (borrowed) */
    if (seq == NULL) {
        PyErr_Format(PyExc_KeyError, "configure_rules() needs %s", key);
        return -1;
    }
    seq = PySequence_Fast(seq, "configure_rules() takes sequences of words");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_WORDS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many words");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_UCS1 buf[MAX_LENGTH];
        Py_ssize_t len;
        if (read_ascii(PySequence_Fast_GET_ITEM(seq, k), buf, &len) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        memcpy(out->w[k], buf, (size_t)len);
        out->w[k][len] = 0;
        out->len[k] = len;
    }
    out->n = (int)n;
    Py_DECREF(seq);
    return 0;
}

static int read_set(PyObject *dict, const char *key, PyObject **out) {
    PyObject *set = PyDict_GetItemString(dict, key);
    if (set == NULL || !PyAnySet_Check(set)) {
        PyErr_Format(PyExc_TypeError, "configure_rules() needs %s, a set", key);
        return -1;
    }
    Py_INCREF(set);
    Py_XSETREF(*out, set);
    return 0;
}

static PyObject *configure_rules(PyObject *self, PyObject *dict) {
    rules_configured = 0;
    if (!PyDict_Check(dict)) {
        PyErr_SetString(PyExc_TypeError, "configure_rules() takes a dict");
        return NULL;
    }
    if (read_words(dict, "statement_adverbs", &st_adverbs) < 0 ||
        read_words(dict, "statement_forms", &st_forms) < 0 ||
        read_words(dict, "lead_openers", &lead_openers) < 0 ||
        read_words(dict, "lead_determiners", &lead_determiners) < 0 ||
        read_words(dict, "lead_adjectives", &lead_adjectives) < 0 ||
        read_words(dict, "lead_joins", &lead_joins) < 0 || read_words(dict, "lead_first", &lead_first) < 0 ||
        read_words(dict, "introduced_kinds", &intro_kinds) < 0 ||
        read_words(dict, "named_words", &named_words) < 0 || read_set(dict, "generic", &generic_set) < 0 ||
        read_set(dict, "head_noun_any", &noun_any_set) < 0 ||
        read_set(dict, "naming_links", &naming_links_set) < 0)
        return NULL;
    PyObject *intro = PyDict_GetItemString(dict, "intro_verbs");
    if (intro == NULL || !PyAnySet_Check(intro)) {
        PyErr_SetString(PyExc_TypeError, "configure_rules() needs intro_verbs, a set");
        return NULL;
    }
    for (int k = 0; k < st_forms.n; k++) {
        PyObject *w = PyUnicode_FromString(st_forms.w[k]);
        int in = w == NULL ? -1 : PySet_Contains(intro, w);
        Py_XDECREF(w);
        if (in < 0) return NULL;
        form_introduces[k] = (char)in;
    }
    rules_configured = 1;
    Py_RETURN_NONE;
}

/* _T_STATEMENT.match(lower, p): 1 with the verb's span and the match's end, else 0 */
static int statement_at(const Txt *t, Py_ssize_t p, Py_ssize_t *vs, Py_ssize_t *ve, Py_ssize_t *end,
                        int *form) {
    static const char *suffixes[4] = {"es", "s", "e", ""}; /* (?:e?s|e)? in its order of trying */
    for (int with_adverb = 1; with_adverb >= 0; with_adverb--) {
        Py_ssize_t q = p;
        if (with_adverb) {
            int a = 0;
            while (a < st_adverbs.n && !(lit(t, p, st_adverbs.w[a], st_adverbs.len[a]) &&
                                         CH(t, p + st_adverbs.len[a]) == ' '))
                a++;
            if (a == st_adverbs.n) continue;
            q = p + st_adverbs.len[a] + 1;
        }
        for (int f = 0; f < st_forms.n; f++) {
            if (!lit(t, q, st_forms.w[f], st_forms.len[f])) continue;
            Py_ssize_t e = q + st_forms.len[f];
            for (int x = 0; x < 4; x++) {
                Py_ssize_t sl = (Py_ssize_t)strlen(suffixes[x]);
                if (!lit(t, e, suffixes[x], sl)) continue;
                Py_UCS4 c = CH(t, e + sl);
                if (!(WS(c) || c == ':' || c == ',')) continue;
                Py_ssize_t y = e + sl;
                while (WS(CH(t, y)) || CH(t, y) == ':') y++;
                *vs = q;
                *ve = e;
                *end = y;
                *form = f;
                return 1;
            }
        }
    }
    return 0;
}

/* the words w (a space in one: \s+), then \s+, case-insensitively at i: the end, 0 for none, -1
 * to bail (see ci_lit) */
static Py_ssize_t ci_words_ws(const Txt *t, Py_ssize_t i, const char *w, Py_ssize_t len, int comma) {
    Py_ssize_t k = 0;
    while (k < len) {
        Py_ssize_t part = 0;
        while (k + part < len && w[k + part] != ' ') part++;
        int r = ci_lit(t, i, w + k, part);
        if (r <= 0) return r;
        i += part;
        k += part + 1; /* (past the space) */
        Py_UCS4 c = CH(t, i);
        if (!(WS(c) || (comma && k >= len && c == ','))) return 0;
        while (WS(CH(t, i)) || (comma && k >= len && CH(t, i) == ',')) i++;
    }
    return i;
}

/* _t_lead_end(text, pos): where _T_LEAD's match from pos ends, or -1 to bail */
static Py_ssize_t lead_end(const Txt *t, Py_ssize_t pos) {
    /* text[pos:pos+20].split(None, 1)[0].split(",", 1)[0]: ASCII and not a lead's first word */
    Py_ssize_t hi = pos + 20 < t->n ? pos + 20 : t->n;
    Py_ssize_t a = pos;
    while (a < hi && WS(CH(t, a))) a++;
    if (a < hi) {
        Py_ssize_t b = a;
        int ascii = 1;
        while (b < hi && !WS(CH(t, b))) {
            if (CH(t, b) == ',') break;
            if (CH(t, b) > 127) ascii = 0;
            b++;
        }
        if (ascii) {
            int k = 0;
            while (k < lead_first.n && !(lead_first.len[k] == b - a && ci_lit(t, a, lead_first.w[k], b - a) == 1))
                k++;
            if (k == lead_first.n) return pos;
        }
    }
    Py_ssize_t p = pos, e;
    for (int k = 0; k < lead_openers.n; k++) {
        if ((e = ci_words_ws(t, p, lead_openers.w[k], lead_openers.len[k], 0)) < 0) return -1;
        if (e > 0) {
            p = e;
            break;
        }
    }
    for (int k = 0; k < lead_determiners.n; k++) {
        if ((e = ci_words_ws(t, p, lead_determiners.w[k], lead_determiners.len[k], 0)) < 0) return -1;
        if (e > 0) {
            p = e;
            break;
        }
    }
    for (;;) { /* (?:(?:adjectives)[,\s]+(?:and\s+|yet\s+)?)* */
        Py_ssize_t q = 0;
        for (int k = 0; k < lead_adjectives.n && q == 0; k++)
            if ((q = ci_words_ws(t, p, lead_adjectives.w[k], lead_adjectives.len[k], 1)) < 0) return -1;
        if (q == 0) return p;
        for (int k = 0; k < lead_joins.n; k++) {
            if ((e = ci_words_ws(t, q, lead_joins.w[k], lead_joins.len[k], 0)) < 0) return -1;
            if (e > 0) {
                q = e;
                break;
            }
        }
        p = q;
    }
}

/* _T_INTRODUCED.match(head, at) and _t_introduced's test after it: 1 with the name's span, else 0 */
static int introduced_match(const Txt *t, Py_ssize_t at, Py_ssize_t *ns, Py_ssize_t *ne) {
    Py_ssize_t p = at;
    while (is_az(CH(t, p))) p++;
    Py_ssize_t s_end = p;
    if (CH(t, p) == ',') p++;
    if (!WS(CH(t, p))) return 0;
    p = skip_ws(t, p);
    for (int with_the = 1; with_the >= 0; with_the--) {
        Py_ssize_t q = p;
        if (with_the) {
            if (!(lit(t, q, "the", 3) && WS(CH(t, q + 3)))) continue;
            q = skip_ws(t, q + 3);
        }
        while (quote_open(CH(t, q))) q++;
        if (!is_AZ(CH(t, q))) continue;
        Py_ssize_t ends[5];
        int count = 0;
        ends[0] = skip_run(t, q + 1);
        while (count < 4) { /* (?:\s+[A-Z][\w-]*){0,4} */
            Py_ssize_t r = ends[count];
            if (!WS(CH(t, r))) break;
            r = skip_ws(t, r);
            if (!is_AZ(CH(t, r))) break;
            ends[++count] = skip_run(t, r + 1);
        }
        for (int j = count; j >= 0; j--) {
            Py_ssize_t x = ends[j], y = x;
            while (quote_close(CH(t, y))) y++;
            Py_ssize_t z = skip_ws(t, y);
            Py_UCS4 c = CH(t, z);
            int k = 0;
            if (!(c == ',' || c == ':' || c == '(' || c == 0x2014)) { /* else (?P<k>...) */
                if (!WS(CH(t, y))) continue;
                int w = 0;
                while (w < intro_kinds.n) {
                    if (lit(t, z, intro_kinds.w[w], intro_kinds.len[w])) {
                        Py_UCS4 d = CH(t, z + intro_kinds.len[w]);
                        if (WS(d) || d == ',' || d == '.') break;
                    }
                    w++;
                }
                if (w == intro_kinds.n) continue;
                k = 1;
            }
            /* "the proposed MOO framework": n.group("k") and n.group("s").endswith("ed") and
             * head[at - 11 : at - 6] != " our " */
            if (k && s_end - at >= 2 && CH(t, s_end - 2) == 'e' && CH(t, s_end - 1) == 'd') {
                Py_ssize_t a = at - 11, b = at - 6; /* (Python's slice: a negative index from the end) */
                if (a < 0) a += t->n;
                if (a < 0) a = 0;
                if (b < 0) b += t->n;
                if (b < 0) b = 0;
                if (b > t->n) b = t->n;
                if (!(b - a == 5 && lit(t, a, " our ", 5))) return 0;
            }
            *ns = q;
            *ne = x;
            return 1;
        }
    }
    return 0;
}

/* _t_introduced(head, at): its prefilter (a capital opens, after quote marks, one of the first
 * three words of head[at:at+200], or there are fewer than four), then the match */
static int introduced(const Txt *t, Py_ssize_t at, Py_ssize_t *ns, Py_ssize_t *ne) {
    Py_ssize_t hi = at + 200 < t->n ? at + 200 : t->n, i = at;
    int words = 0, capital = 0;
    if (i < 0) i = 0; /* (at >= 0 here) */
    while (words < 4) {
        while (i < hi && WS(CH(t, i))) i++;
        if (i >= hi) break;
        if (words < 3) {
            Py_ssize_t j = i;
            while (j < hi && quote_open(CH(t, j))) j++;
            if (j < hi && !WS(CH(t, j)) && is_AZ(CH(t, j))) capital = 1;
        }
        words++;
        while (i < hi && !WS(CH(t, i))) i++;
    }
    if (words == 4 && !capital) return 0;
    return introduced_match(t, at, ns, ne);
}

/* _T_NAMED.match(head, p): 1 with the name's span, else 0 */
static int named_match(const Txt *t, Py_ssize_t p, Py_ssize_t *ns, Py_ssize_t *ne) {
    for (int with_prefix = 1; with_prefix >= 0; with_prefix--) {
        Py_ssize_t q = p;
        if (with_prefix) {
            int w = 0;
            while (w < named_words.n && !(lit(t, q, named_words.w[w], named_words.len[w]) &&
                                          WS(CH(t, q + named_words.len[w]))))
                w++;
            if (w < named_words.n) q = skip_ws(t, q + named_words.len[w]);
            else if (lit(t, q, "--", 2) && WS(CH(t, q + 2))) q = skip_ws(t, q + 2);
            else if (CH(t, q) == 0x2014) q = skip_ws(t, q + 1);
            else continue;
        }
        for (int with_as = 1; with_as >= 0; with_as--) {
            Py_ssize_t r = q;
            while (quote_open(CH(t, r))) r++;
            if (with_as) {
                if (!(lit(t, r, "as", 2) && WS(CH(t, r + 2)))) continue;
                r = skip_ws(t, r + 2);
            }
            while (quote_open(CH(t, r))) r++;
            if (!is_AZ(CH(t, r))) continue;
            Py_ssize_t e = skip_run(t, r + 1);
            for (int count = 0; count < 4; count++) {
                if (!WS(CH(t, e))) break;
                Py_ssize_t s = skip_ws(t, e);
                if (!is_AZ(CH(t, s))) break;
                e = skip_run(t, s + 1);
            }
            *ns = r;
            *ne = e;
            return 1;
        }
    }
    return 0;
}

/* _T_NAME_AT.match(head, p): 1 with the span of group n, else 0 */
static int name_at_match(const Txt *t, Py_ssize_t p, Py_ssize_t *ns, Py_ssize_t *ne) {
    Py_ssize_t q = p;
    for (Py_UCS4 c = CH(t, q); c == '"' || c == 0x201C || c == '*' || c == '_'; c = CH(t, ++q)) {
    }
    Py_UCS4 c0 = CH(t, q);
    Py_ssize_t e = -1, r;
    if (is_AZ(c0)) {
        r = q + 1; /* [A-Z][a-z]*-?[A-Z0-9][\w+*-]* */
        while (is_az(CH(t, r))) r++;
        Py_ssize_t r2 = -1;
        if (CH(t, r) == '-' && (is_AZ(CH(t, r + 1)) || is_09(CH(t, r + 1)))) r2 = r + 2;
        else if (is_AZ(CH(t, r)) || is_09(CH(t, r))) r2 = r + 1;
        if (r2 >= 0) {
            for (Py_UCS4 c = CH(t, r2); W(c) || c == '+' || c == '*' || c == '-'; c = CH(t, ++r2)) {
            }
            e = r2;
        } else if (is_az(CH(t, q + 1))) { /* [A-Z][a-z]+(?:-[a-z]+)*-[A-Z][\w-]* */
            r = q + 1;
            while (is_az(CH(t, r))) r++;
            while (CH(t, r) == '-' && is_az(CH(t, r + 1))) {
                r += 2;
                while (is_az(CH(t, r))) r++;
            }
            if (CH(t, r) == '-' && is_AZ(CH(t, r + 1))) e = skip_run(t, r + 2);
        }
    } else if (is_az(c0)) { /* [a-z]{1,2}[A-Z][\w-]+ */
        if (is_az(CH(t, q + 1)) && is_AZ(CH(t, q + 2))) r = q + 3;
        else if (is_AZ(CH(t, q + 1))) r = q + 2;
        else return 0;
        Py_UCS4 c = CH(t, r);
        if (W(c) || c == '-') e = skip_run(t, r);
    }
    if (e < 0) return 0;
    /* (?:\.\d\w*|\$\\[A-Za-z]+\$)? */
    if (CH(t, e) == '.' && CH(t, e + 1) != NOCH && Py_UNICODE_ISDECIMAL(CH(t, e + 1))) {
        e += 2;
        while (W(CH(t, e))) e++;
    } else if (CH(t, e) == '$' && CH(t, e + 1) == '\\') {
        Py_ssize_t x = e + 2;
        while (is_az(CH(t, x)) || is_AZ(CH(t, x))) x++;
        if (x > e + 2 && CH(t, x) == '$') e = x + 1;
    }
    *ns = q;
    *ne = e;
    return 1;
}

/* _t_compound_adjective(head[s:e]): 1, 0, or -1 to bail (a non-ASCII tail) */
static int compound_adjective(const Txt *t, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t dash = e - 1;
    while (dash >= s && CH(t, dash) != '-') dash--;
    if (dash < s || e - dash - 1 < 3) return 0;
    for (Py_ssize_t i = dash + 1; i < e; i++) {
        Py_UCS4 c = CH(t, i);
        if (c > 127) return -1;
        if (!is_az(c)) return 0;
    }
    return 1;
}

/* membership of head[s:e] in a set: 1, 0, -1 on error */
static int span_in(PyObject *head, Py_ssize_t s, Py_ssize_t e, PyObject *set) {
    PyObject *w = PyUnicode_Substring(head, s, e);
    if (w == NULL) return -1;
    int r = PySet_Contains(set, w);
    Py_DECREF(w);
    return r;
}

/* _t_after_head_noun(head, start): 1, 0, -1 on error, -2 to bail (a non-ASCII character read) */
static int after_head_noun(const Txt *t, Py_ssize_t start) {
    Py_ssize_t a = start - 40 > 0 ? start - 40 : 0, b = start;
    char buf[48];
    Py_ssize_t n = 0;
    for (Py_ssize_t i = a; i < b; i++) {
        Py_UCS4 c = CH(t, i);
        if (c > 127) return -2;
        if (c >= 'A' && c <= 'Z') c += 32;
        buf[n++] = c == ',' ? ' ' : (char)c;
    }
    Py_ssize_t lo = 0, hi = n; /* .strip(" \"“*:_") */
    while (lo < hi && strchr(" \"*:_", buf[lo]) != NULL && buf[lo]) lo++;
    while (hi > lo && strchr(" \"*:_", buf[hi - 1]) != NULL && buf[hi - 1]) hi--;
    Py_ssize_t ws[2], we[2]; /* the last two words (.split()[-2:]) */
    int words = 0;
    Py_ssize_t i = hi;
    while (words < 2) {
        while (i > lo && Py_UNICODE_ISSPACE((Py_UCS4)(unsigned char)buf[i - 1])) i--;
        if (i <= lo) break;
        we[words] = i;
        while (i > lo && !Py_UNICODE_ISSPACE((Py_UCS4)(unsigned char)buf[i - 1])) i--;
        ws[words++] = i;
    }
    if (words == 0) return 0;
    /* words[0] is the last: with two, a naming link last ("methods called") leaves the one before */
    int last = 0;
    if (words == 2) {
        PyObject *w = PyUnicode_FromStringAndSize(buf + ws[0], we[0] - ws[0]);
        int link = w == NULL ? -1 : PySet_Contains(naming_links_set, w);
        Py_XDECREF(w);
        if (link < 0) return -1;
        if (link) last = 1;
    }
    PyObject *w = PyUnicode_FromStringAndSize(buf + ws[last], we[last] - ws[last]);
    int r = w == NULL ? -1 : PySet_Contains(noun_any_set, w);
    Py_XDECREF(w);
    return r;
}

static int add_named(PyObject *named, PyObject *head, Py_ssize_t s, Py_ssize_t e) {
    PyObject *w = PyUnicode_Substring(head, s, e);
    if (w == NULL) return -1;
    PyObject *pair = Py_BuildValue("(Nn)", w, s);
    if (pair == NULL) return -1;
    int r = PyList_Append(named, pair);
    Py_DECREF(pair);
    return r;
}

/* where head_noun_at() finds the word after a head noun from obj, or -1; -2 on error */
static Py_ssize_t head_noun_pos(PyObject *head, Py_ssize_t obj) {
    PyObject *args = Py_BuildValue("(On)", head, obj);
    if (args == NULL) return -2;
    PyObject *r = head_noun_at(NULL, args);
    Py_DECREF(args);
    if (r == NULL) return -2;
    Py_ssize_t at = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    return at;
}

#define BAIL 2
static PyObject *sites(PyObject *self, PyObject *args) {
    PyObject *head, *lower;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "UUn", &head, &lower, &limit)) return NULL;
    if (!rules_configured || n_keywords == 0) {
        PyErr_SetString(PyExc_RuntimeError, "configure() and configure_rules() were not called");
        return NULL;
    }
    Txt h = {PyUnicode_KIND(head), PyUnicode_DATA(head), PyUnicode_GET_LENGTH(head)};
    Txt l = {PyUnicode_KIND(lower), PyUnicode_DATA(lower), PyUnicode_GET_LENGTH(lower)};
    if (h.n != l.n) {
        PyErr_SetString(PyExc_ValueError, "sites() takes a text and its lowercase, of one length");
        return NULL;
    }
    PyObject *statements = PyList_New(0), *named = PyList_New(0);
    if (statements == NULL || named == NULL) goto fail;
    Py_ssize_t i = 0, start, ns, ne;
    int found, status = 0;
    while (status == 0 && (start = next_hit(l.kind, l.data, l.n, i, 1, &found)) >= 0) {
        long kind = kind_of[found];
        Py_ssize_t end = start + 1 + lengths[found];
        i = end;
        if (kind != 4) {
            if (CH(&l, end) != ' ') continue;
            if (kind <= 1 && PyList_GET_SIZE(statements) >= limit) continue;
        }
        end += 1;
        if (kind <= 1) { /* 0: "this", 1: "we" */
            if (kind == 0) {
                int m = 0;
                while (m < n_subjects && !ascii_at(l.kind, l.data, l.n, end, subjects[m], subject_lengths[m])) m++;
                if (m == n_subjects) continue;
                end += subject_lengths[m]; /* (lower.find(" ", end) + 1: the subject ends with its space) */
            }
            int k = 0;
            while (k < n_starts && !ascii_at(l.kind, l.data, l.n, end, starts[k], 3)) k++;
            Py_ssize_t vs, ve, se;
            int form;
            if (k == n_starts || !statement_at(&l, end, &vs, &ve, &se, &form)) continue;
            Py_ssize_t obj = lead_end(&h, se);
            if (obj < 0) {
                status = BAIL;
                break;
            }
            PyObject *verb = PyUnicode_Substring(lower, vs, ve);
            PyObject *triple = verb == NULL ? NULL : Py_BuildValue("(nnN)", start + 1, obj, verb);
            if (triple == NULL || PyList_Append(statements, triple) < 0) {
                Py_XDECREF(triple);
                goto fail;
            }
            Py_DECREF(triple);
            if (form_introduces[form] && introduced(&h, ve, &ns, &ne) && add_named(named, head, ns, ne) < 0)
                goto fail;
        } else if (kind == 2) { /* "called", "named" ... */
            if (!named_match(&h, end, &ns, &ne)) {
                int after = after_head_noun(&h, start + 1);
                if (after == -1) goto fail;
                if (after != 0) { /* (_T_LOWER_NAMED: the rules') */
                    status = BAIL;
                    break;
                }
                continue;
            }
            if (add_named(named, head, ns, ne) < 0) goto fail;
        } else if (kind == 4) { /* "propos", "introduc", "present" */
            int got = introduced(&h, end - 1, &ns, &ne);
            Py_ssize_t word_end = -1;
            for (Py_ssize_t j = end - 1; j < end + 12 && j < l.n; j++)
                if (CH(&l, j) == ' ') {
                    word_end = j;
                    break;
                }
            if (!got && word_end != -1) {
                Py_ssize_t obj = lead_end(&h, word_end + 1);
                if (obj < 0) {
                    status = BAIL;
                    break;
                }
                Py_ssize_t at = head_noun_pos(head, obj);
                if (at == -2) goto fail;
                got = at != -1 && named_match(&h, at, &ns, &ne);
                if (!got && !(CH(&l, word_end - 2) == 'e' && CH(&l, word_end - 1) == 'd')) {
                    /* _t_lower_apposed's test: the first comma after opens ", a", at most four words before it */
                    Py_ssize_t a = word_end + 1, comma = a;
                    while (comma < h.n && CH(&h, comma) != ',') comma++;
                    if (comma < h.n && CH(&h, comma + 1) == ' ' && CH(&h, comma + 2) == 'a') {
                        Py_ssize_t spaces = 0;
                        for (Py_ssize_t j = a; j < comma; j++) spaces += CH(&h, j) == ' ';
                        if (spaces <= 3) { /* (_T_LOWER_APPOSED: the rules') */
                            status = BAIL;
                            break;
                        }
                    }
                }
            }
            if (got && add_named(named, head, ns, ne) < 0) goto fail;
        } else { /* 3: "our method, FLATTEN", "the resulting framework VQGraph" */
            if (name_at_match(&h, end, &ns, &ne)) {
                int generic = span_in(head, ns, ne, generic_set);
                if (generic < 0) goto fail;
                int compound = generic ? 0 : compound_adjective(&h, ns, ne);
                if (compound < 0) {
                    status = BAIL;
                    break;
                }
                if (!generic && !compound) {
                    if (add_named(named, head, ns, ne) < 0) goto fail;
                    continue;
                }
            }
            /* lower.find(" ", end, end + 20), then from first + 1 */
            Py_ssize_t first = -1, second = -1;
            for (Py_ssize_t j = end; j < end + 20 && j < l.n; j++)
                if (CH(&l, j) == ' ') {
                    first = j;
                    break;
                }
            if (first != -1)
                for (Py_ssize_t j = first + 1; j < first + 20 && j < l.n; j++)
                    if (CH(&l, j) == ' ') {
                        second = j;
                        break;
                    }
            Py_ssize_t pairs[2][2] = {{end, first}, {first + 1, second}};
            for (int k = 0; k < 2; k++) {
                Py_ssize_t a = pairs[k][0], b = pairs[k][1];
                if (b == -1) continue;
                Py_ssize_t bb = b; /* lower[a:b].rstrip(",") */
                while (bb > a && CH(&l, bb - 1) == ',') bb--;
                if (!is_noun(l.kind, l.data, a, bb)) continue;
                if (named_match(&h, b + 1, &ns, &ne) && add_named(named, head, ns, ne) < 0) goto fail;
                break;
            }
        }
    }
    if (status == BAIL) {
        Py_DECREF(statements);
        Py_DECREF(named);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(NN)", statements, named);
fail:
    Py_XDECREF(statements);
    Py_XDECREF(named);
    return NULL;
}

/* front(head, lower, statements): text.py's _t_front_rules, the first three loops of
 * _t_candidates (at each statement's object: a name after a head noun, names apposed "X, a",
 * the name-like object; each name-like word in parentheses; each ", X" or ": X" after a head
 * noun) as (found, explicit, bonus). Its rare branches are text.py's own functions, called from
 * here (configure_front()): _t_paren_defined where the word before a "(" is name-like,
 * _t_comma_named after a head noun (or a word with a character beyond ASCII). */
static PyObject *paren_defined_fn = NULL, *comma_named_fn = NULL, *intro_set = NULL;
static long object_bonus = 0, defined_bonus = 0;

static PyObject *configure_front(PyObject *self, PyObject *args) {
    PyObject *paren, *comma, *intro;
    long ob, db;
    if (!PyArg_ParseTuple(args, "OOOll", &paren, &comma, &intro, &ob, &db)) return NULL;
    if (!PyCallable_Check(paren) || !PyCallable_Check(comma) || !PyAnySet_Check(intro)) {
        PyErr_SetString(PyExc_TypeError, "configure_front(paren_defined, comma_named, intro_verbs, bonus, bonus)");
        return NULL;
    }
    Py_INCREF(paren);
    Py_XSETREF(paren_defined_fn, paren);
    Py_INCREF(comma);
    Py_XSETREF(comma_named_fn, comma);
    Py_INCREF(intro);
    Py_XSETREF(intro_set, intro);
    object_bonus = ob;
    defined_bonus = db;
    Py_RETURN_NONE;
}

/* the first ch (ASCII) in [i, end) or -1: memchr for a 1-byte text, as str.find */
static Py_ssize_t find_char(const Txt *t, Py_UCS4 ch, Py_ssize_t i, Py_ssize_t end) {
    if (end > t->n) end = t->n;
    if (i < 0) i = 0;
    if (i >= end) return -1;
    if (t->kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *d = (const Py_UCS1 *)t->data;
        const Py_UCS1 *at = memchr(d + i, (int)ch, (size_t)(end - i));
        return at == NULL ? -1 : at - d;
    }
    for (; i < end; i++)
        if (PyUnicode_READ(t->kind, t->data, i) == ch) return i;
    return -1;
}

/* bonus[token] = max(bonus.get(token, 0), value) */
static int raise_bonus(PyObject *bonus, PyObject *token, long value) {
    PyObject *old = PyDict_GetItemWithError(bonus, token);
    if (old == NULL && PyErr_Occurred()) return -1;
    if (old != NULL) {
        long v = PyLong_AsLong(old);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v >= value) return 0;
    }
    PyObject *v = PyLong_FromLong(value);
    if (v == NULL) return -1;
    int r = PyDict_SetItem(bonus, token, v);
    Py_DECREF(v);
    return r;
}

static int append_pair(PyObject *list, PyObject *token, Py_ssize_t at) { /* (token, at); token stolen */
    if (token == NULL) return -1;
    PyObject *pair = Py_BuildValue("(Nn)", token, at);
    if (pair == NULL) return -1;
    int r = PyList_Append(list, pair);
    Py_DECREF(pair);
    return r;
}

/* _T_TITLE_COMPOUND.fullmatch(head[s:e]): [A-Z][a-z]+(?:-[A-Z][a-z]+)+ */
static int title_compound(const Txt *t, Py_ssize_t s, Py_ssize_t e) {
    Py_ssize_t i = s;
    int parts = 0;
    for (;;) {
        if (!(i < e && is_AZ(CH(t, i)))) return 0;
        i++;
        if (!(i < e && is_az(CH(t, i)))) return 0;
        while (i < e && is_az(CH(t, i))) i++;
        parts++;
        if (i == e) return parts >= 2;
        if (CH(t, i) != '-') return 0;
        i++;
    }
}

/* _t_apposed(head, lo, hi) appended to found */
static int apposed(PyObject *head, const Txt *t, Py_ssize_t lo, Py_ssize_t hi, PyObject *found) {
    for (Py_ssize_t k = lo; k + 3 <= hi; k++) { /* head.find(", a", k, hi) */
        k = find_char(t, ',', k, hi - 2);
        if (k < 0) break;
        if (!(CH(t, k + 1) == ' ' && CH(t, k + 2) == 'a')) continue;
        Py_UCS4 a = CH(t, k + 3), b = CH(t, k + 4);
        Py_ssize_t stop = a == ' ' ? k + 4 : (a == 'n' && b == ' ') ? k + 5 : 0;
        if (stop && stop <= hi) {
            Py_ssize_t floor = lo - 1 > 0 ? lo - 1 : 0, space = -1;
            for (Py_ssize_t j = k - 1; j >= floor; j--) /* head.rfind(" ", floor, k) */
                if (CH(t, j) == ' ') {
                    space = j;
                    break;
                }
            if (space != -1) {
                Py_ssize_t start = space + 1;
                while (start < k && quote_open(CH(t, start))) start++; /* word.lstrip("\"“*") */
                /* _T_NAME_WORD.match(head, start, k), then only quote marks up to k */
                Py_ssize_t e = start < k && is_AZ(CH(t, start)) ? name_at(t->kind, t->data, k, start) : -1;
                if (e >= 0) {
                    Py_ssize_t j = e;
                    while (j < k && quote_close(CH(t, j))) j++;
                    if (j == k && append_pair(found, PyUnicode_Substring(head, start, e), start) < 0) return -1;
                }
            }
        }
        k += 2; /* (the next find starts at k + 3) */
    }
    return 0;
}

/* the result of a rule function called from here: (token, at) appended (and, with a bonus, that
 * bonus raised), None skipped */
static int take(PyObject *r, PyObject *found, PyObject *bonus, long value) {
    if (r == NULL) return -1;
    if (r == Py_None) {
        Py_DECREF(r);
        return 0;
    }
    int ok = PyTuple_Check(r) && PyTuple_GET_SIZE(r) == 2 && PyList_Append(found, r) == 0 &&
             (value == 0 || raise_bonus(bonus, PyTuple_GET_ITEM(r, 0), value) == 0);
    if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a rule gave no (token, at)");
    Py_DECREF(r);
    return ok ? 0 : -1;
}

static PyObject *front(PyObject *self, PyObject *args) {
    PyObject *head, *lower, *statements;
    if (!PyArg_ParseTuple(args, "UUO!", &head, &lower, &PyList_Type, &statements)) return NULL;
    if (!rules_configured || paren_defined_fn == NULL || n_nouns == 0) {
        PyErr_SetString(PyExc_RuntimeError, "configure_rules(), configure_front() and configure_head_nouns() first");
        return NULL;
    }
    Txt h = {PyUnicode_KIND(head), PyUnicode_DATA(head), PyUnicode_GET_LENGTH(head)};
    PyObject *found = PyList_New(0), *explicit = PyList_New(0), *bonus = PyDict_New();
    if (found == NULL || explicit == NULL || bonus == NULL) goto fail;
    Py_ssize_t ns, ne;
    for (Py_ssize_t s = 0; s < PyList_GET_SIZE(statements); s++) {
        PyObject *st = PyList_GET_ITEM(statements, s);
        Py_ssize_t s0, obj;
        PyObject *verb;
        if (!PyArg_ParseTuple(st, "nnU", &s0, &obj, &verb)) goto fail; /* (start, object, verb) */
        if (obj < 0 || obj > h.n) {
            PyErr_SetString(PyExc_ValueError, "a statement's object is in the text");
            goto fail;
        }
        Py_ssize_t end = h.n; /* head.find(". ", obj) */
        for (Py_ssize_t j = obj; (j = find_char(&h, '.', j, h.n - 1)) >= 0; j++)
            if (CH(&h, j + 1) == ' ') {
                end = j;
                break;
            }
        Py_ssize_t at = head_noun_pos(head, obj); /* _t_after_head_noun_of(head, obj) */
        if (at == -2) goto fail;
        if (at != -1 && named_match(&h, at, &ns, &ne) && append_pair(explicit, PyUnicode_Substring(head, ns, ne), ns) < 0)
            goto fail;
        if (apposed(head, &h, obj, end, found) < 0) goto fail;
        if (name_at_match(&h, obj, &ns, &ne)) { /* "we propose FooNet to ..." */
            PyObject *token = PyUnicode_Substring(head, ns, ne);
            if (token == NULL) goto fail;
            Py_INCREF(token);
            if (append_pair(found, token, ns) < 0) {
                Py_DECREF(token);
                goto fail;
            }
            /* the match's end is the group's: head[end:end+2] is " X" with X.isupper() */
            int intro = PySet_Contains(intro_set, verb);
            int raise = intro == 1 && !(CH(&h, ne) == ' ' && CH(&h, ne + 1) != NOCH &&
                                        Py_UNICODE_ISUPPER(CH(&h, ne + 1))) &&
                        !title_compound(&h, ns, ne);
            int r = intro < 0 ? -1 : raise ? raise_bonus(bonus, token, object_bonus) : 0;
            Py_DECREF(token);
            if (r < 0) goto fail;
        }
    }
    for (Py_ssize_t i = 0; (i = find_char(&h, '(', i, h.n)) >= 0; i++) { /* each "(" */
        if (name_at_match(&h, i + 1, &ns, &ne)) {
            if (append_pair(found, PyUnicode_Substring(head, ns, ne), ns) < 0) goto fail;
        } else if (i >= 1 && CH(&h, i - 1) == ' ') {
            /* _T_NAME_AT.fullmatch(head, at, i - 1) needs a match there (to i - 1 or not: the rule decides) */
            Py_ssize_t at = 0;
            for (Py_ssize_t j = i - 2; j >= 0; j--)
                if (CH(&h, j) == ' ') {
                    at = j + 1;
                    break;
                }
            Txt view = {h.kind, h.data, i - 1};
            if (at < i - 1 && name_at_match(&view, at, &ns, &ne)) {
                PyObject *r = PyObject_CallFunction(paren_defined_fn, "On", head, i);
                if (take(r, found, bonus, defined_bonus) < 0) goto fail;
            }
        }
    }
    Py_ssize_t comma = find_char(&h, ',', 0, h.n - 2), colon = find_char(&h, ':', 0, h.n - 2);
    for (Py_ssize_t i = 0; comma >= 0 || colon >= 0; i++) { /* each ", X" and ": X" (_T_COMMA_CAPITAL, _T_COLON_CAPITAL) */
        if (comma >= 0 && comma < i) comma = find_char(&h, ',', i, h.n - 2);
        if (colon >= 0 && colon < i) colon = find_char(&h, ':', i, h.n - 2);
        if (comma < 0 && colon < 0) break;
        i = comma < 0 ? colon : colon < 0 ? comma : comma < colon ? comma : colon;
        if (CH(&h, i + 1) != ' ') continue;
        Py_ssize_t j = i + 2;
        for (Py_UCS4 q = CH(&h, j); q == '"' || q == 0x201C || q == '*' || q == '_'; q = CH(&h, ++j)) {
        }
        if (!is_AZ(CH(&h, j))) continue;
        Py_ssize_t w = i; /* the word before: head[head.rfind(" ", 0, i) + 1 : i], lowercased */
        while (w > 0 && CH(&h, w - 1) != ' ') w--;
        int call = 0;
        if (i - w >= 1 && i - w <= MAX_LENGTH) {
            char buf[MAX_LENGTH];
            int ascii = 1;
            for (Py_ssize_t k = w; k < i; k++) {
                Py_UCS4 x = CH(&h, k);
                if (x > 127) ascii = 0;
                buf[k - w] = (char)(x >= 'A' && x <= 'Z' ? x + 32 : x);
            }
            if (!ascii) call = 1;
            else {
                PyObject *noun = PyUnicode_FromStringAndSize(buf, i - w);
                call = noun == NULL ? -1 : PySet_Contains(noun_any_set, noun);
                Py_XDECREF(noun);
                if (call < 0) goto fail;
            }
        } else if (i - w > MAX_LENGTH) {
            for (Py_ssize_t k = w; k < i; k++)
                if (CH(&h, k) > 127) call = 1; /* (.lower() beyond ASCII: the rule decides) */
        }
        if (call) {
            PyObject *r = PyObject_CallFunction(comma_named_fn, "OOOn", head, lower, statements, i);
            if (take(r, found, bonus, 0) < 0) goto fail;
        }
        i = j; /* (the next match starts after this one's capital) */
    }
    return Py_BuildValue("(NNN)", found, explicit, bonus);
fail:
    Py_XDECREF(found);
    Py_XDECREF(explicit);
    Py_XDECREF(bonus);
    return NULL;
}


/* ---- long_form(abbr, before): text.py's _long_form_rules for ASCII strings ---------------------- */

static inline int lf_space(unsigned char c) { return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31); }
static inline int lf_alpha(unsigned char c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }
static inline int lf_alnum(unsigned char c) { return lf_alpha(c) || (c >= '0' && c <= '9'); }
static inline unsigned char lf_lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* str.rfind(sub, 0, end) (end >= 0 here) of lowercase-folded hay (hay_low) */
static Py_ssize_t lf_rfind(const char *hay, Py_ssize_t end, const char *sub, Py_ssize_t m) {
    for (Py_ssize_t i = end - m; i >= 0; i--)
        if (memcmp(hay + i, sub, (size_t)m) == 0) return i;
    return -1;
}

/* s[a:b].strip() as [*a, *b) */
static void lf_strip(const char *s, Py_ssize_t *a, Py_ssize_t *b) {
    while (*a < *b && lf_space((unsigned char)s[*a])) (*a)++;
    while (*b > *a && lf_space((unsigned char)s[*b - 1])) (*b)--;
}

/* _initials(short, long): 1 and [*a, *b) of long, or 0 (None). low: long lowercased. */
static int lf_initials(const char *sh, Py_ssize_t sn, const char *lg, const char *low, Py_ssize_t ln,
                       Py_ssize_t *a, Py_ssize_t *b) {
    if (sn < 2) return 0;
    char letters[64];
    if (sn > (Py_ssize_t)sizeof letters) return -1; /* (the caller declines) */
    for (Py_ssize_t k = 0; k < sn; k++) {
        if (!lf_alpha((unsigned char)sh[k])) return 0;
        letters[k] = (char)lf_lower((unsigned char)sh[k]);
    }
    Py_ssize_t i = ln - 1;
    while (i >= 0 && (lg[i] == '-' || lf_space((unsigned char)lg[i]))) i--;
    if (i > 0) { /* back to the start of the last word's last part (after a "-" or a space) */
        Py_ssize_t j = i;
        while (j > 0 && !lf_space((unsigned char)lg[j - 1]) && lg[j - 1] != '-') j--;
        i = j;
    }
    if (i < 0 || low[i] != letters[sn - 1]) return 0;
    /* the runs of [^\s-] of long[-(12 * n + 40):] */
    Py_ssize_t from = ln - (12 * sn + 40);
    if (from < 0) from = 0;
    Py_ssize_t ps[64], pe[64]; /* the last sn runs (a ring) */
    Py_ssize_t runs = 0;
    for (Py_ssize_t k = from; k < ln;) {
        while (k < ln && (lf_space((unsigned char)low[k]) || low[k] == '-')) k++;
        if (k >= ln) break;
        Py_ssize_t st = k;
        while (k < ln && !(lf_space((unsigned char)low[k]) || low[k] == '-')) k++;
        ps[runs % sn] = st;
        pe[runs % sn] = k;
        runs++;
    }
    if (runs < sn) return 0;
    for (Py_ssize_t k = 0; k < sn; k++) { /* tail[k] is run number runs - sn + k */
        Py_ssize_t r = (runs - sn + k) % sn;
        if (low[ps[r]] != letters[k]) return 0;
    }
    Py_ssize_t at = ln;
    for (Py_ssize_t k = sn - 1; k >= 0; k--) {
        Py_ssize_t r = (runs - sn + k) % sn;
        Py_ssize_t m = pe[r] - ps[r];
        if (at < 0) { /* (str.rfind's end: negative counts from the end) */
            at += ln;
            if (at < 0) at = 0;
        }
        at = lf_rfind(low, at, low + ps[r], m);
    }
    Py_ssize_t end = at;
    if (end < 0) {
        end += ln;
        if (end < 0) end = 0;
    }
    Py_ssize_t sp = lf_rfind(lg, end, " ", 1);
    *a = sp + 1;
    *b = ln;
    lf_strip(lg, a, b);
    return 1;
}

/* _schwartz_hearst(short, long): 1 and [*a, *b), or 0 (None) */
static int lf_schwartz_hearst(const char *sh, Py_ssize_t sn, const char *lg, const char *low, Py_ssize_t ln,
                              Py_ssize_t *a, Py_ssize_t *b) {
    Py_ssize_t at = ln;
    for (Py_ssize_t k = sn - 1; k >= 0; k--) {
        char c = (char)lf_lower((unsigned char)sh[k]);
        if (!lf_alnum((unsigned char)c)) continue;
        at = lf_rfind(low, at, &c, 1);
        while (k == 0 && at > 0 && lf_alnum((unsigned char)low[at - 1])) at = lf_rfind(low, at, &c, 1);
        if (at < 0) return 0;
    }
    *a = lf_rfind(lg, at, " ", 1) + 1;
    *b = ln;
    lf_strip(lg, a, b);
    return 1;
}

static int lf_isupper(const char *s, Py_ssize_t n) { /* str.isupper */
    int cased = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'a' && c <= 'z') return 0;
        if (c >= 'A' && c <= 'Z') cased = 1;
    }
    return cased;
}

static int lf_words(const char *s, Py_ssize_t a, Py_ssize_t b) { /* len(s[a:b].split()) */
    int n = 0;
    for (Py_ssize_t i = a; i < b;) {
        while (i < b && lf_space((unsigned char)s[i])) i++;
        if (i >= b) break;
        n++;
        while (i < b && !lf_space((unsigned char)s[i])) i++;
    }
    return n;
}

static PyObject *long_form(PyObject *self, PyObject *args) {
    PyObject *abbr_o, *before_o;
    if (!PyArg_ParseTuple(args, "UU", &abbr_o, &before_o)) return NULL;
    if (!PyUnicode_IS_ASCII(abbr_o) || !PyUnicode_IS_ASCII(before_o)) Py_RETURN_FALSE; /* the rules' */
    const char *ab = (const char *)PyUnicode_1BYTE_DATA(abbr_o);
    Py_ssize_t an = PyUnicode_GET_LENGTH(abbr_o);
    const char *bf = (const char *)PyUnicode_1BYTE_DATA(before_o);
    Py_ssize_t bn = PyUnicode_GET_LENGTH(before_o);
    if (an > 60) Py_RETURN_FALSE;
    /* a plural abbreviation (SEs) spells a plural long form (Super Experts) */
    Py_ssize_t cn = an > 2 && ab[an - 1] == 's' && lf_isupper(ab, an - 1) ? an - 1 : an;
    /* window: the last min(cn + 5, 2 cn) words of before (all of them for 0), joined by a space */
    Py_ssize_t want = cn + 5 < cn * 2 ? cn + 5 : cn * 2;
    Py_ssize_t ws = bn; /* where the first kept word starts */
    Py_ssize_t e = bn, kept = 0;
    while (e > 0 && (want == 0 || kept < want)) {
        while (e > 0 && lf_space((unsigned char)bf[e - 1])) e--;
        if (e == 0) break;
        Py_ssize_t st = e;
        while (st > 0 && !lf_space((unsigned char)bf[st - 1])) st--;
        ws = st;
        kept++;
        e = st;
    }
    char stack[512];
    char *win = 2 * (bn - ws) + 2 <= (Py_ssize_t)sizeof stack ? stack : PyMem_Malloc((size_t)(2 * (bn - ws) + 2));
    if (win == NULL) return PyErr_NoMemory();
    char *low = win + (bn - ws) + 1;
    Py_ssize_t wn = 0;
    for (Py_ssize_t i = ws; i < bn;) {
        while (i < bn && lf_space((unsigned char)bf[i])) i++;
        if (i >= bn) break;
        if (wn) win[wn++] = ' ';
        while (i < bn && !lf_space((unsigned char)bf[i])) win[wn++] = bf[i++];
    }
    for (Py_ssize_t i = 0; i < wn; i++) low[i] = (char)lf_lower((unsigned char)win[i]);
    Py_ssize_t a = 0, b = 0;
    int found = lf_initials(ab, cn, win, low, wn, &a, &b);
    if (found < 0) {
        if (win != stack) PyMem_Free(win);
        Py_RETURN_FALSE;
    }
    if (!found || a == b) found = lf_schwartz_hearst(ab, cn, win, low, wn, &a, &b);
    PyObject *result = NULL;
    if (!found || a == b || b - a <= an) goto none;
    /* long.lower().startswith(abbr.lower()) */
    if (b - a >= an) {
        Py_ssize_t k = 0;
        while (k < an && low[a + k] == (char)lf_lower((unsigned char)ab[k])) k++;
        if (k == an) goto none;
    }
    /* _LONG_FORM_LEAD.sub("", long.lstrip('*_"')).strip(' ,*_"') */
    while (a < b && (win[a] == '*' || win[a] == '_' || win[a] == '"')) a++;
    static const char *const leads[] = {"the", "an", "a", "our", "novel", "new"};
    for (int k = 0; k < 6; k++) {
        Py_ssize_t m = (Py_ssize_t)strlen(leads[k]);
        if (b - a > m && memcmp(low + a, leads[k], (size_t)m) == 0 && lf_space((unsigned char)win[a + m])) {
            a += m;
            while (a < b && lf_space((unsigned char)win[a])) a++;
            break;
        }
    }
    while (a < b && (win[a] == ' ' || win[a] == ',' || win[a] == '*' || win[a] == '_' || win[a] == '"')) a++;
    while (b > a && (win[b - 1] == ' ' || win[b - 1] == ',' || win[b - 1] == '*' || win[b - 1] == '_' ||
                     win[b - 1] == '"'))
        b--;
    if (a == b || lf_words(win, a, b) > cn + 3 || memchr(win + a, ',', (size_t)(b - a)) != NULL) goto none;
    result = PyUnicode_FromStringAndSize(win + a, b - a);
    if (win != stack) PyMem_Free(win);
    return result;
none:
    if (win != stack) PyMem_Free(win);
    Py_RETURN_NONE;
}


/* ---- clip(text, words): text.py's _t_clip_rules for ASCII text (none left with "(" or "[") ------ */

#define CW_SLOTS 1024
#define CW_LEN 32
typedef struct {
    char w[CW_LEN];
    unsigned char len, flags;
} cw_slot;
static cw_slot cw_tab[CW_SLOTS];
static int clip_configured = 0;
#define CW_DANGLING 1
#define CW_OPENER 2
#define CW_ARTICLE 4

static inline uint32_t cw_hash(const char *s, Py_ssize_t n) {
    uint32_t h = 2166136261u;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int cw_flags(const char *w, Py_ssize_t n) {
    if (n <= 0 || n >= CW_LEN) return 0;
    for (uint32_t h = cw_hash(w, n) & (CW_SLOTS - 1);; h = (h + 1) & (CW_SLOTS - 1)) {
        if (!cw_tab[h].len) return 0;
        if (cw_tab[h].len == n && memcmp(cw_tab[h].w, w, (size_t)n) == 0) return cw_tab[h].flags;
    }
}

static int cw_add(PyObject *words, int flag, int *count) {
    PyObject *it = PyObject_GetIter(words), *word;
    if (it == NULL) return -1;
    while ((word = PyIter_Next(it)) != NULL) {
        int bad = !PyUnicode_Check(word);
        if (!bad && PyUnicode_IS_ASCII(word)) { /* (no ASCII word equals another) */
            Py_ssize_t n = PyUnicode_GET_LENGTH(word);
            const char *w = (const char *)PyUnicode_1BYTE_DATA(word);
            if (n >= CW_LEN || ++*count > CW_SLOTS / 2) {
                bad = 1;
            } else if (n > 0) {
                uint32_t h = cw_hash(w, n) & (CW_SLOTS - 1);
                while (cw_tab[h].len && !(cw_tab[h].len == n && memcmp(cw_tab[h].w, w, (size_t)n) == 0))
                    h = (h + 1) & (CW_SLOTS - 1);
                memcpy(cw_tab[h].w, w, (size_t)n);
                cw_tab[h].len = (unsigned char)n;
                cw_tab[h].flags |= (unsigned char)flag;
            }
        }
        Py_DECREF(word);
        if (bad) {
            Py_DECREF(it);
            return 1; /* (not tabled: clip() leaves every text to the rules) */
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *configure_clip(PyObject *self, PyObject *args) {
    PyObject *dangling, *openers, *articles;
    if (!PyArg_ParseTuple(args, "OOO", &dangling, &openers, &articles)) return NULL;
    clip_configured = 0;
    memset(cw_tab, 0, sizeof cw_tab);
    int count = 0, r;
    if ((r = cw_add(dangling, CW_DANGLING, &count)) == 0 && (r = cw_add(openers, CW_OPENER, &count)) == 0)
        r = cw_add(articles, CW_ARTICLE, &count);
    if (r < 0) return NULL;
    clip_configured = r == 0;
    Py_RETURN_NONE;
}

static inline int cl_space(unsigned char c) { return c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31); }

/* the flags of word s[0:n] lowercased, then (strip) less ",;:" at both ends */
static int cl_word(const char *s, Py_ssize_t n, int strip) {
    char w[CW_LEN];
    if (strip) {
        while (n > 0 && (*s == ',' || *s == ';' || *s == ':')) s++, n--;
        while (n > 0 && (s[n - 1] == ',' || s[n - 1] == ';' || s[n - 1] == ':')) n--;
    }
    if (n <= 0 || n >= CW_LEN) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        w[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return cw_flags(w, n);
}

#define CLIP_WORDS 62
static PyObject *clip(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t words;
    if (!PyArg_ParseTuple(args, "Un", &text, &words)) return NULL;
    if (!cut_configured) {
        PyErr_SetString(PyExc_RuntimeError, "configure_cut() was not called");
        return NULL;
    }
    if (!clip_configured || !PyUnicode_IS_ASCII(text) || words < 0 || words > CLIP_WORDS) Py_RETURN_FALSE;
    const char *T = (const char *)PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    char stack[1024];
    char *J = n + 1 <= (Py_ssize_t)sizeof stack ? stack : PyMem_Malloc((size_t)n + 1);
    if (J == NULL) return PyErr_NoMemory();
    /* " ".join(text.split(None, words + 1)[:words + 1]); capped: more than ``words`` words */
    Py_ssize_t jn = 0, total = 0;
    for (Py_ssize_t i = 0; i < n && total < words + 1;) {
        while (i < n && cl_space((unsigned char)T[i])) i++;
        if (i >= n) break;
        if (total) J[jn++] = ' ';
        while (i < n && !cl_space((unsigned char)T[i])) J[jn++] = T[i++];
        total++;
    }
    Py_ssize_t cut_at = cut_scan(PyUnicode_1BYTE_KIND, J, jn, jn < 12 ? jn : 12);
    int capped = cut_at == -1 && total > words;
    if (cut_at != -1) jn = cut_at;
    PyObject *result = NULL;
    if (memchr(J, '(', (size_t)jn) != NULL || memchr(J, '[', (size_t)jn) != NULL) {
        result = Py_False; /* (the rules' _PARENTHETICAL) */
        Py_INCREF(result);
        goto done;
    }
    Py_ssize_t a = 0;
    /* a label before an early colon: what follows is the phrase */
    for (Py_ssize_t c = 0; c + 2 <= (jn < 14 ? jn : 14); c++) {
        if (J[c] == ':' && J[c + 1] == ' ') {
            if (c > 0) {
                Py_ssize_t s = 0, e = c;
                while (s < e && J[s] == ' ') s++;
                while (e > s && J[e - 1] == ' ') e--;
                if (memchr(J + s, ' ', (size_t)(e - s)) == NULL) {
                    a = c + 2;
                    while (a < jn && (J[a] == '*' || J[a] == '_')) a++;
                }
            }
            break;
        }
    }
    /* the first ``words`` words of J[a:jn] */
    Py_ssize_t ps[CLIP_WORDS + 1], pe[CLIP_WORDS + 1];
    Py_ssize_t np = 0;
    for (Py_ssize_t i = a; i < jn && np < words;) {
        while (i < jn && J[i] == ' ') i++;
        if (i >= jn) break;
        ps[np] = i;
        while (i < jn && J[i] != ' ') i++;
        pe[np++] = i;
    }
    /* _t_finish */
    Py_ssize_t kept = np;
    while (np > 1 && (cl_word(J + ps[np - 1], pe[np - 1] - ps[np - 1], 1) & CW_DANGLING)) np--;
    if (capped && np == kept) {
        Py_ssize_t low = np - 4 > 3 ? np - 4 : 3;
        for (Py_ssize_t i = np - 1; i > low; i--) {
            if ((cl_word(J + ps[i], pe[i] - ps[i], 0) & CW_OPENER) &&
                (i >= np - 2 || (cl_word(J + ps[i + 1], pe[i + 1] - ps[i + 1], 0) & CW_ARTICLE))) {
                np = i;
                while (np > 1 && (cl_word(J + ps[np - 1], pe[np - 1] - ps[np - 1], 1) & CW_DANGLING)) np--;
                break;
            }
        }
    }
    /* " ".join(parts).strip(" ,;:-") (the dashes beyond ASCII cannot be here) */
    char *out = J; /* (written over J from the left: each part moves left or stays) */
    Py_ssize_t on = 0;
    for (Py_ssize_t k = 0; k < np; k++) {
        if (k) out[on++] = ' ';
        memmove(out + on, J + ps[k], (size_t)(pe[k] - ps[k]));
        on += pe[k] - ps[k];
    }
    Py_ssize_t s = 0;
    while (s < on && (out[s] == ' ' || out[s] == ',' || out[s] == ';' || out[s] == ':' || out[s] == '-')) s++;
    while (on > s && (out[on - 1] == ' ' || out[on - 1] == ',' || out[on - 1] == ';' || out[on - 1] == ':' ||
                      out[on - 1] == '-'))
        on--;
    result = PyUnicode_FromStringAndSize(out + s, on - s);
done:
    if (J != stack) PyMem_Free(J);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(keywords, kinds): the keywords hits() looks for, in order, and the kind of each."},
    {"hits", hits, METH_O,
     "hits(text) -> [(start, end, kind)]: the matches of re.finditer(' (?:k1|k2|...)', text)."},
    {"site_hits", site_hits, METH_O,
     "site_hits(text) -> [(start, end, kind)]: those of hits(text) that text.py's _t_sites acts on "
     "(_t_site_hits)."},
    {"configure_sites", configure_sites, METH_VARARGS,
     "configure_sites(subjects, starts): the words after 'this' and the statement words' first "
     "three letters, for site_hits()."},
    {"head_noun_at", head_noun_at, METH_VARARGS,
     "head_noun_at(head, obj) -> int: where text.py's _t_after_head_noun_of tries _T_NAMED, or -1."},
    {"configure_head_nouns", configure_head_nouns, METH_O,
     "configure_head_nouns(forms): the head-noun forms head_noun_at() looks for."},
    {"openings", openings, METH_VARARGS,
     "openings(text, hi) -> ([(start, end)], [(start, end)]): the matches of text.py's _T_NAME and "
     "_T_LOWER_CAMEL in text[:hi]."},
    {"glued", glued, METH_O, "glued(text) -> [int]: where text.py's _t_unglue puts a space."},
    {"configure_cut", configure_cut, METH_VARARGS,
     "configure_cut(after_comma, after_space): the words of cut()'s first two branches."},
    {"cut", cut, METH_VARARGS, "cut(text, pos) -> int: where _T_CUT.search(text, pos) starts, or -1."},
    {"configure_rules", configure_rules, METH_O,
     "configure_rules(words): the words and sets of text.py's rules that sites() reads."},
    {"sites", sites, METH_VARARGS,
     "sites(head, lower, limit) -> (statements, named) as text.py's _t_sites_rules, or None where the "
     "rules must decide."},
    {"configure_front", configure_front, METH_VARARGS,
     "configure_front(paren_defined, comma_named, intro_verbs, object_bonus, defined_bonus): what front() "
     "calls and reads."},
    {"configure_clip", configure_clip, METH_VARARGS,
     "configure_clip(dangling, openers, articles): the word sets clip() reads (text.py's _t_finish)."},
    {"clip", clip, METH_VARARGS,
     "clip(text, words) -> str as text.py's _t_clip_rules, or False where the rules must answer (a "
     "string other than ASCII, or a parenthesis or bracket in the phrase)."},
    {"long_form", long_form, METH_VARARGS,
     "long_form(abbr, before) -> str | None as text.py's _long_form_rules, or False for a string other "
     "than ASCII (the rules answer)."},
    {"front", front, METH_VARARGS,
     "front(head, lower, statements) -> (found, explicit, bonus) as text.py's _t_front_rules."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_titlescan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__titlescan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "VERSION", 8) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
