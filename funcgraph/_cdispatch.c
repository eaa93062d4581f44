/* funcgraph._cdispatch: the jit fast path in C.
 *
 * jax dispatches a cached jitted call in C++; a call through Python functions costs a
 * few percent of that dispatch per Python step (each frame, list comprehension and
 * object made).  This module does the same steps as the Python versions in
 * funcgraph/transforms/fast_dispatch.py, which stay the reference and the fallback
 * where this module was not built (no C compiler):
 *
 *   FastJit.__call__   key the positional arguments by their avals (or, where they
 *                      are Python containers, by jaxlib's flatten and the leaves'
 *                      avals), look up the function's fast-path caches, check that no
 *                      transformation is tracing, call the entry's flat caller;
 *                      anything else goes to the Python method `_slow_call(args,
 *                      kwargs)`.
 *   FlatCall           the flat caller of a program on one device with no constants:
 *                      the arguments' device buffers, jaxlib's execute_sharded with its
 *                      result handlers, funcgraph.Arrays of the results (unflattened
 *                      into the output tree, or the one result).
 *   flat_key           the fast path's cache key of positional arguments.
 *   eager_numpy        the common case of the eager NumPy path (interpreters/eval.py):
 *                      an op on uncommitted Arrays, run by its NumPy implementation.
 *
 * No jaxlib header is used: jaxlib's objects are called through their Python methods.
 * setup() hands this module funcgraph's objects once (see fast_dispatch.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_xla_mode.h"

/* What setup() is given: funcgraph.Array and its slots' descriptors, ShapedArray and
 * its _token slot's, the per-thread trace state and the evaluation trace, the config
 * object, the key function of arguments that are not Arrays (host values: NumPy
 * arrays and scalars) and its dict of NumPy arrays' tokens, the getter of jaxlib's flatten of Python containers
 * (backend.container_flattener: it imports jax on first use, so it is called only
 * when a container call is looked up), and eval.py's wrap_value of eager NumPy results. */
static PyTypeObject *array_type, *aval_type, *ndarray_type;
static PyObject *np_slot, *buf_slot, *aval_slot, *deleted_slot, *sharding_slot, *token_slot;
static PyObject *trace_state, *eval_trace, *config, *host_leaf_key, *ndarray_tokens, *get_flatten,
    *wrap;

static PyObject *s_dispatch_checks, *s_trace, *s_token, *s_value, *s_dtype, *s_shape,
    *s_enable_x64, *s_flat_caller, *s_make_flat_caller, *s_slow_call, *s_consume_with_handlers,
    *s_is_ready;

/* Array slots are read and written through their member descriptors (the same as
 * `x._buf` in Python, without the attribute lookup). */
static PyObject *slot_get(PyObject *slot, PyObject *obj)
{
    return Py_TYPE(slot)->tp_descr_get(slot, obj, (PyObject *)Py_TYPE(obj));
}

static int slot_set(PyObject *slot, PyObject *obj, PyObject *value)
{
    return Py_TYPE(slot)->tp_descr_set(slot, obj, value);
}

/* Array(value, aval, buf): an uncommitted Array over a host value and/or a device
 * buffer (None: not made yet). */
static PyObject *make_array(PyObject *value, PyObject *buf, PyObject *aval)
{
    PyObject *array = array_type->tp_alloc(array_type, 0);
    if (array == NULL)
        return NULL;
    if (slot_set(np_slot, array, value) < 0 || slot_set(buf_slot, array, buf) < 0
        || slot_set(aval_slot, array, aval) < 0 || slot_set(deleted_slot, array, Py_False) < 0
        || slot_set(sharding_slot, array, Py_None) < 0) {
        Py_DECREF(array);
        return NULL;
    }
    return array;
}

/* Array(None, aval, buf): the result of a program, on the device. */
static PyObject *new_array(PyObject *buf, PyObject *aval)
{
    return make_array(Py_None, buf, aval);
}

/* Array(value, aval): the result of an eager NumPy op, on the host. */
static PyObject *new_host_array(PyObject *value, PyObject *aval)
{
    return make_array(value, Py_None, aval);
}

