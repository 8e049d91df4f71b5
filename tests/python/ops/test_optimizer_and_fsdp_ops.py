"""The ops optimizers and FSDP2 lean on, checked one by one against the CPU:
_foreach_* (foreach optimizers), _fused_adamw_ / _fused_adam_ / _fused_sgd_
(fused=True), split_with_sizes_copy, _chunk_cat and _foreach_copy_ (FSDP2's
all-gather and reduce-scatter copies). Bitwise, on the zero-copy paths."""

import pytest
import torch

import torch_neuronx


def params_pair(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    cpu = [torch.randn(*s, generator=gen) for s in ((4, 3), (7,), (2, 2, 2))]
    return cpu, [t.to("neuron") for t in cpu]


def same(dev, cpu):
    assert all(d.device.type == "neuron" for d in dev)
    assert all(torch.equal(d.cpu(), c) for d, c in zip(dev, cpu))


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("AdamW", {"foreach": True}),
        ("AdamW", {"fused": True}),
        ("Adam", {"fused": True}),
        ("SGD", {"fused": True, "momentum": 0.9}),
        ("SGD", {"foreach": True, "momentum": 0.9}),
        ("Adagrad", {"foreach": True}),
        ("RMSprop", {"foreach": True}),
    ],
)
def test_optimizer_steps_match_cpu(name, kwargs):
    cpu, dev = params_pair()
    cpu = [p.requires_grad_() for p in cpu]
    dev = [p.detach().requires_grad_() for p in dev]
    grads, _ = params_pair(seed=1)
    opt_c = getattr(torch.optim, name)(cpu, lr=1e-2, **kwargs)
    opt_d = getattr(torch.optim, name)(dev, lr=1e-2, **kwargs)
    for _ in range(3):
        for p, g in zip(cpu, grads):
            p.grad = g.clone()
        for p, g in zip(dev, grads):
            p.grad = g.to("neuron")
        opt_c.step()
        opt_d.step()
    same([p.detach() for p in dev], [p.detach() for p in cpu])
    assert torch_neuronx.get_fallback_ops() == {}


def test_foreach_ops_match_cpu():
    cpu, dev = params_pair()
    same(torch._foreach_add(dev, dev, alpha=2), torch._foreach_add(cpu, cpu, alpha=2))
    same(torch._foreach_mul(dev, 0.5), torch._foreach_mul(cpu, 0.5))
    same(torch._foreach_sqrt(torch._foreach_abs(dev)), torch._foreach_sqrt(torch._foreach_abs(cpu)))
    same(torch._foreach_norm(dev), torch._foreach_norm(cpu))
    torch._foreach_lerp_(dev, [t * 2 for t in dev], 0.3)
    torch._foreach_lerp_(cpu, [t * 2 for t in cpu], 0.3)
    same(dev, cpu)
    assert torch_neuronx.get_fallback_ops() == {}


def test_fsdp2_copy_ops_match_cpu():
    cpu, dev = params_pair()
    flat_c, flat_d = torch.cat([t.flatten() for t in cpu]), torch.cat([t.flatten() for t in dev])
    sizes = [t.numel() for t in cpu]
    out_c = [torch.empty(n) for n in sizes]
    out_d = [torch.empty(n, device="neuron") for n in sizes]
    torch.split_with_sizes_copy(flat_c, sizes, out=out_c)
    torch.split_with_sizes_copy(flat_d, sizes, out=out_d)
    same(out_d, out_c)
    same([torch._chunk_cat(dev, dim=0, num_chunks=2)], [torch._chunk_cat(cpu, dim=0, num_chunks=2)])
    dst_c, dst_d = [torch.zeros_like(t) for t in cpu], [torch.zeros_like(t) for t in dev]
    torch._foreach_copy_(dst_c, cpu)
    torch._foreach_copy_(dst_d, dev)
    same(dst_d, dst_c)
    assert torch_neuronx.get_fallback_ops() == {}


def test_grad_scaling_ops_match_cpu():
    cpu, dev = params_pair()
    cpu[1][3] = float("inf")
    dev[1][3] = float("inf")
    found_c, found_d = torch.zeros(1), torch.zeros(1, device="neuron")
    inv_c, inv_d = torch.full((1,), 0.25), torch.full((1,), 0.25, device="neuron")
    torch._amp_foreach_non_finite_check_and_unscale_(cpu, found_c, inv_c)
    torch._amp_foreach_non_finite_check_and_unscale_(dev, found_d, inv_d)
    same(dev + [found_d], cpu + [found_c])
    scale_c, scale_d = torch.full((1,), 1024.0), torch.full((1,), 1024.0, device="neuron")
    tracker_c, tracker_d = torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32, device="neuron")
    torch._amp_update_scale_(scale_c, tracker_c, found_c, 2.0, 0.5, 2000)
    torch._amp_update_scale_(scale_d, tracker_d, found_d, 2.0, 0.5, 2000)
    same([scale_d, tracker_d], [scale_c, tracker_c])
    assert scale_d.item() == 512.0
    assert torch_neuronx.get_fallback_ops() == {}
