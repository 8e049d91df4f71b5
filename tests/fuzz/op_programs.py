"""Differential fuzzing of eager programs hypothesis draws a
program of tensor operations and runs it on the CPU and on neuron in lockstep.
Every step must give the same result on both (same dtype, shape, strides and
bits: neuron runs the CPU's kernels, so nothing is allowed to differ) or raise
the same exception (type and first line of the message); at the end every
value the program made (views, in-place targets, `out=` tensors) is compared
again, the gradients of the inputs are compared, and the device memory the
program used must be back.

A program is a pool of values, first the inputs (shapes of 0-3 dimensions
with sizes 0-4, so zero-size and broadcasting shapes are common; floats,
bfloat16, float16, ints, uint8, bool, complex; some with NaN and inf), then
one value per step. A step is an operation from OPS on values drawn from the
pool; each operation draws its own parameters (dims, slices, strides, index
values, out of range at times) once, and the same closure runs on both pools.
Mixed arguments are drawn where PyTorch allows them on an accelerator (0-dim
CPU tensors, CPU index tensors). Some programs run on a side stream, some
with autograd on their float inputs.

`run_program(data)` is the property; tests/fuzz/test_op_programs.py runs it
under hypothesis (`make fuzz`), tests/python/test_fuzz_smoke.py runs a
derandomized few hundred in `make test`."""

from __future__ import annotations

import collections
import gc
import re
import weakref

import torch
from hypothesis import note
from hypothesis import strategies as st
from op_table import OPS

DTYPES = [
    torch.float32,
    torch.float32,
    torch.bfloat16,
    torch.float16,
    torch.int64,
    torch.int32,
    torch.uint8,
    torch.bool,
    torch.complex64,
]
FLOATING = (torch.float32, torch.bfloat16, torch.float16)
MAX_STEPS = 8
# What the programs did, for the run's summary (tests/fuzz/conftest.py):
# programs, and steps per op and outcome ("compared" or "raised alike").
STATS: collections.Counter = collections.Counter()


def draw_input(data) -> torch.Tensor:
    shape = data.draw(st.lists(st.integers(0, 4), max_size=3), label="shape")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    g = torch.Generator().manual_seed(data.draw(st.integers(0, 2**31), label="seed"))
    if dtype.is_floating_point or dtype.is_complex:
        t = torch.randn(shape, generator=g, dtype=torch.complex64 if dtype.is_complex else torch.float32) * 3
        t = t.to(dtype)
        if t.numel() and data.draw(st.booleans(), label="specials"):
            flat = t.view(-1)
            for i, v in enumerate((float("nan"), float("inf"), -float("inf"), 0.0)):
                flat[(i * 7) % flat.numel()] = v
        return t
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    low = 0 if dtype == torch.uint8 else -4
    return torch.randint(low, 6, shape, generator=g).to(dtype)


def same(c, d, where: str) -> None:
    """c (from the CPU run) and d (from neuron) are the same value."""
    if isinstance(c, torch.Tensor):
        assert isinstance(d, torch.Tensor), f"{where}: CPU gave a tensor, neuron {type(d).__name__}"
        assert d.device.type == "neuron", f"{where}: neuron's result is on {d.device}"
        assert (c.dtype, tuple(c.shape)) == (d.dtype, tuple(d.shape)), (
            f"{where}: CPU {c.dtype}{tuple(c.shape)} vs neuron {d.dtype}{tuple(d.shape)}"
        )
        assert c.stride() == d.stride(), f"{where}: strides CPU {c.stride()} vs neuron {d.stride()}"
        assert c.requires_grad == d.requires_grad, f"{where}: requires_grad CPU {c.requires_grad} vs neuron"
        assert torch.equal(bits(c), bits(d)), f"{where}: values differ\nCPU    {c}\nneuron {d.cpu()}"
    elif isinstance(c, (tuple, list)):
        assert isinstance(d, (tuple, list)) and len(c) == len(d), f"{where}: {c!r} vs {d!r}"
        for i, (a, b) in enumerate(zip(c, d)):
            same(a, b, f"{where}[{i}]")
    else:
        assert c == d or (c != c and d != d), f"{where}: CPU {c!r} vs neuron {d!r}"


