"""NKI's data types are PyTorch's: `nl.bfloat16` is `torch.bfloat16` and the
fp8 formats are PyTorch's fp8 dtypes, so tiles hold real fp8 values (casts
round to nearest even, as the hardware's do). NumPy dtypes, ml_dtypes and
strings are accepted wherever a dtype is. `fp32` and `bfp16` hold the
lowest finite values that kernels use as -inf (`nl.fp32.min`)."""

import torch

from ..errors import NKIError

float32 = torch.float32
tfloat32 = torch.float32  # stored as fp32; the Tensor engine's tf32 rounding is not modelled
float16 = torch.float16
bfloat16 = torch.bfloat16
float8_e4m3 = torch.float8_e4m3fn  # Trainium2's e4m3: no infinities, max 448
float8_e5m2 = torch.float8_e5m2
int8 = torch.int8
int16 = torch.int16
int32 = torch.int32
int64 = torch.int64
uint8 = torch.uint8
uint16 = torch.uint16
uint32 = torch.uint32
bool_ = torch.bool


class fp32:  # noqa: N801  (AWS's name)
    """`nl.fp32.min`: the lowest finite fp32 (0xff7fffff), the masks' stand-in for -inf."""

    min = -3.4028234663852886e38


class bfp16:  # noqa: N801
    min = -3.3895313892515355e38  # 0xff7f, the lowest finite bf16


_BY_NAME = {
    "float32": float32,
    "fp32": float32,
    "tfloat32": tfloat32,
    "float16": float16,
    "fp16": float16,
    "bfloat16": bfloat16,
    "bf16": bfloat16,
    "float8_e4m3": float8_e4m3,
    "float8_e4m3fn": float8_e4m3,
    "float8_e5m2": float8_e5m2,
    "int8": int8,
    "int16": int16,
    "int32": int32,
    "int64": int64,
    "uint8": uint8,
    "uint16": uint16,
    "uint32": uint32,
    "bool": bool_,
    "float64": float32,
}

FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


def to_torch(dtype) -> torch.dtype:
    """The torch dtype for any spelling of an NKI dtype."""
    if isinstance(dtype, torch.dtype):
        return torch.float32 if dtype == torch.float64 else dtype
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
    name = str(name).replace("numpy.", "").replace("torch.", "")
    if name in _BY_NAME:
        return _BY_NAME[name]
    try:
        import numpy as np

        return _BY_NAME[np.dtype(dtype).name]
    except Exception:
        raise NKIError(
            f"{dtype!r} is not an NKI dtype: use nl.float32, nl.bfloat16, nl.float16, "
            f"nl.float8_e4m3, nl.float8_e5m2 or an integer type"
        ) from None


def is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


_FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


def promote(a: torch.dtype, b: torch.dtype) -> torch.dtype:
    """The output dtype of a binary op on tiles of dtypes a and b, by NKI's
    promotion table: a float wins over an int, the wider float wins, fp16 with
    bf16 gives fp32, fp8 with a wider float gives that float, two different
    fp8 formats give bf16."""
    if a == b:
        return a
    if a in _FP8 or b in _FP8:
        if a in _FP8 and b in _FP8:
            return torch.bfloat16
        other, fp8 = (b, a) if a in _FP8 else (a, b)
        return other if other.is_floating_point else fp8
    return torch.promote_types(a, b)


def weak(value) -> torch.dtype:
    """The type a Python scalar takes in arithmetic with a tile (NKI's weak
    typing: bool is uint8, int is int32, float is float32)."""
    if isinstance(value, bool):
        return torch.uint8
    if isinstance(value, int):
        return torch.int32
    return torch.float32