static int is_set_up(void)
{
    if (array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "funcgraph._cdispatch.setup() was not called");
        return 0;
    }
    return 1;
}

/* ---- FlatCall ---------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *execute;   /* the executable's execute_sharded */
    PyObject *handlers;  /* its result handlers (consume_with_handlers' argument) */
    PyObject *plain;     /* the executable's plain execute: the fallback on a TypeError */
    PyObject *out_avals; /* a tuple: the outputs' avals */
    PyObject *unflatten; /* outputs -> the result; None: the one output is the result */
    PyObject *puts;      /* per argument: put(x) -> buffer, for those with no buffer;
                          * None: the program does not take it (unused) */
    Py_ssize_t taken;    /* how many arguments the program takes (puts not None) */
} FlatCallObject;

static PyTypeObject FlatCallType;

/* The buffers of the arguments the program takes: an Array's own, or what its put
 * makes of it.  The arguments are read from a tuple (a list is copied: a put runs
 * Python code, which could change a list). */
static PyObject *argument_buffers(FlatCallObject *self, PyObject *args)
{
    PyObject *seq = PySequence_Tuple(args);
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(seq);
    if (n != PyTuple_GET_SIZE(self->puts)) {
        PyErr_Format(PyExc_TypeError, "FlatCall: %zd arguments for a program of %zd", n,
                     PyTuple_GET_SIZE(self->puts));
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *bufs = PyList_New(self->taken);
    if (bufs == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    PyObject **items = &PyTuple_GET_ITEM(seq, 0);
    for (Py_ssize_t i = 0, j = 0; i < n; i++) {
        PyObject *buf = NULL;
        if (PyTuple_GET_ITEM(self->puts, i) == Py_None)
            continue;
        if (Py_TYPE(items[i]) == array_type) {
            buf = slot_get(buf_slot, items[i]);
            if (buf == NULL)
                goto error;
            if (buf == Py_None)
                Py_CLEAR(buf);
        }
        if (buf == NULL) {
            buf = PyObject_CallOneArg(PyTuple_GET_ITEM(self->puts, i), items[i]);
            if (buf == NULL)
                goto error;
        }
        PyList_SET_ITEM(bufs, j++, buf);
    }
    Py_DECREF(seq);
    return bufs;
error:
    Py_DECREF(seq);
    Py_DECREF(bufs);
    return NULL;
}

/* execute_sharded(bufs).consume_with_handlers(handlers); a TypeError (a buffer of
 * another kind) runs the plain execute instead, as the Python runner does. */
static PyObject *execute(FlatCallObject *self, PyObject *bufs)
{
    PyObject *outs = NULL;
    PyObject *results = PyObject_CallOneArg(self->execute, bufs);
    if (results != NULL) {
        outs = PyObject_CallMethodOneArg(results, s_consume_with_handlers, self->handlers);
        Py_DECREF(results);
    }
    if (outs == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        outs = PyObject_CallOneArg(self->plain, bufs);
    }
    return outs;
}

/* The outputs' buffers as Arrays, in a new list. */
static PyObject *output_arrays(FlatCallObject *self, PyObject *outs)
{
    PyObject *seq = PySequence_Fast(outs, "FlatCall: execute did not return a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n != PyTuple_GET_SIZE(self->out_avals)) {
        PyErr_Format(PyExc_RuntimeError, "FlatCall: %zd outputs for %zd avals", n,
                     PyTuple_GET_SIZE(self->out_avals));
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *arrays = PyList_New(n);
    for (Py_ssize_t i = 0; arrays != NULL && i < n; i++) {
        PyObject *array = new_array(PySequence_Fast_GET_ITEM(seq, i),
                                    PyTuple_GET_ITEM(self->out_avals, i));
        if (array == NULL)
            Py_CLEAR(arrays);
        else
            PyList_SET_ITEM(arrays, i, array);
    }
    Py_DECREF(seq);
    return arrays;
}

static PyObject *flat_call_run(FlatCallObject *self, PyObject *args)
{
    if (!is_set_up())
        return NULL;
    if (self->puts == NULL) {  /* cleared by the garbage collector */
        PyErr_SetString(PyExc_RuntimeError, "FlatCall: called after it was cleared");
        return NULL;
    }
    PyObject *bufs = argument_buffers(self, args);
    if (bufs == NULL)
        return NULL;
    PyObject *outs = execute(self, bufs);
    Py_DECREF(bufs);
    if (outs == NULL)
        return NULL;
    PyObject *arrays = output_arrays(self, outs);
    Py_DECREF(outs);
    if (arrays == NULL)
        return NULL;
    PyObject *result;
    if (self->unflatten != Py_None)
        result = PyObject_CallOneArg(self->unflatten, arrays);
    else if (PyList_GET_SIZE(arrays) == 1)
        result = Py_NewRef(PyList_GET_ITEM(arrays, 0));
    else
        result = PyErr_Format(PyExc_RuntimeError, "FlatCall: no unflatten for %zd outputs",
                              PyList_GET_SIZE(arrays));
    Py_DECREF(arrays);
    return result;
}

static PyObject *flat_call_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"args", NULL};
    PyObject *call_args;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:FlatCall", names, &call_args))
        return NULL;
    return flat_call_run((FlatCallObject *)self, call_args);
}

static PyObject *flat_call_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"execute", "handlers", "plain", "out_avals", "unflatten", "puts",
                            NULL};
    PyObject *execute, *handlers, *plain, *out_avals, *unflatten, *puts;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO!OO!:FlatCall", names, &execute,
                                     &handlers, &plain, &PyTuple_Type, &out_avals,
                                     &unflatten, &PyTuple_Type, &puts))
        return NULL;
    FlatCallObject *self = (FlatCallObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->execute = Py_NewRef(execute);
    self->handlers = Py_NewRef(handlers);
    self->plain = Py_NewRef(plain);
    self->out_avals = Py_NewRef(out_avals);
    self->unflatten = Py_NewRef(unflatten);
    self->puts = Py_NewRef(puts);
    self->taken = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(puts); i++)
        self->taken += PyTuple_GET_ITEM(puts, i) != Py_None;
    return (PyObject *)self;
}

