"""Memory snapshots (torch.neuron.memory._record_memory_history / _snapshot /
_dump_snapshot) in torch.cuda's format, read by torch.cuda._memory_viz."""

import gc
import inspect
import pickle

import pytest
import torch
from torch.cuda import _memory_viz

MiB = 2**20


@pytest.fixture(autouse=True)
def _fresh():
    gc.collect()
    torch.neuron.empty_cache()
    yield
    torch.neuron.memory._record_memory_history(None)
    torch.neuron.empty_cache()


def _make_and_drop():
    a = torch.empty(3 * MiB, dtype=torch.uint8, device="neuron")  # the large pool: its own segment
    b = torch.empty(1000, dtype=torch.float32, device="neuron")  # small pool
    del a
    return b


def _trace(snapshot, device=0):
    return snapshot["device_traces"][device]


def _names(frames):
    return [f["name"] for f in frames]


def test_history_dump_and_render(tmp_path):
    import torch.neuron.memory as memory  # a module, as torch.cuda.memory

    memory._record_memory_history(stacks="python", max_entries=100000)
    b = _make_and_drop()
    path = tmp_path / "snap.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        snap = pickle.load(f)

    lines, start = inspect.getsourcelines(_make_and_drop)
    line_a, line_b, line_del = start + 1, start + 2, start + 3
    entries = _trace(snap)
    allocs = [e for e in entries if e["action"] == "alloc"]
    frees = [e for e in entries if e["action"] == "free_requested"]
    done = [e for e in entries if e["action"] == "free_completed"]
    seg_allocs = [e for e in entries if e["action"] == "segment_alloc"]
    big = [e for e in allocs if e["size"] == 3 * MiB]
    small = [e for e in allocs if e["size"] == 4000]
    assert len(big) == 1 and len(small) == 1, allocs
    assert big[0]["frames"][0]["name"] == "_make_and_drop" and big[0]["frames"][0]["line"] == line_a
    assert big[0]["frames"][0]["filename"] == __file__
    assert small[0]["frames"][0]["line"] == line_b
    assert "test_history_dump_and_render" in _names(big[0]["frames"])
    # The free: requested and completed at the `del`, with the allocation's size.
    assert [(e["addr"], e["size"]) for e in frees] == [(big[0]["addr"], 3 * MiB)]
    assert frees[0]["frames"][0]["line"] == line_del
    assert [(e["addr"], e["size"]) for e in done] == [(big[0]["addr"], 3 * MiB)]
    # The large segment came with the big allocation's stack, before it.
    seg = [e for e in seg_allocs if e["addr"] == big[0]["addr"]]
    assert seg and seg[0]["size"] >= 3 * MiB and seg[0]["frames"][0]["line"] == line_a
    assert entries.index(seg[0]) < entries.index(big[0])
    for e in entries:
        assert {"action", "addr", "size", "stream", "time_us", "frames"} <= e.keys()
    times = [e["time_us"] for e in entries]
    assert times == sorted(times)

    # The state: b is an active block with its allocation's stack; a's block is cached.
    blocks = {blk["address"]: blk for s in snap["segments"] for blk in s["blocks"]}
    live = blocks[b.untyped_storage().data_ptr()]
    assert live["state"] == "active_allocated" and live["requested_size"] == 4000
    assert live["frames"][0]["line"] == line_b
    assert blocks[big[0]["addr"]]["state"] == "inactive"
    segs = {s["address"]: s for s in snap["segments"]}
    assert segs[big[0]["addr"]]["frames"][0]["line"] == line_a  # the stack that made the segment
    for s in snap["segments"]:
        assert s["total_size"] == sum(blk["size"] for blk in s["blocks"])
        assert s["segment_type"] in ("small", "large") and s["device"] == 0

    # torch.cuda._memory_viz reads it: the interactive plots (HTML embedding the
    # pickle) and the text summaries, which walk every field.
    assert "<html>" in _memory_viz.trace_plot(snap) and "<html>" in _memory_viz.segment_plot(snap)
    assert "segments: " in _memory_viz.segsum(snap)
    text = _memory_viz.trace(snap)
    assert "cudaMalloc(" in text and "del " in text and "free completed" in text
    stacks = _memory_viz.segments(snap, format_flamegraph=lambda lines: lines)  # flamegraph input
    assert "active_allocated" in stacks and "_make_and_drop" in stacks
    del b


def test_stop_state_only_and_ring():
    memory = torch.neuron.memory
    memory._record_memory_history(stacks="python", max_entries=3)
    xs = [torch.empty(100, device="neuron") for _ in range(4)]
    entries = _trace(memory._snapshot())
    assert len(entries) == 3 and [e["action"] for e in entries] == ["alloc"] * 3  # the last three
    assert entries[-1]["addr"] == xs[-1].data_ptr()

    memory._record_memory_history(enabled="state", stacks="python")
    y = torch.empty(100, device="neuron")
    snap = memory._snapshot()
    assert all(t == [] for t in snap["device_traces"])
    blocks = {blk["address"]: blk for s in snap["segments"] for blk in s["blocks"]}
    assert blocks[y.data_ptr()]["frames"][0]["name"] == "test_stop_state_only_and_ring"

    memory._record_memory_history(enabled=None)
    z = torch.empty(100, device="neuron")
    snap = memory._snapshot()
    assert all(t == [] for t in snap["device_traces"])
    blocks = {blk["address"]: blk for s in snap["segments"] for blk in s["blocks"]}
    assert blocks[z.data_ptr()]["frames"] == [] and blocks[z.data_ptr()]["state"] == "active_allocated"
    del xs, y, z


def test_other_devices_backward_and_cpp_stacks():
    memory = torch.neuron.memory
    memory._record_memory_history(context="alloc", stacks="all")
    w = torch.randn(64, 64, device="neuron:1", requires_grad=True)
    (w @ w).sum().backward()  # backward's allocations (on the calling thread by default, with its frames)
    del w
    torch.neuron.empty_cache()
    snap = memory._snapshot()
    entries = _trace(snap, 1)
    assert any(e["action"] == "alloc" and e["frames"] for e in entries)
    assert all(e["frames"] == [] for e in entries if e["action"] == "free_requested")  # context="alloc"
    assert any(e["action"] == "segment_free" for e in entries)  # empty_cache gave cached segments back
    assert any(f["filename"] == __file__ for e in entries for f in e["frames"])
    assert any("NeuronCachingAllocator" in f["name"] for e in entries for f in e["frames"])  # C++ frames (stacks="all")
    assert not [e for e in _trace(snap, 0) if e["action"] == "alloc"]
    with pytest.raises(RuntimeError, match="expected stacks"):
        memory._record_memory_history(stacks="cpp")
