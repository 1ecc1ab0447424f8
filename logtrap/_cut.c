/* logtrap._cut: a chunk of log lines cut into columns, in C.
 *
 * The fast way of `formats.parse_lines` (`_quote_pieces`, then `_split_request` and
 * `_apache_time`), done without a frame of lines: a line with no backslash, no NUL, no byte
 * above 0x7f and each `"` where the format puts one is cut at the format's literals, each
 * field checked as its regex body checks it (`formats._cut_program` keeps only the bodies this
 * file knows). Fields are taken greedily, as the regex's leftmost-first match takes them; where
 * a greedy choice leaves the rest of the line unmatched, or a time is not one this file turns
 * into UTC exactly as Polars would, the line is handed back whole, and `parse_lines` parses it
 * as it always has. So this file may leave a line to Polars; it never cuts one differently.
 *
 * cut(data, program, kinds) -> (lines, fast_rows, columns, slow_rows, slow_text)
 *   data: whole lines (the last may lack its newline), as read;
 *   program: ((op, arg, column, derive), ...); see the OP_ constants;
 *   kinds: one byte per column: 's' text, 'i' a 64-bit integer, 'x' text not wanted (matched
 *       and checked as 's' is, not handed back: None in its place);
 *   lines: how many lines `data` holds, as Polars' CSV reader counts them (a byte-order mark
 *       at its start dropped, one CR before each line's end dropped);
 *   fast_rows: the line numbers (uint32) of the lines cut here; columns: per column, for text
 *       (Arrow string_view views, their long strings, a validity bitmap or None), for an
 *       integer (int64 values, None, None), for 'x' None; slow_rows: the line numbers of the
 *       lines handed back; slow_text: those lines, each followed by a newline.
 * Blank lines (spaces and tabs only) are in neither list.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    OP_LIT = 0,            /* arg: the literal text */
    OP_QUOTED = 1,         /* up to the next '"' */
    OP_UNTIL = 2,          /* up to a byte of arg, a '"' or the end: [^X]*, [^ ]*, .* */
    OP_DIGITS = 3,         /* [0-9]+ */
    OP_NUM_OR_DASH = 4,    /* (?:[0-9]+|-) */
    OP_STATUS_OR_DASH = 5, /* (?:[0-9]{3}|-) */
    OP_DIGITS_3 = 6,       /* [0-9]{3} */
    OP_DIGITS_6 = 7,       /* [0-9]{6} */
    OP_FLOAT_OR_DASH = 8,  /* (?:[0-9]+(?:\.[0-9]*)?|-) */
    OP_FLOAT = 9,          /* [0-9]+(?:\.[0-9]+)? */
    OP_APACHE_TIME = 10,   /* 28/Nov/2026:10:00:00 +0100 */
    OP_OPT_QUERY = 11,     /* (?:\?[^ ]*)? */
    OP_ISO_TIME = 12,      /* 2026-11-28T10:00:00+01:00: `formats._ISO_TIME`, kept as text */
    OP_SHAPE = 13,         /* arg: a fixed shape, byte by byte: SHAPE_DIGIT [0-9], SHAPE_ALPHA
                              [A-Za-z], SHAPE_SIGN [+-], any other byte itself (a strftime time
                              of fixed-width directives, `formats._shape`) */
    OP_LAST = OP_SHAPE,
};

enum { SHAPE_DIGIT = 1, SHAPE_ALPHA = 2, SHAPE_SIGN = 3 };

/* What a kept field becomes (a step's `derive`) */
enum {
    KEEP = 0,    /* its text, in its column */
    REQUEST = 1, /* a request line: method, URL, protocol, path, query in 5 columns from its own */
    EPOCH = 2,   /* an Apache time: microseconds since 1970 in UTC, an integer column */
};

#define MAX_COLUMNS 64
#define NO_VALUE UINT32_MAX /* a span's length for a null */

