"""The primitive objects under their JAX's lax names (`lax.exp_p`, `lax.dot_general_p`,
...), for custom interpreters keyed by primitive (`registry[lax.exp_p] = ...`)."""
# ruff: noqa: F401
from funcgraph.primitives.base import broadcast_in_dim_p, reduce_sum_p, reshape_p, transpose_p
from funcgraph.primitives.elementwise import (
    abs_p, acos_p, acosh_p, add_p, and_p, asin_p, asinh_p, atan2_p, atan_p, atanh_p,
    bitcast_convert_type_p, cbrt_p, ceil_p, clamp_p, clz_p, complex_p, conj_p,
    convert_element_type_p, copy_p, cos_p, cosh_p, digamma_p, div_p, eq_p, eq_to_p, erf_inv_p,
    erf_p, erfc_p, exp2_p, exp_p, expm1_p, floor_p, ge_p, gt_p, imag_p, integer_pow_p,
    is_finite_p, le_p, le_to_p, lgamma_p, log1p_p, log_p, logistic_p, lt_p, lt_to_p, max_p,
    min_p, mul_p, ne_p, neg_p,
    nextafter_p, not_p, or_p, polygamma_p, population_count_p, pow_p, real_p,
    reduce_precision_p, rem_p, round_p, rsqrt_p, select_n_p, shift_left_p,
    shift_right_arithmetic_p, shift_right_logical_p, sign_p, sin_p, sinh_p, sqrt_p, square_p,
    sub_p, tan_p, tanh_p, xor_p, zeta_p)
from funcgraph.primitives.structural import (
    concatenate_p, iota_p, pad_p, rev_p, slice_p, split_p, squeeze_p, stack_p, tile_p,
    unstack_p)
from funcgraph.primitives.reductions import (
    argmax_p, argmin_p, cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p,
    reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p, reduce_prod_p,
    reduce_xor_p)
from funcgraph.primitives.slicing import (
    dynamic_slice_p, dynamic_update_slice_p, gather_p, scatter_add_p, scatter_max_p,
    scatter_min_p, scatter_mul_p, scatter_p)
from funcgraph.primitives.contractions import dot_general_p
from funcgraph.primitives.sorting import sort_p, top_k_p
from funcgraph.primitives.convolution import conv_general_dilated_p
from funcgraph.primitives.windowed import (
    reduce_p, reduce_window_max_p, reduce_window_min_p, reduce_window_p,
    reduce_window_sum_p, select_and_gather_add_p, select_and_scatter_add_p)
from funcgraph.primitives.collectives import (
    all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p, psum_p,
    pvary_p, reduce_scatter_p)
from funcgraph.primitives.control_flow import cond_p, scan_p, while_p
from funcgraph.primitives.custom_ad import stop_gradient_p
from funcgraph.primitives.remat import optimization_barrier_p
from funcgraph.primitives.fft import fft_p
from funcgraph.primitives.linear_solve import linear_solve_p
from funcgraph.primitives.sharding_constraint import sharding_constraint_p
from funcgraph.lax._special import (
    bessel_i0e_p, bessel_i1e_p, igamma_grad_a_p, igamma_p, igammac_p,
    regularized_incomplete_beta_p)
