"""Loops whose trip count the device decides, as AWS's NKI Library's MoE
kernels write them: registers (`nisa.register_alloc`, `register_load`,
`register_move`, `register_store`), `while reg:` and
`nl.dynamic_range(start, reg)`. One trace runs any trip count; a loop
that never ends, a register used as an `if` and two cores whose loops
disagree each get an error, never a hang."""

import sys
import time

import nki
import nki.isa as nisa
import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import load, store

import torch_neuronx  # noqa: F401


@nki.jit
def add_n_times(x, n):
    """acc = n * x: a while loop counting an SBUF value down to 0."""
    t = load(x)
    acc = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    left = load(n)
    reg = nisa.register_alloc()
    nisa.register_load(reg, left)
    while reg:
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)  # t's last use in trace order
        scratch = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)  # must not take t's memory: t is read again
        nisa.memset(dst=scratch, value=100.0)
        nisa.tensor_scalar(dst=left, data=left, op0=nl.subtract, operand0=1)
        nisa.register_load(reg, left)
    return store(acc)


@nki.jit
def first_rows(x, n):
    """Rows 0..n-1 of x, the rest 0: nl.dynamic_range(0, reg), its counter as a run-time row offset."""
    rows, f = x.shape
    zeros = nl.ndarray((rows, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=zeros, value=0.0)
    out = store(zeros)
    reg = nisa.register_alloc(load(n)[0:1, 0:1])
    row = nl.ndarray((1, f), dtype=x.dtype, buffer=nl.sbuf)
    for i in nl.dynamic_range(0, reg):
        nisa.dma_copy(dst=row, src=x.ap(pattern=[[f, 1], [1, f]], scalar_offset=i, indirect_dim=0))
        nisa.dma_copy(dst=out.ap(pattern=[[f, 1], [1, f]], scalar_offset=i, indirect_dim=0), src=row)
    stored = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nisa.register_store(stored, reg)
    return out, stored


def _int(v):
    return torch.tensor([[v]], dtype=torch.int32).neuron()


def test_a_while_loop_runs_as_often_as_its_register_says():
    x = torch.randn(32, 8)
    traces = add_n_times.trace_count
    for n in (0, 1, 3):
        assert torch.equal(add_n_times(x.neuron(), _int(n)).cpu(), sum((x for _ in range(n)), torch.zeros(32, 8)))
    assert add_n_times.trace_count == traces + 1  # one trace, three trip counts


def test_dynamic_range_counts_to_its_register():
    x = torch.randn(16, 8)
    for n in (0, 5, 16):
        out, stored = first_rows(x.neuron(), _int(n))
        want = torch.zeros(16, 8)
        want[:n] = x[:n]
        assert torch.equal(out.cpu(), want) and int(stored.cpu()) == n


def test_a_loop_its_register_never_ends_fails(monkeypatch):
    monkeypatch.setattr(sys.modules["torch_neuronx.nki.executor.loops"], "MAX_ITERATIONS", 50)

    @nki.jit
    def forever(x):
        t = load(x)
        reg = nisa.register_alloc(1)
        while reg:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        return store(t)

    with pytest.raises(RuntimeError, match="ran 50 iterations without its register ending it"):
        forever(torch.zeros(4, 4).neuron())


def test_a_register_as_an_if_is_refused():
    @nki.jit
    def branch(x):
        t = load(x)
        reg = nisa.register_alloc(1)
        if reg:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
        return store(t)

    with pytest.raises(nki.NKIError, match="outside `while reg:`"):
        branch(torch.zeros(4, 4).neuron())


def test_cores_whose_loops_disagree_fail_at_once():
    @nki.jit
    def barrier_per_iteration(x, n):
        t = load(x)
        left = load(n[nl.program_id(0) : nl.program_id(0) + 1, :])
        reg = nisa.register_alloc()
        nisa.register_load(reg, left)
        while reg:
            nisa.core_barrier(x, (0, 1))
            nisa.tensor_scalar(dst=left, data=left, op0=nl.subtract, operand0=1)
            nisa.register_load(reg, left)
        return store(t)

    x = torch.zeros(4, 4).neuron()
    assert torch.equal(barrier_per_iteration[2](x, torch.tensor([[2], [2]], dtype=torch.int32).neuron()).cpu(), x.cpu())
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="ended its program without reaching it a 3rd time"):
        barrier_per_iteration[2](x, torch.tensor([[3], [2]], dtype=torch.int32).neuron())
    assert time.monotonic() - t0 < 60