typedef struct {
    int op;
    const char *arg;
    Py_ssize_t arg_len;
    int column; /* -1: matched, not kept */
    int derive;
    unsigned char stops[256]; /* OP_UNTIL: the bytes it stops at */
} Step;

/* Per thread, kept between calls: what the first pass found, for the second to copy. Reused,
 * not freed: fresh pages cost more here than the cutting itself. Freed with the thread. */
typedef struct {
    uint32_t *spans; /* per fast line and column: (start, length), or an int64 as two halves */
    uint32_t *rows;  /* per fast line: its line number */
    uint32_t *slow;  /* per slow line: (line number, start, length) */
    size_t spans_cap, rows_cap, slow_cap;
} Scratch;

static pthread_key_t scratch_key;

static void scratch_free(void *p)
{
    Scratch *sc = p;
    free(sc->spans);
    free(sc->rows);
    free(sc->slow);
    free(sc);
}

/* This thread's scratch, made on its first call; NULL: no memory. */
static Scratch *thread_scratch(void)
{
    Scratch *sc = pthread_getspecific(scratch_key);
    if (!sc) {
        sc = calloc(1, sizeof(Scratch));
        if (sc && pthread_setspecific(scratch_key, sc) != 0) {
            free(sc);
            sc = NULL;
        }
    }
    return sc;
}

