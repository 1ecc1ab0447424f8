/* logtrap._patterns: URL -> pattern and section, in C.
 *
 * The fast way of `patterns._with_patterns`, for URLs of ASCII bytes only: each of its regex
 * passes is a test of one whole path segment or parameter name (its regexes are anchored by
 * the `/` or `&` around each), so this file tests each segment once, in the passes' order,
 * with the same languages spelled out by hand. A URL with a byte above 0x7f is handed back
 * (`\d` and `(?i)` are Unicode-aware in the regexes), and `_with_patterns` computes it as it
 * always has. So this file may leave a URL to Polars; it never gives one another pattern
 * (tests/test_fast_patterns.py compares the two on generated and real URLs).
 *
 * patterns(offsets, data, validity, offset, n, tracking)
 *     -> (pattern_offsets, pattern_data, section_offsets, section_data, slow)
 *   offsets, data, validity: the buffers of an Arrow large_string array of URLs (validity
 *       None for no nulls; a null URL is taken as ""), `offset` its first row, `n` its rows;
 *   tracking: the lower-case parameter names that become `{tracking}` (besides utm_*);
 *   the results: two Arrow large_string arrays' int64 offsets and data, and one byte per URL,
 *       1 where the URL was handed back (its pattern and section are then empty here).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static int put(Buf *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

#define PUTS(b, lit) put((b), (lit), sizeof(lit) - 1)

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }
static inline int is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int is_alnum(char c) { return is_digit(c) || is_alpha(c); }
static inline int is_hex(char c)
{
    return is_digit(c) || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}
static inline int is_sep(char c) { return c == '-' || c == '_'; }

static size_t run_digits(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && is_digit(s[i]))
        i++;
    return i;
}

static size_t run_alpha(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && is_alpha(s[i]))
        i++;
    return i;
}

/* (?:0?[1-9]|1[0-2]) */
static int is_month(const char *s, size_t n)
{
    if (n == 1)
        return s[0] >= '1' && s[0] <= '9';
    if (n == 2)
        return (s[0] == '0' && s[1] >= '1' && s[1] <= '9') || (s[0] == '1' && s[1] >= '0' && s[1] <= '2');
    return 0;
}

/* (?:0?[1-9]|[12][0-9]|3[01]) */
static int is_day(const char *s, size_t n)
{
    if (n == 1)
        return s[0] >= '1' && s[0] <= '9';
    if (n == 2)
        return (s[0] == '0' && s[1] >= '1' && s[1] <= '9') ||
               ((s[0] == '1' || s[0] == '2') && is_digit(s[1])) ||
               (s[0] == '3' && (s[1] == '0' || s[1] == '1'));
    return 0;
}

/* MONTH SEP DAY, for month and day of one or two digits */
static int month_then_day(const char *s, size_t n, const char *seps)
{
    for (size_t m = 1; m <= 2 && m + 1 < n; m++)
        if (is_month(s, m) && strchr(seps, s[m]) && s[m] && is_day(s + m + 1, n - m - 1))
            return 1;
    return 0;
}

/* patterns._DATE:  \d{4}[-_]M(?:[-_]D)?  |  \d{4}\.M\.D  |  D[-_.]M[-_.]\d{4} */
static int is_date(const char *s, size_t n)
{
    if (n >= 6 && run_digits(s, 4) == 4) {
        const char *r = s + 5;
        size_t rn = n - 5;
        if (is_sep(s[4]) && (is_month(r, rn) || month_then_day(r, rn, "-_")))
            return 1;
        if (s[4] == '.' && month_then_day(r, rn, "."))
            return 1;
    }
    if (n >= 8 && run_digits(s + n - 4, 4) == 4 && strchr("-_.", s[n - 5]) && s[n - 5]) {
        size_t pn = n - 5;
        for (size_t d = 1; d <= 2 && d + 1 < pn; d++)
            if (is_day(s, d) && strchr("-_.", s[d]) && s[d] && is_month(s + d + 1, pn - d - 1))
                return 1;
    }
    return 0;
}

