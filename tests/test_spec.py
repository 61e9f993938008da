"""Tests of the machine-readable op spec (spec/) and its loader (stablehlo_ref.spec).

The tables below are held here on purpose, independently of the spec files, so
that a spec edit that drops an op or moves a VHLO window makes a test fail.
They restate upstream facts: every VHLO_Op<name, min, max> of VhloOps.td, every
op defined in StablehloOps.td and ChloOps.td, and every element type of
VhloTypes.td with the version that introduced it.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from stablehlo_ref import spec

SPEC_DIR = Path(__file__).resolve().parent.parent / "spec"
OP_FILES = sorted(SPEC_DIR.glob("ops/*/*.yaml"))

VHLO_OP_WINDOWS = {
    'vhlo.abs_v1': ('0.9.0', 'current'),
    'vhlo.add_v1': ('0.9.0', 'current'),
    'vhlo.after_all_v1': ('0.9.0', 'current'),
    'vhlo.all_gather_v1': ('0.9.0', '1.4.0'),
    'vhlo.all_gather_v2': ('1.5.0', 'current'),
    'vhlo.all_reduce_v1': ('0.9.0', '1.4.0'),
    'vhlo.all_reduce_v2': ('1.5.0', 'current'),
    'vhlo.all_to_all_v1': ('0.9.0', '1.4.0'),
    'vhlo.all_to_all_v2': ('1.5.0', 'current'),
    'vhlo.and_v1': ('0.9.0', 'current'),
    'vhlo.async_done_v1': ('1.15.0', 'current'),
    'vhlo.async_start_v1': ('1.15.0', 'current'),
    'vhlo.atan2_v1': ('0.9.0', 'current'),
    'vhlo.batch_norm_grad_v1': ('0.9.0', 'current'),
    'vhlo.batch_norm_inference_v1': ('0.9.0', 'current'),
    'vhlo.batch_norm_training_v1': ('0.9.0', 'current'),
    'vhlo.bitcast_convert_v1': ('0.9.0', 'current'),
    'vhlo.broadcast_in_dim_v1': ('0.9.0', 'current'),
    'vhlo.broadcast_v1': ('0.9.0', 'current'),
    'vhlo.call_v1': ('0.9.0', 'current'),
    'vhlo.case_v1': ('0.9.0', 'current'),
    'vhlo.cbrt_v1': ('0.9.0', '1.9.0'),
    'vhlo.cbrt_v2': ('1.10.0', 'current'),
    'vhlo.ceil_v1': ('0.9.0', 'current'),
    'vhlo.cholesky_v1': ('0.9.0', 'current'),
    'vhlo.clamp_v1': ('0.9.0', 'current'),
    'vhlo.collective_broadcast_v1': ('0.16.0', '1.19.0'),
    'vhlo.collective_broadcast_v2': ('1.20.0', 'current'),
    'vhlo.collective_permute_v1': ('0.9.0', 'current'),
    'vhlo.collective_reduce_v1': ('1.19.0', 'current'),
    'vhlo.compare_v1': ('0.9.0', 'current'),
    'vhlo.complex_v1': ('0.9.0', 'current'),
    'vhlo.composite_v1': ('0.19.0', '1.13.0'),
    'vhlo.composite_v2': ('1.14.0', 'current'),
    'vhlo.concatenate_v1': ('0.9.0', 'current'),
    'vhlo.constant_v1': ('0.9.0', 'current'),
    'vhlo.convert_v1': ('0.9.0', 'current'),
    'vhlo.convolution_v1': ('0.9.0', 'current'),
    'vhlo.cosine_v1': ('0.9.0', '1.9.0'),
    'vhlo.cosine_v2': ('1.10.0', 'current'),
    'vhlo.count_leading_zeros_v1': ('0.9.0', 'current'),
    'vhlo.create_token_v1': ('0.9.0', 'current'),
    'vhlo.cross-replica-sum_v1': ('0.9.0', 'current'),
    'vhlo.custom_call_v1': ('0.9.0', '1.17.0'),
    'vhlo.custom_call_v2': ('1.18.0', 'current'),
    'vhlo.divide_v1': ('0.9.0', 'current'),
    'vhlo.dot_general_v1': ('0.9.0', '1.5.0'),
    'vhlo.dot_general_v2': ('1.6.0', 'current'),
    'vhlo.dot_v1': ('0.9.0', 'current'),
    'vhlo.dynamic_broadcast_in_dim_v1': ('0.9.0', 'current'),
    'vhlo.dynamic_conv_v1': ('0.9.0', '0.19.0'),
    'vhlo.dynamic_conv_v2': ('0.20.0', 'current'),
    'vhlo.dynamic_gather_v1': ('0.9.0', '1.0.0'),
    'vhlo.dynamic_gather_v2': ('1.1.0', 'current'),
    'vhlo.dynamic_iota_v1': ('0.9.0', 'current'),
    'vhlo.dynamic_pad_v1': ('0.9.0', 'current'),
    'vhlo.dynamic_reshape_v1': ('0.9.0', 'current'),
    'vhlo.dynamic_slice_v1': ('0.9.0', 'current'),
    'vhlo.dynamic_update_slice_v1': ('0.9.0', 'current'),
    'vhlo.einsum_v1': ('0.9.0', 'current'),
    'vhlo.exponential_minus_one_v1': ('0.9.0', '1.9.0'),
    'vhlo.exponential_minus_one_v2': ('1.10.0', 'current'),
    'vhlo.exponential_v1': ('0.9.0', '1.8.0'),
    'vhlo.exponential_v2': ('1.9.0', 'current'),
    'vhlo.fft_v1': ('0.9.0', 'current'),
    'vhlo.floor_v1': ('0.9.0', 'current'),
    'vhlo.func_v1': ('0.9.0', 'current'),
    'vhlo.gather_v1': ('0.9.0', '1.0.0'),
    'vhlo.gather_v2': ('1.1.0', 'current'),
    'vhlo.get_dimension_size_v1': ('0.9.0', 'current'),
    'vhlo.get_tuple_element_v1': ('0.9.0', 'current'),
    'vhlo.if_v1': ('0.9.0', 'current'),
    'vhlo.imag_v1': ('0.9.0', 'current'),
    'vhlo.infeed_v1': ('0.9.0', 'current'),
    'vhlo.iota_v1': ('0.9.0', 'current'),
    'vhlo.is_finite_v1': ('0.9.0', 'current'),
    'vhlo.log_plus_one_v1': ('0.9.0', '1.9.0'),
    'vhlo.log_plus_one_v2': ('1.10.0', 'current'),
    'vhlo.log_v1': ('0.9.0', '1.9.0'),
    'vhlo.log_v2': ('1.10.0', 'current'),
    'vhlo.logistic_v1': ('0.9.0', '1.9.0'),
    'vhlo.logistic_v2': ('1.10.0', 'current'),
    'vhlo.map_v1': ('0.9.0', 'current'),
    'vhlo.maximum_v1': ('0.9.0', 'current'),
    'vhlo.minimum_v1': ('0.9.0', 'current'),
    'vhlo.multiply_v1': ('0.9.0', 'current'),
    'vhlo.negate_v1': ('0.9.0', 'current'),
    'vhlo.not_v1': ('0.9.0', 'current'),
    'vhlo.optimization_barrier_v1': ('0.9.0', 'current'),
    'vhlo.or_v1': ('0.9.0', 'current'),
    'vhlo.outfeed_v1': ('0.9.0', 'current'),
    'vhlo.pad_v1': ('0.9.0', 'current'),
    'vhlo.partition_id_v1': ('0.9.0', 'current'),
    'vhlo.popcnt_v1': ('0.9.0', 'current'),
    'vhlo.power_v1': ('0.9.0', 'current'),
    'vhlo.real_dynamic_slice_v1': ('0.9.0', 'current'),
    'vhlo.real_v1': ('0.9.0', 'current'),
    'vhlo.recv_v1': ('0.9.0', '1.11.0'),
    'vhlo.recv_v2': ('1.12.0', 'current'),
    'vhlo.reduce_precision_v1': ('0.9.0', 'current'),
    'vhlo.reduce_scatter_v1': ('0.9.0', 'current'),
    'vhlo.reduce_v1': ('0.9.0', 'current'),
    'vhlo.reduce_window_v1': ('0.9.0', 'current'),
    'vhlo.remainder_v1': ('0.9.0', 'current'),
    'vhlo.replica_id_v1': ('0.9.0', 'current'),
    'vhlo.reshape_v1': ('0.9.0', 'current'),
    'vhlo.return_v1': ('0.9.0', 'current'),
    'vhlo.reverse_v1': ('0.9.0', 'current'),
    'vhlo.rng_bit_generator_v1': ('0.9.0', 'current'),
    'vhlo.rng_v1': ('0.9.0', 'current'),
    'vhlo.round_nearest_afz_v1': ('0.9.0', 'current'),
    'vhlo.round_nearest_even_v1': ('0.9.0', 'current'),
    'vhlo.rsqrt_v1': ('0.9.0', '1.9.0'),
    'vhlo.rsqrt_v2': ('1.10.0', 'current'),
    'vhlo.scatter_v1': ('0.9.0', '1.0.0'),
    'vhlo.scatter_v2': ('1.1.0', 'current'),
    'vhlo.select_and_scatter_v1': ('0.9.0', 'current'),
    'vhlo.select_v1': ('0.9.0', 'current'),
    'vhlo.send_v1': ('0.9.0', '1.11.0'),
    'vhlo.send_v2': ('1.12.0', 'current'),
    'vhlo.set_dimension_size_v1': ('0.9.0', 'current'),
    'vhlo.shift_left_v1': ('0.9.0', 'current'),
    'vhlo.shift_right_arithmetic_v1': ('0.9.0', 'current'),
    'vhlo.shift_right_logical_v1': ('0.9.0', 'current'),
    'vhlo.sign_v1': ('0.9.0', 'current'),
    'vhlo.sine_v1': ('0.9.0', '1.9.0'),
    'vhlo.sine_v2': ('1.10.0', 'current'),
    'vhlo.slice_v1': ('0.9.0', 'current'),
    'vhlo.sort_v1': ('0.9.0', 'current'),
    'vhlo.sqrt_v1': ('0.9.0', '1.9.0'),
    'vhlo.sqrt_v2': ('1.10.0', 'current'),
    'vhlo.subtract_v1': ('0.9.0', 'current'),
    'vhlo.tan_v1': ('1.4.0', '1.9.0'),
    'vhlo.tan_v2': ('1.10.0', 'current'),
    'vhlo.tanh_v1': ('0.9.0', '1.9.0'),
    'vhlo.tanh_v2': ('1.10.0', 'current'),
    'vhlo.torch_index_select_v1': ('0.9.0', 'current'),
    'vhlo.transpose_v1': ('0.9.0', 'current'),
    'vhlo.triangular_solve_v1': ('0.9.0', 'current'),
    'vhlo.tuple_v1': ('0.9.0', 'current'),
    'vhlo.unary_einsum_v1': ('0.9.0', 'current'),
    'vhlo.uniform_dequantize_v1': ('0.9.0', 'current'),
    'vhlo.uniform_quantize_v1': ('0.9.0', 'current'),
    'vhlo.while_v1': ('0.9.0', 'current'),
    'vhlo.xor_v1': ('0.9.0', 'current'),
}

UPSTREAM_OPS = [
    'stablehlo.abs', 'stablehlo.add', 'stablehlo.after_all', 'stablehlo.all_gather', 'stablehlo.all_reduce',
    'stablehlo.all_to_all', 'stablehlo.and', 'stablehlo.async_done', 'stablehlo.async_start',
    'stablehlo.atan2', 'stablehlo.batch_norm_grad', 'stablehlo.batch_norm_inference',
    'stablehlo.batch_norm_training', 'stablehlo.bitcast_convert', 'stablehlo.broadcast',
    'stablehlo.broadcast_in_dim', 'stablehlo.case', 'stablehlo.cbrt', 'stablehlo.ceil', 'stablehlo.cholesky',
    'stablehlo.clamp', 'stablehlo.collective_broadcast', 'stablehlo.collective_permute',
    'stablehlo.collective_reduce', 'stablehlo.compare', 'stablehlo.complex', 'stablehlo.composite',
    'stablehlo.concatenate', 'stablehlo.constant', 'stablehlo.convert', 'stablehlo.convolution',
    'stablehlo.cosine', 'stablehlo.count_leading_zeros', 'stablehlo.create_token',
    'stablehlo.cross-replica-sum', 'stablehlo.custom_call', 'stablehlo.divide', 'stablehlo.dot',
    'stablehlo.dot_general', 'stablehlo.dynamic_broadcast_in_dim', 'stablehlo.dynamic_conv',
    'stablehlo.dynamic_gather', 'stablehlo.dynamic_iota', 'stablehlo.dynamic_pad',
    'stablehlo.dynamic_reshape', 'stablehlo.dynamic_slice', 'stablehlo.dynamic_update_slice',
    'stablehlo.einsum', 'stablehlo.exponential', 'stablehlo.exponential_minus_one', 'stablehlo.fft',
    'stablehlo.floor', 'stablehlo.gather', 'stablehlo.get_dimension_size', 'stablehlo.get_tuple_element',
    'stablehlo.if', 'stablehlo.imag', 'stablehlo.infeed', 'stablehlo.iota', 'stablehlo.is_finite',
    'stablehlo.log', 'stablehlo.log_plus_one', 'stablehlo.logistic', 'stablehlo.map', 'stablehlo.maximum',
    'stablehlo.minimum', 'stablehlo.multiply', 'stablehlo.negate', 'stablehlo.not',
    'stablehlo.optimization_barrier', 'stablehlo.or', 'stablehlo.outfeed', 'stablehlo.pad',
    'stablehlo.partition_id', 'stablehlo.popcnt', 'stablehlo.power', 'stablehlo.real',
    'stablehlo.real_dynamic_slice', 'stablehlo.recv', 'stablehlo.reduce', 'stablehlo.reduce_precision',
    'stablehlo.reduce_scatter', 'stablehlo.reduce_window', 'stablehlo.remainder', 'stablehlo.replica_id',
    'stablehlo.reshape', 'stablehlo.return', 'stablehlo.reverse', 'stablehlo.rng',
    'stablehlo.rng_bit_generator', 'stablehlo.round_nearest_afz', 'stablehlo.round_nearest_even',
    'stablehlo.rsqrt', 'stablehlo.scatter', 'stablehlo.select', 'stablehlo.select_and_scatter',
    'stablehlo.send', 'stablehlo.set_dimension_size', 'stablehlo.shift_left',
    'stablehlo.shift_right_arithmetic', 'stablehlo.shift_right_logical', 'stablehlo.sign', 'stablehlo.sine',
    'stablehlo.slice', 'stablehlo.sort', 'stablehlo.sqrt', 'stablehlo.subtract', 'stablehlo.tan',
    'stablehlo.tanh', 'stablehlo.torch_index_select', 'stablehlo.transpose', 'stablehlo.triangular_solve',
    'stablehlo.tuple', 'stablehlo.unary_einsum', 'stablehlo.uniform_dequantize', 'stablehlo.uniform_quantize',
    'stablehlo.while', 'stablehlo.xor', 'chlo._asin_acos_kernel', 'chlo.acos', 'chlo.acosh', 'chlo.asin',
    'chlo.asinh', 'chlo.atan', 'chlo.atanh', 'chlo.bessel_i1e', 'chlo.broadcast_add', 'chlo.broadcast_and',
    'chlo.broadcast_atan2', 'chlo.broadcast_compare', 'chlo.broadcast_complex', 'chlo.broadcast_divide',
    'chlo.broadcast_maximum', 'chlo.broadcast_minimum', 'chlo.broadcast_multiply',
    'chlo.broadcast_next_after', 'chlo.broadcast_or', 'chlo.broadcast_polygamma', 'chlo.broadcast_power',
    'chlo.broadcast_remainder', 'chlo.broadcast_select', 'chlo.broadcast_shift_left',
    'chlo.broadcast_shift_right_arithmetic', 'chlo.broadcast_shift_right_logical', 'chlo.broadcast_subtract',
    'chlo.broadcast_xor', 'chlo.broadcast_zeta', 'chlo.conj', 'chlo.constant', 'chlo.constant_like',
    'chlo.cosh', 'chlo.digamma', 'chlo.erf', 'chlo.erf_inv', 'chlo.erfc', 'chlo.is_inf', 'chlo.is_neg_inf',
    'chlo.is_pos_inf', 'chlo.lgamma', 'chlo.mulhi', 'chlo.next_after', 'chlo.polygamma', 'chlo.ragged_dot',
    'chlo.scan', 'chlo.sinh', 'chlo.square', 'chlo.tan', 'chlo.top_k', 'chlo.zeta',
]

LEGACY_OPS = {
    "stablehlo.broadcast", "stablehlo.create_token", "stablehlo.cross-replica-sum", "stablehlo.dot",
    "stablehlo.einsum", "stablehlo.real_dynamic_slice", "stablehlo.set_dimension_size",
    "stablehlo.torch_index_select", "stablehlo.unary_einsum",
}

FUNC_OPS = {"func.func": "vhlo.func_v1", "func.return": "vhlo.return_v1", "func.call": "vhlo.call_v1"}

CHECK_OPS = {
    "check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq", "check.expect_almost_eq_const",
    "check.expect_close", "check.expect_serialized_eq",
}

# text spelling -> (VHLO type, version that introduced it)
ELEMENT_TYPES = {
    "i1": ("vhlo.bool_v1", "0.9.0"),
    "i2": ("vhlo.i2_v1", "1.2.0"), "i4": ("vhlo.i4_v1", "0.9.0"), "i8": ("vhlo.i8_v1", "0.9.0"),
    "i16": ("vhlo.i16_v1", "0.9.0"), "i32": ("vhlo.i32_v1", "0.9.0"), "i64": ("vhlo.i64_v1", "0.9.0"),
    "ui2": ("vhlo.ui2_v1", "1.2.0"), "ui4": ("vhlo.ui4_v1", "0.9.0"), "ui8": ("vhlo.ui8_v1", "0.9.0"),
    "ui16": ("vhlo.ui16_v1", "0.9.0"), "ui32": ("vhlo.ui32_v1", "0.9.0"), "ui64": ("vhlo.ui64_v1", "0.9.0"),
    "f4E2M1FN": ("vhlo.f4E2M1FN_v1", "1.8.0"), "f6E2M3FN": ("vhlo.f6E2M3FN_v1", "1.8.0"),
    "f6E3M2FN": ("vhlo.f6E3M2FN_v1", "1.8.0"), "f8E3M4": ("vhlo.f8E3M4_v1", "1.7.0"),
    "f8E4M3": ("vhlo.f8E4M3_v1", "1.7.0"), "f8E4M3FN": ("vhlo.f8E4M3FN_v1", "0.9.0"),
    "f8E4M3FNUZ": ("vhlo.f8E4M3FNUZ_v1", "0.10.0"), "f8E4M3B11FNUZ": ("vhlo.f8E4M3B11FNUZ_v1", "0.11.0"),
    "f8E5M2": ("vhlo.f8E5M2_v1", "0.9.0"), "f8E5M2FNUZ": ("vhlo.f8E5M2FNUZ_v1", "0.10.0"),
    "f8E8M0FNU": ("vhlo.f8E8M0FNU_v1", "1.8.0"),
    "bf16": ("vhlo.bf16_v1", "0.9.0"), "f16": ("vhlo.f16_v1", "0.9.0"), "f32": ("vhlo.f32_v1", "0.9.0"),
    "f64": ("vhlo.f64_v1", "0.9.0"), "tf32": ("vhlo.tf31_v1", "1.6.0"),  # upstream's mnemonic is tf31_v1
    "complex<f32>": ("vhlo.complex_v1", "0.9.0"), "complex<f64>": ("vhlo.complex_v1", "0.9.0"),
    "index": ("vhlo.index_v1", "0.9.0"),
}

# every VHLO type and attribute (enums included) with its window
VHLO_TYPE_WINDOWS = {
    'vhlo.bf16_v1': ('0.9.0', 'current'), 'vhlo.bool_v1': ('0.9.0', 'current'),
    'vhlo.buffer_v1': ('1.13.0', 'current'), 'vhlo.complex_v1': ('0.9.0', 'current'),
    'vhlo.f16_v1': ('0.9.0', 'current'), 'vhlo.f32_v1': ('0.9.0', 'current'),
    'vhlo.f4E2M1FN_v1': ('1.8.0', 'current'), 'vhlo.f64_v1': ('0.9.0', 'current'),
    'vhlo.f6E2M3FN_v1': ('1.8.0', 'current'), 'vhlo.f6E3M2FN_v1': ('1.8.0', 'current'),
    'vhlo.f8E3M4_v1': ('1.7.0', 'current'), 'vhlo.f8E4M3B11FNUZ_v1': ('0.11.0', 'current'),
    'vhlo.f8E4M3FNUZ_v1': ('0.10.0', 'current'), 'vhlo.f8E4M3FN_v1': ('0.9.0', 'current'),
    'vhlo.f8E4M3_v1': ('1.7.0', 'current'), 'vhlo.f8E5M2FNUZ_v1': ('0.10.0', 'current'),
    'vhlo.f8E5M2_v1': ('0.9.0', 'current'), 'vhlo.f8E8M0FNU_v1': ('1.8.0', 'current'),
    'vhlo.func_v1': ('0.9.0', 'current'), 'vhlo.future_v1': ('1.15.0', 'current'),
    'vhlo.i16_v1': ('0.9.0', 'current'), 'vhlo.i2_v1': ('1.2.0', 'current'),
    'vhlo.i32_v1': ('0.9.0', 'current'), 'vhlo.i4_v1': ('0.9.0', 'current'),
    'vhlo.i64_v1': ('0.9.0', 'current'), 'vhlo.i8_v1': ('0.9.0', 'current'),
    'vhlo.index_v1': ('0.9.0', 'current'), 'vhlo.none_v1': ('1.6.0', 'current'),
    'vhlo.quant_per_axis_v1': ('0.18.0', 'current'), 'vhlo.quant_v1': ('0.9.0', 'current'),
    'vhlo.tensor_v1': ('0.9.0', 'current'), 'vhlo.tf31_v1': ('1.6.0', 'current'),
    'vhlo.token_v1': ('0.9.0', 'current'), 'vhlo.tuple_v1': ('0.9.0', 'current'),
    'vhlo.ui16_v1': ('0.9.0', 'current'), 'vhlo.ui2_v1': ('1.2.0', 'current'),
    'vhlo.ui32_v1': ('0.9.0', 'current'), 'vhlo.ui4_v1': ('0.9.0', 'current'),
    'vhlo.ui64_v1': ('0.9.0', 'current'), 'vhlo.ui8_v1': ('0.9.0', 'current'),
    'vhlo.unranked_tensor_v1': ('0.9.0', 'current'), 'vhlo.witness_v1': ('0.9.0', 'current'),
}

VHLO_ATTRIBUTE_WINDOWS = {
    'vhlo.api_version_v1': ('0.9.0', 'current'), 'vhlo.array_v1': ('0.9.0', 'current'),
    'vhlo.axis_ref_v1': ('1.16.0', 'current'), 'vhlo.bool_v1': ('0.9.0', 'current'),
    'vhlo.comparison_direction_v1': ('0.9.0', 'current'), 'vhlo.comparison_type_v1': ('0.9.0', 'current'),
    'vhlo.dict_v1': ('0.9.0', 'current'), 'vhlo.fft_type_v1': ('0.9.0', 'current'),
    'vhlo.float_v1': ('0.9.0', 'current'), 'vhlo.integer_v1': ('0.9.0', 'current'),
    'vhlo.mesh_axis_v1': ('1.16.0', 'current'), 'vhlo.mesh_v1': ('1.16.0', 'current'),
    'vhlo.output_operand_alias_v1': ('0.9.0', 'current'), 'vhlo.precision_v1': ('0.9.0', 'current'),
    'vhlo.replica_group_mesh_axes_v1': ('1.16.0', 'current'),
    'vhlo.result_accuracy_mode_v1': ('1.9.0', 'current'), 'vhlo.result_accuracy_v1': ('1.9.0', 'current'),
    'vhlo.rng_algorithm_v1': ('0.9.0', 'current'), 'vhlo.rng_distribution_v1': ('0.9.0', 'current'),
    'vhlo.string_v1': ('0.9.0', 'current'), 'vhlo.sub_axis_info_v1': ('1.16.0', 'current'),
    'vhlo.tensor_v1': ('0.9.0', 'current'), 'vhlo.transpose_v1': ('0.9.0', 'current'),
    'vhlo.type_extensions_v1': ('0.9.0', 'current'), 'vhlo.type_v1': ('0.9.0', 'current'),
}

# (version range) -> MLIR bytecode format version, as upstream Version::getBytecodeVersion maps them
BYTECODE = [("0.9.0", 0), ("0.9.9", 0), ("0.10.0", 1), ("0.11.8", 1), ("0.12.0", 3), ("0.13.4", 3),
            ("0.14.0", 4), ("0.14.30", 4), ("0.15.0", 6), ("1.0.0", 6), ("1.20.0", 6)]


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


# --------------------------------------------------------------------------- files and schemas


def test_schemas_are_valid_draft_2020_12():
    for name in ("op.schema.json", "element_types.schema.json", "versions.schema.json"):
        schema = json.loads((SPEC_DIR / "schema" / name).read_text())
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)


@pytest.fixture(scope="module")
def op_validator():
    return Draft202012Validator(json.loads((SPEC_DIR / "schema" / "op.schema.json").read_text()))


@pytest.mark.parametrize("path", OP_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_op_file_validates(path, op_validator):
    doc = yaml.safe_load(path.read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in op_validator.iter_errors(doc)]
    assert not errors, errors
    dialect, _, short = doc["name"].partition(".")
    assert path.parent.name == dialect and path.name == f"{short}.yaml"
    # the key order of the documented format, so that files read alike
    assert list(doc) == ["name", "summary", "since", "status", "traits", "operands", "results", "attributes",
                         "regions", "constraints", "syntax", "vhlo"]


@pytest.mark.parametrize("name", ["element_types", "versions"])
def test_data_file_validates(name):
    schema = json.loads((SPEC_DIR / "schema" / f"{name}.schema.json").read_text())
    doc = yaml.safe_load((SPEC_DIR / f"{name}.yaml").read_text())
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(doc)]
    assert not errors, errors


def test_inlined_schema_agrees_with_the_file_schema(op_validator):
    inlined = spec._validator(SPEC_DIR, "op.schema.json")
    bad = yaml.safe_load((SPEC_DIR / "ops/stablehlo/add.yaml").read_text())
    bad["traits"].append("not_a_trait")
    bad["vhlo"][0]["to"] = "someday"
    del bad["summary"]
    for doc in (yaml.safe_load((SPEC_DIR / "ops/stablehlo/add.yaml").read_text()), bad):
        assert inlined.is_valid(doc) == op_validator.is_valid(doc)
    assert not op_validator.is_valid(bad)


def test_spec_files_hold_no_machine_paths():
    for p in SPEC_DIR.rglob("*"):
        if p.is_file() and p.suffix in (".yaml", ".json"):
            text = p.read_text()
            assert not re.search(r"(/wor[k]/|/home/|/tmp/|/Users/|[A-Z]:\\)", text), p


# --------------------------------------------------------------------------- loading


def test_load_is_cached_and_complete():
    s = spec.load()
    assert spec.load() is s
    by_dialect = {}
    for o in s.ops.values():
        by_dialect.setdefault(o.dialect, []).append(o.name)
    assert len(by_dialect["stablehlo"]) == 118
    assert len(by_dialect["chlo"]) == 51
    assert sorted(by_dialect["func"]) == sorted(FUNC_OPS)
    assert set(by_dialect["check"]) == CHECK_OPS
    assert len(OP_FILES) == len(s.ops)


def test_consistency_checks_pass():
    assert spec.check_consistency() == []


def test_every_upstream_op_is_in_the_spec():
    missing = [n for n in UPSTREAM_OPS if not spec.has_op(n)]
    assert not missing
    extra = [o.name for o in spec.ops() if o.dialect in ("stablehlo", "chlo") and o.name not in UPSTREAM_OPS]
    assert not extra


def test_every_vhlo_window_matches_upstream():
    seen = {}
    for o in spec.ops():
        for v in o.vhlo:
            seen[v.name] = (v.from_, v.to)
    for name, window in VHLO_OP_WINDOWS.items():
        assert name in seen, f"{name} missing from the spec"
        assert seen[name] == window, f"{name}: spec {seen[name]}, upstream {window}"
    assert set(seen) == set(VHLO_OP_WINDOWS)


def test_vhlo_windows_are_ordered_contiguous_and_reach_current():
    known = [v.version for v in spec.versions()]
    minors = [_vkey(v) for v in known if v.endswith(".0")]
    cur = _vkey(spec.current_version())
    for o in spec.ops():
        if o.dialect in ("stablehlo", "func"):
            assert o.vhlo, f"{o.name} has no VHLO encoding"
        else:
            assert o.vhlo == (), o.name
            continue
        assert o.vhlo[0].from_ in ("0.9.0", o.since)
        assert o.vhlo[-1].to == "current"
        for i, w in enumerate(o.vhlo):
            assert w.name.endswith(f"_v{i + 1}"), w.name
            lo = _vkey(w.from_)
            hi = cur if w.to == "current" else _vkey(w.to)
            assert lo <= hi
            if i:
                prev = o.vhlo[i - 1]
                prev_hi = _vkey(prev.to)
                assert prev_hi < lo, f"{o.name}: {prev.name} and {w.name} overlap"
                assert not any(prev_hi < m < lo for m in minors), f"{o.name}: gap before {w.name}"


def test_since_is_a_known_version_and_first_window():
    known = {v.version for v in spec.versions()}
    for o in spec.ops():
        assert o.since in known, (o.name, o.since)
        if o.vhlo:
            assert o.since == o.vhlo[0].from_
    assert spec.op("stablehlo.tan").since == "1.4.0"
    assert spec.op("stablehlo.collective_broadcast").since == "0.16.0"
    assert spec.op("stablehlo.composite").since == "0.19.0"
    assert spec.op("stablehlo.async_start").since == "1.15.0"
    assert spec.op("stablehlo.collective_reduce").since == "1.19.0"


def test_constraint_ids_unique_and_numbered_in_order():
    for o in spec.ops():
        ids = [c.id for c in o.constraints]
        assert ids == [f"C{i}" for i in range(1, len(ids) + 1)], o.name
        assert all(c.text.strip() for c in o.constraints)
    assert len(spec.op("stablehlo.add").constraints) == 7
    assert len(spec.op("stablehlo.dot_general").constraints) == 24
    assert len(spec.op("stablehlo.convolution").constraints) == 34
    assert len(spec.op("stablehlo.scatter").constraints) == 25
    assert spec.op("stablehlo.custom_call").constraints == ()


def test_statuses():
    for o in spec.ops():
        if o.dialect == "stablehlo":
            assert o.status == ("legacy" if o.name in LEGACY_OPS else "spec"), o.name
        else:
            assert o.status == o.dialect


def test_func_ops_map_to_vhlo():
    for name, vname in FUNC_OPS.items():
        assert [v.name for v in spec.op(name).vhlo] == [vname]
    assert spec.op_for_vhlo("vhlo.func_v1").name == "func.func"
    assert spec.op_for_vhlo("vhlo.call_v1").name == "func.call"
    assert spec.op_for_vhlo("vhlo.return_v1").name == "stablehlo.return"
    assert {o.name for o in spec.ops_for_vhlo("vhlo.return_v1")} == {"stablehlo.return", "func.return"}


def test_vhlo_changes_describe_new_encodings():
    exp = spec.op("stablehlo.exponential").vhlo
    assert [(v.name, v.from_, v.to) for v in exp] == [("vhlo.exponential_v1", "0.9.0", "1.8.0"),
                                                     ("vhlo.exponential_v2", "1.9.0", "current")]
    (change,) = exp[1].changes
    assert (change.member_kind, change.member, change.change) == ("attribute", "result_accuracy", "added")
    dg = spec.op("stablehlo.dot_general").vhlo[1]
    assert {c.member for c in dg.changes} >= {"lhs_precision_type", "accumulation_type", "num_primitive_operations"}
    ag = spec.op("stablehlo.all_gather").vhlo[1]
    assert any(c.change == "renamed" and c.from_ == "operand" and c.to == "operands" for c in ag.changes)
    for o in spec.ops():
        assert o.vhlo[:1] == () or o.vhlo[0].changes == (), f"{o.name}: a first encoding has nothing to differ from"


def test_vhlo_members_and_requirements():
    dg1, dg2 = spec.op("stablehlo.dot_general").vhlo
    assert dg1.operands == ("lhs", "rhs") and dg1.results == ("result",)
    assert dg1.attributes[:4] == ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                  "lhs_contracting_dimensions", "rhs_contracting_dimensions")
    # a later encoding holds the earlier members plus the added ones, minus the removed ones
    for o in spec.ops():
        for prev, nxt in zip(o.vhlo, o.vhlo[1:]):
            for kind in ("attribute", "operand", "result", "region"):
                names = lambda v: [n.rstrip(".") for n in getattr(v, kind + "s")]
                expected = [n for n in names(prev)
                            if not any(c.member_kind == kind and c.change in ("removed", "renamed") and
                                       (c.member == n or c.from_ == n) for c in nxt.changes)]
                added = [c.member for c in nxt.changes if c.member_kind == kind and c.change in ("added", "renamed")]
                assert sorted(expected + added) == sorted(names(nxt)), (nxt.name, kind)
    red = spec.op("stablehlo.reduce").vhlo[0]
    assert red.operands == ("inputs...", "init_values...") and red.traits == ("same_variadic_operand_size",)
    assert red.downgrade_requires[0].below == "0.17.0"
    cc1 = spec.op("stablehlo.custom_call").vhlo[0]
    assert {d.below for d in cc1.downgrade_requires} == {"1.3.0", "1.17.0"}
    assert spec.op("func.return").vhlo[0].traits == ("terminator",)


# --------------------------------------------------------------------------- versions


def test_versions_cover_the_history():
    vs = [v.version for v in spec.versions()]
    assert vs[0] == "0.9.0" and vs[-1] == "1.20.0"
    assert vs == sorted(vs, key=_vkey) and len(vs) == len(set(vs))
    for v in ("0.10.0", "0.14.30", "0.19.11", "1.0.0", "1.8.12", "1.13.10", "1.16.4", "1.18.1", "1.19.0"):
        assert v in vs
    assert "1.17.0" not in vs  # upstream went from 1.16.4 to 1.18.0
    assert spec.current_version() == "1.20.0"
    assert spec.minimum_version() == "0.9.0"
    assert [v.version for v in spec.versions() if v.current] == ["1.20.0"]


def test_versions_adds_follow_vhlo_windows():
    adds = {v.version: set(v.adds) for v in spec.versions()}
    for name, (lo, _) in VHLO_OP_WINDOWS.items():
        if lo != "0.9.0":
            assert f"op {name}" in adds[lo], (name, lo)
    for text, (vname, since) in ELEMENT_TYPES.items():
        if since != "0.9.0":
            assert f"type {vname}" in adds[since]


def test_vhlo_type_and_attribute_windows():
    s = spec.load()
    assert {n: (a, b) for n, a, b in s.vhlo_types} == VHLO_TYPE_WINDOWS
    assert {n: (a, b) for n, a, b in s.vhlo_attributes} == VHLO_ATTRIBUTE_WINDOWS


@pytest.mark.parametrize("version,expected", BYTECODE)
def test_bytecode_version(version, expected):
    assert spec.bytecode_version(version) == expected


@pytest.mark.parametrize("bad", ["0.8.0", "1.21.0", "2.0.0"])
def test_bytecode_version_outside_window(bad):
    with pytest.raises(spec.SpecError, match="outside the supported range"):
        spec.bytecode_version(bad)


def test_parse_version():
    assert spec.parse_version("1.2.3") == (1, 2, 3)
    assert spec.parse_version("current") == (1, 20, 0)
    assert spec.parse_version("0.10.0") > spec.parse_version("0.9.0")
    for bad in ("1.2", "a.b.c", "1.2.3.4", ""):
        with pytest.raises(ValueError):
            spec.parse_version(bad)


def test_vhlo_name_by_version():
    assert spec.vhlo_name("stablehlo.add", "0.9.0") == "vhlo.add_v1"
    assert spec.vhlo_name("stablehlo.exponential", "1.8.0") == "vhlo.exponential_v1"
    assert spec.vhlo_name("stablehlo.exponential", "1.9.0") == "vhlo.exponential_v2"
    assert spec.vhlo_name("stablehlo.exponential", "current") == "vhlo.exponential_v2"
    assert spec.vhlo_name("stablehlo.tan", "1.3.0") is None
    assert spec.vhlo_name("stablehlo.tan", "1.4.0") == "vhlo.tan_v1"
    # upstream windows are inclusive on full versions: a patch release between windows has none
    assert spec.vhlo_name("stablehlo.exponential", "1.8.5") is None
    assert spec.vhlo_name("func.func", "1.0.0") == "vhlo.func_v1"
    assert spec.vhlo_name("chlo.erf", "1.0.0") is None
    assert spec.op_for_vhlo("vhlo.gather_v2").name == "stablehlo.gather"
    assert spec.op_for_vhlo("vhlo.cross-replica-sum_v1").name == "stablehlo.cross-replica-sum"
    with pytest.raises(KeyError):
        spec.op_for_vhlo("vhlo.gather_v9")
    with pytest.raises(spec.SpecError):
        spec.vhlo_name("stablehlo.add", "0.4.0")


# --------------------------------------------------------------------------- element types


def test_element_types_match_vhlo_types():
    ets = {e.text: e for e in spec.element_types()}
    assert set(ets) == set(ELEMENT_TYPES)
    for text, (vname, since) in ELEMENT_TYPES.items():
        e = spec.element_type(text)
        assert (e.vhlo, e.since) == (vname, since), text
    assert spec.element_type("i8").kind == "signed" and spec.element_type("i8").spec_name == "si8"
    assert spec.element_type("ui4").numpy == "uint4"
    assert spec.element_type("i1").kind == "bool"
    assert spec.element_type("complex<f64>").numpy == "complex128"
    with pytest.raises(KeyError):
        spec.element_type("f128")


def test_element_type_numpy_names_exist():
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for e in spec.element_types():
        if e.numpy is None:
            continue
        dt = np.dtype(getattr(ml_dtypes, e.numpy)) if hasattr(ml_dtypes, e.numpy) else np.dtype(e.numpy)
        if e.kind in ("signed", "unsigned", "float", "complex") and e.bits >= 8:
            assert dt.itemsize * 8 == e.bits, e.text
        if e.kind == "float" and hasattr(ml_dtypes, "finfo"):
            fi = ml_dtypes.finfo(dt)
            assert fi.nmant == e.mantissa_bits, e.text


# --------------------------------------------------------------------------- op contents


def test_op_lookup_and_errors():
    add = spec.op("stablehlo.add")
    assert (add.dialect, add.short_name) == ("stablehlo", "add")
    assert add.has_trait("commutative") and add.has_trait("pure") and not add.has_trait("terminator")
    assert [o.name for o in add.operands] == ["lhs", "rhs"]
    with pytest.raises(KeyError, match="use the full name stablehlo.add"):
        spec.op("add")
    with pytest.raises(KeyError, match="did you mean"):
        spec.op("stablehlo.addd")
    assert not spec.has_op("stablehlo.nope")
    names = [o.name for o in spec.ops()]
    assert names == sorted(names)
    with pytest.raises(Exception):
        add.name = "x"  # frozen


def test_syntax_forms():
    assert spec.op("stablehlo.constant").syntax.custom == "constant"
    assert spec.op("stablehlo.reduce").syntax.custom == "reduce"
    assert spec.op("stablehlo.while").syntax.custom == "while"
    assert spec.op("func.func").syntax.custom == "func"
    assert spec.op("stablehlo.all_gather").syntax.generic
    # formats inherited from the elementwise base classes are resolved onto each op
    assert spec.op("stablehlo.abs").syntax.format == (
        "$operand attr-dict `:` custom<SameOperandsAndResultType>(type($operand), type($result))")
    assert spec.op("stablehlo.subtract").syntax.format == (
        "$lhs `,` $rhs attr-dict `:` custom<SameOperandsAndResultType>(type($lhs), type($rhs), type($result))")
    assert spec.op("stablehlo.iota").syntax.format == "`dim` `=` $iota_dimension attr-dict `:` type($output)"
    assert spec.op("func.call").syntax.format == "$callee `(` $operands `)` attr-dict `:` functional-type($operands, results)"
    assert spec.op("check.expect_eq").syntax.format == "$lhs `,` $rhs attr-dict `:` type($lhs)"
    for o in spec.ops():
        s = o.syntax
        assert (s.format is not None) + (s.custom is not None) + s.generic == 1, o.name
        if s.format is not None:
            assert "  " not in s.format and s.format == s.format.strip()


def test_attributes_and_regions():
    cmp = spec.op("stablehlo.compare")
    assert cmp.attribute("comparison_direction").kind == "comparison_direction"
    assert cmp.attribute("compare_type").optional
    sort = spec.op("stablehlo.sort")
    assert sort.attribute("dimension").default == -1
    assert sort.attribute("is_stable").default is False
    assert [r.name for r in spec.op("stablehlo.while").regions] == ["cond", "body"]
    assert spec.op("stablehlo.case").regions[0].variadic
    assert spec.op("check.expect_almost_eq").attribute("tolerance").default == pytest.approx(1e-4)
    for o in spec.ops():
        names = [a.name for a in o.attributes] + [v.name for v in o.operands]
        assert len(names) == len(set(names)), o.name
    with pytest.raises(KeyError):
        cmp.attribute("nope")


def test_traits():
    assert spec.op("stablehlo.return").has_trait("terminator")
    assert spec.op("func.return").has_trait("return_like")
    assert spec.op("func.func").has_trait("isolated_from_above")
    assert spec.op("stablehlo.infeed").has_trait("side_effecting")
    assert spec.op("stablehlo.reduce").has_trait("recursive_side_effects")
    assert spec.op("chlo.scan").has_trait("attr_sized_operands")
    for o in spec.ops():
        assert not (o.has_trait("pure") and o.has_trait("side_effecting")), o.name


def test_formatting_helpers():
    table = spec.format_op_table()
    lines = table.splitlines()
    assert len(lines) == len(spec.ops()) + 1
    assert any(line.split()[:4] == ["stablehlo.tan", "stablehlo", "1.4.0", "spec"] for line in lines)
    text = spec.format_op("stablehlo.dot_general")
    assert "(C24)" in text and "vhlo.dot_general_v2: 1.6.0 .. current" in text


# --------------------------------------------------------------------------- loader mechanics


def test_data_root_falls_back_to_checkout():
    root = spec._data_root()
    assert root.joinpath("versions.yaml").is_file()
    assert root.joinpath("ops", "stablehlo", "add.yaml").is_file()


def test_broken_file_names_itself(tmp_path, monkeypatch):
    copy = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    bad = copy / "ops" / "stablehlo" / "add.yaml"
    bad.write_text(bad.read_text().replace("status: spec", "status: maybe"))
    monkeypatch.setattr(spec, "_data_root", lambda: copy)
    with pytest.raises(spec.SpecError, match=r"(?s)ops/stablehlo/add\.yaml.*status"):
        spec.load.__wrapped__()
    bad.write_text("name: [unclosed")
    with pytest.raises(spec.SpecError, match="not valid YAML"):
        spec.load.__wrapped__()


def test_misplaced_file_is_rejected(tmp_path, monkeypatch):
    copy = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "ops" / "stablehlo" / "add.yaml").rename(copy / "ops" / "stablehlo" / "plus.yaml")
    monkeypatch.setattr(spec, "_data_root", lambda: copy)
    with pytest.raises(spec.SpecError, match="must live in ops/stablehlo/add.yaml"):
        spec.load.__wrapped__()


# --------------------------------------------------------------------------- the validated bundle


def _copy_spec(tmp_path, monkeypatch):
    copy = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(spec, "_data_root", lambda: copy)
    return copy


def test_bundle_is_up_to_date_and_every_file_validates():
    # validates every YAML file whatever the bundle says; fails until `python -m
    # stablehlo_ref.spec --write` has rewritten spec/validated.json after a spec edit
    assert spec.check() == []
    bundle = json.loads((SPEC_DIR / spec.BUNDLE_NAME).read_text())
    assert bundle["digest"] == spec.source_digest(SPEC_DIR)
    assert len(bundle["documents"]["ops"]) == len(OP_FILES)


def test_bundle_gives_the_spec_the_yaml_files_give():
    from_yaml = spec._spec_from_documents(spec._read_documents(SPEC_DIR))
    assert repr(from_yaml) == repr(spec.load())          # dict orders included
    assert from_yaml == spec.load()


def test_load_reads_the_bundle_when_it_matches(tmp_path, monkeypatch):
    _copy_spec(tmp_path, monkeypatch)

    def no_yaml(root):
        raise AssertionError("read the YAML files although the bundle matches")
    monkeypatch.setattr(spec, "_read_documents", no_yaml)
    assert spec.load.__wrapped__() == spec.load()


def test_an_edited_spec_is_read_and_validated_from_its_files(tmp_path, monkeypatch):
    copy = _copy_spec(tmp_path, monkeypatch)
    add = copy / "ops" / "stablehlo" / "add.yaml"
    text = add.read_text()
    old = spec.op("stablehlo.add").summary
    add.write_text(text.replace(old.split()[0], "Edited", 1))
    assert spec.load.__wrapped__().ops["stablehlo.add"].summary.startswith("Edited")
    problems = spec.check(copy)
    assert len(problems) == 1 and "--write" in problems[0]
    # an edited schema is a different spec too
    add.write_text(text)
    assert spec.check(copy) == []
    schema = copy / "schema" / "versions.schema.json"
    schema.write_text(schema.read_text() + "\n")
    assert spec.source_digest(copy) != spec.source_digest(SPEC_DIR)
    assert spec._read_bundle(copy, spec.source_digest(copy)) is None


@pytest.mark.parametrize("damage", ["missing", "not json", "other format"])
def test_a_missing_or_damaged_bundle_falls_back_to_the_files(tmp_path, monkeypatch, damage):
    copy = _copy_spec(tmp_path, monkeypatch)
    bundle = copy / spec.BUNDLE_NAME
    if damage == "missing":
        bundle.unlink()
    elif damage == "not json":
        bundle.write_text("{")
    else:
        bundle.write_text(bundle.read_text().replace('"format": 1', '"format": 99', 1))
    calls = []
    read = spec._read_documents
    monkeypatch.setattr(spec, "_read_documents", lambda root: calls.append(root) or read(root))
    assert spec.load.__wrapped__() == spec.load()
    assert calls == [copy]
    assert spec.check(copy) != []


def test_write_then_check(tmp_path, monkeypatch, capsys):
    copy = _copy_spec(tmp_path, monkeypatch)
    add = copy / "ops" / "stablehlo" / "add.yaml"
    add.write_text(add.read_text().replace("status: spec", "status: maybe"))
    assert spec.main(["--write"]) == 1                    # an invalid spec is never bundled
    assert "status" in capsys.readouterr().err
    add.write_text((SPEC_DIR / "ops" / "stablehlo" / "add.yaml").read_text() + "# edited\n")
    assert spec.main(["--check"]) == 1
    assert spec.main(["--write"]) == 0
    assert spec.main(["--check"]) == 0
    capsys.readouterr()
    rc, out, err = _cli(capsys, "spec", "--check")
    assert rc == 0 and "up to date" in out and err == ""
    (copy / spec.BUNDLE_NAME).write_text("{}")
    rc, out, err = _cli(capsys, "spec", "--check")
    assert rc == 1 and "--write" in err


# --------------------------------------------------------------------------- command line


def _cli(capsys, *argv):
    from stablehlo_ref import cli

    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_spec_lists_every_op(capsys):
    rc, out, err = _cli(capsys, "spec")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["op", "dialect", "since", "status"]
    names = [line.split()[0] for line in lines[1:]]
    assert names == [o.name for o in spec.ops()]
    row = next(line.split() for line in lines if line.startswith("stablehlo.dot_general "))
    assert row == ["stablehlo.dot_general", "stablehlo", "0.9.0", "spec"]
    assert max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("arg, name", [("stablehlo.dot_general", "stablehlo.dot_general"),
                                       ("dot_general", "stablehlo.dot_general"),
                                       ("chlo.erf", "chlo.erf"), ("func.func", "func.func"),
                                       ("check.expect_close", "check.expect_close")])
def test_cli_spec_one_op(capsys, arg, name):
    rc, out, err = _cli(capsys, "spec", arg)
    assert rc == 0 and err == ""
    assert out.startswith(spec.format_op(name) + "\n")      # then the type classes spelled out
    lines = out.splitlines()
    assert lines[0] == name and f"since {spec.op(name).since}" in out
    assert max(len(line) for line in lines if not line.lstrip().startswith("syntax:")) <= 104


def test_format_op_sections():
    text = spec.format_op("stablehlo.dot_general")
    lines = text.splitlines()
    for section in ("  operands:", "  results:", "  attributes:", "  constraints:", "  vhlo:"):
        assert section in lines, section
    assert any(line.startswith("  syntax: $lhs") for line in lines)
    assert "default None" not in text
    assert "attribute lhs_precision_type added, no default" in text
    assert "vhlo.dot_general_v1: 0.9.0 .. 1.5.0" in text
    reduce_text = spec.format_op("stablehlo.reduce")
    assert "  regions:" in reduce_text and "syntax: custom (reduce)" in reduce_text
    generic = next(o.name for o in spec.ops() if o.syntax.generic)
    assert "  syntax: generic form only" in spec.format_op(generic).splitlines()


def test_cli_spec_unknown_op_is_a_usage_error(capsys):
    rc, out, err = _cli(capsys, "spec", "stablehlo.addd")
    assert rc == 2 and out == ""
    assert err.startswith("error: ") and "stablehlo.addd" in err and err.count("\n") == 1


def test_cli_spec_entry_point_subprocess():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "stablehlo_ref.cli", "spec", "add"], capture_output=True,
                       text=True, timeout=60, cwd=SPEC_DIR.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "stablehlo.add"