/* Room for `n` more uint32 after `len` in *p (capacity *cap); -1: out of memory. */
static int reserve(uint32_t **p, size_t *cap, size_t len, size_t n)
{
    if (len + n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 4096;
    while (c < len + n)
        c *= 2;
    uint32_t *q = realloc(*p, c * sizeof(uint32_t));
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static inline int is_digit(char c) { return c >= '0' && c <= '9'; }
static inline int is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int two(const char *p) { return (p[0] - '0') * 10 + (p[1] - '0'); }

static size_t digits(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && is_digit(*q))
        q++;
    return (size_t)(q - p);
}

static int n_digits(const char *p, const char *end, int n)
{
    if (end - p < n)
        return 0;
    for (int i = 0; i < n; i++)
        if (!is_digit(p[i]))
            return 0;
    return 1;
}

/* The field at p (the line ends before `end`): its length, or -1 if it does not match. */
static Py_ssize_t field_len(const Step *st, const char *p, const char *end)
{
    size_t n;
    switch (st->op) {
    case OP_QUOTED: {
        const char *q = memchr(p, '"', (size_t)(end - p));
        return q ? (Py_ssize_t)(q - p) : (Py_ssize_t)(end - p);
    }
    case OP_UNTIL: {
        const char *q = p;
        while (q < end && !st->stops[(unsigned char)*q])
            q++;
        return (Py_ssize_t)(q - p);
    }
    case OP_DIGITS:
        n = digits(p, end);
        return n ? (Py_ssize_t)n : -1;
    case OP_NUM_OR_DASH:
        n = digits(p, end);
        if (n)
            return (Py_ssize_t)n;
        return (p < end && *p == '-') ? 1 : -1;
    case OP_STATUS_OR_DASH:
        if (n_digits(p, end, 3))
            return 3;
        return (p < end && *p == '-') ? 1 : -1;
    case OP_DIGITS_3:
        return n_digits(p, end, 3) ? 3 : -1;
    case OP_DIGITS_6:
        return n_digits(p, end, 6) ? 6 : -1;
    case OP_FLOAT_OR_DASH:
        n = digits(p, end);
        if (n) {
            if (p + n < end && p[n] == '.')
                n += 1 + digits(p + n + 1, end);
            return (Py_ssize_t)n;
        }
        return (p < end && *p == '-') ? 1 : -1;
    case OP_FLOAT:
        n = digits(p, end);
        if (!n)
            return -1;
        if (p + n + 1 < end && p[n] == '.' && is_digit(p[n + 1]))
            n += 1 + digits(p + n + 1, end);
        return (Py_ssize_t)n;
    case OP_APACHE_TIME: {
        /* [0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} [+-](?:[01][0-9]|2[0-3])[0-5][0-9] */
        static const char shape[] = "dd/aaa/dddd:dd:dd:dd s";
        if (end - p < 26)
            return -1;
        for (int i = 0; i < 22; i++) {
            char c = p[i], want = shape[i];
            if (want == 'd' ? !is_digit(c) : want == 'a' ? !is_alpha(c)
                : want == 's' ? (c != '+' && c != '-') : c != want)
                return -1;
        }
        const char *z = p + 22;
        int hours_ok = ((z[0] == '0' || z[0] == '1') && is_digit(z[1]))
                       || (z[0] == '2' && z[1] >= '0' && z[1] <= '3');
        if (!hours_ok || z[2] < '0' || z[2] > '5' || !is_digit(z[3]))
            return -1;
        return 26;
    }
    case OP_ISO_TIME: {
        /* [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})
         * One way to match only: the fraction's digits and the offset's are followed by
         * none, so no shorter choice lets the rest of the line match otherwise. */
        static const char shape[] = "dddd-dd-ddTdd:dd:dd";
        if (end - p < 20)
            return -1;
        for (int i = 0; i < 19; i++)
            if (shape[i] == 'd' ? !is_digit(p[i]) : p[i] != shape[i])
                return -1;
        const char *q = p + 19;
        if (*q == '.' && q + 1 < end && is_digit(q[1]))
            q += 1 + digits(q + 1, end);
        if (q < end && *q == 'Z')
            return (Py_ssize_t)(q + 1 - p);
        if (q >= end || (*q != '+' && *q != '-') || !n_digits(q + 1, end, 2))
            return -1;
        q += 3;
        if (q < end && *q == ':')
            q++;
        return n_digits(q, end, 2) ? (Py_ssize_t)(q + 2 - p) : -1;
    }
    case OP_SHAPE: {
        if (end - p < st->arg_len)
            return -1;
        for (Py_ssize_t i = 0; i < st->arg_len; i++) {
            char c = p[i], want = st->arg[i];
            int ok = want == SHAPE_DIGIT ? is_digit(c) : want == SHAPE_ALPHA ? is_alpha(c)
                     : want == SHAPE_SIGN ? (c == '+' || c == '-') : c == want;
            if (!ok)
                return -1;
        }
        return st->arg_len;
    }
    case OP_OPT_QUERY: {
        if (p >= end || *p != '?')
            return 0;
        const char *q = p + 1;
        while (q < end && *q != ' ' && *q != '"')
            q++;
        return (Py_ssize_t)(q - p);
    }
    }
    return -1;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* An Apache time (shape checked by field_len) -> microseconds since 1970 in UTC; 0 and *us,
 * or -1 where it is not a time Polars' strptime surely reads the same (an unusual month
 * spelling, 31 June, a leap second, year 0): Polars then reads the line. */
static int apache_epoch(const char *p, int64_t *us)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    static const int days_in[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int month = -1;
    for (int i = 0; i < 12; i++)
        if (memcmp(p + 3, months + 3 * i, 3) == 0)
            month = i;
    int day = two(p), year = two(p + 7) * 100 + two(p + 9);
    int hour = two(p + 12), minute = two(p + 15), second = two(p + 18);
    if (month < 0 || year < 1 || hour > 23 || minute > 59 || second > 59 || day < 1)
        return -1;
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > days_in[month] + (month == 1 && leap))
        return -1;
    int offset = two(p + 22) * 60 + two(p + 24);
    if (p[21] == '-')
        offset = -offset;
    int64_t seconds = days_from_civil(year, month + 1, day) * 86400 + hour * 3600 + minute * 60
                      + second - (int64_t)offset * 60;
    *us = seconds * 1000000;
    return 0;
}

static inline void put_span(uint32_t *spans, int column, const char *base, const char *p, size_t n)
{
    spans[2 * column] = (uint32_t)(p - base);
    spans[2 * column + 1] = (uint32_t)n;
}

