/* funcgraph._source: the user's source line of an equation, found in C.
 *
 * Tracing records, for every equation, the innermost frame of the call stack outside
 * funcgraph (core.user_source_info).  Walking the frames in Python costs about a
 * quarter of the time of tracing an elementwise op; this module walks them with the
 * same rule, and core.py keeps the Python version as the reference and the fallback
 * where this module was not built (no C compiler).
 *
 *   user_frame(skip, excluded, prefixes, marker, replayed)
 *       Walk from the caller's frame, `skip` frames up (1: the caller's caller), to the
 *       first frame whose file is not excluded: its (file, line, function).  A file is
 *       excluded where it starts with one of `prefixes`; `excluded` caches that per
 *       file name (a dict, filled here).  Where the walk passes the frame `marker`
 *       while `replayed` is not None, `replayed` is the answer (the source of an
 *       equation being replayed, core._ReplayScope).  None past the outermost frame.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

/* Whether a file name is excluded: 1, 0, or -1 with an exception set. */
static int is_excluded(PyObject *filename, PyObject *excluded, PyObject *prefixes)
{
    PyObject *known = PyDict_GetItemWithError(excluded, filename);
    if (known != NULL)
        return known == Py_True;
    if (PyErr_Occurred())
        return -1;
    static PyObject *startswith = NULL;
    if (startswith == NULL && (startswith = PyUnicode_InternFromString("startswith")) == NULL)
        return -1;
    PyObject *answer = PyObject_CallMethodOneArg(filename, startswith, prefixes);
    if (answer == NULL)
        return -1;
    int result = PyDict_SetItem(excluded, filename, answer) < 0 ? -1 : answer == Py_True;
    Py_DECREF(answer);
    return result;
}

static PyObject *user_frame(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyLong_Check(args[0]) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "user_frame(skip: int, excluded: dict, prefixes, marker, replayed)");
        return NULL;
    }
    Py_ssize_t skip = PyLong_AsSsize_t(args[0]);
    if (skip == -1 && PyErr_Occurred())
        return NULL;
    PyObject *excluded = args[1], *prefixes = args[2], *marker = args[3], *replayed = args[4];
    PyFrameObject *frame = PyEval_GetFrame();  /* borrowed: the caller's frame */
    Py_XINCREF(frame);
    for (Py_ssize_t i = 0; i < skip && frame != NULL; i++) {
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    while (frame != NULL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        PyObject *filename = code->co_filename;
        int skip_it = is_excluded(filename, excluded, prefixes);
        if (skip_it < 0) {
            Py_DECREF(code);
            Py_DECREF(frame);
            return NULL;
        }
        if (!skip_it) {
            PyObject *line = PyLong_FromLong(PyFrame_GetLineNumber(frame));
            PyObject *result = line == NULL ? NULL
                : PyTuple_Pack(3, filename, line, code->co_name);
            Py_XDECREF(line);
            Py_DECREF(code);
            Py_DECREF(frame);
            return result;
        }
        Py_DECREF(code);
        if ((PyObject *)frame == marker && replayed != Py_None) {
            Py_DECREF(frame);
            return Py_NewRef(replayed);
        }
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"user_frame", (PyCFunction)(void (*)(void))user_frame, METH_FASTCALL,
     "user_frame(skip, excluded, prefixes, marker, replayed): (file, line, function) of "
     "the innermost frame outside the excluded files, `skip` frames above the caller's."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "funcgraph._source",
    "The user's source line of an equation, found in C (see core.user_source_info).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__source(void)
{
    return PyModule_Create(&module_def);
}
