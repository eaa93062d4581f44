"""`jax.extend.linear_util`: jax's WrappedFun, a function plus a stack of generator
transformations, each of which may leave an auxiliary output in a Store.  Names:
WrappedFun, Store, EqualStore, StoreException, wrap_init, transformation(2),
transformation_with_aux(2), cache, merge_linear_aux, plus DebugInfo (jax's
core.DebugInfo record, which wrap_init carries).  Calling a WrappedFun is plain Python;
funcgraph's interpreters see only the flat function it stands for."""
import functools
import weakref
from typing import NamedTuple


class StoreException(Exception):
    pass


_EMPTY = object()


class Store:
    """A box filled once with a transformation's auxiliary output."""
    __slots__ = ("_val",)

    def __init__(self):
        self._val = _EMPTY

    def store(self, val):
        if self._val is not _EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self):
        self._val = _EMPTY

    @property
    def val(self):
        if self._val is _EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __bool__(self):
        return self._val is not _EMPTY


class EqualStore(Store):
    """A Store that accepts storing again a value equal to the one it holds."""
    __slots__ = ()

    def store(self, val):
        if self._val is not _EMPTY:
            try:
                same = bool(self._val == val)
            except Exception:
                same = False
            if not same:
                raise StoreException("Store occupied with not-equal value")
            return
        self._val = val


class DebugInfo(NamedTuple):
    """What a traced function was traced for, its name and source, the names of its
    flat arguments and results (jax's core.DebugInfo)."""
    traced_for: str
    func_src_info: str
    arg_names: tuple | None
    result_paths: tuple | None = None

    @property
    def func_name(self):
        return self.func_src_info.split(" ")[0] if self.func_src_info else "<unknown>"

    def replace_func_name(self, name):
        rest = self.func_src_info.split(" ", 1)
        return self._replace(func_src_info=" ".join([name] + rest[1:]))

    def safe_arg_names(self, expected_count):
        names = self.arg_names
        if names is not None and len(names) == expected_count:
            return names
        return ("",) * expected_count

    def safe_result_paths(self, expected_count):
        paths = self.result_paths
        if isinstance(paths, tuple) and len(paths) == expected_count:
            return paths
        return ("",) * expected_count

    def with_unknown_names(self):
        return self._replace(arg_names=None, result_paths=None)


def _missing_debug_info(for_what):
    return DebugInfo("missing_debug_info", "<missing_debug_info>", None, None)


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


class WrappedFun:
    """f with transformations applied: call_wrapped(*args) runs them; each (gen,
    static args) in `transforms` wraps the function below it; `stores` hold their
    auxiliary outputs (None for a transformation without one)."""
    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
                 "debug_info")

    def __init__(self, f, f_transformed, transforms, stores, params, in_type, debug_info):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self):
        return _name(self.f)

    def wrap(self, gen, gen_static_args, out_store):
        """This function with one more transformation `gen(inner, [store,] *static, ...)`."""
        extra = (gen_static_args if out_store is None
                 else (out_store,) + tuple(gen_static_args))
        return WrappedFun(self.f, functools.partial(gen, self.f_transformed, *extra),
                          ((gen, tuple(gen_static_args)),) + self.transforms,
                          (out_store,) + self.stores, self.params, None, self.debug_info)

    def populate_stores(self, stores):
        for mine, theirs in zip(self.stores, stores):
            if mine is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args, **kwargs):
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, debug_info):
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                          self.params, self.in_type, debug_info)

    def with_unknown_names(self):
        return self.replace_debug_info(self.debug_info.with_unknown_names())

    def __repr__(self):
        lines = [f"{i}   : {_name(gen)}   {args}" for i, (gen, args) in enumerate(self.transforms)]
        return "Wrapped function:\n" + "\n".join(lines) + f"\nCore: {_name(self.f)}\n"

    def __hash__(self):
        return hash((self.f, self.transforms, self.params, self.in_type))

    def __eq__(self, other):
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params
                and self.in_type == other.in_type)


def wrap_init(f, params=None, *, debug_info=None):
    """f as a WrappedFun with no transformations; `params` are keyword arguments that
    every call passes to f."""
    params = dict(params or {})
    debug_info = (debug_info or _missing_debug_info("linear_util.wrap_init"))
    debug_info = debug_info._replace(result_paths=None)
    return WrappedFun(f, functools.partial(f, **params), (), (),
                      tuple(sorted(params.items())), None, debug_info)


def _curry(decorator):
    """jax's curry: decorator(gen, ...) is a partial application, so `@decorator` on gen
    gives `gen(fun, *static)`."""
    return functools.wraps(decorator)(functools.partial(functools.partial, decorator))


@_curry
def transformation2(gen, fun, *gen_static_args):
    """fun with `gen(inner_fun, *gen_static_args, *args, **kwargs)` applied."""
    return fun.wrap(gen, gen_static_args, None)


@_curry
def transformation_with_aux2(gen, fun, *gen_static_args, use_eq_store=False,
                             unk_names=False):
    """(fun with `gen(inner_fun, store, *gen_static_args, *args)` applied, a thunk
    reading the store)."""
    store = EqualStore() if use_eq_store else Store()
    fun = fun.wrap(gen, gen_static_args, store)
    if unk_names:
        fun = fun.with_unknown_names()
    return fun, lambda: store.val


@_curry
def transformation(gen, fun, *gen_static_args):
    """The older generator protocol: gen(*static, *args) yields (args, kwargs) for the
    inner function, receives its result and yields the final result."""
    def run(inner, *args, **kwargs):
        coroutine = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(coroutine)
        return coroutine.send(inner(*inner_args, **inner_kwargs))
    return transformation2(run, fun, *gen_static_args)()


@_curry
def transformation_with_aux(gen, fun, *gen_static_args, use_eq_store=False):
    """The older generator protocol whose final yield is (result, aux)."""
    def run(inner, store, *args, **kwargs):
        coroutine = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(coroutine)
        out, aux = coroutine.send(inner(*inner_args, **inner_kwargs))
        store.store(aux)
        return out
    return transformation_with_aux2(run, fun, *gen_static_args, use_eq_store=use_eq_store)()


def cache(call, *, explain=None):
    """Memoize call(fun: WrappedFun, *args) on fun's function, transformations, params
    and args; a hit copies the stored auxiliary outputs into fun's stores."""
    del explain
    caches = weakref.WeakKeyDictionary()

    def memoized(fun, *args):
        try:
            table = caches.setdefault(fun.f, {})
        except TypeError:
            return call(fun, *args)
        key = (fun.transforms, fun.params, fun.in_type, args)
        hit = table.get(key)
        if hit is not None:
            ans, stores = hit
            fun.populate_stores(stores)
            return ans
        ans = call(fun, *args)
        table[key] = (ans, fun.stores)
        return ans

    memoized.cache_clear = caches.clear
    memoized.evict_function = lambda f: caches.pop(f, None)
    return memoized


def merge_linear_aux(aux1, aux2):
    """(True, aux1()) or (False, aux2()): whichever of two thunks has its store filled."""
    try:
        out = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, out
    raise StoreException("both stores occupied")


__all__ = ["DebugInfo", "EqualStore", "Store", "StoreException", "WrappedFun", "cache",
           "merge_linear_aux", "transformation", "transformation2",
           "transformation_with_aux", "transformation_with_aux2", "wrap_init"]
