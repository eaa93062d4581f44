"""Gaussian kernel density estimation (as JAX's scipy.stats.gaussian_kde), a pytree."""
import numpy as np

from funcgraph import random, tree_util
from funcgraph import numpy as fnp
from funcgraph.numpy import linalg as fla
from funcgraph.scipy import linalg as fsla
from funcgraph.scipy import special


def _weighted_covariance(dataset, weights):
    """The unbiased covariance of the rows' variables with normalized weights (numpy's
    cov(rowvar=True, aweights=weights) for weights summing to 1)."""
    mean = fnp.sum(dataset * weights, axis=1, keepdims=True)
    centered = dataset - mean
    return (centered * weights) @ centered.T / (1 - fnp.sum(weights * weights))


def _bandwidth_factor(kde, bw_method, d):
    if bw_method is None or bw_method == "scott":
        return fnp.power(kde.neff, -1.0 / (d + 4))
    if bw_method == "silverman":
        return fnp.power(kde.neff * (d + 2) / 4.0, -1.0 / (d + 4))
    if np.ndim(bw_method) == 0 and not isinstance(bw_method, str) \
            and not callable(bw_method):
        return fnp.asarray(bw_method)
    if callable(bw_method):
        return bw_method(kde)
    raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")


@tree_util.register_pytree_node_class
class gaussian_kde:  # noqa: N801 -- jax's name
    """A Gaussian KDE of `dataset` ((n,) or (d, n)), optionally weighted; the bandwidth by
    Scott's or Silverman's rule, a scalar factor or a callable of the kde."""

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = fnp.atleast_2d(fnp.asarray(dataset))
        if fnp.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is None:
            dataset = dataset.astype(fnp.result_type(dataset, float))
            weights = fnp.full((n,), 1.0 / n, dtype=dataset.dtype)
        else:
            weights = fnp.atleast_1d(fnp.asarray(weights))
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
            dtype = fnp.result_type(dataset, weights, float)
            dataset, weights = dataset.astype(dtype), weights.astype(dtype)
            weights = weights / fnp.sum(weights)
        self.dataset, self.weights = dataset, weights
        self.neff = 1 / fnp.sum(weights ** 2)
        factor = _bandwidth_factor(self, bw_method, d)
        data_covariance = fnp.atleast_2d(_weighted_covariance(dataset, weights))
        self.covariance = data_covariance * factor ** 2
        self.inv_cov = fla.inv(data_covariance) / factor ** 2

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def _points(self, points):
        points = fnp.atleast_2d(fnp.asarray(points))
        if fnp.issubdtype(points.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return fnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _log_kernels(self, points):
        """log(weight_j) + log N(point_i; data_j, covariance), shape (m, n)."""
        points = self._points(points)
        points = points.astype(fnp.result_type(points, self.dataset))
        whitening = fla.cholesky(self.inv_cov)
        data_w = self.dataset.T @ whitening
        points_w = points.T @ whitening
        log_norm = fnp.sum(fnp.log(fnp.diagonal(whitening))) - 0.5 * self.d * np.log(2 * np.pi)
        squared = fnp.sum((points_w[:, None, :] - data_w[None, :, :]) ** 2, axis=-1)
        return fnp.log(self.weights)[None, :] + log_norm - 0.5 * squared

    def evaluate(self, points):
        return fnp.sum(fnp.exp(self._log_kernels(points)), axis=1)

    __call__ = evaluate
    pdf = evaluate

    def logpdf(self, x):
        return special.logsumexp(self._log_kernels(x), axis=1)

    def _convolve(self, factor, norm, target, weights, mean):
        diff = target - mean[:, None]
        alpha = fsla.cho_solve(factor, diff)
        return norm * fnp.sum(fnp.exp(-0.5 * fnp.sum(diff * alpha, axis=0)) * weights)

    def _gaussian_norm(self, covariance):
        factor = fsla.cho_factor(covariance)
        norm = 1.0 / (np.sqrt(2 * np.pi) ** self.d * fnp.prod(fnp.diagonal(factor[0])))
        return factor, norm

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian N(mean, cov)."""
        mean = fnp.atleast_1d(fnp.squeeze(fnp.asarray(mean)))
        cov = fnp.atleast_2d(fnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        factor, norm = self._gaussian_norm(self.covariance + cov)
        return self._convolve(factor, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The mass of a 1-D density between low and high."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = fnp.squeeze(fnp.sqrt(self.covariance))
        low = fnp.squeeze((low - self.dataset) / sigma)
        high = fnp.squeeze((high - self.dataset) / sigma)
        return fnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other):
        """The integral of the product of two KDE densities."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        factor, norm = self._gaussian_norm(self.covariance + other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        values = fnp.stack([self._convolve(factor, norm, large.dataset, large.weights,
                                           small.dataset[:, j]) for j in range(small.n)])
        return fnp.sum(values * small.weights)

    def resample(self, key, shape=()):
        """Draws of shape (d,) + shape: a data point chosen by weight plus kernel noise."""
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, fnp.zeros(self.d, self.covariance.dtype),
                                           self.covariance, shape=shape,
                                           dtype=self.dataset.dtype).T
        return self.dataset[:, index] + noise

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")
