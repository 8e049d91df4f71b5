"""Starts a benchmark's ranks: `world` interpreters running a worker's source
(`python -c`), which meet through the FileStore at $BENCH_STORE; one thread
each, this process's NEURON_* / TORCH_NEURONX_* settings left out."""

import os
import subprocess
import sys
import tempfile


def run_ranks(worker: str, world: int, timeout: float = 1800, **extra_env: str) -> str:
    """Runs `worker` as ranks 0..world-1; returns rank 0's stdout, or exits
    naming every rank that failed, with its stderr."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "TORCH_NEURONX_"))}
        env.update(
            WORLD_SIZE=str(world),
            OMP_NUM_THREADS="1",
            BENCH_STORE=os.path.join(tmp, "store"),
            TORCH_NEURONX_FALLBACK_WARN="0",
            **extra_env,
        )
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", worker],
                env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for r in range(world)
        ]
        outs = [p.communicate(timeout=timeout) for p in procs]
    failed = [
        f"rank {r} exited {p.returncode}:\n{err[-2000:]}"
        for r, (p, (_, err)) in enumerate(zip(procs, outs))
        if p.returncode != 0
    ]
    if failed:
        raise SystemExit("benchmark ranks failed:\n" + "\n".join(failed))
    return outs[0][0]
