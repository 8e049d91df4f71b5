"""LNC=2: a kernel launched on a logical core of two physical cores
(`kernel[2]`) runs as two programs at once, sharing HBM, that meet at
`nisa.sendrecv` and `nisa.core_barrier` (also `nki.lnc`'s). Calls that do not
pair are refused before anything runs, and a program that fails stops the
other at its next meeting instead of leaving it waiting."""

import time

import nki
import nki.isa as nisa
import nki.language as nl
import pytest
import torch
from helpers.nki_tiles import load, store

import torch_neuronx  # noqa: F401


@nki.jit
def swap_halves(x):
    """Each core loads its row block of x and sends it to the other; the
    output holds the blocks swapped."""
    c = nl.program_id(0)
    p, f = x.shape[0] // 2, x.shape[1]
    mine = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x[c * p : (c + 1) * p, :])
    theirs = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.sendrecv(src=mine, dst=theirs, send_to_rank=1 - c, recv_from_rank=1 - c, pipe_id=0)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c * p : (c + 1) * p, :], src=theirs)
    return out


@nki.jit
def doubled_then_crossed(x):
    """Each core writes 2 * its row of x to shared HBM, waits at the barrier,
    then copies the other core's row: both rows are in only after both wrote."""
    c = nl.program_id(0)
    f = x.shape[1]
    shared = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    row = nl.ndarray((1, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=row, src=x[c : c + 1, :])
    twice = nl.ndarray((1, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=twice, data=row, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=shared[c : c + 1, :], src=twice)
    nki.lnc.core_barrier(shared, (0, 1))
    other = nl.ndarray((1, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=other, src=shared[1 - c : 2 - c, :])
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[c : c + 1, :], src=other)
    return out


def test_sendrecv_swaps_the_cores_tiles():
    x = torch.randn(256, 32)
    got = swap_halves[2](x.neuron()).cpu()
    assert torch.equal(got, torch.cat([x[128:], x[:128]]))
    est = nki.last_estimate()
    assert est.cores == 2 and any(name == "sendrecv" for name, *_ in est.timeline)


def test_core_barrier_orders_the_cores_writes_before_their_reads():
    x = torch.randn(2, 64)
    for _ in range(5):  # two threads at once: the order must hold every time
        assert torch.equal(doubled_then_crossed[2](x.neuron()).cpu(), 2 * x.flip(0))
    est = nki.last_estimate()
    barriers = [start for name, _, start, *_ in est.timeline if name == "core_barrier"]
    assert len(barriers) == 2


def test_both_cores_writing_the_same_values_runs():
    @nki.jit
    def same_on_both(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=load(x))
        nisa.core_barrier(out, (0, 1))
        return out

    x = torch.randn(64, 16)
    assert torch.equal(same_on_both[2](x.neuron()).cpu(), x)


def test_calls_that_do_not_pair_are_refused_before_running():
    @nki.jit
    def one_sided(x):
        out = store(load(x))
        if nl.program_id(0) == 0:
            nisa.core_barrier(out, (0, 1))
        return out

    with pytest.raises(nki.NKIError, match=r"core_barrier #1 of core 0 .* has no partner.*wait forever"):
        one_sided[2](torch.randn(8, 8).neuron())

    @nki.jit
    def crossed(x):
        t = load(x)
        r = nl.ndarray(t.shape, dtype=t.dtype, buffer=nl.sbuf)
        if nl.program_id(0) == 0:
            nisa.sendrecv(src=t, dst=r, send_to_rank=1, recv_from_rank=1)
        else:
            nisa.core_barrier(x, (0, 1))
        return store(t)

    with pytest.raises(nki.NKIError, match="sendrecv #1 of core 0 .* meets core_barrier #1 of core 1"):
        crossed[2](torch.randn(8, 8).neuron())


def test_meetings_need_two_cores():
    @nki.jit
    def alone(x):
        t = load(x)
        nisa.sendrecv(src=t, dst=t, send_to_rank=1, recv_from_rank=1)
        return store(t)

    with pytest.raises(nki.NKIError, match=r"runs on one core: launch the kernel as kernel\[2\]"):
        alone(torch.randn(8, 8).neuron())

    @nki.jit
    def barrier_alone(x):
        nisa.core_barrier(x, (0, 1))
        return store(load(x))

    with pytest.raises(nki.NKIError, match="the other core never arrives"):
        barrier_alone(torch.randn(8, 8).neuron())


def test_a_core_that_fails_stops_the_other_at_its_meeting():
    @nki.jit
    def fails_on_core_1(x, start):
        c = nl.program_id(0)
        idx = load(start)
        sb = nl.ndarray((8, 8), dtype=x.dtype, buffer=nl.sbuf)
        if c == 1:  # an offset past x, known only at run time
            nisa.dma_copy(dst=sb, src=x.ap(pattern=[[8, 8], [1, 8]], scalar_offset=idx))
        else:
            nisa.dma_copy(dst=sb, src=x)
        nisa.core_barrier(x, (0, 1))
        return store(sb)

    x = torch.randn(8, 8).neuron()
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="indirect access .* reaches element"):
        fails_on_core_1[2](x, torch.tensor([[5]], dtype=torch.int32).neuron())
    assert time.monotonic() - t0 < 60  # the barrier was broken, not waited out


@nki.jit
def zero_then_store_halves(x):
    """Both cores zero the whole shared output, then each stores its half of
    x into it, with no barrier between: on the chip the cores progress
    together, so both zeroings land before either store (AWS's NKI Library
    tests write so)."""
    c = nl.program_id(0)
    p, f = x.shape[0] // 2, x.shape[1]
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    zeros = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=zeros, value=0.0)
    nisa.dma_copy(dst=out, src=zeros)
    half = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=half, src=x[c * p : (c + 1) * p, :])
    nisa.dma_copy(dst=out[c * p : (c + 1) * p, :], src=half)
    return out


def test_cores_that_never_meet_still_progress_together():
    x = torch.randn(64, 16)
    assert torch.equal(zero_then_store_halves[2](x.neuron()).cpu(), x)


@nki.jit
def copy_my_rows(x, out):
    c = nl.program_id(0)
    assert nl.num_programs(0) == 2  # the caller's launch: two programs
    rows = nl.ndarray((x.shape[0] // 2, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    half = x.shape[0] // 2
    nisa.dma_copy(dst=rows, src=x[c * half : (c + 1) * half, :])
    nisa.dma_copy(dst=out[c * half : (c + 1) * half, :], src=rows)


@nki.jit
def wrapper(x):
    """A kernel that calls another nki.jit kernel, as AWS's test wrappers call the library's."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    copy_my_rows(x, out)
    return out


def test_a_kernel_called_from_a_kernel_is_part_of_its_programs():
    x = torch.randn(32, 8)
    assert torch.equal(wrapper[2](x.neuron()).cpu(), x)
