"""A stand-in for AWS's `neuron_dtypes` (not on PyPI), written for the NKI
Library yardstick: the names the library's test harness calls. NumPy dtypes
of the Neuron number formats come from ml_dtypes; `static_cast` rounds to
nearest, ties to even, as ml_dtypes' casts do, and saturates into fp8.

The packed MX formats (four fp8 or fp4 values in 32 bits) are opaque 4-byte
dtypes here: arrays of them pass through, nothing converts them."""

import ml_dtypes
import numpy as np

bfloat16 = ml_dtypes.bfloat16
float8_e4m3 = ml_dtypes.float8_e4m3
float8_e4m3fn = ml_dtypes.float8_e4m3fn
float8_e5m2 = ml_dtypes.float8_e5m2
float4_e2m1fn = ml_dtypes.float4_e2m1fn
float8_e4m3fn_x4 = np.dtype([("float8_e4m3fn_x4", "<u4")])
float8_e5m2_x4 = np.dtype([("float8_e5m2_x4", "<u4")])
float4_e2m1fn_x4 = np.dtype([("float4_e2m1fn_x4", "<u4")])

_BY_NAME = {
    "bfloat16": bfloat16,
    "float8_e4m3": float8_e4m3,
    "float8_e4m3fn": float8_e4m3fn,
    "float8_e5m2": float8_e5m2,
    "float4_e2m1fn": float4_e2m1fn,
    "float8_e4m3fn_x4": float8_e4m3fn_x4,
    "float8_e5m2_x4": float8_e5m2_x4,
    "float4_e2m1fn_x4": float4_e2m1fn_x4,
}


def _dtype(dtype):
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        return np.dtype(_BY_NAME.get(name, name))
    return np.dtype(dtype)  # NumPy dtypes and scalar types, ml_dtypes, nl dtypes (their .dtype)


_SATURATING = (float8_e4m3, float8_e4m3fn, float8_e5m2)


def static_cast(array, dtype):
    """`array` converted to `dtype` (a NumPy dtype or its name); into an fp8
    format, values past its largest finite one saturate to it, as the
    hardware's conversions do (NaN stays NaN)."""
    target = _dtype(dtype)
    array = np.asarray(array)
    if target in _SATURATING and array.dtype != target:
        top = float(ml_dtypes.finfo(target).max)
        array = np.clip(array.astype(np.float32), -top, top)
    return array.astype(target)


def sizeinbytes(dtype) -> int:
    return _dtype(dtype).itemsize


def is_float_type(dtype) -> bool:
    d = _dtype(dtype)
    return np.issubdtype(d, np.floating) or d in (bfloat16, float8_e4m3, float8_e4m3fn, float8_e5m2, float4_e2m1fn)


def finfo(dtype):
    return ml_dtypes.finfo(_dtype(dtype))