/* patterns._NUMBER:  -?\d+(?:[.,]\d+)? */
static int is_number(const char *s, size_t n)
{
    size_t i = (n && s[0] == '-') ? 1 : 0;
    size_t d = run_digits(s + i, n - i);
    if (!d)
        return 0;
    i += d;
    if (i == n)
        return 1;
    if (s[i] != '.' && s[i] != ',')
        return 0;
    i++;
    d = run_digits(s + i, n - i);
    return d && i + d == n;
}

/* patterns._UUID */
static int is_uuid(const char *s, size_t n)
{
    if (n != 36)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !is_hex(s[i]))
            return 0;
    }
    return 1;
}

/* patterns._HEX: 8+ hex digits, at least one of them a digit */
static int is_hexes(const char *s, size_t n)
{
    int digit = 0;
    if (n < 8)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_hex(s[i]))
            return 0;
        digit |= is_digit(s[i]);
    }
    return digit;
}

/* patterns._TOKEN: letters and 5+ digits; or 6+ letters and digits with a digit directly
 * followed by a letter somewhere (each of the regex's other alternatives is that, for the
 * digit at one position) */
static int is_token(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_alnum(s[i]))
            return 0;
    size_t a = run_alpha(s, n);
    if (a && n - a >= 5 && run_digits(s + a, n - a) == n - a)
        return 1;
    if (n < 6)
        return 0;
    for (size_t i = 0; i + 1 < n; i++)
        if (is_digit(s[i]) && is_alpha(s[i + 1]))
            return 1;
    return 0;
}

/* patterns._SLUG: three or more words, each of letters, digits and %XX, joined by - or _ */
static int is_slug(const char *s, size_t n)
{
    size_t words = 0, i = 0;
    for (;;) {
        size_t start = i;
        while (i < n) {
            if (is_alnum(s[i]))
                i++;
            else if (s[i] == '%' && i + 2 < n && is_hex(s[i + 1]) && is_hex(s[i + 2]))
                i += 3;
            else
                break;
        }
        if (i == start)
            return 0;
        words++;
        if (i == n)
            return words >= 3;
        if (!is_sep(s[i]))
            return 0;
        i++;
    }
}

/* A path segment's stem (or a parameter name) as `_segment_steps` leave it: the placeholder
 * of the first rule that takes it whole; for a stem, then the word-and-number passes. */
static int put_stem(Buf *b, const char *s, size_t n, int path)
{
    if (is_date(s, n))
        return PUTS(b, "{date}");
    if (is_number(s, n))
        return PUTS(b, "{n}");
    if (is_uuid(s, n) || is_hexes(s, n))
        return PUTS(b, "{hex}");
    if (is_token(s, n))
        return PUTS(b, "{token}");
    if (!path)
        return put(b, s, n);
    if (is_slug(s, n))
        return PUTS(b, "{slug}");
    /* ([A-Za-z]+[-_])[0-9]+  ->  $1{n} */
    size_t a = run_alpha(s, n);
    if (a && a + 1 < n && is_sep(s[a]) && run_digits(s + a + 1, n - a - 1) == n - a - 1)
        return put(b, s, a + 1) || PUTS(b, "{n}");
    /* [0-9]+([-_][A-Za-z]+)  ->  {n}$1 */
    size_t d = run_digits(s, n);
    if (d && d + 1 < n && is_sep(s[d]) && run_alpha(s + d + 1, n - d - 1) == n - d - 1)
        return PUTS(b, "{n}") || put(b, s + d, n - d);
    return put(b, s, n);
}

/* ;([^/;=]*)=[^/;]*  ->  ;$1 : matrix parameters keep their names, into tmp */
static int matrix_names(Buf *tmp, const char *s, size_t n)
{
    tmp->len = 0;
    for (size_t i = 0; i < n;) {
        char c = s[i];
        if (c == ';') {
            size_t j = i + 1;
            while (j < n && s[j] != ';' && s[j] != '=')
                j++;
            if (j < n && s[j] == '=') {
                if (put(tmp, s + i, j - i))
                    return -1;
                j++;
                while (j < n && s[j] != ';')
                    j++;
                i = j;
            } else {
                if (put(tmp, ";", 1))
                    return -1;
                i++;
            }
        } else {
            size_t j = i + 1;
            while (j < n && s[j] != ';')
                j++;
            if (put(tmp, s + i, j - i))
                return -1;
            i = j;
        }
    }
    return 0;
}

