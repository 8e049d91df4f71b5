"""What a soak phase samples at its step boundaries and the verdict on it
(docs/develop.md). Each sample is taken after
torch.neuron.synchronize(), when the step's tensors are gone: neuron's
allocated and reserved bytes, the process's resident set, its open file
descriptors and threads, and the project's /dev/shm segments.

The verdict over the samples after warm-up: allocated bytes equal at every
boundary (the steady state), reserved bytes no higher at the end than at the
start of it, the resident set within RSS_BOUND of it, and the same number of
descriptors, threads and segments."""

import json
import os
import time

import torch

RSS_BOUND = 64 << 20  # bytes the resident set may grow after warm-up, over a whole phase


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def threads() -> int:
    with open("/proc/self/status") as f:
        return int(next(line.split()[1] for line in f if line.startswith("Threads:")))


def shm_segments() -> int:
    """The project's /dev/shm segments this process created (its pid is in the
    name), so that other tests running beside the soak do not count."""
    mine = str(os.getpid())
    return sum(n.startswith("torch_neuronx_") and n.rsplit("_", 3)[-3] == mine for n in os.listdir("/dev/shm"))


class Sampler:
    def __init__(self, phase: str, steps: int, warmup: int):
        self.phase, self.steps, self.warmup, self.rows = phase, steps, warmup, []
        self.start = time.time()

    def sample(self, step: int) -> None:
        torch.neuron.synchronize()
        self.rows.append(
            dict(
                step=step,
                allocated=torch.neuron.memory_allocated(),
                reserved=torch.neuron.memory_reserved(),
                rss=rss(),
                fds=len(os.listdir("/proc/self/fd")),
                threads=threads(),
                shm=shm_segments(),
            )
        )

    def verdict(self) -> dict:
        steady = [r for r in self.rows if r["step"] >= self.warmup]
        base, end = steady[0], steady[-1]
        problems = []
        moved = [r for r in steady if r["allocated"] != base["allocated"]]
        if moved:
            problems.append(
                f"allocated bytes left the steady state {base['allocated']}: "
                + ", ".join(f"step {r['step']}: {r['allocated']}" for r in moved[:5])
            )
        if end["reserved"] > base["reserved"]:
            problems.append(f"reserved bytes grew from {base['reserved']} to {end['reserved']}")
        if end["rss"] - base["rss"] > RSS_BOUND:
            problems.append(f"resident set grew by {(end['rss'] - base['rss']) >> 20} MiB (bound {RSS_BOUND >> 20})")
        for key in ("fds", "threads", "shm"):
            if end[key] != base[key]:
                problems.append(f"{key}: {base[key]} after warm-up, {end[key]} at the end")
        half = steady[len(steady) // 2]
        return dict(
            phase=self.phase,
            steps=self.steps,
            warmup=self.warmup,
            seconds=round(time.time() - self.start, 1),
            allocated=base["allocated"],
            max_allocated=torch.neuron.max_memory_allocated(),
            reserved=(base["reserved"], end["reserved"]),
            rss_mib=(round(base["rss"] / 2**20, 1), round(half["rss"] / 2**20, 1), round(end["rss"] / 2**20, 1)),
            fds=(base["fds"], end["fds"]),
            threads=(base["threads"], end["threads"]),
            shm=(base["shm"], end["shm"]),
            problems=problems,
        )

    def report(self, **extra) -> bool:
        """Prints the verdict as one "SOAK {json}" line; True if it passed."""
        v = {**self.verdict(), **extra}
        print("SOAK " + json.dumps(v), flush=True)
        return not v["problems"]
