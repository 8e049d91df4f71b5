"""Random sequences of collectives for the collective-sequence fuzzer
(collective_worker.py, docs/develop.md). Every rank draws the same
sequence from the same seed, so the ranks agree on each call without talking.

A Step names the call, its group, dtype, sizes, reduce op, root, whether it
is async (and at which later step it is waited), whether neuron issues it on a
side stream, and where its tensors sit in their buffers (a storage offset, with
sentinels around them). Inputs are exact: floats are multiples of 1/2 (of 2**k
for PRODUCT), so every reduction order gives the same bits and gloo's result is
the reference bit for bit. Only what gloo supports is drawn; `bad` steps are
calls both backends must refuse (then the group must still work)."""

import random
from dataclasses import dataclass, field

import torch

DTYPES = [
    torch.float32,
    torch.bfloat16,
    torch.float16,
    torch.float64,
    torch.int64,
    torch.int32,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
]
REDUCE_OPS = ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]
KINDS = [
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "all_to_all_single",
    "all_to_all",
    "gather",
    "scatter",
    "send_recv",
    "barrier",
    "all_reduce_coalesced",
    "bad",
]
# complex64 only where gloo handles it (its gather, scatter and min/max/product refuse it).
COMPLEX_KINDS = {
    "all_reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "all_to_all_single",
    "send_recv",
    "all_reduce_coalesced",
}
# Calls both backends must refuse before any rank communicates.
BAD_CALLS = [
    "gather_into_wrong_size",
    "scatter_tensor_wrong_size",
    "bitwise_op_on_floats",
    "mixed_dtypes",
    "root_outside_group",
]
# One value of every size class: empty, one element, a few, around the eager
# buffer of the shared-memory transport (64 KiB), past one 4 MiB chunk.
SIZES = [0, 1, 2, 3, 5, 8, 13, 17, 100, 1000, 16389, 40000, 1100000]
SIZE_WEIGHTS = [6, 10, 6, 6, 6, 6, 5, 5, 8, 6, 3, 2, 0.3]


@dataclass
class Step:
    kind: str
    group: str  # a key of the worker's groups: "world", "0,1", ...
    members: list[int]  # global ranks, ascending
    dtype: torch.dtype
    n: int
    op: str = "SUM"
    root: int = 0  # global rank (src or dst); send_recv's sender
    peer: int = 0  # send_recv's receiver
    splits: list[list[int]] = field(default_factory=list)  # all_to_all: splits[i][j] elements from i to j
    sizes: list[int] = field(default_factory=list)  # all_reduce_coalesced's tensors
    bad: str = ""
    async_op: bool = False
    wait_at: int = 0  # index of the step after which an async call is waited
    side_stream: bool = False
    offset: int = 0
    salt: int = 0

    def describe(self) -> str:
        extra = {
            "op": self.op,
            "root": self.root,
            "peer": self.peer,
            "splits": self.splits,
            "sizes": self.sizes,
            "bad": self.bad,
        }
        shown = {k: v for k, v in extra.items() if v not in ("", [], 0, "SUM")}
        return (
            f"{self.kind}(group={self.group}, {str(self.dtype).replace('torch.', '')}, n={self.n}, "
            + "".join(f"{k}={v}, " for k, v in shown.items())
            + f"async={self.async_op}@{self.wait_at}, side_stream={self.side_stream}, offset={self.offset})"
        )


def _reduce_op(rng: random.Random, dtype: torch.dtype) -> str:
    if dtype == torch.complex64:
        return "SUM"
    ops = REDUCE_OPS if not (dtype.is_floating_point or dtype.is_complex) else REDUCE_OPS[:4]
    return rng.choice(ops)


def draw_step(rng: random.Random, index: int, length: int, groups: dict[str, list[int]]) -> Step:
    kind = rng.choice(KINDS)
    name = rng.choice(list(groups))
    members = groups[name]
    m = len(members)
    dtype = rng.choice(DTYPES)
    if dtype == torch.complex64 and kind not in COMPLEX_KINDS:
        dtype = torch.float32
    if kind in ("reduce_scatter", "reduce_scatter_tensor") and dtype == torch.bool:
        dtype = torch.uint8  # gloo's reduce-scatter has no bool
    n = rng.choices(SIZES, SIZE_WEIGHTS)[0]
    if (
        kind
        in (
            "all_gather",
            "all_gather_into_tensor",
            "reduce_scatter",
            "reduce_scatter_tensor",
            "all_to_all_single",
            "all_to_all",
            "gather",
            "scatter",
        )
        and n > 40000
    ):
        n = 40000  # world-size multiples of the largest class make slow sequences for no new path
    step = Step(
        kind,
        name,
        members,
        dtype,
        n,
        op=_reduce_op(rng, dtype),
        root=rng.choice(members),
        offset=rng.choice([0, 0, 0, 1, 3]),
        side_stream=rng.random() < 0.2,
        salt=rng.randrange(1 << 30),
    )
    if kind == "send_recv":
        if m < 2:
            step.kind, step.op = "all_reduce", "SUM"  # a pair needs two ranks
        else:
            step.root, step.peer = rng.sample(members, 2)
    if kind in ("all_to_all_single", "all_to_all"):
        even = kind == "all_to_all" or rng.random() < 0.5  # gloo's list form takes equal sizes only
        cap = min(n, 17)
        step.splits = [[n if even else rng.randint(0, cap) for _ in members] for _ in members]
    if kind == "all_reduce_coalesced":
        step.sizes = [rng.choices(SIZES[:10])[0] for _ in range(rng.randint(1, 4))]
    if kind == "bad":
        step.bad = rng.choice(BAD_CALLS)
        if step.bad == "root_outside_group" and m == len(groups["world"]):
            step.bad = "gather_into_wrong_size"  # every rank is inside the world group
    if kind != "bad" and rng.random() < 0.35:
        step.async_op = True
        step.wait_at = rng.randint(index, length - 1)
    return step


def draw_sequence(seed: int, groups: dict[str, list[int]]) -> list[Step]:
    """The sequence every rank runs for `seed`: 1-8 steps."""
    rng = random.Random(seed)
    length = rng.randint(1, 8)
    return [draw_step(rng, i, length, groups) for i in range(length)]


def values(step: Step, rank: int, n: int, salt: int = 0) -> torch.Tensor:
    """Rank `rank`'s n input elements for `step` on the CPU, exact under any
    order of reduction (see the module docstring)."""
    g = torch.Generator().manual_seed((step.salt * 131 + salt * 7 + rank) % (1 << 62))
    dtype = step.dtype
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point or dtype.is_complex:
        if step.op == "PRODUCT":
            base = torch.tensor([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])
            x = base[torch.randint(0, 6, (n,), generator=g)]
        else:
            x = torch.randint(-4, 5, (n,), generator=g).double() / 2
        if dtype.is_complex:
            return torch.complex(x.float(), (torch.randint(-4, 5, (n,), generator=g) / 2).float())
        return x.to(dtype)
    low = -3 if dtype in (torch.int64, torch.int32, torch.int8) else 0
    return torch.randint(low, 8, (n,), generator=g, dtype=torch.int64).to(dtype)
