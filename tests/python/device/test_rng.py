"""The device generator: seeding, state save/restore, Philox (seed, offset)
layout that DTensor's RNG tracker reads, distributions, fallback random ops."""

import pytest
import torch

import torch_neuronx


def test_manual_seed_reproduces_every_random_op():
    def draw():
        return [
            torch.rand(100, device="neuron").cpu(),
            torch.randn(100, device="neuron").cpu(),
            torch.randint(0, 10, (100,), device="neuron").cpu(),
            torch.empty(100, device="neuron").bernoulli_(0.3).cpu(),
            torch.empty(100, device="neuron").exponential_(2.0).cpu(),
            torch.empty(100, device="neuron").uniform_(-2, 2).cpu(),
            torch.empty(100, device="neuron").normal_(1, 3).cpu(),
        ]

    torch.manual_seed(1234)
    a = draw()
    torch.manual_seed(1234)
    b = draw()
    torch.manual_seed(4321)
    c = draw()
    for x, y, z in zip(a, b, c):
        assert torch.equal(x, y)
        assert not torch.equal(x, z)


def test_state_is_seed_then_offset():
    torch.neuron.manual_seed(7)
    state = torch.neuron.get_rng_state()
    assert state.dtype == torch.uint8 and state.numel() == 16
    assert state[:8].view(torch.int64).item() == 7 and state[8:].view(torch.int64).item() == 0
    torch.rand(5, device="neuron")  # 5 values x 2 words, rounded up to 4
    assert torch.neuron.get_rng_state()[8:].view(torch.int64).item() == 12
    assert torch.neuron.initial_seed() == 7


def test_set_rng_state_replays():
    torch.manual_seed(0)
    state = torch.neuron.get_rng_state()
    first = torch.randn(50, device="neuron").cpu()
    torch.neuron.set_rng_state(state)
    assert torch.equal(torch.randn(50, device="neuron").cpu(), first)
    states = torch.neuron.get_rng_state_all()
    assert len(states) == torch.neuron.device_count()
    torch.neuron.set_rng_state_all(states)


def test_offset_can_be_moved_like_dtensor_does():
    torch.neuron.manual_seed(3)
    state = torch.neuron.get_rng_state()
    state[8:] = torch.tensor([400], dtype=torch.int64).view(torch.uint8)
    torch.neuron.set_rng_state(state)
    assert torch.neuron.get_rng_state()[8:].view(torch.int64).item() == 400
    bad = state.clone()
    bad[8:] = torch.tensor([401], dtype=torch.int64).view(torch.uint8)
    with pytest.raises(RuntimeError, match="multiple of 4"):
        torch.neuron.set_rng_state(bad)


def test_devices_have_independent_generators():
    torch.manual_seed(5)
    a0 = torch.rand(10, device="neuron:0").cpu()
    torch.manual_seed(5)
    a1 = torch.rand(10, device="neuron:1").cpu()  # does not advance neuron:0
    assert torch.equal(torch.rand(10, device="neuron:0").cpu(), a0)
    assert torch.equal(a1, a0)  # same seed, same counter: same stream of numbers
    assert len(torch.neuron.default_generators) == 4


def test_explicit_generator():
    g = torch.Generator(device="neuron").manual_seed(11)
    x = torch.rand(20, device="neuron", generator=g).cpu()
    g.manual_seed(11)
    assert torch.equal(torch.rand(20, device="neuron", generator=g).cpu(), x)
    with pytest.raises(RuntimeError, match="neuron generator"):
        torch.empty(3, device="neuron").uniform_(generator=torch.Generator())


def test_distributions_are_plausible():
    torch.manual_seed(0)
    u = torch.rand(200_000, device="neuron").cpu()
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    n = torch.randn(200_000, device="neuron").cpu()
    assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
    b = torch.empty(200_000, device="neuron").bernoulli_(0.25).cpu()
    assert abs(b.mean() - 0.25) < 0.01
    r = torch.randint(3, 9, (200_000,), device="neuron").cpu()
    assert r.min() == 3 and r.max() == 8
    h = torch.rand(1000, device="neuron", dtype=torch.bfloat16).cpu()
    assert h.dtype == torch.bfloat16 and 0 <= h.min() and h.max() <= 1


