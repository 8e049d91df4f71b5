"""Which ops ran on neuron tensors, which fell back to the CPU with copies, and
what was staged through host copies on a device the host cannot address."""

from collections import Counter

from .. import _C

_kernel_runs: Counter = Counter()  # NKI kernels run on neuron tensors, as "nki::<kernel>"


def record_kernel_run(name: str) -> None:
    """Counts one run of the NKI kernel `name` on neuron tensors."""
    _kernel_runs[f"nki::{name}"] += 1


def get_fallback_ops() -> dict[str, int]:
    """Ops that ran through the copying CPU fallback, with their run counts."""
    return dict(_C._fallback_ops())


def get_executed_ops() -> dict[str, int]:
    """Every op run on neuron tensors (native or fallback), with run counts;
    NKI kernels appear as "nki::<kernel function>"."""
    return {**dict(_C._executed_ops()), **_kernel_runs}


def clear_op_tracking() -> None:
    """Resets both counters and re-arms the once-per-op fallback warning."""
    _C._clear_op_tracking()
    _kernel_runs.clear()


def set_fallback_warnings(enabled: bool) -> None:
    """Turns the once-per-op fallback warning on or off (also TORCH_NEURONX_FALLBACK_WARN=0)."""
    _C._set_fallback_warnings(bool(enabled))


def host_staging_stats() -> dict[str, int]:
    """Copies of device bytes staged for host code (to_host_copies, to_host_bytes,
    to_device_copies, to_device_bytes) since the start or the last reset: zero on
    a host-addressable device (the emulator's default), the price of host
    compute and collectives on a device that is not (TORCH_NEURONX_EMU_HOST_ADDRESSABLE=0)."""
    return dict(_C._host_staging_stats())


def reset_host_staging_stats() -> None:
    _C._reset_host_staging_stats()
