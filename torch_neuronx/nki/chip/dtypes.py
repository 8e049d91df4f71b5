"""NKI's data types. `nl.bfloat16` and the others are `DType`s: to the
emulator each is a PyTorch dtype (`.torch`; it compares and hashes equal to
that dtype, so `tile.dtype == nl.bfloat16` holds and dicts keyed by nl
dtypes find a tile's dtype), and to NumPy a NumPy dtype (`.dtype`, so test
data can be `x.astype(nl.bfloat16)` as with AWS's simulator; the
low-precision formats need ml_dtypes imported). Tiles hold PyTorch dtypes,
and fp8 tiles hold real fp8 values (casts round to nearest even, as the
hardware's do). NumPy dtypes, ml_dtypes and strings are accepted wherever
a dtype is. `fp32` and `bfp16` hold the lowest finite values that kernels
use as -inf (`nl.fp32.min`)."""

import torch

from ..errors import NKIError, NKIUnsupported

_NUMPY_OWN = {"float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "bool"}


class DType:
    """One NKI dtype: its NKI name, its PyTorch dtype and its NumPy name."""

    __slots__ = ("name", "torch", "numpy_name")

    def __init__(self, name: str, torch_dtype: torch.dtype, numpy_name: str | None = None):
        self.name, self.torch, self.numpy_name = name, torch_dtype, numpy_name or name

    @property
    def dtype(self):
        """The NumPy dtype (what `np.dtype(nl.bfloat16)` and `astype` read)."""
        import numpy as np

        if self.numpy_name not in _NUMPY_OWN:
            import ml_dtypes  # noqa: F401  (registers bfloat16 and the fp8 formats with NumPy)
        return np.dtype(self.numpy_name)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.torch == other.torch
        if isinstance(other, torch.dtype):
            return self.torch == other
        if isinstance(other, str):
            return other in (self.name, self.numpy_name)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.torch)

    def __getattr__(self, attr):  # is_floating_point, itemsize, ... of the PyTorch dtype
        if attr in DType.__slots__:
            raise AttributeError(attr)
        return getattr(self.torch, attr)

    def __repr__(self):
        return f"nl.{self.name}"

    def __str__(self):  # AWS's kernels compare str(dtype) with "float8_e4m3" and the like
        return self.name


float32 = DType("float32", torch.float32)
# tfloat32 is stored as fp32: the Tensor engine's tf32 rounding is not modelled
tfloat32 = DType("tfloat32", torch.float32, "float32")
float16 = DType("float16", torch.float16)
bfloat16 = DType("bfloat16", torch.bfloat16)
float8_e4m3 = DType("float8_e4m3", torch.float8_e4m3fn)  # Trainium2's e4m3: no infinities, max 448
float8_e4m3fn = DType("float8_e4m3fn", torch.float8_e4m3fn)
float8_e5m2 = DType("float8_e5m2", torch.float8_e5m2)
float8_e8m0fnu = DType("float8_e8m0fnu", torch.float8_e8m0fnu)  # MX scales: a power of two
int8 = DType("int8", torch.int8)
int16 = DType("int16", torch.int16)
int32 = DType("int32", torch.int32)
int64 = DType("int64", torch.int64)
uint8 = DType("uint8", torch.uint8)
uint16 = DType("uint16", torch.uint16)
uint32 = DType("uint32", torch.uint32)
bool_ = DType("bool_", torch.bool, "bool")


class PackedDType:
    """A packed MX format of NeuronCore-v4 (Trainium3): `lanes` values of
    `element` in one word (32 bits for fp8, 16 for fp4, as AWS packs them),
    the operands of nisa.nc_matmul_mx and nisa.quantize_mx. Kernels may name
    them on any target; a buffer of one is refused until the emulator models
    MX (to_torch)."""

    def __init__(self, name: str, element: str, lanes: int = 4, itemsize: int = 4):
        self.name, self.element, self.lanes = name, element, lanes
        self.itemsize = itemsize

    def __repr__(self):
        return f"nl.{self.name}"


float8_e4m3fn_x4 = PackedDType("float8_e4m3fn_x4", "float8_e4m3fn")
float8_e5m2_x4 = PackedDType("float8_e5m2_x4", "float8_e5m2")
float4_e2m1fn_x4 = PackedDType("float4_e2m1fn_x4", "float4_e2m1fn", itemsize=2)


class fp32:  # noqa: N801  (AWS's name)
    """`nl.fp32.min`: the lowest finite fp32 (0xff7fffff), the masks' stand-in for -inf."""

    min = -3.4028234663852886e38


class bfp16:  # noqa: N801
    min = -3.3895313892515355e38  # 0xff7f, the lowest finite bf16


# Every DType, the one that names a PyTorch dtype first (of_torch gives it).
_ALL = (
    float32,
    tfloat32,
    float16,
    bfloat16,
    float8_e4m3,
    float8_e4m3fn,
    float8_e5m2,
    float8_e8m0fnu,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    bool_,
)
_ALIASES = {"fp32": float32, "fp16": float16, "bf16": bfloat16, "float64": float32}
_BY_NAME = {
    **{d.name: d.torch for d in _ALL},
    **{d.numpy_name: d.torch for d in _ALL},
    **{alias: d.torch for alias, d in _ALIASES.items()},
}
_OF_TORCH = {d.torch: d for d in reversed(_ALL)}

FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2)


def of_torch(dtype: torch.dtype) -> DType:
    """The nl dtype of a tile's PyTorch dtype (what `tile.dtype` gives)."""
    return _OF_TORCH.get(dtype) or DType(str(dtype).replace("torch.", ""), dtype)


def to_torch(dtype) -> torch.dtype:
    """The torch dtype for any spelling of an NKI dtype."""
    if isinstance(dtype, DType):
        return dtype.torch
    if isinstance(dtype, torch.dtype):
        return torch.float32 if dtype == torch.float64 else dtype
    if isinstance(dtype, PackedDType):
        raise NKIUnsupported(
            f"{dtype!r} is a packed MX format of Trainium3 (nisa.nc_matmul_mx, nisa.quantize_mx), "
            f"which the NKI emulator does not model yet"
        )
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
    a, b = to_torch(a), to_torch(b)
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