def bits(t: torch.Tensor) -> torch.Tensor:
    """t's bytes, in logical order (NaN payloads and signed zeros included)."""
    if t.numel() == 0:
        return torch.empty(0, dtype=torch.uint8)
    flat = torch.empty(t.shape, dtype=t.dtype).copy_(t.detach())  # standard strides, even for size-1 dims
    return flat.reshape(-1).view(torch.uint8)


def normalized(e: BaseException) -> str:
    """The message with the device named alike, the first line only (the rest
    is C++ context that names files). PyTorch names a PrivateUse1 tensor type
    `neuronFloatType` where a CPU one is `torch.FloatTensor` or
    `CPUBFloat16Type` (its formula for backends without a legacy type name):
    not ours to change."""
    first = re.sub(
        r"torch\.(\w+)Tensor|(?:neuron|CPU)(\w+)Type", lambda m: f"{m[1] or m[2]}Type", str(e).split("\n")[0]
    )
    return first.replace("neuron:0", "cpu").replace("neuron", "cpu").replace("PrivateUse1", "CPU")


def run_step(fn, cpu_args, dev_args):
    """(cpu result, neuron result), or raises AssertionError on a difference.
    The same exception on both sides (type and normalized first line) ends
    the step with (None, None)."""
    try:
        c = fn(*cpu_args)
        c_err = None
    except Exception as e:  # noqa: BLE001 - any exception type must match
        c, c_err = None, e
    try:
        d = fn(*dev_args)
        d_err = None
    except Exception as e:  # noqa: BLE001
        d, d_err = None, e
    if c_err is not None or d_err is not None:
        assert type(c_err) is type(d_err) and normalized(c_err) == normalized(d_err), (
            f"CPU raised {type(c_err).__name__}: {c_err}\nneuron raised {type(d_err).__name__}: {d_err}"
        )
        return None, None
    return c, d


def tensors_of(v) -> list:
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in tensors_of(x)]
    return []


def run_program(data) -> None:
    """One program on both devices; then its device memory must be back.
    (Less than before is fine: an earlier example's garbage, a failure's
    traceback say, may die during this one.) Not checked after a failed
    backward: PyTorch keeps such a graph's leaves alive, on the CPU as well
    (a version-counter error keeps them past later backwards)."""
    baseline = torch.neuron.memory_allocated()
    STATS["programs"] += 1
    backward_ok, twins = run_both(data)  # every value of the program dies with that frame...
    if not backward_ok:
        STATS["programs whose backward failed (memory not checked)"] += 1
        return
    check_memory(baseline, twins)


def check_memory(baseline: int, twins: list) -> None:
    """After a program: the device memory is back to `baseline`, unless PyTorch
    itself keeps values alive, on the CPU too (then the memory of the values
    that outlive the program is not checked). `twins` holds a weak reference
    to each value on each device, (cpu, neuron). (An in-place op of a value
    with itself under autograd, `v.mul_(v)`, makes a reference cycle in the
    C++ autograd graph that no garbage collection frees, on any device.)"""
    if torch.neuron.memory_allocated() > baseline:  # reference cycles (autograd graphs, tracebacks) first
        gc.collect()
    alive = [i for i, (_, d) in enumerate(twins) if d() is not None and d().device.type == "neuron"]
    neuron_only = [i for i in alive if twins[i][0]() is None]
    assert not neuron_only, f"values {neuron_only} outlive the program on neuron only: {live_tensors()}"
    if alive:
        STATS["programs whose values PyTorch keeps alive on the CPU too (memory not checked)"] += 1
        return
    leaked = torch.neuron.memory_allocated() - baseline
    assert leaked <= 0, f"the program leaked {leaked} bytes of device memory; live neuron tensors: {live_tensors()}"


