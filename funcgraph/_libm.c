/* funcgraph._libm: elementwise C math library functions over float32 and float64 buffers.
 *
 * XLA's CPU code computes some transcendental functions by calling the C math library
 * (sin, cos, tan, atan2 and cbrt: sinf for float32, sin for float64), where NumPy's own
 * versions of them round differently.  Calling the same library functions gives eager
 * results equal to XLA's bit for bit, at the cost of a NumPy op instead of a compiled
 * call.  funcgraph/primitives/host_math.py says which
 * functions are used and checks them against XLA's before first use (another XLA may
 * compute them its own way).
 *
 *   unary(name, x, out)       out[i] = name(x[i])
 *   binary(name, x, y, out)   out[i] = name(x[i], y[i])
 *   UnaryImpl                 an eager impl whose common case runs here (below)
 *   RealImpl                  a ufunc as an eager impl, other dtypes to a fallback
 *
 * x, y and out are C-contiguous buffers of one item type, float32 ('f') or float64
 * ('d'), and one length; name is one of the functions below.  The loops run in the
 * floating-point mode XLA's CPU code runs in: subnormal inputs of arithmetic read as
 * zero and subnormal results are flushed to zero (the x86 MXCSR's DAZ and FTZ bits;
 * elsewhere the mode is left as it is, and host_math.py's check against XLA decides).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "_xla_mode.h"

typedef float (*unary_f)(float);
typedef double (*unary_d)(double);
typedef float (*binary_f)(float, float);
typedef double (*binary_d)(double, double);

static const struct { const char *name; unary_f f; unary_d d; } unary_fns[] = {
    {"sin", sinf, sin}, {"cos", cosf, cos}, {"tan", tanf, tan}, {"cbrt", cbrtf, cbrt},
};

static const struct { const char *name; binary_f f; binary_d d; } binary_fns[] = {
    {"atan2", atan2f, atan2},
};

#define N_UNARY (sizeof(unary_fns) / sizeof(unary_fns[0]))
#define N_BINARY (sizeof(binary_fns) / sizeof(binary_fns[0]))

/* Buffers of one item type and length: 'f' or 'd', or 0 with a Python error set. */
static char get_buffers(PyObject **objs, Py_buffer *views, int n, int writable_last)
{
    int i;
    char kind = 0;
    for (i = 0; i < n; i++) {
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
        if (writable_last && i == n - 1)
            flags |= PyBUF_WRITABLE;
        if (PyObject_GetBuffer(objs[i], &views[i], flags) < 0)
            goto fail;
        const char *format = views[i].format ? views[i].format : "B";
        if (format[0] == '<' || format[0] == '=' || format[0] == '@')
            format++;
        char this_kind = (strcmp(format, "f") == 0 && views[i].itemsize == 4) ? 'f'
                         : (strcmp(format, "d") == 0 && views[i].itemsize == 8) ? 'd' : 0;
        if (this_kind == 0 || (kind && this_kind != kind)
                || (i && views[i].len != views[0].len)) {
            PyBuffer_Release(&views[i]);
            PyErr_SetString(PyExc_TypeError,
                            "_libm: buffers must be C-contiguous float32 or float64 "
                            "buffers of one type and length");
            goto fail;
        }
        kind = this_kind;
    }
    return kind;
fail:
    while (i-- > 0)
        PyBuffer_Release(&views[i]);
    return 0;
}

/* Below this many elements the loops keep the GIL (handing it over costs more). */
#define GIL_FREE_SIZE 4096

static void run_unary(size_t k, char kind, const void *x, void *out, Py_ssize_t n)
{
    PyThreadState *state = n >= GIL_FREE_SIZE ? PyEval_SaveThread() : NULL;
    ENTER_XLA_MODE
    if (kind == 'f') {
        const float *xs = x;
        float *outs = out;
        for (Py_ssize_t i = 0; i < n; i++)
            outs[i] = unary_fns[k].f(xs[i]);
    } else {
        const double *xs = x;
        double *outs = out;
        for (Py_ssize_t i = 0; i < n; i++)
            outs[i] = unary_fns[k].d(xs[i]);
    }
    LEAVE_XLA_MODE
    if (state != NULL)
        PyEval_RestoreThread(state);
}

