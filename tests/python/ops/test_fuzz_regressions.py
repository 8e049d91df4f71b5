"""What the differential fuzzers (tests/fuzz, `make fuzz`) found, each as a
named test that fails without its fix (docs/develop.md), and a hundred of
the fuzzer's own programs, derandomized, so `make test` runs the property
itself (`make fuzz` runs thousands)."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_programs import run_program


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
