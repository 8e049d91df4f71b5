"""The Trainium2 estimate against published measurements, unfitted.

Each model figure is estimated analytically, op by op, for one tensor-parallel
rank (a logical core: LNC=2, two NeuronCore-v3) from the model's published
config, with the same functions TrainiumEstimate charges: trainium.roofline_s
for each matmul, attention, norm and elementwise op (its work split over the
rank's physical cores, each op its own kernel with its fixed DMA cost), and
estimation.collectives.collective_s for the TP all-reduces and the logits
all-gather. The collective figures call collective_s directly; the matmul
figure calls roofline_s for AWS's NKI matmul tutorial shapes. No real model
runs; the constants were fixed before any ratio was seen.
docs/estimates.md holds the table and what the ratios say.

    .venv/bin/python benchmarks/estimates/estimate_validation.py   (under a second)
"""

import sys
from dataclasses import dataclass

import _shared  # noqa: F401  (benchmarks/ on sys.path: the shared helpers)
from _figures import Table, report

from torch_neuronx import trainium
from torch_neuronx.estimation.collectives import collective_s

CORE = trainium.TRN2
BF16 = 2


@dataclass(frozen=True)
class Model:  # from each model's Hugging Face config.json
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int


LLAMA_3_3_70B = Model(80, 8192, 64, 8, 128, 28672, 128256)
LLAMA_3_1_405B = Model(126, 16384, 128, 8, 128, 53248, 128256)
LLAMA_3_1_8B = Model(32, 4096, 32, 8, 128, 14336, 128256)
QWEN3_32B = Model(64, 5120, 64, 8, 128, 25600, 151936)


def op_s(flops=0.0, hbm_bytes=0.0, elements=0.0, engine="vector") -> float:
    """One op on one rank: its work split over the rank's physical cores."""
    lnc = CORE.lnc
    return trainium.roofline_s(
        CORE, flops=flops / lnc, hbm_bytes=hbm_bytes / lnc, elements=elements / lnc, engine=engine
    )


