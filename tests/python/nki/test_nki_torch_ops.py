"""NKI kernels as PyTorch operators (torch_neuronx.nki_op, wrap_nki): eager,
inside torch.compile(backend="neuron") as one graph node with no graph break
and no recompile per call, under autograd with an NKI backward, and on
DTensor inputs by local shard (real processes)."""

import nki
import nki.language as nl
import torch
from helpers.dist_launch import launch_ok

import torch_neuronx
from torch_neuronx import nki_op, wrap_nki


@nki.jit
def mul_kernel(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        rows = slice(i * 128, (i + 1) * 128)
        nl.store(out[rows, :], value=nl.multiply(nl.load(a[rows, :]), nl.load(b[rows, :])))
    return out


@nki_op("nki_test::mul")
def nki_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return mul_kernel(a, b)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    return nki_mul(grad, b), nki_mul(grad, a)  # the backward is NKI too


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


nki_mul.register_autograd(_backward, setup_context=_setup)

# a kernel registered directly, schema inferred from its unannotated signature
nki_mul_direct = nki_op("nki_test::mul_direct", mul_kernel)


def _inputs(rows=256, requires_grad=False):
    torch.manual_seed(0)
    return (
        torch.randn(rows, 64, device="neuron", requires_grad=requires_grad),
        torch.randn(rows, 64, device="neuron", requires_grad=requires_grad),
    )


def test_nki_op_eager_and_schema():
    a, b = _inputs()
    assert torch.equal(nki_mul(a, b).cpu(), (a * b).cpu())
    assert torch.equal(nki_mul_direct(a, b).cpu(), (a * b).cpu())
    assert torch.equal(torch.ops.nki_test.mul(a, b).cpu(), (a * b).cpu())
    assert "Tensor a, Tensor b" in str(torch.ops.nki_test.mul_direct.default._schema)


def test_nki_op_under_autograd_with_an_nki_backward():
    a, b = _inputs(requires_grad=True)
    (nki_mul(a, b) * 3).sum().backward()
    assert torch.equal(a.grad.cpu(), (3 * b).detach().cpu()) and torch.equal(b.grad.cpu(), (3 * a).detach().cpu())


def _compiled_once(fn, *calls):
    torch._dynamo.reset()
    torch_neuronx.reset_dynamo_metrics()
    compiled = torch.compile(fn, backend="neuron", fullgraph=True)
    outs = [compiled(*args) for args in calls]
    m = torch_neuronx.get_dynamo_metrics()
    assert m["graph_breaks"] == 0 and m["recompilations"] == 0 and m["frames_compiled"] == 1, m
    return outs


def test_nki_op_in_torch_compile_is_one_node_without_recompiles():
    a, b = _inputs()
    c, d = _inputs()
    c, d = c * 2, d + 1
    outs = _compiled_once(lambda x, y: nki_mul(x, y).relu() + 1, (a, b), (c, d))
    assert torch.equal(outs[0].cpu(), ((a * b).relu() + 1).cpu())
    assert torch.equal(outs[1].cpu(), ((c * d).relu() + 1).cpu())
    gm = torch._dynamo.export(lambda x, y: nki_mul(x, y) + 1)(a, b).graph_module
    calls = [n for n in gm.graph.nodes if n.op == "call_function" and "nki_test" in str(n.target)]
    assert len(calls) == 1, gm.graph


def test_nki_op_compiled_training_step():
    a, b = _inputs(requires_grad=True)
    step = torch.compile(lambda x, y: nki_mul(x, y).sum(), backend="neuron")
    step(a, b).backward()
    assert torch.equal(a.grad.cpu(), b.detach().cpu())


def test_wrap_nki_eager_and_compiled_with_a_grid():
    @nki.jit
    def add_tile(a, b):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        i = nl.program_id(0)
        rows = slice(i * 128, (i + 1) * 128)
        nl.store(out[rows, :], value=nl.add(nl.load(a[rows, :]), nl.load(b[rows, :])))
        return out

    caller = wrap_nki(add_tile)
    a, b = _inputs()
    assert torch.equal(caller[2](a, b).cpu(), (a + b).cpu())
    c, d = _inputs()
    outs = _compiled_once(lambda x, y: caller[2](x, y) * 2, (a, b), (d, c))
    assert torch.equal(outs[0].cpu(), ((a + b) * 2).cpu()) and torch.equal(outs[1].cpu(), ((d + c) * 2).cpu())


def test_kernels_on_dtensor_shards(tmp_path):
    launch_ok("nki_dtensor_shards", 2, tmp_path, expect="shards ok")


@nki.jit
def add_into(x, y):
    """Writes x + y into x (a kernel that mutates its argument)."""
    nl.store(x, value=nl.add(nl.load(x), nl.load(y)))


def test_mutating_kernels_need_nki_op_with_mutates_args():
    import pytest

    a, b = _inputs(rows=128)
    with pytest.raises(torch_neuronx.nki.NKIError, match=r"writes its tensor argument\(s\) \[0\].*mutates_args"):
        wrap_nki(add_into)(a, b)
    op = nki_op("nki_test::add_into", add_into, mutates_args={"x"})
    expected = (a + b).cpu()
    op(a, b)
    assert torch.equal(a.cpu(), expected)
    c, d = _inputs(rows=128)
    expected = (c + d).cpu()
    torch.compile(lambda x, y: op(x, y), backend="neuron", fullgraph=True)(c, d)
    assert torch.equal(c.cpu(), expected)
