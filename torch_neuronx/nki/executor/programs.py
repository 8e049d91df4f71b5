"""The two programs of an LNC=2 launch that meet (`nisa.sendrecv`,
`nisa.core_barrier`), run at once: core 1's steps on a thread of their own,
core 0's on the calling thread, sharing the call's HBM tensors, as AWS's
simulator runs them. They meet through a `Rendezvous`; a program that fails
breaks it, so the other stops at its next meeting instead of waiting, and a
meeting whose partner's program has ended fails at once (a dynamic loop that
ran more often on one core), and one that waits longer than `TIMEOUT_S`
fails both (the trace has already refused kernels whose calls do not pair,
trace/syncs.py, so that would be a program still computing).
"""

from __future__ import annotations

import threading

import torch

from ..errors import NKIError
from ..trace.syncs import RENDEZVOUS

TIMEOUT_S = 600.0


class Rendezvous:
    """Where the Nth meeting call of one core finds the Nth of the other."""

    def __init__(self, kernel_name: str):
        self.kernel_name = kernel_name
        self.cond = threading.Condition()
        self.slots: dict = {}  # (n, pass, core) -> the value that core brought to the pass-th run of meeting n
        self.passes: dict = {}  # (core, n) -> how often that core has reached meeting n (a dynamic loop repeats it)
        self.finished: set = set()  # the cores whose program has ended
        self.failed: str | None = None

    def exchange(self, sync, value):
        if isinstance(value, torch.Tensor):
            value = value.clone()  # the sender may overwrite its tile before the receiver has copied it
        other = 1 - sync.core
        with self.cond:
            k = self.passes[(sync.core, sync.n)] = self.passes.get((sync.core, sync.n), 0) + 1
            peer = (sync.n, k, other)
            self.slots[(sync.n, k, sync.core)] = value
            self.cond.notify_all()
            arrived = self.cond.wait_for(
                lambda: peer in self.slots or self.failed is not None or other in self.finished, TIMEOUT_S
            )
            if peer not in self.slots:  # the caller's failure breaks the meeting for the other core (run_two)
                if self.failed is not None:
                    why = self.failed
                elif not arrived:
                    why = f"waited {TIMEOUT_S:.0f} s for core {other}"
                else:  # the other program ended: a dynamic loop ran more often on this core
                    why = f"core {other} ended its program without reaching it a {_nth(k)} time"
                raise NKIError(f"{sync.describe()}: {why}", kernel=self.kernel_name)
            return self.slots.pop(peer)

    def finish(self, core: int):
        with self.cond:
            self.finished.add(core)
            self.cond.notify_all()

    def fail(self, why: str) -> bool:
        """Breaks the meeting; True for the first failure."""
        with self.cond:
            first = self.failed is None
            if first:
                self.failed = why
            self.cond.notify_all()
            return first


def run_two(kernel_name: str, env, steps_of_core, run_steps):
    """Runs run_steps(env, steps_of_core[c]) for cores 0 and 1 at once; raises the first failure."""
    rv = env[-1][RENDEZVOUS] = Rendezvous(kernel_name)
    first: list = []  # the failure that broke the meeting
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    def core(c):
        try:
            with torch.inference_mode(inference), torch.set_grad_enabled(grad):
                run_steps(env, steps_of_core[c])
            rv.finish(c)
        except BaseException as e:  # noqa: BLE001  (handed to the calling thread)
            if rv.fail(f"core {c} failed: {e}"):
                first.append(e)

    other = threading.Thread(target=core, args=(1,), name=f"nki {kernel_name} core 1", daemon=True)
    other.start()
    core(0)
    other.join()
    del env[-1][RENDEZVOUS]
    if first:
        raise first[0]


def _nth(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"
