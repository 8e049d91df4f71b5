"""Timing helpers shared by the benchmarks: median wall time of repeated calls."""

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeats: int = 15, inner: int = 1, warmup: int = 3) -> float:
    """Median over `repeats` of the mean time of `inner` back-to-back calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}"
        n /= 1024
    return str(n)