def forward_s(m: Model, tp: int, tokens: int, context: int, batch: int = 1) -> dict[str, float]:
    """Seconds of one forward pass on one of `tp` ranks: `tokens` new tokens
    per sequence (a prefill, or 1 for a decode step) attending to `context`
    tokens (for a prefill: causal, the average is half), logits for the last
    token only (as NxD Inference's context encoding). By op family."""
    n = batch * tokens  # rows through the matmuls
    q_heads = m.heads // tp
    kv_heads = max(m.kv_heads // tp, 1)  # KV heads replicated up to tp
    qkv = (q_heads + 2 * kv_heads) * m.head_dim
    inter = m.intermediate // tp
    attended = context / 2 if tokens > 1 else context  # causal prefill attends to half on average

    def matmul(k, cols, rows=n):
        return op_s(flops=2 * rows * k * cols, hbm_bytes=(rows * k + k * cols + rows * cols) * BF16)

    def elementwise(elements, inputs=1, engine="vector"):
        return op_s(hbm_bytes=elements * (inputs + 1) * BF16, elements=elements, engine=engine)

    per_layer = {
        "matmul": matmul(m.hidden, qkv)
        + matmul(q_heads * m.head_dim, m.hidden)
        + matmul(m.hidden, 2 * inter)
        + matmul(inter, m.hidden),
        # one fused (flash) attention kernel: QK^T and PV on the Tensor engine,
        # exp on the Scalar engine, K/V read from the cache, Q and O through HBM
        "attention": op_s(
            flops=4 * n * attended * m.head_dim * q_heads,
            hbm_bytes=(batch * context * 2 * kv_heads + 2 * n * q_heads) * m.head_dim * BF16,
            elements=n * attended * q_heads,
            engine="scalar",
        ),
        "norm/elementwise": 2 * elementwise(n * m.hidden)  # two RMSNorms
        + elementwise(n * (q_heads + kv_heads) * m.head_dim, 2)  # RoPE on q and k
        + elementwise(n * inter, 2, "scalar")  # SiLU(gate) * up
        + 2 * elementwise(n * m.hidden, 2),  # two residual adds
        "collective": 2 * collective_s(CORE, "all_reduce", n * m.hidden * BF16, tp),
    }
    parts = {k: v * m.layers for k, v in per_layer.items()}
    parts["matmul"] += matmul(m.hidden, m.vocab // tp, rows=batch)  # lm_head, last token
    parts["norm/elementwise"] += op_s(hbm_bytes=2 * n * m.hidden * BF16) + elementwise(
        batch * m.hidden
    )  # embedding gather, final norm
    parts["collective"] += collective_s(CORE, "all_gather", batch * m.vocab * BF16, tp)  # logits
    return parts


GiB = 1 << 30
NXDI = "aws-neuron-sdk libraries/nxd-inference/tutorials/"
ROWS = [
    # (figure, source, published seconds, estimate parts)
    (
        "Llama-3.3-70B TPOT, trn2.48xlarge TP64, BS1, 10k in/1.5k out (P50)",
        NXDI + "llama70b_perf_comparison.csv",
        19.6e-3,
        lambda: forward_s(LLAMA_3_3_70B, 64, 1, 10_000 + 750),
    ),
    (
        "Llama-3.3-70B TTFT, same run (P50)",
        NXDI + "llama70b_perf_comparison.csv",
        814.2e-3,
        lambda: forward_s(LLAMA_3_3_70B, 64, 10_000, 10_000),
    ),
    (
        "Llama-3.1-405B TPOT, trn2.48xlarge TP64, BS1, 10k in/1.5k out (P50)",
        NXDI + "llama405b_perf_comparison.csv",
        37.9e-3,
        lambda: forward_s(LLAMA_3_1_405B, 64, 1, 10_000 + 750),
    ),
    (
        "Llama-3.1-405B TTFT, same run (P50)",
        NXDI + "llama405b_perf_comparison.csv",
        2442e-3,
        lambda: forward_s(LLAMA_3_1_405B, 64, 10_000, 10_000),
    ),
    (
        "Qwen3-32B TTFT, trn2 TP64, BS1, 128 in (P99)",
        NXDI + "sd-inference-tutorial.rst",
        48.3e-3,
        lambda: forward_s(QWEN3_32B, 64, 128, 128),
    ),
    (
        "Llama-3.1-8B ITL, trn2 TP4, 1 user, ~1.5k in/250 out",
        "optimum-neuron benchmark/vllm/single-instance/llama-3.1-8b-trn2/vllm-results.csv (synchronous)",
        22.1356e-3,
        lambda: forward_s(LLAMA_3_1_8B, 4, 1, 1500 + 125),
    ),
    (
        "nccom-test all-reduce fp32 16 ranks 512 MiB (kangaring)",
        "aws-neuron-sdk tools/neuron-sys-tools/nccom-test.rst",
        9689.51e-6,
        lambda: {"collective": collective_s(CORE, "all_reduce", 512 << 20, 16)},
    ),
    (
        "nccom-test all-reduce fp32 16 ranks 32 MiB (kangaring)",
        "same table",
        2754.15e-6,
        lambda: {"collective": collective_s(CORE, "all_reduce", 32 << 20, 16)},
    ),
    (
        "nccom-test all-reduce fp32 16 ranks 2 MiB (rdh)",
        "same table",
        686.32e-6,
        lambda: {"collective": collective_s(CORE, "all_reduce", 2 << 20, 16)},
    ),
    (
        "nccom-test all-reduce fp32 16 ranks 4 B (mesh)",
        "same table",
        299.91e-6,
        lambda: {"collective": collective_s(CORE, "all_reduce", 4, 16)},
    ),
    (
        "NKI matmul fp32 [4096,8192]@[8192,8192], one NC-v3, fully optimized",
        "aws-neuron-sdk NKI kernel-optimization tutorial (docs/nki.md F2 v5)",
        28.30e-3,
        lambda: {
            "matmul": trainium.roofline_s(
                CORE,
                flops=2 * 4096 * 8192 * 8192,
                fp32_matmul=True,
                hbm_bytes=(4096 * 8192 + 8192 * 8192 + 4096 * 8192) * 4,
            )
        },
    ),
]


def main():
    table = Table(
        "the Trainium2 estimate against published measurements (unfitted)",
        ["figure", "published ms", "estimate ms", "estimate/published", "largest part", "largest part %", "source"],
        note="Against the published figure of each source; the estimate is analytical (no model runs), "
        "its constants fixed before any ratio was seen.",
    )
    rows = []
    for figure, source, published, estimate in ROWS:
        parts = estimate()
        total = sum(parts.values())
        top = max(parts, key=parts.get)
        rows.append((figure, source, published, total, total / published))
        table.add(figure, published * 1e3, total * 1e3, total / published, top, 100 * parts[top] / total, source)
    report("estimate_validation", [table])
    return rows


if __name__ == "__main__":
    sys.exit(main() and 0)