static inline void put_null(uint32_t *spans, int column)
{
    spans[2 * column] = 0;
    spans[2 * column + 1] = NO_VALUE;
}

static inline int is_method_byte(char c)
{
    return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '-';
}

/* A request line (`_split_request`, then the URL's path and query as `_plan` splits them) ->
 * method, URL, protocol, path, query in columns c..c+4; all null for junk. */
static void split_request(uint32_t *spans, int c, const char *base, const char *p, size_t n)
{
    const char *sp = memchr(p, ' ', n);
    int valid = sp != NULL && sp > p && is_alpha(p[0]) && (size_t)(sp - p) + 1 < n;
    for (const char *q = p + 1; valid && q < sp; q++)
        valid = is_method_byte(*q);
    if (!valid) {
        for (int i = 0; i < 5; i++)
            put_null(spans, c + i);
        return;
    }
    put_span(spans, c, base, p, (size_t)(sp - p));
    const char *rest = sp + 1;
    size_t len = n - (size_t)(rest - p);
    /* Polars: rest.str.slice(-9).str.starts_with(" HTTP/"): the last 9 bytes, or all of a
     * shorter rest; the URL is then rest.str.head(-9), the protocol rest.str.tail(8). */
    size_t url_len = len, proto_len = 0;
    const char *tail9 = rest + (len > 9 ? len - 9 : 0), *tail7 = rest + (len > 7 ? len - 7 : 0);
    if ((size_t)(rest + len - tail9) >= 6 && memcmp(tail9, " HTTP/", 6) == 0) {
        url_len = len > 9 ? len - 9 : 0;
        proto_len = len > 8 ? 8 : len;
    } else if ((size_t)(rest + len - tail7) >= 6 && memcmp(tail7, " HTTP/", 6) == 0) {
        url_len = len > 7 ? len - 7 : 0;
        proto_len = len > 6 ? 6 : len;
    }
    if (proto_len)
        put_span(spans, c + 2, base, rest + len - proto_len, proto_len);
    else
        put_null(spans, c + 2);
    if (!url_len) {
        put_null(spans, c + 1);
        put_null(spans, c + 3);
        put_null(spans, c + 4);
        return;
    }
    put_span(spans, c + 1, base, rest, url_len);
    const char *qm = memchr(rest, '?', url_len);
    if (qm) {
        put_span(spans, c + 3, base, rest, (size_t)(qm - rest));
        put_span(spans, c + 4, base, qm + 1, url_len - (size_t)(qm + 1 - rest));
    } else {
        put_span(spans, c + 3, base, rest, url_len);
        put_null(spans, c + 4);
    }
}

/* Cut one clean line into `spans`; 0, or -1 where it is not this file's to cut. */
static int cut_line(const Step *steps, Py_ssize_t nsteps, const char *base, const char *p,
                    const char *end, uint32_t *spans)
{
    for (Py_ssize_t i = 0; i < nsteps; i++) {
        const Step *st = &steps[i];
        if (st->op == OP_LIT) {
            if (end - p < st->arg_len || memcmp(p, st->arg, (size_t)st->arg_len) != 0)
                return -1;
            p += st->arg_len;
            continue;
        }
        Py_ssize_t n = field_len(st, p, end);
        if (n < 0)
            return -1;
        if (st->column >= 0) {
            if (st->derive == REQUEST) {
                split_request(spans, st->column, base, p, (size_t)n);
            } else if (st->derive == EPOCH) {
                int64_t us;
                if (apache_epoch(p, &us) < 0)
                    return -1;
                spans[2 * st->column] = (uint32_t)((uint64_t)us & 0xffffffffu);
                spans[2 * st->column + 1] = (uint32_t)((uint64_t)us >> 32);
            } else {
                put_span(spans, st->column, base, p, (size_t)n);
            }
        }
        p += n;
    }
    return p == end ? 0 : -1;
}

