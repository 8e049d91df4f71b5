"""Binding the arguments of an nki.isa call in either of AWS's styles.

The tutorials' (NKI 0.1) style returns a new tile: `t = nisa.activation(op=nl.exp, data=x)`.
The newer style (NKI 0.2+) writes an explicit destination given first:
`nisa.activation(dst, op=nl.exp, data=x)`. `new_style` tells them apart,
`split` binds positional and keyword arguments to an instruction's parameters
(REQ marks a required one, `need` checks them), `out_dtype` is the dtype of a
new destination."""

from __future__ import annotations

from ..chip import dtypes
from ..errors import NKIError, NKIUnsupported
from ..trace import state
from ..trace.tile import Tile


def new_style(args, kwargs, legacy_first_is_tile: bool, ntiles_new: int = 1, first: str | None = None) -> bool:
    """Whether a call is in the dst-first style. `first` names the older
    style's first operand: a leading tile passed beside it by keyword
    (`nc_matmul(psum_view, stationary=a, moving=b)`) is the destination."""
    if "dst" in kwargs:
        return True
    if first is not None and first in kwargs and args and isinstance(args[0], Tile):
        return True
    tiles = 0
    for a in args:
        if isinstance(a, Tile):
            tiles += 1
        else:
            break
    if legacy_first_is_tile:
        return tiles > ntiles_new
    return tiles >= 1


def split(args, kwargs, names):
    """Binds positional and keyword arguments to `names` (a dict of name ->
    default, in order): too many positional ones raise, keyword options this
    emulator does not model are ignored."""
    out = dict(names)
    for n, a in zip(names, args):
        out[n] = a
    if len(args) > len(names):
        raise NKIError(f"too many positional arguments ({len(args)}); expected {list(names)}")
    for k, v in kwargs.items():
        if k not in out and k not in ("name", "mask", "engine", "dtype"):
            continue  # options this emulator does not model (priority, dge_mode, ...)
        out[k] = v
    return out


REQ = object()


def need(d, *names):
    for n in names:
        if d.get(n) is REQ:
            raise NKIError(f"missing argument {n!r}")


def out_dtype(d, data):
    if d.get("dst") is not None:
        return None
    return dtypes.to_torch(d["dtype"]) if d.get("dtype") is not None else data.dtype


def trainium3_only(name: str):
    """A Trainium3 (NeuronCore-v4) instruction the emulator does not model
    yet: on an earlier target it is refused as AWS's compiler refuses it, on
    trn3 it says it is not emulated."""

    def call(*args, **kwargs):
        tr = state.require(f"nisa.{name}")
        if tr.target != "trn3":
            raise tr.error(
                f"nisa.{name} is available only on NeuronCore-v4 and newer (Trainium3); this kernel is traced for "
                f"{tr.target}: pass platform_target='trn3' (or NEURON_PLATFORM_TARGET_OVERRIDE=trn3)"
            )
        raise NKIUnsupported(
            f"nisa.{name} on trn3 is not supported by the NKI emulator yet (docs/nki.md lists what is)"
        )

    call.__name__ = call.__qualname__ = name
    return call
