"""`nl`'s types as kernels name them: `nl.NKIObject`, the base of the
dataclasses and helper objects a kernel passes around; `nl.NkiTensor` /
`nl.tensor` / `nl.tile`, the type of every tensor and tile a kernel holds;
`nl.dtype`, the type of `nl.float32` and the others (chip/dtypes.py).
AWS's compiler traces NKIObject fields; on the emulator a kernel is plain
Python, so an NKIObject is a plain object."""

from ..chip.dtypes import DType
from ..trace.tile import Tile


class NKIObject:
    """`NKIObject(**fields)` sets each field; dataclass subclasses bring their own __init__."""

    def __init__(self, **kwargs):
        for name, value in kwargs.items():
            setattr(self, name, value)


NkiTensor = tensor = tile = Tile
dtype = DType