static void run_binary(size_t k, char kind, const void *x, const void *y, void *out,
                       Py_ssize_t n)
{
    PyThreadState *state = n >= GIL_FREE_SIZE ? PyEval_SaveThread() : NULL;
    ENTER_XLA_MODE
    if (kind == 'f') {
        const float *xs = x, *ys = y;
        float *outs = out;
        for (Py_ssize_t i = 0; i < n; i++)
            outs[i] = binary_fns[k].f(xs[i], ys[i]);
    } else {
        const double *xs = x, *ys = y;
        double *outs = out;
        for (Py_ssize_t i = 0; i < n; i++)
            outs[i] = binary_fns[k].d(xs[i], ys[i]);
    }
    LEAVE_XLA_MODE
    if (state != NULL)
        PyEval_RestoreThread(state);
}

static Py_ssize_t find_unary(const char *name)
{
    for (size_t k = 0; k < N_UNARY; k++)
        if (strcmp(unary_fns[k].name, name) == 0)
            return (Py_ssize_t)k;
    PyErr_Format(PyExc_ValueError, "_libm: no unary function %s", name);
    return -1;
}

static PyObject *libm_unary(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *objs[2];
    Py_buffer views[2];
    if (!PyArg_ParseTuple(args, "sOO", &name, &objs[0], &objs[1]))
        return NULL;
    Py_ssize_t k = find_unary(name);
    if (k < 0)
        return NULL;
    char kind = get_buffers(objs, views, 2, 1);
    if (kind == 0)
        return NULL;
    run_unary((size_t)k, kind, views[0].buf, views[1].buf, views[0].len / views[0].itemsize);
    PyBuffer_Release(&views[0]);
    PyBuffer_Release(&views[1]);
    Py_RETURN_NONE;
}

static PyObject *libm_binary(PyObject *self, PyObject *args)
{
    const char *name;
    PyObject *objs[3];
    Py_buffer views[3];
    size_t k;
    if (!PyArg_ParseTuple(args, "sOOO", &name, &objs[0], &objs[1], &objs[2]))
        return NULL;
    for (k = 0; k < N_BINARY && strcmp(binary_fns[k].name, name) != 0; k++)
        ;
    if (k == N_BINARY)
        return PyErr_Format(PyExc_ValueError, "_libm: no binary function %s", name);
    char kind = get_buffers(objs, views, 3, 1);
    if (kind == 0)
        return NULL;
    run_binary(k, kind, views[0].buf, views[1].buf, views[2].buf,
               views[0].len / views[0].itemsize);
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&views[i]);
    Py_RETURN_NONE;
}

/* ---- UnaryImpl: an eager impl with its common case in C ------------------------------
 *
 * UnaryImpl(name, served, uses_numpy, empty_like, ndarray, fallback) is called as
 * impl(x).  Where x is an ndarray of float32 or float64 values in C order, served[x.dtype]
 * is True (host_math.py's check against XLA passed) and uses_numpy() is true, the result
 * is empty_like(x) filled here; every other call is fallback(x), host_math.py's Python
 * impl, which does the same and all the other cases.  (The Python impl's steps cost
 * more than NumPy's own sin; this is the eager hot path of sin and cos.) */
typedef struct {
    PyObject_HEAD
    size_t index;
    PyObject *served, *uses_numpy, *empty_like, *ndarray, *fallback;
    vectorcallfunc vectorcall;
} UnaryImpl;

static PyObject *s_dtype;

