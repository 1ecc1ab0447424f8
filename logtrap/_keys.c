/* logtrap._keys: a lasting index of 64-bit keys, in C.
 *
 * The caches of patterns and of agents' classes (`keys.KeyedCache`) keep one row per URL or
 * user agent, keyed by a 64-bit hash of its text. Joined to each batch's rows, Polars rebuilt
 * a hash table of the whole cache every batch (a 500,000-URL cache: 7 ms of a 17 ms lookup,
 * and a join back as long again); this table is built once and kept, and gives each row its
 * cache row's number, which Polars gathers the values at.
 *
 * Index()
 *   .lookup(keys) -> (ids, first)
 *       keys: a buffer of n native uint64; a key not in the index is added, numbered in the
 *       order of its first row. ids: n native uint32, each row's number; first: the row of
 *       each added key's first sight, as uint32, in the order they were numbered.
 *   .clear(); len(index): the keys held. A lookup that fails (no memory) empties the index.
 *
 * Open addressing with linear probing, at most 70% full (grown as keys come). Keys are
 * hashes already; they are mixed once more (a multiply, the high bits) so a hash with weak
 * low bits still spreads. The loop runs without the GIL; an index is for one thread at a
 * time (a second thread's call while one runs is refused).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    uint64_t *keys;
    uint32_t *ids; /* number + 1; 0 marks an empty slot */
    size_t cap;    /* a power of two, or 0 before the first key */
    unsigned shift;
    size_t size;
    int busy; /* a lookup runs without the GIL */
} Index;

static inline size_t slot_of(const Index *ix, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> ix->shift);
}

static inline int full(const Index *ix, size_t want) { return want > ix->cap / 10 * 7; }

/* Room for `want` keys. No Python API: called without the GIL. */
static int grow(Index *ix, size_t want)
{
    size_t cap = ix->cap ? ix->cap : 1024;
    unsigned shift = ix->cap ? ix->shift : 64 - 10;
    while (want > cap / 10 * 7) {
        cap *= 2;
        shift -= 1;
    }
    if (cap == ix->cap)
        return 0;
    if (cap > (size_t)UINT32_MAX) /* numbers are uint32 */
        return -1;
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *ids = calloc(cap, sizeof *ids);
    if (!keys || !ids) {
        free(keys);
        free(ids);
        return -1;
    }
    Index bigger = *ix;
    bigger.keys = keys;
    bigger.ids = ids;
    bigger.cap = cap;
    bigger.shift = shift;
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->ids[i])
            continue;
        size_t j = slot_of(&bigger, ix->keys[i]);
        while (ids[j])
            j = (j + 1) & (cap - 1);
        keys[j] = ix->keys[i];
        ids[j] = ix->ids[i];
    }
    free(ix->keys);
    free(ix->ids);
    *ix = bigger;
    return 0;
}

static PyObject *Index_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Index() takes no arguments");
        return NULL;
    }
    Index *ix = (Index *)type->tp_alloc(type, 0);
    if (ix) {
        ix->keys = NULL;
        ix->ids = NULL;
        ix->cap = 0;
        ix->shift = 64;
        ix->size = 0;
        ix->busy = 0;
    }
    return (PyObject *)ix;
}

static void Index_clear_tables(Index *ix)
{
    free(ix->keys);
    free(ix->ids);
    ix->keys = NULL;
    ix->ids = NULL;
    ix->cap = 0;
    ix->shift = 64;
    ix->size = 0;
}

static void Index_dealloc(Index *ix)
{
    Index_clear_tables(ix);
    Py_TYPE(ix)->tp_free((PyObject *)ix);
}

static int refuse_busy(const Index *ix)
{
    if (ix->busy)
        PyErr_SetString(PyExc_RuntimeError, "the index is in use by another thread");
    return ix->busy;
}

