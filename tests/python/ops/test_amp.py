"""torch.autocast("neuron") with CUDA's cast policy, and torch.amp.GradScaler("neuron")."""

import pytest
import torch
import torch.nn.functional as F

import torch_neuronx


def dev(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype).to("neuron")


@pytest.mark.parametrize("amp_dtype", [torch.bfloat16, torch.float16])
def test_matmul_class_ops_run_in_the_autocast_dtype(amp_dtype):
    a, w, img, k = dev(4, 8), dev(8, 8), dev(1, 3, 8, 8), dev(4, 3, 3, 3)
    with torch.autocast("neuron", dtype=amp_dtype):
        assert torch.get_autocast_dtype("neuron") == amp_dtype
        outs = [
            a @ w,
            torch.mm(a, w),
            F.linear(a, w),
            torch.addmm(a, a, w),
            F.conv2d(img, k),
            torch.bmm(a[None], w[None]),
            F.scaled_dot_product_attention(a[None, None], a[None, None], a[None, None]),
        ]
    for out in outs:
        assert out.dtype == amp_dtype and out.device.type == "neuron"


def test_reductions_norms_and_losses_run_in_float32():
    x = dev(4, 8, dtype=torch.bfloat16)
    target = torch.randint(0, 8, (4,)).to("neuron")
    with torch.autocast("neuron", dtype=torch.bfloat16):
        outs = [
            x.softmax(-1),
            x.log_softmax(-1),
            F.layer_norm(x, (8,)),
            F.rms_norm(x, (8,)),
            x.sum(),
            F.cross_entropy(x, target),
            x.exp(),
            x.pow(2),
            F.mse_loss(x, x),
        ]
    for out in outs:
        assert out.dtype == torch.float32


def test_mixed_dtype_ops_promote_to_the_widest():
    a, b = dev(4, dtype=torch.bfloat16), dev(4)
    with torch.autocast("neuron", dtype=torch.bfloat16):
        assert torch.addcmul(b, a, a).dtype == torch.float32
        assert torch.atan2(a, b).dtype == torch.float32


def test_autocast_results_equal_explicit_casts_on_cpu():
    a, w = torch.randn(16, 32), torch.randn(32, 8)
    with torch.autocast("neuron", dtype=torch.bfloat16):
        out = F.linear(a.to("neuron"), w.t().contiguous().to("neuron")).softmax(-1)
    ref = F.linear(a.bfloat16(), w.t().contiguous().bfloat16()).float().softmax(-1)
    assert torch.equal(out.cpu(), ref)


def test_autocast_is_off_outside_and_when_disabled():
    a = dev(4, 4)
    assert (a @ a).dtype == torch.float32
    with torch.autocast("neuron", dtype=torch.bfloat16):
        with torch.autocast("neuron", enabled=False):
            assert (a @ a).dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):  # another device's autocast leaves neuron alone
        assert (a @ a).dtype == torch.float32


def test_backward_under_autocast_gives_float32_neuron_grads():
    w = dev(8, 8).requires_grad_()
    x = dev(4, 8)
    with torch.autocast("neuron", dtype=torch.bfloat16):
        loss = (x @ w).float().pow(2).mean()
    loss.backward()
    assert w.grad.dtype == torch.float32 and w.grad.device.type == "neuron"


def train_with_scaler(device: str, poison_step: int) -> tuple[list[float], torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device, init_scale=2.0**10)
    x, y = torch.randn(32, 8).to(device), torch.randn(32, 1).to(device)
    scales = []
    for step in range(4):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        if step == poison_step:
            next(model.parameters()).grad[0, 0] = float("inf")
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, torch.cat([p.detach().cpu().flatten() for p in model.parameters()])


def test_grad_scaler_skips_a_step_with_inf_grads_and_matches_cpu():
    scales_d, params_d = train_with_scaler("neuron", poison_step=1)
    scales_c, params_c = train_with_scaler("cpu", poison_step=1)
    assert scales_d == scales_c == [1024.0, 512.0, 512.0, 512.0]  # the poisoned step halved the scale
    assert torch.equal(params_d, params_c)
    assert torch_neuronx.get_fallback_ops() == {}
