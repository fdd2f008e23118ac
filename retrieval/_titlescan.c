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
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *word = PySequence_Fast_GET_ITEM(seq, k);
        if (!PyUnicode_Check(word) || PyUnicode_READY(word) < 0) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_TypeError, "a keyword is a str");
            return NULL;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(word);
        if (len < 1 || len > MAX_LENGTH) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "a keyword has 1 to 32 characters");
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
    while (i < n) {
        if (kind == PyUnicode_1BYTE_KIND) {
            /* to the next space that a keyword's first character follows (any other space
             * starts no match): one comparison a character, no call */
            const Py_UCS1 *d = (const Py_UCS1 *)data;
            while (i + 1 < n && !(d[i] == ' ' && opens[d[i + 1]])) i++;
            if (i + 1 >= n) break;
        } else {
            i = PyUnicode_FindChar(arg, ' ', i, n, 1); /* to the next space */
            if (i == -2) {
                Py_DECREF(out);
                return NULL;
            }
            if (i < 0) break;
        }
        int found = keyword_at(kind, data, n, i);
        if (found < 0) {
            i++;
            continue;
        }
        if (sites && passed_over(kind, data, n, kind_of[found], i + 1 + lengths[found])) {
            i += 1 + lengths[found]; /* (the match is still read: the next starts after it) */
            continue;
        }
        PyObject *start = PyLong_FromSsize_t(i), *end = PyLong_FromSsize_t(i + 1 + lengths[found]);
        PyObject *triple = start != NULL && end != NULL ? PyTuple_New(3) : NULL;
        if (triple == NULL) {
            Py_XDECREF(start);
            Py_XDECREF(end);
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(triple, 0, start); /* (start, end, kind) */
        PyTuple_SET_ITEM(triple, 1, end);
        Py_INCREF(kinds[found]);
        PyTuple_SET_ITEM(triple, 2, kinds[found]);
        if (PyList_Append(out, triple) < 0) {
            Py_DECREF(triple);
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

static PyObject *cut(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t pos;
    if (!PyArg_ParseTuple(args, "Un", &text, &pos)) return NULL;
    if (!cut_configured) {
        PyErr_SetString(PyExc_RuntimeError, "configure_cut() was not called");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (pos < 0) pos = 0;
    for (Py_ssize_t i = pos; i < n; i++) {
        Py_UCS4 c = AT(i);
        if (c == ',') {
            Py_ssize_t j = i + 1;
            while (j < n && Py_UNICODE_ISSPACE(AT(j))) j++;
            if (cut_word_at(kind, data, n, j, 0)) return PyLong_FromSsize_t(i);
        } else if (c == ';' || c == ':' || c == '.' || c == '!' || c == '?') {
            if (i + 1 == n || Py_UNICODE_ISSPACE(AT(i + 1))) return PyLong_FromSsize_t(i);
        } else if (Py_UNICODE_ISSPACE(c)) {
            if (cut_word_at(kind, data, n, i + 1, 1)) return PyLong_FromSsize_t(i);
            if (i + 2 < n && (AT(i + 1) == '-' || AT(i + 1) == 0x2013 || AT(i + 1) == 0x2014) &&
                Py_UNICODE_ISSPACE(AT(i + 2)))
                return PyLong_FromSsize_t(i);
        }
    }
    return PyLong_FromLong(-1);
#undef AT
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
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_titlescan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__titlescan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "VERSION", 4) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