/* No backslash, NUL or byte above 0x7f: eight bytes at a time, then the rest. */
static int is_clean(const char *p, const char *end)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    const uint64_t backslashes = ones * (unsigned char)'\\';
    for (; end - p >= 8; p += 8) {
        uint64_t w, b;
        memcpy(&w, p, 8);
        b = w ^ backslashes;
        if ((w | ((w - ones) & ~w) | ((b - ones) & ~b)) & highs)
            return 0;
    }
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '\\' || c == 0 || c >= 0x80)
            return 0;
    }
    return 1;
}

static int is_blank(const char *p, const char *end)
{
    for (; p < end; p++)
        if (*p != ' ' && *p != '\t')
            return 0;
    return 1;
}

/* An Arrow string_view column from the spans: 16-byte views (strings of 12 bytes or fewer
 * inline, longer ones as a prefix and an offset into `data`), and the validity bits. */
static void fill_views(const char *base, const uint32_t *span, size_t stride, size_t rows,
                       char *views, char *data, uint8_t *valid)
{
    uint32_t at = 0;
    for (size_t i = 0; i < rows; i++, span += stride, views += 16) {
        uint32_t start = span[0], len = span[1];
        memset(views, 0, 16);
        if (len == NO_VALUE) {
            valid[i / 8] &= (uint8_t)~(1u << (i % 8));
            continue;
        }
        memcpy(views, &len, 4);
        if (len <= 12) {
            memcpy(views + 4, base + start, len);
        } else {
            int32_t buffer = 0;
            memcpy(views + 4, base + start, 4);
            memcpy(views + 8, &buffer, 4);
            memcpy(views + 12, &at, 4);
            memcpy(data + at, base + start, len);
            at += len;
        }
    }
}

