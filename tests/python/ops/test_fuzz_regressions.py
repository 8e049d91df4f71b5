"""What the differential fuzzers (tests/fuzz, `make fuzz`) found, each as a
named test that fails without its fix (docs/develop.md), and a hundred of
the fuzzer's own programs, derandomized, so `make test` runs the property
itself (`make fuzz` runs thousands)."""

import weakref

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_programs import check_memory, run_program


@settings(max_examples=100, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_hundred_random_programs_run_alike_on_the_cpu_and_on_neuron(data):
    run_program(data)


@pytest.mark.parametrize("shape", [(0, 0), (2, 3)])
def test_an_out_tensor_that_is_also_an_input_is_refused_as_on_the_cpu(shape):
    # Found by the op fuzzer: the host dispatch gave each argument a host tensor of its own, so
    # cat's overlap check missed `out` being an input when both were empty; the same tensor
    # twice is now the same host tensor twice.
    for device in ("cpu", "neuron"):
        v = torch.zeros(shape, device=device)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            torch.cat([v, v], out=v)


@pytest.mark.parametrize("dst,src", [((0,), (0, 0)), ((0, 3), (2,))])
def test_copying_into_an_empty_tensor_still_checks_that_the_shapes_broadcast(dst, src):
    # Found by the op fuzzer: neuron's copy returned early for an empty destination, so
    # copy_ accepted shapes the CPU refuses.
    for device in ("cpu", "neuron"):
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape|must match the size"):
            torch.empty(dst, device=device).copy_(torch.empty(src, device=device))


@pytest.mark.parametrize("case", ["unsqueezed self", "shifted self", "expanded destination"])
def test_a_copy_between_overlapping_views_is_refused_as_on_the_cpu(case):
    # Found by the op fuzzer: neuron-to-neuron copies ran the CPU kernel on host views with storages
    # of their own, which hid the overlap; neuron copied, or raised a shape error instead.
    for device in ("cpu", "neuron"):
        t = torch.arange(4.0, device=device)
        dst, src = {
            "unsqueezed self": (t[0], t[:1]),
            "shifted self": (t[1:], t[:-1]),
            "expanded destination": (t[:1].expand(3), t[1:]),
        }[case]
        with pytest.raises(RuntimeError, match="refers? to a single memory location"):
            dst.copy_(src)


@pytest.mark.parametrize("value", [-4.8158, 300.0, 7.5])
def test_fill_with_a_device_scalar_casts_as_copy_does(value):
    # Found by the op fuzzer (make fuzz beside a CPU hog): fill_(uint8, 0-dim float tensor) on
    # neuron went through Scalar's checked conversion and raised "cannot be converted to type
    # uint8_t without overflow", where ATen fills from a same-device value as copy_ casts (the
    # CPU gives 252 for -4.8). A CPU scalar tensor still converts with the check, as on CUDA.
    got = torch.full((3,), 2, dtype=torch.uint8, device="neuron").fill_(torch.tensor(value, device="neuron"))
    want = torch.full((3,), 2, dtype=torch.uint8).fill_(torch.tensor(value))
    assert torch.equal(got.cpu(), want)
    if not 0 <= value < 256:
        with pytest.raises(RuntimeError, match="without overflow"):
            torch.zeros(3, dtype=torch.uint8, device="neuron").fill_(torch.tensor(value))


def _self_multiplied(device):
    """A value multiplied in place by itself under autograd: its MulBackward node
    saves the value, whose grad_fn is that node, a reference cycle in PyTorch's
    C++ autograd graph that no garbage collection frees, on any device."""
    v0 = torch.tensor(0.5, device=device, requires_grad=True)
    v1 = torch.where(v0 > 0, v0, v0)
    v1.mul_(v1)
    return weakref.ref(v1)


def test_values_pytorch_keeps_alive_on_the_cpu_too_are_no_device_leak():
    # Found by the op fuzzer (make fuzz, 2026-12-07): the program above "leaked 2560 bytes of device
    # memory", but the CPU keeps the same values alive; only a value alive on neuron alone is a leak.
    baseline = torch.neuron.memory_allocated()
    twins = [(_self_multiplied("cpu"), _self_multiplied("neuron"))]
    assert twins[0][0]() is not None and twins[0][1]() is not None  # PyTorch's cycle, on both devices
    check_memory(baseline, twins)


class _Replay:
    """A program's draws, in order, in place of hypothesis' data."""

    def __init__(self, draws):
        self.draws = list(draws)

    def draw(self, strategy, label=None):
        return self.draws.pop(0)


def test_a_retired_value_pytorch_keeps_alive_is_no_device_leak(monkeypatch):
    # Found by the op fuzzer (make fuzz, 2026-12-07), replayed from its shrunk draws: v3 = sum(v2),
    # v3.mul_(v3) (PyTorch's reference cycle), then transpose(0, 1) of the 0-dim v3, refused alike,
    # which retires v3 from the program's pool; the fuzzer looked for surviving values among the
    # pool's live entries only and reported the cycle as 1536 leaked bytes.
    import op_programs
    from op_table import OPS

    def op(name):
        return next(o for o in OPS if o.name == name)

    f32 = torch.float32
    draws = [False, True, 3]  # no side stream, autograd, three inputs
    draws += [(), f32, 0, False, (0, 0, 0), f32, 0, (), f32, 1, False]  # shape, dtype, seed (, specials)
    draws += [5, op("join"), 0, 1, 1, "cat"]  # step 0: cat(dim=1)(v0, v1), refused alike
    draws += [op("reduce"), 2, "sum", False, 0, False]  # step 1: v3 = sum(v2, dim=0)
    draws += [op("in-place"), 2, 2, "add_"]  # step 2: add_ on a leaf, refused alike
    draws += [op("in-place"), 3, 3, "mul_"]  # step 3: v3.mul_(v3)
    draws += [op("view"), 3, "transpose", 0, 1]  # step 4: transpose(0, 1)(v3), refused alike
    monkeypatch.setattr(op_programs, "note", lambda text: None)
    replay = _Replay(draws)
    run_program(replay)
    assert not replay.draws  # the program ran as the fuzzer drew it


def test_a_value_alive_on_neuron_only_is_a_leak():
    baseline = torch.neuron.memory_allocated()
    kept = torch.ones(4, device="neuron")
    cpu = torch.ones(4)
    twins = [(weakref.ref(cpu), weakref.ref(kept))]
    del cpu
    with pytest.raises(AssertionError, match=r"values \[0\] outlive the program on neuron only"):
        check_memory(baseline, twins)
    del kept
    check_memory(baseline, [])
