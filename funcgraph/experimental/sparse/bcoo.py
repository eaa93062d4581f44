"""BCOO: a sparse array as `data` (nse stored values, each followed by the n_dense
trailing dimensions) and `indices` (nse rows of n_sparse coordinates).  Rows past the
stored entries are padding: their coordinates equal the shape (out of bounds) and their
values are zero, so scatters drop them.  Everything is funcgraph.numpy on the two arrays,
so BCOO values pass through jit, grad and vmap as pytrees."""
import numpy as np

from funcgraph import core, dtypes, tree_util
import funcgraph.numpy as fnp


class JAXSparse:
    """The base of funcgraph's sparse array types (JAX's sparse.JAXSparse)."""
    data = indices = shape = None

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape))


def _unbatched(name, n_batch):
    if n_batch:
        raise NotImplementedError(f"{name}: BCOO arrays with batch dimensions (n_batch="
                                  f"{n_batch}) are not supported by funcgraph")


@tree_util.register_pytree_node_class
class BCOO(JAXSparse):
    """A sparse array in batched-coordinate format: BCOO((data, indices), shape=shape),
    data of shape (nse, *dense_dims), indices of shape (nse, n_sparse)."""

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        data, indices = args
        self.data, self.indices = fnp.asarray(data), fnp.asarray(indices)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices
        _unbatched("BCOO", self.n_batch)
        if self.n_dense < 0 or self.data.shape[1:] != self.shape[self.n_sparse:]:
            raise ValueError(f"BCOO: data of shape {self.data.shape} and indices of shape "
                             f"{self.indices.shape} do not describe an array of shape "
                             f"{self.shape}")

    n_batch = property(lambda self: self.indices.ndim - 2)
    n_sparse = property(lambda self: self.indices.shape[-1])
    n_dense = property(lambda self: len(self.shape) - self.n_batch - self.n_sparse)
    nse = property(lambda self: self.indices.shape[-2])

    def tree_flatten(self):
        return (self.data, self.indices), dict(shape=self.shape,
                                               indices_sorted=self.indices_sorted,
                                               unique_indices=self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux, children):
        out = object.__new__(cls)
        out.data, out.indices = children
        out.shape = aux["shape"]
        out.indices_sorted, out.unique_indices = aux["indices_sorted"], aux["unique_indices"]
        return out

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    def todense(self):
        return bcoo_todense(self)

    def transpose(self, axes=None):
        axes = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of "
                             f"{tuple(range(self.ndim))}")
        if self.n_dense:
            raise NotImplementedError("transpose of a BCOO array with dense dimensions is "
                                      "not supported by funcgraph")
        return BCOO((self.data, self.indices[:, list(axes)]),
                    shape=tuple(self.shape[a] for a in axes))

    @property
    def T(self):
        return self.transpose()

    def __matmul__(self, other):
        if isinstance(other, JAXSparse):
            return NotImplemented
        other = fnp.asarray(other)
        _matmul_ranks(self.ndim, other.ndim)
        return bcoo_dot_general(self, other, dimension_numbers=(
            ((self.ndim - 1,), (0,)), ((), ())))

    def __rmatmul__(self, other):
        other = fnp.asarray(other)
        _matmul_ranks(other.ndim, self.ndim)
        return bcoo_dot_general(other, self, dimension_numbers=(
            ((other.ndim - 1,), (0,)), ((), ())))

    def __mul__(self, other):
        if fnp.ndim(other) != 0:
            return NotImplemented  # elementwise products with arrays: not supported
        return BCOO((self.data * other, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __repr__(self):
        extra = f", n_dense={self.n_dense}" if self.n_dense else ""
        dims = ", ".join(map(str, self.shape))
        return f"BCOO({dtypes.name_of(self.dtype)}[{dims}], nse={self.nse}{extra})"


def _matmul_ranks(lhs_ndim, rhs_ndim):
    if not (1 <= lhs_ndim <= 2 and 1 <= rhs_ndim <= 2):
        raise NotImplementedError(f"matmul of a BCOO array: operands of rank 1 or 2, got "
                                  f"ranks {lhs_ndim} and {rhs_ndim} (batched products are "
                                  f"not supported by funcgraph)")


def bcoo_fromdense(mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
    """The BCOO array of mat's nonzero entries (nse of them: the count of nonzeros by
    default, which needs a concrete mat; more rows are padding, fewer drop the last)."""
    _unbatched("bcoo_fromdense", n_batch)
    mat = fnp.asarray(mat)
    n_sparse = mat.ndim - n_dense
    if n_sparse < 0:
        raise ValueError(f"bcoo_fromdense: n_dense={n_dense} exceeds the rank {mat.ndim}")
    mask = mat != 0
    if n_dense:
        mask = fnp.any(mask, axis=tuple(range(n_sparse, mat.ndim)))
    if nse is None:
        if isinstance(mask, core.Tracer):
            raise core.ConcretizationTypeError(
                "bcoo_fromdense: under a transformation, the number of stored entries "
                "cannot come from the values: pass nse=")
        nse = int(np.count_nonzero(np.asarray(mask)))
    sparse_shape = mat.shape[:n_sparse]
    coords = fnp.nonzero(mask, size=nse, fill_value=sparse_shape) if n_sparse else ()
    indices = (fnp.stack(coords, axis=1).astype(index_dtype) if n_sparse
               else fnp.zeros((nse, 0), index_dtype))
    inside = fnp.all(indices < fnp.array(sparse_shape, index_dtype), axis=1)
    values = mat[tuple(coords)] if n_sparse else fnp.broadcast_to(mat, (nse,) + mat.shape)
    inside = fnp.reshape(inside, (nse,) + (1,) * n_dense)
    data = fnp.where(inside, values, fnp.zeros((), mat.dtype))
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat):
    """The dense array of a BCOO array (duplicate coordinates add up)."""
    _unbatched("bcoo_todense", mat.n_batch)
    coords = tuple(mat.indices[:, d] for d in range(mat.n_sparse))
    out = fnp.zeros(mat.shape, mat.dtype)
    if not coords:
        return out + fnp.sum(mat.data, axis=0)
    return out.at[coords].add(mat.data, mode="drop")


def todense(arr):
    """A sparse array made dense; dense arrays pass through (JAX's sparse.todense)."""
    return bcoo_todense(arr) if isinstance(arr, BCOO) else arr


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """lax.dot_general where one operand is a BCOO array and the other dense: the
    result is dense, its dimensions lhs's free ones then rhs's."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs_batch or rhs_batch:
        raise NotImplementedError("bcoo_dot_general: batch dimensions are not supported "
                                  "by funcgraph")
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        raise NotImplementedError("bcoo_dot_general: products of two sparse arrays are "
                                  "not supported by funcgraph")
    if isinstance(lhs, BCOO):
        return _sparse_dense(lhs, fnp.asarray(rhs), tuple(lhs_contract), tuple(rhs_contract),
                             preferred_element_type)
    if not isinstance(rhs, BCOO):
        raise TypeError("bcoo_dot_general: one operand must be a BCOO array")
    lhs = fnp.asarray(lhs)
    out = _sparse_dense(rhs, lhs, tuple(rhs_contract), tuple(lhs_contract),
                        preferred_element_type)
    # out's dimensions are rhs's free ones then lhs's: move lhs's to the front.
    n_rhs_free = rhs.ndim - len(rhs_contract)
    return fnp.moveaxis(out, tuple(range(n_rhs_free, out.ndim)),
                        tuple(range(out.ndim - n_rhs_free)))


def _sparse_dense(sp, dense, sp_contract, dense_contract, preferred_element_type):
    """sp (BCOO) times dense over the paired contracting dimensions: each stored entry
    multiplies the slice of dense at its contracted coordinates, and the products add up
    at its free coordinates."""
    if sp.n_dense:
        raise NotImplementedError("bcoo_dot_general: BCOO operands with dense dimensions "
                                  "are not supported by funcgraph")
    if len(sp_contract) != len(dense_contract) or any(
            sp.shape[a] != dense.shape[b] for a, b in zip(sp_contract, dense_contract)):
        raise TypeError(f"bcoo_dot_general: contracting dimensions {sp_contract} of shape "
                        f"{sp.shape} and {dense_contract} of shape {dense.shape} differ")
    sp_free = [d for d in range(sp.ndim) if d not in sp_contract]
    dense_free = [d for d in range(dense.ndim) if d not in dense_contract]
    dtype = (fnp.result_type(sp.dtype, dense.dtype) if preferred_element_type is None
             else preferred_element_type)
    moved = fnp.transpose(dense, list(dense_contract) + dense_free)
    picked = moved[tuple(sp.indices[:, d] for d in sp_contract)]
    if not sp_contract:
        picked = fnp.broadcast_to(moved, (sp.nse,) + moved.shape)
    weights = fnp.reshape(sp.data, (sp.nse,) + (1,) * len(dense_free))
    products = (weights.astype(dtype) * picked.astype(dtype))
    out_shape = tuple(sp.shape[d] for d in sp_free) + tuple(dense.shape[d] for d in dense_free)
    if not sp_free:
        return fnp.sum(products, axis=0)
    return fnp.zeros(out_shape, dtype).at[tuple(sp.indices[:, d] for d in sp_free)].add(
        products, mode="drop")