/* The result, NULL with an error set, or NotImplemented where the fallback serves. */
static PyObject *unary_served(UnaryImpl *self, PyObject *x)
{
    PyObject *dtype = PyObject_GetAttr(x, s_dtype);
    if (dtype == NULL)
        return NULL;
    PyObject *checked = PyDict_GetItemWithError(self->served, dtype);
    Py_DECREF(dtype);
    if (checked != Py_True) {
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *numpy_now = PyObject_CallNoArgs(self->uses_numpy);
    if (numpy_now == NULL)
        return NULL;
    Py_DECREF(numpy_now);
    if (numpy_now != Py_True)
        Py_RETURN_NOTIMPLEMENTED;
    Py_buffer in, out;
    char kind = get_buffers(&x, &in, 1, 0);
    if (kind == 0) {  /* not C-contiguous float32/float64 */
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *result = PyObject_CallOneArg(self->empty_like, x);
    if (result == NULL || get_buffers(&result, &out, 1, 1) == 0) {
        PyBuffer_Release(&in);
        Py_XDECREF(result);
        return NULL;
    }
    if (out.len != in.len || out.itemsize != in.itemsize) {  /* empty_like kept x's type */
        PyBuffer_Release(&out);
        PyBuffer_Release(&in);
        Py_DECREF(result);
        PyErr_SetString(PyExc_TypeError, "_libm.UnaryImpl: empty_like(x) is not like x");
        return NULL;
    }
    run_unary(self->index, kind, in.buf, out.buf, in.len / in.itemsize);
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    return result;
}

static PyObject *unary_impl_call(PyObject *op, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames)
{
    UnaryImpl *self = (UnaryImpl *)op;
    if (PyVectorcall_NARGS(nargsf) == 1 && kwnames == NULL
            && (PyObject *)Py_TYPE(args[0]) == self->ndarray) {
        PyObject *out = unary_served(self, args[0]);
        if (out != Py_NotImplemented)
            return out;
        Py_DECREF(out);
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *unary_impl_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    const char *name;
    PyObject *served, *uses_numpy, *empty_like, *ndarray, *fallback;
    if (!PyArg_ParseTuple(args, "sO!OOOO:UnaryImpl", &name, &PyDict_Type, &served,
                          &uses_numpy, &empty_like, &ndarray, &fallback))
        return NULL;
    Py_ssize_t k = find_unary(name);
    if (k < 0)
        return NULL;
    UnaryImpl *self = (UnaryImpl *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->index = (size_t)k;
    self->served = Py_NewRef(served);
    self->uses_numpy = Py_NewRef(uses_numpy);
    self->empty_like = Py_NewRef(empty_like);
    self->ndarray = Py_NewRef(ndarray);
    self->fallback = Py_NewRef(fallback);
    self->vectorcall = unary_impl_call;
    return (PyObject *)self;
}

static int unary_impl_traverse(UnaryImpl *self, visitproc visit, void *arg)
{
    Py_VISIT(self->served);
    Py_VISIT(self->uses_numpy);
    Py_VISIT(self->empty_like);
    Py_VISIT(self->ndarray);
    Py_VISIT(self->fallback);
    return 0;
}

static int unary_impl_clear(UnaryImpl *self)
{
    Py_CLEAR(self->served);
    Py_CLEAR(self->uses_numpy);
    Py_CLEAR(self->empty_like);
    Py_CLEAR(self->ndarray);
    Py_CLEAR(self->fallback);
    return 0;
}

static void unary_impl_dealloc(UnaryImpl *self)
{
    PyObject_GC_UnTrack(self);
    unary_impl_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *unary_impl_fallback(UnaryImpl *self, void *closure)
{
    if (self->fallback == NULL)
        Py_RETURN_NONE;
    return Py_NewRef(self->fallback);
}

static PyGetSetDef unary_impl_getset[] = {
    {"fallback", (getter)unary_impl_fallback, NULL, "the Python impl", NULL},
    {NULL},
};

static PyTypeObject UnaryImplType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "funcgraph._libm.UnaryImpl",
    .tp_basicsize = sizeof(UnaryImpl),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "An eager impl of a unary primitive by a C math library function.",
    .tp_new = unary_impl_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(UnaryImpl, vectorcall),
    .tp_traverse = (traverseproc)unary_impl_traverse,
    .tp_clear = (inquiry)unary_impl_clear,
    .tp_dealloc = (destructor)unary_impl_dealloc,
    .tp_getset = unary_impl_getset,
};

/* ---- RealImpl: a NumPy ufunc as an eager impl, except for complex operands -------------
 *
 * RealImpl(ufunc, avoided, fallback) is called as impl(*args): where no argument's dtype
 * is one of the dtypes in the tuple `avoided`, it is ufunc(*args); otherwise
 * fallback(*args) (which runs the primitive compiled: NumPy's complex products and
 * quotients round otherwise than XLA's).  The check costs a pointer comparison per
 * argument, where a Python impl would cost a frame on every eager call. */
typedef struct {
    PyObject_HEAD
    PyObject *ufunc, *avoided, *fallback;
    vectorcallfunc vectorcall;
} RealImpl;

static int real_impl_avoids(RealImpl *self, PyObject *x)
{
    PyObject *dtype = PyObject_GetAttr(x, s_dtype);
    if (dtype == NULL) {
        PyErr_Clear();
        return 0;
    }
    int avoided = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self->avoided); i++)
        avoided |= dtype == PyTuple_GET_ITEM(self->avoided, i);
    Py_DECREF(dtype);
    return avoided;
}

static PyObject *real_impl_call(PyObject *op, PyObject *const *args, size_t nargsf,
                                PyObject *kwnames)
{
    RealImpl *self = (RealImpl *)op;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    for (Py_ssize_t i = 0; i < n; i++)
        if (real_impl_avoids(self, args[i]))
            return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
    return PyObject_Vectorcall(self->ufunc, args, nargsf, kwnames);
}

static PyObject *real_impl_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *ufunc, *avoided, *fallback;
    if (!PyArg_ParseTuple(args, "OO!O:RealImpl", &ufunc, &PyTuple_Type, &avoided, &fallback))
        return NULL;
    RealImpl *self = (RealImpl *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->ufunc = Py_NewRef(ufunc);
    self->avoided = Py_NewRef(avoided);
    self->fallback = Py_NewRef(fallback);
    self->vectorcall = real_impl_call;
    return (PyObject *)self;
}

static int real_impl_traverse(RealImpl *self, visitproc visit, void *arg)
{
    Py_VISIT(self->ufunc);
    Py_VISIT(self->avoided);
    Py_VISIT(self->fallback);
    return 0;
}

static int real_impl_clear(RealImpl *self)
{
    Py_CLEAR(self->ufunc);
    Py_CLEAR(self->avoided);
    Py_CLEAR(self->fallback);
    return 0;
}

static void real_impl_dealloc(RealImpl *self)
{
    PyObject_GC_UnTrack(self);
    real_impl_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject RealImplType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "funcgraph._libm.RealImpl",
    .tp_basicsize = sizeof(RealImpl),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "An eager impl: a NumPy ufunc, except for the dtypes it leaves to a fallback.",
    .tp_new = real_impl_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(RealImpl, vectorcall),
    .tp_traverse = (traverseproc)real_impl_traverse,
    .tp_clear = (inquiry)real_impl_clear,
    .tp_dealloc = (destructor)real_impl_dealloc,
};

/* call_in_xla_mode(fn, args, kwargs): fn(*args, **kwargs) with XLA's floating-point mode
 * set (an eager NumPy impl computing as XLA's CPU code would, subnormals flushed). */
static PyObject *libm_call_in_xla_mode(PyObject *self, PyObject *args)
{
    PyObject *fn, *fn_args, *fn_kwargs;
    if (!PyArg_ParseTuple(args, "OO!O", &fn, &PyTuple_Type, &fn_args, &fn_kwargs))
        return NULL;
    ENTER_XLA_MODE
    PyObject *out = PyObject_Call(fn, fn_args, fn_kwargs == Py_None ? NULL : fn_kwargs);
    LEAVE_XLA_MODE
    return out;
}

static PyMethodDef methods[] = {
    {"call_in_xla_mode", libm_call_in_xla_mode, METH_VARARGS,
     "call_in_xla_mode(fn, args, kwargs): fn(*args, **kwargs) in XLA's floating-point mode"},
    {"unary", libm_unary, METH_VARARGS, "unary(name, x, out): out[i] = name(x[i])"},
    {"binary", libm_binary, METH_VARARGS, "binary(name, x, y, out): out[i] = name(x[i], y[i])"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "funcgraph._libm",
    "Elementwise C math library functions over float32 and float64 buffers.", -1, methods,
};

PyMODINIT_FUNC PyInit__libm(void)
{
    s_dtype = PyUnicode_InternFromString("dtype");
    if (s_dtype == NULL || PyType_Ready(&UnaryImplType) < 0 || PyType_Ready(&RealImplType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "UnaryImpl", (PyObject *)&UnaryImplType) < 0
            || PyModule_AddObjectRef(m, "RealImpl", (PyObject *)&RealImplType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
