"""The enums of nki.isa calls: engines, reduce commands, DMA and matmul modes,
NeuronCore versions (`get_nc_version`), as AWS spells them: Enums, so
kernels and test harnesses may read `.name`; the integer ones compare with
ints. Options this emulator does not model are accepted and change nothing."""

from __future__ import annotations

import enum

from ..errors import NKIError
from ..trace import state


class engine(enum.IntEnum):  # noqa: N801
    unknown, tensor, scalar, gpsimd, dma, vector, sync = 0, 1, 2, 3, 4, 5, 6


tensor_engine, scalar_engine, gpsimd_engine, vector_engine, unknown_engine = (
    engine.tensor,
    engine.scalar,
    engine.gpsimd,
    engine.vector,
    engine.unknown,
)


class reduce_cmd(enum.IntEnum):  # noqa: N801
    idle, reset, reduce, reset_reduce, load_reduce = 0, 1, 2, 3, 4


class dge_mode(enum.IntEnum):  # noqa: N801
    unknown, swdge, hwdge, none = 0, 1, 2, 3


class dma_engine(enum.IntEnum):  # noqa: N801
    dma, gpsimd_dma = 1, 2


class oob_mode(enum.IntEnum):  # noqa: N801
    error, skip = 0, 1


class nc_version(enum.IntEnum):  # noqa: N801
    gen2, gen3, gen4 = 2, 3, 4


class matmul_perf_mode(enum.StrEnum):  # noqa: N801
    none, double_row = "none", "double_row"


NkiValidationError = NKIError

ENGINE_NAMES = {
    engine.tensor: "tensor",
    engine.scalar: "scalar",
    engine.gpsimd: "gpsimd",
    engine.vector: "vector",
    engine.dma: "dma",
}


def engine_name(e, default: str) -> str:
    """The cost model's name of an `engine=` argument (`default` when unknown or None)."""
    return ENGINE_NAMES.get(e, default) if e not in (None, engine.unknown) else default


def get_nc_version():
    tr = state.current()
    target = tr.target if tr is not None else "trn2"
    return {"trn1": nc_version.gen2, "trn2": nc_version.gen3, "trn3": nc_version.gen4}[target]


def get_nc_sub_version():
    return 0