/* One path segment: `\x01` -> `%01`, matrix parameters to their names (`;a=1` -> `;a`), then
 * its stem (before the first `.ext` or `;`, as `_path_steps` moves them aside) through the
 * rules, the rest kept. `tmp` and `esc` are scratch. */
static int put_segment(Buf *b, Buf *tmp, Buf *esc, const char *s, size_t n)
{
    if (memchr(s, '\x01', n)) { /* the mark `_path_steps` uses, escaped first (rare) */
        esc->len = 0;
        for (size_t i = 0; i < n; i++)
            if (s[i] == '\x01' ? PUTS(esc, "%01") : put(esc, s + i, 1))
                return -1;
        s = esc->p;
        n = esc->len;
    }
    const char *t = s;
    size_t tn = n, k = 0;
    if (memchr(s, ';', n)) {
        if (matrix_names(tmp, s, n))
            return -1;
        t = tmp->p;
        tn = tmp->len;
    }
    /* ((?:\.[A-Za-z][A-Za-z0-9]{0,4})(?:;[^/]*)?|;[^/]*)/ : the leftmost place either fits */
    for (; k < tn; k++) {
        if (t[k] == ';')
            break;
        if (t[k] == '.' && k + 1 < tn && is_alpha(t[k + 1])) {
            size_t m = 1;
            while (k + 1 + m < tn && is_alnum(t[k + 1 + m]))
                m++;
            if (m <= 5 && (k + 1 + m == tn || t[k + 1 + m] == ';'))
                break;
        }
    }
    /* tmp is not written again before these are copied out */
    return put_stem(b, t, k, 1) || put(b, t + k, tn - k);
}

typedef struct {
    const char *p;
    size_t n;
} Span;

static int span_cmp(const void *x, const void *y)
{
    const Span *a = x, *b = y;
    size_t n = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->p, b->p, n);
    if (c)
        return c;
    return (a->n > b->n) - (a->n < b->n);
}

typedef struct {
    char **names; /* lower case */
    size_t *lens;
    size_t count;
} Tracking;

static inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c; }

/* (?i)utm_[^&]*|<a tracking name>, whole; ASCII case folding is all there is in ASCII names */
static int is_tracking(const Tracking *tr, const char *s, size_t n)
{
    if (n >= 4 && lower(s[0]) == 'u' && lower(s[1]) == 't' && lower(s[2]) == 'm' && s[3] == '_')
        return 1;
    for (size_t i = 0; i < tr->count; i++) {
        if (tr->lens[i] != n)
            continue;
        size_t j = 0;
        while (j < n && lower(s[j]) == tr->names[i][j])
            j++;
        if (j == n)
            return 1;
    }
    return 0;
}

/* The query's parameter names, as `_names_steps` leave them: values dropped, each name through
 * the tracking and name rules, then sorted and deduplicated. `names` holds spans into `tmp`. */
static int put_names(Buf *b, Buf *tmp, Span **names, size_t *cap, const char *q, size_t n,
                     const Tracking *tr)
{
    size_t count = 0;
    tmp->len = 0;
    /* names only: =[^&]* dropped; then each non-empty name rewritten into tmp */
    for (size_t i = 0; i <= n;) {
        size_t j = i;
        while (j < n && q[j] != '&' && q[j] != '=')
            j++;
        size_t end = j;
        while (j < n && q[j] != '&') /* the value, and anything up to the next & */
            j++;
        if (end > i) {
            size_t at = tmp->len;
            int r = is_tracking(tr, q + i, end - i) ? PUTS(tmp, "{tracking}")
                                                     : put_stem(tmp, q + i, end - i, 0);
            if (r)
                return -1;
            if (count == *cap) {
                size_t c = *cap ? 2 * *cap : 64;
                Span *p = realloc(*names, c * sizeof(Span));
                if (!p)
                    return -1;
                *names = p;
                *cap = c;
            }
            (*names)[count].p = (const char *)(uintptr_t)at; /* an offset until tmp stops moving */
            (*names)[count].n = tmp->len - at;
            count++;
        }
        i = j + 1;
    }
    if (!count)
        return 0;
    Span *ns = *names;
    for (size_t i = 0; i < count; i++)
        ns[i].p = tmp->p + (uintptr_t)ns[i].p;
    if (count > 1)
        qsort(ns, count, sizeof(Span), span_cmp);
    if (put(b, "?", 1))
        return -1;
    for (size_t i = 0; i < count; i++) {
        if (i && span_cmp(&ns[i], &ns[i - 1]) == 0)
            continue;
        if ((i && put(b, "&", 1)) || put(b, ns[i].p, ns[i].n))
            return -1;
    }
    return 0;
}

