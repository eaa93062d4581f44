"""`jax._src.traceback_util`: the names libraries use to hide their own frames
(register_exclusion, _exclude_paths, include_frame, include_filename, api_boundary).
funcgraph does not rewrite tracebacks: api_boundary only wraps, and the paths tell
include_frame which frames are library code (funcgraph's own files always are)."""
import functools

from funcgraph import core

# The excluded path prefixes (libraries add and remove entries directly).
_exclude_paths = [core._PACKAGE_DIR]


def register_exclusion(path):
    _exclude_paths.append(path)


def include_filename(filename):
    return not any(filename.startswith(path) for path in _exclude_paths)


def include_frame(f):
    return include_filename(f.f_code.co_filename)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    """Mark fun as an entry point of a library's API (jax filters the library's frames
    out of tracebacks raised through it; funcgraph keeps tracebacks whole)."""
    del repro_api_name, repro_user_func
    if fun is None:
        return api_boundary

    @functools.wraps(fun)
    def boundary(*args, **kwargs):
        return fun(*args, **kwargs)
    return boundary