static int flat_call_traverse(FlatCallObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->execute);
    Py_VISIT(self->handlers);
    Py_VISIT(self->plain);
    Py_VISIT(self->out_avals);
    Py_VISIT(self->unflatten);
    Py_VISIT(self->puts);
    return 0;
}

static int flat_call_clear(FlatCallObject *self)
{
    Py_CLEAR(self->execute);
    Py_CLEAR(self->handlers);
    Py_CLEAR(self->plain);
    Py_CLEAR(self->out_avals);
    Py_CLEAR(self->unflatten);
    Py_CLEAR(self->puts);
    return 0;
}

static void flat_call_dealloc(FlatCallObject *self)
{
    PyObject_GC_UnTrack(self);
    flat_call_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject FlatCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "funcgraph._cdispatch.FlatCall",
    .tp_doc = "FlatCall(execute, handlers, plain, out_avals, unflatten, puts)(args): the "
              "fast path's call of a program on one device with no constants.",
    .tp_basicsize = sizeof(FlatCallObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = flat_call_new,
    .tp_call = flat_call_call,
    .tp_traverse = (traverseproc)flat_call_traverse,
    .tp_clear = (inquiry)flat_call_clear,
    .tp_dealloc = (destructor)flat_call_dealloc,
};

/* ---- FastJit ----------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *flat_cache;       /* _flat_cache: flat key -> cache entry */
    PyObject *container_cache;  /* _container_cache: container key -> cache entry */
} FastJitObject;

/* aval.token: its _token slot, or the property where that is not made yet. */
static PyObject *aval_token(PyObject *aval)
{
    if (Py_TYPE(aval) == aval_type) {
        PyObject *token = slot_get(token_slot, aval);
        if (token != Py_None)
            return token;
        Py_DECREF(token);
    }
    return PyObject_GetAttr(aval, s_token);
}

