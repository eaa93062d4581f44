"""Neural-network layers as (init_fun, apply_fun) pairs, with the API of
jax.example_libraries.stax:

    init_fun, apply_fun = stax.serial(stax.Dense(64), stax.Relu, stax.Dense(10))
    out_shape, params = init_fun(key, (-1, 784))
    logits = apply_fun(params, inputs)

init_fun(rng, input_shape) -> (output_shape, params); apply_fun(params, inputs, **kw)."""
import functools
import math

import funcgraph.numpy as fnp
from funcgraph import lax, random
from funcgraph.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                          softplus, standardize)
from funcgraph.nn.initializers import glorot_normal, normal, ones, zeros


# Old spellings jax's stax still exports.
logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        params = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return fnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape):
    spatial = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(spatial) for c in rhs_spec]


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """A convolution with the given (lhs, rhs, out) layout specs, e.g. NHWC, HWIO, NHWC."""
    one = (1,) * len(filter_shape)
    strides = strides or one
    init_fun = _conv_init(lax.conv_general_shape_tuple, dimension_numbers, out_chan,
                          filter_shape, strides, padding, W_init, b_init)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """A transposed convolution with the given layout specs."""
    strides = strides or (1,) * len(filter_shape)
    init_fun = _conv_init(lax.conv_transpose_shape_tuple, dimension_numbers, out_chan,
                          filter_shape, strides, padding, W_init, b_init)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


def _conv_init(output_shape_of, dimension_numbers, out_chan, filter_shape, strides, padding,
               W_init, b_init):
    """The init_fun of a (transposed) convolution layer: kernel and bias of the layout's
    shapes; output_shape_of gives the layer's output shape."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = output_shape_of(input_shape, kernel_shape, strides, padding,
                                       dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))
    return init_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalize over `axis` (batch statistics), then scale by gamma and shift by beta."""
    axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(fnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        return z + beta[expand] if center else z
    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying fun to its input."""
    return (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs))


Tanh = elementwise(fnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(fnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _window_with_batch_and_channel(window_shape, strides, spec):
    non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"),
                                                                   spec.index("C"))
    for i in sorted(non_spatial):
        window_shape = window_shape[:i] + (1,) + window_shape[i:]
        strides = strides[:i] + (1,) + strides[i:]
    return window_shape, strides


def _pooling_layer(reducer, init_val, average=False):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        spatial_window, spatial_strides = window_shape, strides or (1,) * len(window_shape)
        dims, steps = _window_with_batch_and_channel(spatial_window, spatial_strides, spec)

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, dims, steps, padding)
            ones_ = (1,) * len(dims)
            return lax.reduce_window_shape_tuple(input_shape, dims, steps, pads, ones_,
                                                 ones_), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            if not average:
                return out
            # Divide by the number of elements each window covered (padding excluded).
            non_spatial = (0, inputs.ndim - 1) if spec is None else (spec.index("N"),
                                                                     spec.index("C"))
            spatial_shape = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
            counts = lax.reduce_window(fnp.ones(spatial_shape, inputs.dtype), 0., lax.add,
                                       spatial_window, spatial_strides, padding)
            for i in sorted(non_spatial):
                counts = fnp.expand_dims(counts, i)
            return out / counts
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -fnp.inf)
SumPool = _pooling_layer(lax.add, 0.)
AvgPool = _pooling_layer(lax.add, 0., average=True)


def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


Flatten = (_flatten_init,
           lambda params, inputs, **kwargs: fnp.reshape(inputs, (inputs.shape[0], -1)))
Identity = (lambda rng, input_shape: (input_shape, ()),
            lambda params, inputs, **kwargs: inputs)


def FanOut(num):
    """Copy the input `num` times (a list), for parallel."""
    return (lambda rng, input_shape: ([input_shape] * num, ()),
            lambda params, inputs, **kwargs: [inputs] * num)


FanInSum = (lambda rng, input_shape: (input_shape[0], ()),
            lambda params, inputs, **kwargs: sum(inputs))


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:]
        return out_shape, ()
    return init_fun, lambda params, inputs, **kwargs: fnp.concatenate(inputs, axis)


def Dropout(rate, mode="train"):
    """Keep each input with probability `rate` (scaled by 1/rate) when mode is 'train';
    apply_fun needs rng=key then."""
    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument: apply_fun(params, inputs, rng=key)")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return fnp.where(keep, inputs / rate, 0)
    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def serial(*layers):
    """The layers one after another."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        for fun, param, layer_rng in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers):
    """The layers side by side, each on its own element of a list of inputs."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape,
                                                              strict=True)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, len(layers)) if rng is not None else (None,) * len(layers)
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)]
    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built by make_layer(input_shape) once the input shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
