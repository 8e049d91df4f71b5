"""torch.compile on neuron tensors, first slice (issue 5): the default
`inductor` backend and the named backend `neuron` generate C++ kernels
(Inductor's CPU code generation) that run on neuron memory; compiled forward
and backward equal eager. Inductor's cache lives in the test's tmp dir, so
every compile here is cold."""

import pytest
import torch
from torch._inductor.utils import run_and_get_code


@pytest.fixture(autouse=True)
def fresh_compile_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.LayerNorm(32),
                               torch.nn.Linear(32, 4)).to("neuron")


@pytest.mark.parametrize("backend", ["inductor", "neuron"])
def test_compiled_mlp_forward_and_backward_equal_eager_with_generated_cpp_kernels(backend):
    model = mlp()
    x = torch.randn(16, 8, device="neuron", generator=None)
    compiled = torch.compile(model, backend=backend)
    out, code = run_and_get_code(compiled, x)
    ref = model(x)
    assert out.device == x.device
    torch.testing.assert_close(out.cpu(), ref.cpu(), rtol=1e-5, atol=1e-5)
    source = "\n".join(code)
    assert "cpp_fused" in source, "no Inductor-generated C++ kernel"  # an identity backend fails here
    assert "device='cpu'" not in source and "device(type='cpu')" not in source, "a buffer left the device"
    out.square().sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref.square().sum().backward()
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g.cpu(), p.grad.cpu(), rtol=1e-4, atol=1e-5)


def test_named_backend_takes_the_modes_torch_compile_forwards():
    f = torch.compile(lambda a: (a.sin() * 2 + a.cos()).sum(1), backend="neuron", mode="reduce-overhead",
                      dynamic=False)
    x = torch.randn(5, 7, device="neuron")
    torch.testing.assert_close(f(x).cpu(), (x.sin() * 2 + x.cos()).sum(1).cpu(), rtol=1e-5, atol=1e-6)
    g = torch.compile(lambda a: torch.relu(a) * 3, backend="neuron", options={"max_autotune": False})
    torch.testing.assert_close(g(x).cpu(), (torch.relu(x) * 3).cpu())


def test_compiled_graph_waits_for_queued_work_on_the_current_stream():
    f = torch.compile(lambda a: a * 2 + 1, backend="neuron")
    s = torch.neuron.Stream()
    with torch.neuron.stream(s):
        x = torch.ones(1 << 16, device="neuron")
        x.mul_(3)  # queued on s
        y = f(x)
    s.synchronize()
    assert torch.equal(y.cpu(), torch.full((1 << 16,), 7.0))


def test_metrics_count_graphs_kernels_recompilations_and_graph_breaks():
    import torch_neuronx
    torch_neuronx.reset_dynamo_metrics()

    def f(a):
        b = a.sin() + 1
        print("graph break")  # dynamo cannot trace print: two graphs
        return b.cos() * 2

    compiled = torch.compile(f, backend="neuron", dynamic=False)
    compiled(torch.randn(4, device="neuron"))
    m = torch_neuronx.get_dynamo_metrics()
    assert m["graphs_compiled"] == 2 and m["kernels_generated"] >= 2, m
    assert m["graph_breaks"] >= 1 and m["recompilations"] == 0, m
    compiled(torch.randn(4, device="neuron"))  # same shape: no recompilation
    assert torch_neuronx.get_dynamo_metrics()["recompilations"] == 0
    compiled(torch.randn(6, device="neuron"))  # a new static shape recompiles, with its reason
    m = torch_neuronx.get_dynamo_metrics()
    assert m["recompilations"] >= 1 and any("size" in r for r in m["recompile_reasons"]), m
    torch_neuronx.reset_dynamo_metrics()
    assert torch_neuronx.get_dynamo_metrics()["graphs_compiled"] == 0