/* `section_expr`: the first two levels of a path pattern, `/` for none */
static int put_section(Buf *b, const char *p, size_t n)
{
    size_t i = (n && p[0] == '/') ? 1 : 0;
    while (i < n && p[i] != '/')
        i++;
    if (i < n) {
        i++;
        while (i < n && p[i] != '/')
            i++;
    }
    if (i && p[i - 1] == '/')
        i--;
    return i ? put(b, p, i) : put(b, "/", 1);
}

/* One URL's pattern and section; 1 where it is left to Polars, -1 out of memory. */
static int one(const char *u, size_t n, Buf *pat, Buf *sec, Buf *tmp, Buf *esc, Span **names,
               size_t *cap, const Tracking *tr)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)u[i] > 0x7f)
            return 1;
    const char *hash = memchr(u, '#', n); /* (?s)#.* dropped */
    if (hash)
        n = (size_t)(hash - u);
    /* ^[A-Za-z][A-Za-z0-9+.\-]*://[^/?]*  ->  "/", then ^// -> / */
    int slash = 0;
    if (n && is_alpha(u[0])) {
        size_t i = 1;
        while (i < n && (is_alnum(u[i]) || u[i] == '+' || u[i] == '.' || u[i] == '-'))
            i++;
        if (n - i >= 3 && memcmp(u + i, "://", 3) == 0) {
            i += 3;
            while (i < n && u[i] != '/' && u[i] != '?')
                i++;
            slash = !(i < n && u[i] == '/');
            u += i;
            n -= i;
        }
    }
    const char *q = memchr(u, '?', n);
    size_t pn = q ? (size_t)(q - u) : n;
    size_t start = pat->len;
    if (slash && put(pat, "/", 1))
        return -1;
    /* the path, one segment at a time (a slash added above is an empty first segment) */
    for (size_t i = 0;;) {
        size_t j = i;
        while (j < pn && u[j] != '/')
            j++;
        if (put_segment(pat, tmp, esc, u + i, j - i))
            return -1;
        if (j == pn)
            break;
        if (put(pat, "/", 1))
            return -1;
        i = j + 1;
    }
    /* (an empty path may have put nothing yet: no pointer into a buffer not yet made) */
    if (put_section(sec, pat->len > start ? pat->p + start : "", pat->len - start))
        return -1;
    if (q && put_names(pat, tmp, names, cap, q + 1, n - pn - 1, tr))
        return -1;
    return 0;
}

static int offsets_put(Buf *b, int64_t v) { return put(b, (const char *)&v, sizeof v); }