static PyObject *cut(PyObject *self, PyObject *args)
{
    Py_buffer view;
    PyObject *program;
    const char *kinds;
    Py_ssize_t ncols;
    if (!PyArg_ParseTuple(args, "y*O!y#", &view, &PyTuple_Type, &program, &kinds, &ncols))
        return NULL;
    PyObject *result = NULL, *col_list = NULL, *fast_rows = NULL, *slow_rows = NULL,
             *slow_text = NULL;
    PyObject *values[MAX_COLUMNS] = {0}, *datas[MAX_COLUMNS] = {0}, *valids[MAX_COLUMNS] = {0};
    size_t long_len[MAX_COLUMNS] = {0}, nulls[MAX_COLUMNS] = {0};
    unsigned char written[MAX_COLUMNS] = {0}; /* each column filled by exactly one step */
    Py_ssize_t nsteps = PyTuple_GET_SIZE(program);
    Step *steps = PyMem_Calloc((size_t)nsteps + 1, sizeof(Step));
    size_t n_fast = 0, n_slow = 0, slow_len = 0, stride = 2 * (size_t)ncols;
    uint32_t row = 0;
    int failed = 0;
    Scratch *sc = thread_scratch();
    if (!steps || !sc) {
        PyErr_NoMemory();
        goto done;
    }
    if (ncols > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "cut: at most 64 columns");
        goto done;
    }
    if ((size_t)view.len >= UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "cut: a chunk must be under 4 GiB");
        goto done;
    }
    for (Py_ssize_t c = 0; c < ncols; c++)
        if (kinds[c] != 's' && kinds[c] != 'i' && kinds[c] != 'x') {
            PyErr_SetString(PyExc_ValueError, "cut: a column's kind is 's', 'i' or 'x'");
            goto done;
        }
    for (Py_ssize_t i = 0; i < nsteps; i++) {
        PyObject *t = PyTuple_GET_ITEM(program, i);
        Step *st = &steps[i];
        if (!PyTuple_Check(t)) {
            PyErr_SetString(PyExc_ValueError, "cut: a program step is a tuple");
            goto done;
        }
        if (!PyArg_ParseTuple(t, "iy#ii", &st->op, &st->arg, &st->arg_len, &st->column,
                              &st->derive))
            goto done;
        int width = st->derive == REQUEST ? 5 : 1;
        char kind = st->derive == EPOCH ? 'i' : 's';
        int ok = st->op >= OP_LIT && st->op <= OP_LAST && st->column >= -1
                 && (long)st->column + width <= (long)ncols && st->derive >= KEEP && st->derive <= EPOCH
                 && (st->derive != REQUEST || st->op == OP_QUOTED)
                 && (st->derive != EPOCH || st->op == OP_APACHE_TIME);
        ok = ok && (st->op != OP_LIT || st->column == -1);
        for (int k = 0; ok && st->column >= 0 && k < width; k++)
            ok = (kinds[st->column + k] == kind || (kind == 's' && kinds[st->column + k] == 'x'))
                 && !written[st->column + k]++;
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "cut: bad program step");
            goto done;
        }
        st->stops['"'] = 1;
        for (Py_ssize_t k = 0; k < st->arg_len; k++)
            st->stops[(unsigned char)st->arg[k]] = 1;
    }

    for (Py_ssize_t c = 0; c < ncols; c++)
        if (!written[c]) { /* a column no step fills would be read unwritten */
            PyErr_SetString(PyExc_ValueError, "cut: bad program step");
            goto done;
        }

    const char *base = view.buf, *end = base + view.len;
    /* First pass: which lines are cut here, and where their fields are. */
    Py_BEGIN_ALLOW_THREADS
    const char *p = base;
    if (end - p >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        const char *stop = line_end;
        if (stop > p && stop[-1] == '\r')
            stop--;
        if (!is_blank(p, stop)) {
            if (reserve(&sc->spans, &sc->spans_cap, n_fast * stride, stride)
                || reserve(&sc->rows, &sc->rows_cap, n_fast, 1)) {
                failed = 1;
                break;
            }
            uint32_t *spans = sc->spans + n_fast * stride;
            if (is_clean(p, stop) && cut_line(steps, nsteps, base, p, stop, spans) == 0) {
                for (Py_ssize_t c = 0; c < ncols; c++) {
                    if (kinds[c] != 's')
                        continue;
                    uint32_t len = spans[2 * c + 1];
                    if (len == NO_VALUE)
                        nulls[c]++;
                    else if (len > 12)
                        long_len[c] += len;
                }
                sc->rows[n_fast++] = row;
            } else {
                if (reserve(&sc->slow, &sc->slow_cap, n_slow * 3, 3)) {
                    failed = 1;
                    break;
                }
                uint32_t *s = sc->slow + n_slow * 3;
                s[0] = row;
                s[1] = (uint32_t)(p - base);
                s[2] = (uint32_t)(line_end - p);
                slow_len += (size_t)(line_end - p) + 1;
                n_slow++;
            }
        }
        row++;
        p = nl ? nl + 1 : end;
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0; c < ncols; c++) {
        if (kinds[c] == 'x')
            continue;
        if (kinds[c] == 'i') {
            values[c] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_fast * 8));
            if (!values[c])
                goto done;
            continue;
        }
        if (long_len[c] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "cut: a column over 2 GiB");
            goto done;
        }
        values[c] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_fast * 16));
        datas[c] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)long_len[c]);
        if (!values[c] || !datas[c])
            goto done;
        if (nulls[c]) {
            valids[c] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((n_fast + 7) / 8));
            if (!valids[c])
                goto done;
            memset(PyBytes_AS_STRING(valids[c]), 0xff, (n_fast + 7) / 8);
        }
    }
    fast_rows = PyBytes_FromStringAndSize((const char *)sc->rows, (Py_ssize_t)(n_fast * 4));
    slow_rows = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_slow * 4));
    slow_text = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)slow_len);
    if (!fast_rows || !slow_rows || !slow_text)
        goto done;

    /* Second pass: the columns, written into the objects handed back. */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t c = 0; c < ncols; c++) {
        const uint32_t *span = sc->spans + 2 * c;
        if (kinds[c] == 'x')
            continue;
        if (kinds[c] == 'i') {
            char *out = PyBytes_AS_STRING(values[c]);
            for (size_t i = 0; i < n_fast; i++, span += stride) {
                uint64_t v = (uint64_t)span[0] | ((uint64_t)span[1] << 32);
                memcpy(out + 8 * i, &v, 8);
            }
            continue;
        }
        /* a null's validity bit is cleared: there is a bitmap wherever a column has one */
        fill_views(base, span, stride, n_fast, PyBytes_AS_STRING(values[c]),
                   PyBytes_AS_STRING(datas[c]),
                   valids[c] ? (uint8_t *)PyBytes_AS_STRING(valids[c]) : NULL);
    }
    uint32_t *srows = (uint32_t *)PyBytes_AS_STRING(slow_rows);
    char *stext = PyBytes_AS_STRING(slow_text);
    for (size_t i = 0; i < n_slow; i++) {
        const uint32_t *s = sc->slow + 3 * i;
        srows[i] = s[0];
        memcpy(stext, base + s[1], s[2]);
        stext += s[2];
        *stext++ = '\n';
    }
    Py_END_ALLOW_THREADS

    col_list = PyList_New(ncols);
    if (!col_list)
        goto done;
    for (Py_ssize_t c = 0; c < ncols; c++) {
        PyObject *col = kinds[c] == 'x' ? Py_NewRef(Py_None)
                        : PyTuple_Pack(3, values[c], datas[c] ? datas[c] : Py_None,
                                       valids[c] ? valids[c] : Py_None);
        if (!col)
            goto done;
        PyList_SET_ITEM(col_list, c, col);
    }
    result = Py_BuildValue("(IOOOO)", (unsigned int)row, fast_rows, col_list, slow_rows, slow_text);