/* The token of a NumPy array argument from host_leaf_key's dict, keyed by (dtype,
 * shape, x64 flag) as there; host_leaf_key itself where the dict has none. */
static PyObject *ndarray_token(PyObject *arg)
{
    PyObject *dtype = PyObject_GetAttr(arg, s_dtype);
    PyObject *shape = dtype == NULL ? NULL : PyObject_GetAttr(arg, s_shape);
    PyObject *x64 = shape == NULL ? NULL : PyObject_GetAttr(config, s_enable_x64);
    PyObject *k = x64 == NULL ? NULL : PyTuple_Pack(3, dtype, shape, x64);
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(x64);
    if (k == NULL)
        return NULL;
    PyObject *token = Py_XNewRef(PyDict_GetItemWithError(ndarray_tokens, k));
    Py_DECREF(k);
    if (token != NULL || PyErr_Occurred())
        return token;
    return PyObject_CallOneArg(host_leaf_key, arg);
}

/* flat_key(args): per argument its aval's token, or (token, sharding) for a committed
 * Array; other arguments host_leaf_key(arg).  Py_None (a new reference) where an
 * argument has no key (a container, a tracer): such calls are never cached here. */
static PyObject *flat_key(PyObject *args)
{
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *key = PyTuple_New(n);
    if (key == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = PyTuple_GET_ITEM(args, i), *item;
        if (Py_TYPE(arg) == array_type) {
            PyObject *aval = slot_get(aval_slot, arg);
            if (aval == NULL)
                goto error;
            PyObject *token = aval_token(aval);
            Py_DECREF(aval);
            if (token == NULL)
                goto error;
            PyObject *sharding = slot_get(sharding_slot, arg);
            if (sharding == NULL) {
                Py_DECREF(token);
                goto error;
            }
            if (sharding == Py_None) {
                item = token;
            } else {
                item = PyTuple_Pack(2, token, sharding);
                Py_DECREF(token);
            }
            Py_DECREF(sharding);
            if (item == NULL)
                goto error;
        } else {
            item = Py_TYPE(arg) == ndarray_type ? ndarray_token(arg)
                                                : PyObject_CallOneArg(host_leaf_key, arg);
            if (item == NULL)
                goto error;
            if (item == Py_None) {
                Py_DECREF(key);
                return item;
            }
        }
        PyTuple_SET_ITEM(key, i, item);
    }
    return key;
error:
    Py_DECREF(key);
    return NULL;
}

/* 1 when the evaluation trace is current in this thread (no transformation tracing). */
static int evaluating(void)
{
    PyObject *trace = PyObject_GetAttr(trace_state, s_trace);
    if (trace == NULL)
        return -1;
    int result = trace == eval_trace;
    Py_DECREF(trace);
    return result;
}

/* The entry's flat caller, made on its first use. */
static PyObject *entry_caller(PyObject *entry)
{
    PyObject *caller = PyObject_GetAttr(entry, s_flat_caller);
    if (caller == Py_None) {
        Py_DECREF(caller);
        caller = PyObject_CallMethodNoArgs(entry, s_make_flat_caller);
    }
    return caller;
}

/* Call the cache entry stored under key (stolen) on args, or NULL with no error set
 * where there is none or a transformation is tracing. */
static PyObject *call_entry(PyObject *cache, PyObject *key, PyObject *args)
{
    /* borrowed from the dict, which another thread may change: held at once */
    PyObject *entry = Py_XNewRef(PyDict_GetItemWithError(cache, key));
    Py_DECREF(key);
    if (entry == NULL)
        return NULL;
    int eval = evaluating();
    PyObject *caller = eval == 1 ? entry_caller(entry) : NULL;
    Py_DECREF(entry);
    if (caller == NULL)
        return NULL;
    PyObject *result = Py_TYPE(caller) == &FlatCallType
        ? flat_call_run((FlatCallObject *)caller, args)
        : PyObject_CallOneArg(caller, args);
    Py_DECREF(caller);
    return result;
}

