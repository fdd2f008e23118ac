/* The keyword scan of the derived-title rules (retrieval/text.py, _t_sites) in C.
 *
 * hits(text) finds what `re.finditer(" (?:w1|w2|...)", text)` finds for the keywords given to
 * configure() (in that order: the first one that matches at a place wins, as in a regex
 * alternation), left to right, each match starting after the previous one's end; it returns the
 * matches as (start, index of the keyword) pairs. The keywords are plain lowercase ASCII words (a
 * space inside is a literal space), so a match is a character-for-character comparison: the same
 * answer the regex gives, for any str. The regex costs an engine attempt at every space of the
 * 1,500-character title region; this loop, a comparison.
 *
 * retrieval/text.py keeps the regex as the definition and the fallback (tests compare the two).
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
static unsigned char opens[256]; /* opens[c]: some keyword starts with character c */

static PyObject *configure(PyObject *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "configure() takes a sequence of keywords");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > MAX_KEYWORDS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "too many keywords");
        return NULL;
    }
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
        opens[ascii[k][0]] = 1;
    }
    n_keywords = (int)n;
    Py_DECREF(seq);
    Py_RETURN_NONE;
}

/* the keyword that matches right after the space at i, or -1 */
static int keyword_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i) {
    if (i + 1 >= n) return -1;
    Py_UCS4 first = PyUnicode_READ(kind, data, i + 1);
    if (first > 255 || !opens[first]) return -1;
    for (int k = 0; k < n_keywords; k++) {
        Py_ssize_t len = lengths[k];
        if (i + 1 + len > n || keywords[k][0] != first) continue;
        if (kind == PyUnicode_1BYTE_KIND) {
            if (memcmp((const Py_UCS1 *)data + i + 1, ascii[k], (size_t)len) == 0) return k;
            continue;
        }
        Py_ssize_t j = 1;
        while (j < len && PyUnicode_READ(kind, data, i + 1 + j) == keywords[k][j]) j++;
        if (j == len) return k;
    }
    return -1;
}

static PyObject *hits(PyObject *self, PyObject *arg) {
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
        if (kind == PyUnicode_1BYTE_KIND) { /* to the next space */
            const Py_UCS1 *s = (const Py_UCS1 *)data;
            const Py_UCS1 *space = memchr(s + i, ' ', (size_t)(n - i));
            if (space == NULL) break;
            i = space - s;
        } else if (PyUnicode_READ(kind, data, i) != ' ') {
            i++;
            continue;
        }
        int found = keyword_at(kind, data, n, i);
        if (found < 0) {
            i++;
            continue;
        }
        PyObject *pair = Py_BuildValue("(ni)", i, found);
        if (pair == NULL || PyList_Append(out, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(pair);
        i += 1 + lengths[found];
    }
    return out;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_O, "configure(keywords): the keywords hits() looks for, in order."},
    {"hits", hits, METH_O, "hits(text) -> [(start, keyword index)]: re.finditer(' (?:k1|k2|...)', text)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_titlescan", NULL, -1, methods};

PyMODINIT_FUNC PyInit__titlescan(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "VERSION", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
