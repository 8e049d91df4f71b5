"""The NKI cost model against published Trainium figures, unfitted.

Runs AWS's own matrix-multiplication tutorial kernels, from a checkout of
github.com/aws-neuron/aws-neuron-sdk (nki/examples/matrix_multiplication,
read, never copied), at the sizes of AWS's published measurements on `meta`
tensors: a call on meta tensors traces the kernel and records its estimate
without computing anything. Prints one row per figure: published value,
estimate, ratio (estimate / published). docs/nki.md holds the table and the
sources.

    .venv/bin/python benchmarks/estimates/nki_cost_validation.py PATH/TO/aws-neuron-sdk   (15-20 minutes on 2 cores)
"""

import importlib.util
import os
import sys
from pathlib import Path

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
import torch
from _figures import Table, report

import torch_neuronx.nki.isa as nisa
import torch_neuronx.nki.language as nl
from torch_neuronx import nki


def meta(*shape, dtype):
    return torch.empty(*shape, dtype=dtype, device="meta")


@nki.jit
def dma_4x4096(in_tensor):
    """AWS's DMA overview, example 1: A[4, 4096] bf16 HBM -> SBUF -> HBM."""
    out = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    sb = nl.ndarray((4, 4096), dtype=in_tensor.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=in_tensor[0:4, 0:4096])
    nisa.dma_copy(dst=out, src=sb)
    return out


def matmul_rows(mod, target, dtype, published, label):
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = target
    M, K, N = 4096, 8192, 8192
    rows = []
    for name, ms in published:
        try:
            getattr(mod, name)(meta(M, K, dtype=dtype).T, meta(K, N, dtype=dtype))
        except nki.NKIError as e:  # the limit checks refuse this kernel at this size
            rows.append((f"{label} {name}", ms * 1000, None, f"refused: {e}"))
            _print(rows[-1])
            continue
        e = nki.last_estimate()
        rows.append((f"{label} {name}", ms * 1000, e.total_us, e.bottleneck))
        _print(rows[-1])
    return rows


def _print(row):
    """Progress on stderr (the run takes minutes); the table comes at the end."""
    label, pub, est, neck = row
    print(
        f"{label}: published {pub:.1f} us, estimate {est if est is None else round(est, 1)} us, {neck}",
        file=sys.stderr,
        flush=True,
    )


def tutorial_kernels(sdk: Path):
    """AWS's matmul tutorial module from the SDK checkout, imported unchanged."""
    path = sdk / "nki" / "examples" / "matrix_multiplication" / "matrix_multiplication_nki_kernels.py"
    if not path.is_file():
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/aws-neuron-sdk (no {path.relative_to(sdk)} there)")
    spec = importlib.util.spec_from_file_location("matrix_multiplication_nki_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/aws-neuron-sdk (a checkout of github.com/aws-neuron/aws-neuron-sdk)")
    matmul = tutorial_kernels(Path(sys.argv[1]).resolve())

    rows = []
    # F1: matmul tutorial table, trn1, bf16, [4096, 8192] @ [8192, 8192] (Neuron 2.20-2.23 docs; measured
    # on that release's kernels, the same five algorithms the SDK now writes in today's language)
    rows += matmul_rows(
        matmul,
        "trn1",
        torch.bfloat16,
        [
            ("nki_matmul_tiled_", 51.80),
            ("nki_matmul_hoist_load_", 42.96),
            ("nki_matmul_block_free_dimension_", 22.07),
            ("nki_matmul_fully_optimized_", 6.97),
        ],
        "F1 trn1 bf16",
    )
    # F2: kernel-optimization tutorial, trn2, fp32, same shapes (profile totals)
    rows += matmul_rows(
        matmul,
        "trn2",
        torch.float32,
        [
            ("nki_matmul_tiled_", 39.89),
            ("nki_matmul_hoist_load_", 28.20),
            ("nki_matmul_block_free_dimension_", 28.41),
            ("nki_matmul_fully_optimized_", 28.30),
        ],
        "F2 trn2 fp32",
    )
    # F4: DMA overview example 1, trn2: one DMA engine moves 32 KiB HBM -> SBUF in 1416 ns
    os.environ["NEURON_PLATFORM_TARGET_OVERRIDE"] = "trn2"
    dma_4x4096(meta(4, 4096, dtype=torch.bfloat16))
    first = nki.last_estimate().timeline[0]
    rows.append(("F4 trn2 dma_copy 32 KiB (engine time)", 1.416, first[3], "dma"))
    _print(rows[-1])
    table = Table(
        "the NKI cost model against published Trainium figures (unfitted)",
        ["figure", "published us", "estimate us", "estimate/published", "bottleneck"],
        note="Against AWS's published measurements of its own kernels (docs/nki.md names the sources); "
        "the kernels traced on meta tensors, nothing computed.",
    )
    for label, pub, est, neck in rows:
        table.add(label, pub, est, None if est is None else est / pub, neck)
    report("nki_cost_validation", [table])
    return rows


if __name__ == "__main__":
    sys.exit(main() and 0)