def run_both(data) -> tuple[bool, list]:
    """Runs and compares the program: False if its backward failed (alike on
    both), and weak references to every value on both devices."""
    device = torch.device("neuron")
    side_stream = data.draw(st.booleans(), label="side stream")
    grad = data.draw(st.booleans(), label="autograd")
    cpu_pool, dev_pool, inputs = [], [], []
    made = []  # every value of both pools, retired ones too: what check_memory looks for
    for _ in range(data.draw(st.integers(1, 3), label="inputs")):
        t = draw_input(data)
        leaf = grad and t.dtype in FLOATING
        c = t.clone().requires_grad_(leaf)
        d = t.to(device).requires_grad_(leaf)
        cpu_pool.append(c)
        dev_pool.append(d)
        made.append((c, d))
        inputs.append((c, d))
        note(f"input {len(cpu_pool) - 1}: {t.dtype} {tuple(t.shape)} requires_grad={leaf}")
    stream = torch.neuron.Stream() if side_stream else None
    with torch.neuron.stream(stream) if stream else _nothing():
        for step in range(data.draw(st.integers(1, MAX_STEPS), label="steps")):
            op = data.draw(st.sampled_from(OPS), label="op")
            live = [i for i, v in enumerate(cpu_pool) if v is not None]
            picks = [data.draw(st.sampled_from(live), label="arg") for _ in range(op.arity)]
            cpu_args = [cpu_pool[i] for i in picks]
            fn, label = op.build(data, cpu_args)
            note(f"step {step}: v{len(cpu_pool)} = {label}({', '.join(f'v{i}' for i in picks)})")
            c, d = run_step(fn, cpu_args, [dev_pool[i] for i in picks])
            STATS[(op.name, "raised alike" if c is None else "compared")] += 1
            if c is None:  # what a failed op left in its arguments is unspecified (the CPU may resize an
                drop_storage_of(cpu_args, cpu_pool, dev_pool)  # out= tensor, then raise): not used again
                if all(v is None for v in cpu_pool):
                    break
                continue
            same(c, d, f"step {step} ({label})")
            cpu_pool += tensors_of(c)
            dev_pool += tensors_of(d)
            made += zip(tensors_of(c), tensors_of(d))
    if stream:
        stream.synchronize()
    for i, (c, d) in enumerate(zip(cpu_pool, dev_pool)):
        if c is not None:
            same(c, d, f"v{i} at the end")  # views and in-place targets saw the same writes
    twins = [(weakref.ref(c), weakref.ref(d)) for c, d in made]
    return (check_gradients(cpu_pool, dev_pool, inputs) if grad else True), twins


def live_tensors(limit: int = 20) -> list:
    """The neuron tensors alive (the first `limit`) and the types of what holds
    each: one pass over the heap (gc.get_referrers per tensor would scan it
    once per tensor, a minute in a long test process)."""
    objects = gc.get_objects()
    tensors = {}
    for o in objects:
        try:
            if isinstance(o, torch.Tensor) and o.device.type == "neuron":
                tensors[id(o)] = o
        except Exception:  # noqa: BLE001 - objects that fail isinstance/attribute access
            pass
    holders = {i: [] for i in tensors}
    for o in objects:
        for r in gc.get_referents(o):
            if id(r) in holders:
                holders[id(r)].append(type(o).__name__)
    found = [f"{t.dtype}{tuple(t.shape)} held by {holders[i]}" for i, t in tensors.items()]
    return found[:limit] + ([f"... and {len(found) - limit} more"] if len(found) > limit else [])


def drop_storage_of(args, cpu_pool: list, dev_pool: list) -> None:
    """Retires (sets to None, keeping every value's number) the values of
    both pools that share storage with one of args."""

    def storage(t):
        return t.untyped_storage()._cdata if isinstance(t, torch.Tensor) else None

    touched = {storage(a) for a in args} - {None}
    for i, t in enumerate(cpu_pool):
        if t is not None and storage(t) in touched:
            cpu_pool[i] = dev_pool[i] = None


def check_gradients(cpu_pool, dev_pool, inputs) -> bool:
    """Backward from the last float value that needs a gradient, on both; the
    inputs' gradients must be the same. False if the backward failed."""
    outs = [
        (c, d)
        for c, d in zip(cpu_pool, dev_pool)
        if c is not None and c.requires_grad and c.grad_fn is not None and c.dtype in FLOATING
    ]
    if not outs:
        return True
    c_out, d_out = outs[-1]
    c, _ = run_step(lambda t: t.float().abs().sum().backward() or True, [c_out], [d_out])
    if c is None:
        return False
    alive = {id(v) for v in cpu_pool if v is not None}
    for i, (ci, di) in enumerate(inputs):
        if id(ci) not in alive:  # retired after a failed op
            continue
        assert (ci.grad is None) == (di.grad is None), f"input {i}: gradient on one device only"
        if ci.grad is not None:
            same(ci.grad, di.grad, f"gradient of input {i}")
    return True


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