static PyObject *patterns(PyObject *self, PyObject *args)
{
    Py_buffer offs = {0}, data = {0}, valid = {0};
    PyObject *valid_obj, *tracking, *result = NULL;
    Py_ssize_t offset, n;
    if (!PyArg_ParseTuple(args, "y*y*OnnO!", &offs, &data, &valid_obj, &offset, &n,
                          &PyTuple_Type, &tracking))
        return NULL;
    Tracking tr = {0};
    Buf pat = {0}, sec = {0}, pat_off = {0}, sec_off = {0}, tmp = {0}, esc = {0};
    Span *names = NULL;
    size_t names_cap = 0;
    PyObject *slow = NULL;
    int failed = 0, bad = 0;
    if (valid_obj != Py_None && PyObject_GetBuffer(valid_obj, &valid, PyBUF_SIMPLE) < 0)
        goto done;
    /* in slots, not bytes: offset + n + 1 <= slots <= PY_SSIZE_T_MAX / 8 cannot overflow */
    Py_ssize_t slots = offs.len / (Py_ssize_t)sizeof(int64_t);
    if (offset < 0 || n < 0 || offset >= slots || n > slots - 1 - offset ||
        (valid.buf && (offset + n + 7) / 8 > valid.len)) {
        PyErr_SetString(PyExc_ValueError, "patterns: the buffers are shorter than the rows");
        goto done;
    }
    if ((uintptr_t)offs.buf % _Alignof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "patterns: the offsets are not 8-byte aligned");
        goto done;
    }
    const int64_t *o = (const int64_t *)offs.buf + offset;
    tr.count = (size_t)PyTuple_GET_SIZE(tracking);
    tr.names = PyMem_Calloc(tr.count + 1, sizeof(char *));
    tr.lens = PyMem_Calloc(tr.count + 1, sizeof(size_t));
    if (!tr.names || !tr.lens) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < tr.count; i++) {
        PyObject *name = PyTuple_GET_ITEM(tracking, i);
        char *s;
        Py_ssize_t len;
        if (!PyBytes_Check(name) || PyBytes_AsStringAndSize(name, &s, &len) < 0) {
            PyErr_SetString(PyExc_TypeError, "patterns: tracking names are bytes");
            goto done;
        }
        tr.names[i] = s; /* the tuple holds them while this runs */
        tr.lens[i] = (size_t)len;
    }
    slow = PyBytes_FromStringAndSize(NULL, n);
    if (!slow)
        goto done;
    char *sl = PyBytes_AS_STRING(slow);
    const char *base = data.buf;
    const uint8_t *bits = valid.buf;
    Py_BEGIN_ALLOW_THREADS
    failed = offsets_put(&pat_off, 0) || offsets_put(&sec_off, 0);
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        Py_ssize_t at = offset + i;
        int is_null = bits && !((bits[at >> 3] >> (at & 7)) & 1);
        size_t p0 = pat.len, s0 = sec.len;
        /* each offset read once and checked where it is used: without the GIL, another
         * thread may write a writable buffer (a bytearray) between a check and a use */
        int64_t from = o[i], to = o[i + 1];
        if (from < 0 || to < from || to > data.len) {
            bad = 1;
            break;
        }
        int r = one(base + from, is_null ? 0 : (size_t)(to - from), &pat, &sec, &tmp,
                    &esc, &names, &names_cap, &tr);
        if (r < 0) {
            failed = 1;
            break;
        }
        sl[i] = (char)r;
        if (r) {
            pat.len = p0;
            sec.len = s0;
        }
        failed = offsets_put(&pat_off, (int64_t)pat.len) || offsets_put(&sec_off, (int64_t)sec.len);
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "patterns: offsets out of order or range");
        goto done;
    }
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(y#y#y#y#O)", pat_off.p, (Py_ssize_t)pat_off.len, pat.p ? pat.p : "",
                           (Py_ssize_t)pat.len, sec_off.p, (Py_ssize_t)sec_off.len,
                           sec.p ? sec.p : "", (Py_ssize_t)sec.len, slow);
done:
    Py_XDECREF(slow);
    free(pat.p);
    free(sec.p);
    free(pat_off.p);
    free(sec_off.p);
    free(tmp.p);
    free(esc.p);
    free(names);
    PyMem_Free(tr.names);
    PyMem_Free(tr.lens);
    PyBuffer_Release(&offs);
    PyBuffer_Release(&data);
    PyBuffer_Release(&valid); /* a no-op when never taken (obj NULL) */
    return result;
}

static PyMethodDef methods[] = {
    {"patterns", patterns, METH_VARARGS, "URLs' patterns and sections (see the module's source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "logtrap._patterns", NULL, -1, methods};

PyMODINIT_FUNC PyInit__patterns(void) { return PyModule_Create(&module); }