/* Positional arguments that are Python containers: jaxlib's flatten gives the leaves
 * and the containers' treedef, and the key is (treedef, flat_key(leaves)), as
 * container_key in fast_dispatch.py.  NULL with no error set where not cached. */
static PyObject *container_call(PyObject *cache, PyObject *args)
{
    PyObject *flatten = PyObject_CallNoArgs(get_flatten);
    if (flatten == NULL || flatten == Py_None) {
        Py_XDECREF(flatten);
        return NULL;
    }
    PyObject *flat = PyObject_CallOneArg(flatten, args);
    Py_DECREF(flatten);
    if (flat == NULL) {
        /* a dict whose keys do not sort, ...: the full path decides */
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *leaves = NULL, *leaf_key = NULL, *result = NULL;
    if (!PyTuple_Check(flat) || PyTuple_GET_SIZE(flat) != 2) {
        PyErr_SetString(PyExc_TypeError, "_cdispatch: flatten must return (leaves, treedef)");
        goto done;
    }
    leaves = PySequence_Tuple(PyTuple_GET_ITEM(flat, 0));
    if (leaves == NULL)
        goto done;
    leaf_key = flat_key(leaves);
    if (leaf_key == NULL || leaf_key == Py_None)
        goto done;
    PyObject *key = PyTuple_Pack(2, PyTuple_GET_ITEM(flat, 1), leaf_key);
    if (key != NULL)
        result = call_entry(cache, key, leaves);
done:
    Py_DECREF(flat);
    Py_XDECREF(leaves);
    Py_XDECREF(leaf_key);
    return result;
}

/* The fast path: the result, or NULL with no error set where the call is not cached
 * here (then the slow path runs).  The caches are held by the caller. */
static PyObject *cached_call(PyObject *flat_cache, PyObject *container_cache, PyObject *args)
{
    if (PyDict_GET_SIZE(flat_cache) == 0 && PyDict_GET_SIZE(container_cache) == 0)
        return NULL;
    PyObject *checks = PyObject_GetAttr(config, s_dispatch_checks);
    if (checks == NULL)
        return NULL;
    int checking = PyObject_IsTrue(checks);
    Py_DECREF(checks);
    if (checking != 0)
        return NULL;
    PyObject *key = flat_key(args);
    if (key == NULL)
        return NULL;
    if (key != Py_None)
        return call_entry(flat_cache, key, args);
    Py_DECREF(key);
    return PyDict_GET_SIZE(container_cache) ? container_call(container_cache, args) : NULL;
}

static PyObject *fast_jit_call(PyObject *self, PyObject *args, PyObject *kwargs)
{
    /* Held while in use: another thread may replace a cache (clear_cache) while this
     * one runs Python code (a host argument's key). */
    PyObject *flat_cache = Py_XNewRef(((FastJitObject *)self)->flat_cache);
    PyObject *container_cache = Py_XNewRef(((FastJitObject *)self)->container_cache);
    int no_kwargs = kwargs == NULL || PyDict_GET_SIZE(kwargs) == 0;
    PyObject *result = NULL;
    if (no_kwargs && flat_cache != NULL && PyDict_CheckExact(flat_cache)
            && container_cache != NULL && PyDict_CheckExact(container_cache) && is_set_up())
        result = cached_call(flat_cache, container_cache, args);
    Py_XDECREF(flat_cache);
    Py_XDECREF(container_cache);
    if (result != NULL || PyErr_Occurred())
        return result;
    PyObject *slow_call = PyObject_GetAttr(self, s_slow_call);
    if (slow_call == NULL)
        return NULL;
    if (no_kwargs) {
        PyObject *empty = PyDict_New();
        result = empty == NULL ? NULL : PyObject_CallFunctionObjArgs(slow_call, args, empty,
                                                                     NULL);
        Py_XDECREF(empty);
    } else {
        result = PyObject_CallFunctionObjArgs(slow_call, args, kwargs, NULL);
    }
    Py_DECREF(slow_call);
    return result;
}

static int fast_jit_traverse(FastJitObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->flat_cache);
    Py_VISIT(self->container_cache);
    return 0;
}

