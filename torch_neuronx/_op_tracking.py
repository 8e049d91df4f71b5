"""Which ops ran on neuron tensors, and which fell back to the CPU with copies."""

from . import _C


def get_fallback_ops() -> dict[str, int]:
    """Ops that ran through the copying CPU fallback, with their run counts."""
    return dict(_C._fallback_ops())


def get_executed_ops() -> dict[str, int]:
    """Every op run on neuron tensors (native or fallback), with run counts."""
    return dict(_C._executed_ops())


def clear_op_tracking() -> None:
    """Resets both counters and re-arms the once-per-op fallback warning."""
    _C._clear_op_tracking()


def set_fallback_warnings(enabled: bool) -> None:
    """Turns the once-per-op fallback warning on or off (also TORCH_NEURONX_FALLBACK_WARN=0)."""
    _C._set_fallback_warnings(bool(enabled))