static PyObject *Index_lookup(Index *ix, PyObject *arg)
{
    Py_buffer keys = {0};
    PyObject *ids = NULL, *first = NULL, *result = NULL;
    uint32_t *rows = NULL;
    int failed = 0;
    if (refuse_busy(ix))
        return NULL;
    ix->busy = 1; /* from here: nothing below may let another thread's call in */
    if (PyObject_GetBuffer(arg, &keys, PyBUF_SIMPLE) < 0) {
        ix->busy = 0;
        return NULL;
    }
    if (keys.len % (Py_ssize_t)sizeof(uint64_t) || (uintptr_t)keys.buf % _Alignof(uint64_t)) {
        PyErr_SetString(PyExc_ValueError, "lookup: the keys are not an aligned buffer of uint64");
        goto done;
    }
    size_t n = (size_t)keys.len / sizeof(uint64_t);
    if (n >= (size_t)UINT32_MAX - ix->size) { /* numbers and rows are uint32 */
        PyErr_SetString(PyExc_OverflowError, "lookup: more keys than an index numbers");
        goto done;
    }
    ids = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n * sizeof(uint32_t)));
    rows = malloc((n ? n : 1) * sizeof *rows);
    if (!ids || !rows || (!ix->cap && grow(ix, 1) < 0)) {
        if (ids)
            PyErr_NoMemory();
        goto done;
    }
    const uint64_t *in = keys.buf;
    uint32_t *out = (uint32_t *)PyBytes_AS_STRING(ids);
    size_t added = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        uint64_t key = in[i];
        size_t j = slot_of(ix, key);
        while (ix->ids[j] && ix->keys[j] != key)
            j = (j + 1) & (ix->cap - 1);
        if (!ix->ids[j]) {
            if (full(ix, ix->size + 1)) {
                if (grow(ix, ix->size + 1) < 0) {
                    failed = 1;
                    break;
                }
                j = slot_of(ix, key);
                while (ix->ids[j])
                    j = (j + 1) & (ix->cap - 1);
            }
            ix->keys[j] = key;
            ix->ids[j] = (uint32_t)(ix->size + 1);
            ix->size++;
            rows[added++] = (uint32_t)i;
        }
        out[i] = ix->ids[j] - 1;
    }
    Py_END_ALLOW_THREADS
    if (failed) { /* emptied: no key may keep a number its caller never learned */
        Index_clear_tables(ix);
        PyErr_NoMemory();
        goto done;
    }
    first = PyBytes_FromStringAndSize((const char *)rows, (Py_ssize_t)(added * sizeof(uint32_t)));
    if (first)
        result = PyTuple_Pack(2, ids, first);
done:
    ix->busy = 0;
    free(rows);
    Py_XDECREF(ids);
    Py_XDECREF(first);
    PyBuffer_Release(&keys);
    return result;
}

static PyObject *Index_clear(Index *ix, PyObject *Py_UNUSED(ignored))
{
    if (refuse_busy(ix))
        return NULL;
    Index_clear_tables(ix);
    Py_RETURN_NONE;
}

static Py_ssize_t Index_len(Index *ix) { return (Py_ssize_t)ix->size; }

static PyMethodDef Index_methods[] = {
    {"lookup", (PyCFunction)Index_lookup, METH_O,
     "lookup(keys) -> (ids, first): each key's number, adding the new ones (see the source)."},
    {"clear", (PyCFunction)Index_clear, METH_NOARGS, "Forget every key."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Index_as_sequence = {.sq_length = (lenfunc)Index_len};

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "logtrap._keys.Index",
    .tp_basicsize = sizeof(Index),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A lasting index of 64-bit keys, each numbered in the order first seen.",
    .tp_new = Index_new,
    .tp_dealloc = (destructor)Index_dealloc,
    .tp_methods = Index_methods,
    .tp_as_sequence = &Index_as_sequence,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "logtrap._keys", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__keys(void)
{
    if (PyType_Ready(&IndexType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&IndexType);
    if (PyModule_AddObject(m, "Index", (PyObject *)&IndexType) < 0) {
        Py_DECREF(&IndexType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