static int fast_jit_clear(FastJitObject *self)
{
    Py_CLEAR(self->flat_cache);
    Py_CLEAR(self->container_cache);
    return 0;
}

static void fast_jit_dealloc(FastJitObject *self)
{
    PyObject_GC_UnTrack(self);
    fast_jit_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef fast_jit_members[] = {
    {"_flat_cache", T_OBJECT_EX, offsetof(FastJitObject, flat_cache), 0,
     "flat key -> cache entry: the calls the fast path serves"},
    {"_container_cache", T_OBJECT_EX, offsetof(FastJitObject, container_cache), 0,
     "container key -> cache entry: the calls over Python containers it serves"},
    {NULL},
};

static PyTypeObject FastJitType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "funcgraph._cdispatch.FastJit",
    .tp_doc = "Base class of JitFunction: its __call__ is the fast path, falling back to "
              "the method _slow_call(args, kwargs).",
    .tp_basicsize = sizeof(FastJitObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_call = fast_jit_call,
    .tp_members = fast_jit_members,
    .tp_traverse = (traverseproc)fast_jit_traverse,
    .tp_clear = (inquiry)fast_jit_clear,
    .tp_dealloc = (destructor)fast_jit_dealloc,
};

/* ---- the eager NumPy path -------------------------------------------------------- */

/* eager_numpy(impl, rule, args, params): the common case of EvalTrace's NumPy path
 * (interpreters/eval.py): every argument an uncommitted Array, one output.  The output
 * aval is rule(*avals, **params), the value impl(*values, **params) (NumPy), the result
 * Array(value, aval); `wrap(value, aval)` (eval.py's wrap_value) where the value is not of
 * the aval's dtype.  NotImplemented where an argument is anything else, is still being
 * computed by the device, or the work is large: then the Python path runs (and sends the
 * last two to the device). */
/* Element count from which an eager primitive runs compiled (interpreters/eval.py's
 * LARGE_OP_SIZE, given to setup). */
static Py_ssize_t large_op_size = PY_SSIZE_T_MAX;

/* Whether an aval has at least large_op_size elements: 1, 0, or -1 with an exception. */
static int is_large(PyObject *aval)
{
    PyObject *shape = PyObject_GetAttr(aval, s_shape);
    if (shape == NULL)
        return -1;
    if (!PyTuple_Check(shape)) {  /* not a plain shape: leave it to the Python path */
        Py_DECREF(shape);
        return 1;
    }
    Py_ssize_t size = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape) && size < large_op_size; i++) {
        Py_ssize_t d = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (d == -1 && PyErr_Occurred()) {  /* a symbolic dimension: the Python path */
            PyErr_Clear();
            Py_DECREF(shape);
            return 1;
        }
        size *= d;
    }
    Py_DECREF(shape);
    return size >= large_op_size;
}

/* Whether the device is still computing an Array held there only (its buffer is not
 * ready): 1, 0, or -1 with an exception set. */
static int being_computed(PyObject *array)
{
    PyObject *buf = slot_get(buf_slot, array);
    if (buf == NULL)
        return -1;
    if (buf == Py_None) {
        Py_DECREF(buf);
        return 0;
    }
    PyObject *ready = PyObject_CallMethodNoArgs(buf, s_is_ready);
    Py_DECREF(buf);
    if (ready == NULL)
        return -1;
    int is_ready = PyObject_IsTrue(ready);
    Py_DECREF(ready);
    return is_ready < 0 ? -1 : !is_ready;
}