def test_fallback_random_ops_follow_the_seed():
    torch.manual_seed(9)
    p1 = torch.randperm(50, device="neuron").cpu()
    m1 = torch.multinomial(torch.ones(10, device="neuron"), 5).cpu()
    torch.manual_seed(9)
    assert torch.equal(torch.randperm(50, device="neuron").cpu(), p1)
    assert torch.equal(torch.multinomial(torch.ones(10, device="neuron"), 5).cpu(), m1)
    assert sorted(p1.tolist()) == list(range(50))


def test_dropout_follows_the_seed_and_advances_the_offset():
    x = torch.ones(4096, device="neuron")
    torch.manual_seed(3)
    state = torch.neuron.get_rng_state()
    a = torch.nn.functional.dropout(x, 0.5, training=True)
    assert not torch.equal(torch.neuron.get_rng_state(), state)  # the Philox offset moved
    b = torch.nn.functional.dropout(x, 0.5, training=True)
    torch.manual_seed(3)
    assert torch.equal(torch.nn.functional.dropout(x, 0.5, training=True).cpu(), a.cpu())
    assert not torch.equal(a.cpu(), b.cpu())
    kept = (a != 0).float().mean().item()
    assert 0.45 < kept < 0.55 and set(a.unique().cpu().tolist()) == {0.0, 2.0}
    assert torch_neuronx.get_fallback_ops() == {}


def test_activation_checkpointing_replays_the_same_dropout_mask():
    # torch.utils.checkpoint saves the device's RNG state only when
    # torch.neuron._initialized is true, as torch.cuda's is.
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 16).to("neuron")
    x = torch.randn(8, 16, device="neuron", requires_grad=True)
    grads = []
    for use_checkpoint in (False, True):

        def body(a):
            return torch.nn.functional.dropout(lin(a), 0.5, training=True).relu()

        torch.neuron.manual_seed(1)
        out = checkpoint(body, x, use_reentrant=False) if use_checkpoint else body(x)
        out.sum().backward()
        grads.append(x.grad.clone())
        x.grad = None
    assert torch.equal(grads[0].cpu(), grads[1].cpu())


def test_cpu_draws_with_a_neuron_generator():
    # torch.randn(..., device="cpu", generator=<neuron generator>): the neuron
    # generator's numbers, on the CPU, advancing its offset.
    g = torch.Generator(device="neuron").manual_seed(21)
    on_cpu = [
        torch.randn(4, 5, generator=g),
        torch.rand(7, generator=g),
        torch.randint(0, 9, (6,), generator=g),
        torch.randn(3, generator=g, dtype=torch.bfloat16),
    ]
    assert all(t.device.type == "cpu" for t in on_cpu)
    offset = g.get_state()[8:].view(torch.int64).item()
    assert offset > 0
    g.manual_seed(21)
    on_neuron = [
        torch.randn(4, 5, generator=g, device="neuron"),
        torch.rand(7, generator=g, device="neuron"),
        torch.randint(0, 9, (6,), generator=g, device="neuron"),
        torch.randn(3, generator=g, device="neuron", dtype=torch.bfloat16),
    ]
    assert g.get_state()[8:].view(torch.int64).item() == offset
    for c, n in zip(on_cpu, on_neuron):
        assert torch.equal(c, n.cpu())
    # Ops with no neuron kernel take a CPU generator seeded from the stream.
    g.manual_seed(5)
    p = torch.randperm(30, generator=g)
    g.manual_seed(5)
    assert torch.equal(torch.randperm(30, generator=g), p) and p.device.type == "cpu"
    assert sorted(p.tolist()) == list(range(30))


def test_diffusers_randn_tensor_with_a_neuron_generator():
    from diffusers.utils.torch_utils import randn_tensor

    draws = []
    for _ in range(2):
        g = torch.Generator(device="neuron").manual_seed(42)
        draws.append(randn_tensor((2, 4, 8, 8), generator=g, device=torch.device("neuron"), dtype=torch.float32))
    assert draws[0].device.type == "neuron"
    assert torch.equal(draws[0].cpu(), draws[1].cpu())
    lists = randn_tensor(
        (2, 3), generator=[torch.Generator("neuron").manual_seed(s) for s in (1, 2)], device=torch.device("neuron")
    )
    assert lists.shape == (2, 3) and not torch.equal(lists[0].cpu(), lists[1].cpu())
