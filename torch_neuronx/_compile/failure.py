"""What to do when Inductor cannot compile a graph for neuron: name the op and
the reason in the error, or, when the user opted in, run that graph eagerly
(op by op on the device) and count it in the compile metrics.

Opt in with `TORCH_NEURONX_COMPILE_FALLBACK=1` or
`torch.compile(..., backend="neuron", options={"eager_fallback": True})`."""

import re
import warnings

from .. import settings
from .metrics import count_fallback

FALLBACK_OPTION = "eager_fallback"
FALLBACK_ENV = "TORCH_NEURONX_COMPILE_FALLBACK"


class NeuronCompileError(RuntimeError):
    """Inductor could not compile a graph for neuron; `op` and `reason` say why."""

    def __init__(self, op: str, reason: str):
        self.op, self.reason = op, reason
        super().__init__(
            f"Inductor could not compile a graph for neuron: op {op}: {reason}. Rewrite or avoid that op in "
            f"the compiled region, or opt in to running such graphs eagerly with {FALLBACK_ENV}=1 or "
            f'torch.compile(..., backend="neuron", options={{"{FALLBACK_OPTION}": True}}).'
        )


def fallback_enabled(option) -> bool:
    if option is not None:
        return bool(option)
    return settings.flag(FALLBACK_ENV)


def describe(exc: BaseException) -> tuple[str, str]:
    """(op, reason) of a compile failure. Inductor's lowering errors carry the
    failing node's target as a `target: ...` line; any other failure (C++
    compilation, tracing) has no single op and is named by its stage."""
    chain, e = [], exc
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ or e.__context__
    for e in chain:
        text = str(e)
        match = re.search(r"^\s*target: (\S+)", text, re.MULTILINE)
        if match:
            first = text.strip().splitlines()[0]
            return match.group(1), first
    root = chain[-1]
    stage = (
        "C++ compilation of the generated kernels"
        if "CppCompileError" in type(root).__name__
        else "the graph as a whole"
    )
    return f"<{stage}>", f"{type(root).__name__}: {str(root).strip().splitlines()[0] if str(root).strip() else ''}"


def eager_fallback(gm, exc: BaseException):
    """The graph's own forward (eager ATen on neuron), after recording why."""
    op, reason = describe(exc)
    count_fallback(op, reason)
    warnings.warn(
        f"torch_neuronx: running one compiled graph eagerly on neuron because Inductor could not "
        f"compile op {op}: {reason}",
        RuntimeWarning,
        stacklevel=2,
    )
    return gm.forward