static PyObject *eager_numpy(PyObject *module, PyObject *const *fargs, Py_ssize_t nargs)
{
    if (nargs != 4 || (fargs[3] != Py_None && !PyDict_Check(fargs[3]))) {
        PyErr_SetString(PyExc_TypeError, "eager_numpy(impl, rule, args, params: dict)");
        return NULL;
    }
    if (array_type == NULL || !PyTuple_Check(fargs[2]))
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *impl = fargs[0], *rule = fargs[1], *args = fargs[2];
    PyObject *params = fargs[3] == Py_None || PyDict_GET_SIZE(fargs[3]) == 0 ? NULL : fargs[3];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = PyTuple_GET_ITEM(args, i);
        if (Py_TYPE(arg) != array_type)
            Py_RETURN_NOTIMPLEMENTED;
        PyObject *sharding = slot_get(sharding_slot, arg);
        if (sharding == NULL)
            return NULL;
        Py_DECREF(sharding);
        if (sharding != Py_None)
            Py_RETURN_NOTIMPLEMENTED;
    }
    PyObject *values = PyTuple_New(n), *avals = PyTuple_New(n), *result = NULL;
    PyObject *out_aval = NULL, *out = NULL;
    if (values == NULL || avals == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = PyTuple_GET_ITEM(args, i);
        PyObject *value = slot_get(np_slot, arg);
        if (value == Py_None) {  /* held on the device only: Array._value fetches it */
            Py_DECREF(value);
            int computing = being_computed(arg);
            if (computing != 0) {  /* the Python path sends the primitive to the device */
                if (computing < 0)
                    goto done;
                result = Py_NewRef(Py_NotImplemented);
                goto done;
            }
            value = PyObject_GetAttr(arg, s_value);
        }
        if (value == NULL)
            goto done;
        PyTuple_SET_ITEM(values, i, value);
        PyObject *aval = slot_get(aval_slot, arg);
        if (aval == NULL)
            goto done;
        PyTuple_SET_ITEM(avals, i, aval);
    }
    out_aval = PyObject_Call(rule, avals, params);
    if (out_aval == NULL)
        goto done;
    /* large work (the result, or the first argument: a reduction's operand) runs
     * compiled: the Python path sends it there */
    for (Py_ssize_t i = -1; i < (n > 0 ? 1 : 0); i++) {
        int large = is_large(i < 0 ? out_aval : PyTuple_GET_ITEM(avals, i));
        if (large < 0)
            goto done;
        if (large) {
            result = Py_NewRef(Py_NotImplemented);
            goto done;
        }
    }
    {
        /* XLA's CPU code flushes subnormals: so does the NumPy op standing for it */
        ENTER_XLA_MODE
        out = PyObject_Call(impl, values, params);
        LEAVE_XLA_MODE
    }
    if (out == NULL)
        goto done;
    result = Py_TYPE(out) == array_type ? Py_NewRef(out) : NULL;
    if (result == NULL) {
        PyObject *dtype = PyObject_GetAttr(out, s_dtype);
        PyObject *aval_dtype = dtype == NULL ? NULL : PyObject_GetAttr(out_aval, s_dtype);
        int same = aval_dtype == NULL ? -1 : PyObject_RichCompareBool(dtype, aval_dtype, Py_EQ);
        Py_XDECREF(dtype);
        Py_XDECREF(aval_dtype);
        if (same == 1)
            result = new_host_array(out, out_aval);
        else if (same == 0)
            result = PyObject_CallFunctionObjArgs(wrap, out, out_aval, NULL);
    }
done:
    Py_XDECREF(values);
    Py_XDECREF(avals);
    Py_XDECREF(out_aval);
    Py_XDECREF(out);
    return result;
}

/* ---- setup ------------------------------------------------------------------------- */

static int member_slot(PyObject **slot, PyTypeObject *type, const char *name)
{
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL)
        return -1;
    if (Py_TYPE(descr) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
        Py_DECREF(descr);
        return -1;
    }
    Py_XSETREF(*slot, descr);
    return 0;
}

