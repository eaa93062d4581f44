"""`jax._src.source_info_util` (and `jax.extend.source_info_util`): source lines and
name stacks under jax's names (SourceInfo, NameStack, current, current_name_stack,
extend_name_stack, set_name_stack, reset_name_stack, new_name_stack,
transform_name_stack, new_source_info, summarize, user_context, register_exclusion),
over funcgraph's: an equation's source is the innermost frame outside the excluded
files (funcgraph.core.user_source_info), its names those of the enclosing
named_scopes (funcgraph.core.current.name_stack)."""
import contextlib
import functools
import sys
import threading
from typing import NamedTuple

from funcgraph import core


class Frame(NamedTuple):
    file_name: str
    function_name: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int


class Scope(NamedTuple):
    name: str

    def wrap(self, stack):
        stack.append(self.name)


class Transform(NamedTuple):
    name: str

    def wrap(self, stack):
        if stack:
            stack[-1] = f"{self.name}({stack[-1]})"
        else:
            stack.append(f"{self.name}()")


class NameStack:
    """A stack of scope names and transformation names; str gives 'outer/jvp(inner)'."""
    __slots__ = ("stack",)

    def __init__(self, stack=()):
        self.stack = tuple(stack)

    def extend(self, name):
        return NameStack(self.stack + (Scope(name),))

    def transform(self, transform_name):
        return NameStack(self.stack + (Transform(transform_name),))

    def __getitem__(self, idx):
        return NameStack(self.stack[idx])

    def __len__(self):
        return len(self.stack)

    def __add__(self, other):
        return NameStack(self.stack + other.stack)

    def __radd__(self, other):
        return NameStack(other.stack + self.stack)

    def __eq__(self, other):
        return isinstance(other, NameStack) and self.stack == other.stack

    def __hash__(self):
        return hash(self.stack)

    def __str__(self):
        names = []
        for elem in reversed(self.stack):
            elem.wrap(names)
        return "/".join(reversed(names))

    def __repr__(self):
        return f"NameStack(stack={self.stack!r})"


def new_name_stack(name=""):
    return NameStack((Scope(name),) if name else ())


class SourceInfo:
    """Where an equation comes from: `traceback` (funcgraph keeps the user frame as
    (file, line, function)) and its name stack."""
    __slots__ = ("traceback", "name_stack")

    def __init__(self, traceback, name_stack):
        self.traceback = traceback
        self.name_stack = name_stack

    def replace(self, *, traceback=None, name_stack=None):
        return SourceInfo(self.traceback if traceback is None else traceback,
                          self.name_stack if name_stack is None else name_stack)


def new_source_info():
    return SourceInfo(None, NameStack())


def register_exclusion(path):
    """Frames of files under `path` are not user frames (equations get the line of the
    code that called into them)."""
    core.exclude_source_path(path)


def is_user_filename(filename):
    return not filename.startswith(core.excluded_source_paths)


def _user_frame():
    frame = sys._getframe(1)
    while frame is not None and not is_user_filename(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    return (code.co_filename, frame.f_lineno, code.co_name)


class _LastSet(threading.local):
    """The NameStack set last in this thread and the names it gave funcgraph (so that
    its transformation entries survive a round trip through funcgraph's plain names)."""
    names = None
    stack = None


_last = _LastSet()


def current_name_stack():
    names = core.current.name_stack
    if names == _last.names:
        return _last.stack
    return NameStack(Scope(name) for name in names)


def current():
    return SourceInfo(_user_frame(), current_name_stack())


def summarize(source_info, num_frames=1):
    """'file:line (function)' of the user frame, or 'unknown'."""
    del num_frames
    frame = source_info.traceback
    if not frame:
        return "unknown"
    file, line, function = frame[:3]
    return f"{file}:{line} ({function})"


def _names_of(name_stack):
    """funcgraph's name stack (a tuple of names, as jax prints them) for a NameStack."""
    text = str(name_stack)
    return tuple(text.split("/")) if text else ()


class _NameStackContext:
    """A context manager (and function decorator) that sets funcgraph's name stack to
    what `make(current NameStack)` returns for its duration."""
    __slots__ = ("make", "saved")

    def __init__(self, make):
        self.make = make

    def __enter__(self):
        self.saved = (core.current.name_stack, _last.names, _last.stack)
        stack = self.make(current_name_stack())
        core.current.name_stack = _last.names = _names_of(stack)
        _last.stack = stack
        return stack

    def __exit__(self, *exc):
        core.current.name_stack, _last.names, _last.stack = self.saved

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with _NameStackContext(self.make):
                return func(*args, **kwargs)
        return wrapper


def extend_name_stack(name):
    return _NameStackContext(lambda stack: stack.extend(name))


def transform_name_stack(name):
    return _NameStackContext(lambda stack: stack.transform(name))


def set_name_stack(name_stack):
    return _NameStackContext(lambda stack: name_stack)


def reset_name_stack():
    return _NameStackContext(lambda stack: NameStack())


@contextlib.contextmanager
def user_context(traceback, *, name_stack=None):
    """Equations bound inside carry `name_stack` (when given)."""
    del traceback
    if name_stack is None:
        yield
        return
    with set_name_stack(name_stack):
        yield