done:
    for (int c = 0; c < MAX_COLUMNS; c++) {
        Py_XDECREF(values[c]);
        Py_XDECREF(datas[c]);
        Py_XDECREF(valids[c]);
    }
    Py_XDECREF(col_list);
    Py_XDECREF(fast_rows);
    Py_XDECREF(slow_rows);
    Py_XDECREF(slow_text);
    PyMem_Free(steps);
    PyBuffer_Release(&view);
    return result;
}

/* joined(head, body) -> bytes: head + body, the body copied with the GIL released. The reader
 * joins the start of a line carried over from the last batch to the next batch's whole lines,
 * 8 MB a time: copied by bytes.join, holding the GIL, it kept the parse and the analysis out
 * of Python for ~2 ms a batch (0.5 s of GIL held per 10M lines). */
static PyObject *joined(PyObject *self, PyObject *args)
{
    Py_buffer head, body;
    if (!PyArg_ParseTuple(args, "y*y*", &head, &body))
        return NULL;
    PyObject *out = NULL;
    if (head.len > PY_SSIZE_T_MAX - body.len) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, head.len + body.len);
    if (!out)
        goto done;
    char *to = PyBytes_AS_STRING(out);
    memcpy(to, head.buf, (size_t)head.len);
    Py_BEGIN_ALLOW_THREADS
    memcpy(to + head.len, body.buf, (size_t)body.len);
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&head);
    PyBuffer_Release(&body);
    return out;
}

static PyMethodDef methods[] = {
    {"cut", cut, METH_VARARGS, "Cut a chunk of log lines into columns (see the module's source)."},
    {"joined", joined, METH_VARARGS, "head + body as bytes, the body copied without the GIL."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "logtrap._cut", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cut(void)
{
    if (pthread_key_create(&scratch_key, scratch_free) != 0) {
        PyErr_SetString(PyExc_ImportError, "logtrap._cut: no thread-local storage");
        return NULL;
    }
    return PyModule_Create(&module);
}