static PyObject *setup(PyObject *module, PyObject *args)
{
    PyObject *array, *aval, *state, *trace, *cfg, *host_key, *tokens, *flatten_getter, *wrap_fn;
    if (!PyArg_ParseTuple(args, "O!O!OOOOO!OOn:setup", &PyType_Type, &array, &PyType_Type, &aval,
                          &state, &trace, &cfg, &host_key, &PyDict_Type, &tokens,
                          &flatten_getter, &wrap_fn, &large_op_size))
        return NULL;
    PyObject *numpy = PyImport_ImportModule("numpy");
    PyObject *ndarray = numpy == NULL ? NULL : PyObject_GetAttrString(numpy, "ndarray");
    Py_XDECREF(numpy);
    if (ndarray == NULL)
        return NULL;
    if (!PyType_Check(ndarray)) {
        Py_DECREF(ndarray);
        PyErr_SetString(PyExc_TypeError, "setup: numpy.ndarray is not a type");
        return NULL;
    }
    Py_XSETREF(ndarray_type, (PyTypeObject *)ndarray);
    PyTypeObject *a = (PyTypeObject *)array, *s = (PyTypeObject *)aval;
    if (member_slot(&np_slot, a, "_np") < 0 || member_slot(&buf_slot, a, "_buf") < 0
        || member_slot(&aval_slot, a, "aval") < 0 || member_slot(&deleted_slot, a, "_deleted") < 0
        || member_slot(&sharding_slot, a, "_sharding") < 0
        || member_slot(&token_slot, s, "_token") < 0)
        return NULL;
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(array));
    Py_XSETREF(aval_type, (PyTypeObject *)Py_NewRef(aval));
    Py_XSETREF(trace_state, Py_NewRef(state));
    Py_XSETREF(eval_trace, Py_NewRef(trace));
    Py_XSETREF(config, Py_NewRef(cfg));
    Py_XSETREF(host_leaf_key, Py_NewRef(host_key));
    Py_XSETREF(ndarray_tokens, Py_NewRef(tokens));
    Py_XSETREF(get_flatten, Py_NewRef(flatten_getter));
    Py_XSETREF(wrap, Py_NewRef(wrap_fn));
    Py_RETURN_NONE;
}

static PyObject *flat_key_function(PyObject *module, PyObject *args)
{
    if (!is_set_up())
        return NULL;
    PyObject *seq = PySequence_Tuple(args);
    if (seq == NULL)
        return NULL;
    PyObject *key = flat_key(seq);
    Py_DECREF(seq);
    return key;
}

static PyMethodDef methods[] = {
    {"eager_numpy", (PyCFunction)(void (*)(void))eager_numpy, METH_FASTCALL,
     "eager_numpy(impl, rule, args, params): an eager NumPy op on uncommitted Arrays; "
     "NotImplemented for other arguments."},
    {"flat_key", flat_key_function, METH_O,
     "flat_key(args): the fast path's key of positional arguments (None: not keyed)."},
    {"setup", setup, METH_VARARGS,
     "setup(Array, ShapedArray, trace_state, eval_trace, config, host_leaf_key, "
     "ndarray_tokens, get_flatten, wrap): "
     "funcgraph's objects."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "funcgraph._cdispatch", "The jit fast path in C.", -1, methods,
};

static int intern(PyObject **name, const char *text)
{
    *name = PyUnicode_InternFromString(text);
    return *name == NULL ? -1 : 0;
}

PyMODINIT_FUNC PyInit__cdispatch(void)
{
    if (intern(&s_dispatch_checks, "dispatch_checks") < 0 || intern(&s_trace, "trace") < 0
        || intern(&s_token, "token") < 0 || intern(&s_value, "_value") < 0
        || intern(&s_dtype, "dtype") < 0 || intern(&s_shape, "shape") < 0
        || intern(&s_enable_x64, "jax_enable_x64") < 0
        || intern(&s_flat_caller, "flat_caller") < 0
        || intern(&s_make_flat_caller, "make_flat_caller") < 0
        || intern(&s_slow_call, "_slow_call") < 0
        || intern(&s_consume_with_handlers, "consume_with_handlers") < 0
        || intern(&s_is_ready, "is_ready") < 0)
        return NULL;
    if (PyType_Ready(&FlatCallType) < 0 || PyType_Ready(&FastJitType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "FlatCall", (PyObject *)&FlatCallType) < 0
        || PyModule_AddObjectRef(module, "FastJit", (PyObject *)&FastJitType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
