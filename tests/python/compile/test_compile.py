"""torch.compile on neuron tensors, first slice the default
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
    return torch.nn.Sequential(
        torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 4)
    ).to("neuron")


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


def test_a_graph_on_another_device_allocates_there_through_the_wrappers_fast_path():
    # The wrapper allocates with _C._empty_strided_neuron on the graph's own device and waits for
    # that device's stream, whatever the current device is (CUDA's wrapper does so under a guard).
    if torch.neuron.device_count() < 2:
        pytest.skip(f"needs 2 neuron devices, this driver has {torch.neuron.device_count()}")
    f = torch.compile(lambda a, w: ((a @ w).relu() + 1).sum(0), backend="neuron")
    x = torch.randn(8, 16, device="neuron:1")
    w = torch.randn(16, 16, device="neuron:1")
    out, code = run_and_get_code(f, x, w)
    assert torch.neuron.current_device() == 0
    assert out.device == torch.device("neuron:1")
    torch.testing.assert_close(out.cpu(), ((x.cpu() @ w.cpu()).relu() + 1).sum(0), rtol=1e-5, atol=1e-5)
    source = "\n".join(code)
    assert "= empty_strided_neuron(" in source and "= empty_strided(" not in source
    assert "before_host_kernels(1)" in source


def test_the_wrappers_allocation_fast_path_rejects_bad_arguments_by_name():
    import torch_neuronx._C as C

    with pytest.raises(ValueError, match="neuron:99 does not exist"):
        C._empty_strided_neuron((2,), (1,), torch.float32, 99)
    with pytest.raises(ValueError, match="size must not be negative, got -1"):
        C._empty_strided_neuron((-1,), (1,), torch.float32, 0)
    with pytest.raises(TypeError, match="stride must be a tuple of ints, got list"):
        C._empty_strided_neuron((2,), [1], torch.float32, 0)
    with pytest.raises(TypeError, match="dtype must be a torch.dtype"):
        C._empty_strided_neuron((2,), (1,), "float32", 0)
    with pytest.raises(ValueError, match="neuron:-1 does not exist"):
        C._before_host_kernels(-1)
    t = C._empty_strided_neuron((3, 4), (1, 3), torch.bfloat16, 0)
    assert (t.device, t.shape, t.stride(), t.dtype) == (torch.device("neuron:0"), (3, 4), (1, 3), torch.bfloat16)


def test_named_backend_takes_the_modes_torch_compile_forwards():
    f = torch.compile(lambda a: (a.sin() * 2 + a.cos()).sum(1), backend="neuron", mode="reduce-overhead", dynamic=False)
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


def test_compiled_conv_net_forward_and_backward_equal_eager_in_float32_and_bfloat16():
    for dtype, tol in ((torch.float32, 1e-4), (torch.bfloat16, 3e-2)):
        torch.manual_seed(0)
        net = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1),
            torch.nn.BatchNorm2d(8),
            torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Flatten(),
            torch.nn.Linear(8 * 4 * 4, 5),
        )
        net = net.to("neuron", dtype)
        x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1)).to("neuron", dtype)
        compiled = torch.compile(net, backend="neuron")
        out = compiled(x)
        out.float().square().sum().backward()
        grads = [p.grad.clone() for p in net.parameters()]
        net.zero_grad()
        ref = net(x)
        ref.float().square().sum().backward()
        torch.testing.assert_close(out.float().cpu(), ref.float().cpu(), rtol=tol, atol=tol)
        for g, p in zip(grads, net.parameters()):
            torch.testing.assert_close(g.float().cpu(), p.grad.float().cpu(), rtol=tol, atol=tol * 10)


def test_a_compiled_training_loop_with_adamw_matches_eager_for_ten_steps():
    def run(compiled: bool):
        model = mlp()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        step_model = torch.compile(model, backend="neuron") if compiled else model
        losses = []
        for step in range(10):
            x = torch.randn(8, 8, generator=torch.Generator().manual_seed(step)).to("neuron")
            loss = step_model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        return losses

    eager, compiled = run(False), run(True)
    assert all(abs(a - b) <= 1e-4 * abs(b) + 1e-6 for a, b in zip(compiled, eager)), (compiled, eager)
    assert compiled[-1] < compiled[0]


CACHED_RUN = """
import json, sys, time, torch, torch_neuronx
if len(sys.argv) > 1:  # as if torch_neuronx's code generation had changed since the cache was written
    from torch_neuronx._compile.codegen_version import CodegenVersion
    CodegenVersion.uuid = lambda self: sys.argv[1].encode()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)).to("neuron")
start = time.perf_counter()
torch.compile(model, backend="neuron")(torch.randn(4, 8, device="neuron"))
m = torch_neuronx.get_dynamo_metrics()
print(json.dumps({"seconds": time.perf_counter() - start, "hits": m["cache_hits"], "misses": m["cache_misses"]}))
"""


def test_the_compile_cache_persists_across_processes(tmp_path):
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"))
    # Inductor's default compile workers (make test pins one thread for speed;
    # here the default pool compiles, as it does for a user).
    env.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", CACHED_RUN, *version],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=300,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        for version in ([], [], ["another codegen"])
    ]
    assert runs[0]["hits"] == 0 and runs[0]["misses"] >= 1, runs
    assert runs[1]["hits"] >= 1 and runs[1]["misses"] == 0, runs  # the second process compiled nothing anew
    # A wrapper generated by another version of torch_neuronx._compile is never reused (codegen_version.py).
    assert runs[2]["hits"] == 0 and runs[2]["misses"] >= 1, runs


def test_accelerate_dynamo_backend_neuron_compiles_with_this_backend():
    from accelerate import Accelerator

    import torch_neuronx

    torch_neuronx.reset_dynamo_metrics()
    acc = Accelerator(dynamo_backend="neuron")  # DynamoBackend.NEURON
    assert acc.device.type == "neuron"
    model = acc.prepare(mlp())
    out = model(torch.randn(3, 8, device=acc.device))
    assert out.device.type == "neuron"
    assert torch_neuronx.get_dynamo_metrics()["graphs_compiled"] >= 1


def test_static_shapes_by_default_and_dynamic_true_honoured():
    import torch_neuronx

    def f(a):
        return (a.sin() + 1).sum()

    for dynamic, graphs in ((None, 3), (True, 1)):
        torch._dynamo.reset()
        torch_neuronx.reset_dynamo_metrics()
        compiled = torch.compile(f, backend="neuron", dynamic=dynamic)
        for n in (4, 6, 8):
            x = torch.randn(n, device="neuron")
            torch.testing.assert_close(compiled(x).cpu(), f(x).cpu())
        m = torch_neuronx.get_dynamo_metrics()
        # static: each new size is a new graph (not an automatically dynamic one), with its reason
        assert m["graphs_compiled"] == graphs and m["recompilations"] == graphs - 1, (dynamic, m)
        assert all("size" in r for r in m["recompile_reasons"]), m


def _register_an_op_inductor_cannot_lower():
    """A custom op (eager kernel and fake kernel) whose Inductor lowering raises,
    as a lowering with no NeuronCore implementation would."""
    from torch._inductor.lowering import register_lowering

    if hasattr(torch.ops, "neuron_test") and hasattr(torch.ops.neuron_test, "twice"):
        return torch.ops.neuron_test.twice

    @torch.library.custom_op("neuron_test::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @twice.register_fake
    def _(x):
        return torch.empty_like(x)

    @register_lowering(torch.ops.neuron_test.twice.default)
    def _(x):
        raise NotImplementedError("no NeuronCore kernel for twice")

    return torch.ops.neuron_test.twice


def test_a_graph_inductor_cannot_compile_names_the_op_or_runs_eagerly_when_opted_in(monkeypatch):
    import torch_neuronx

    twice = _register_an_op_inductor_cannot_lower()

    def f(a):
        return twice(a.cos()) + 1

    x = torch.randn(6, device="neuron")
    with pytest.raises(Exception, match=r"op neuron_test\.twice\.default: .*no NeuronCore kernel for twice") as info:
        torch.compile(f, backend="neuron")(x)
    assert "TORCH_NEURONX_COMPILE_FALLBACK=1" in str(info.value)  # says what to do
    del info  # its traceback holds this frame, and with it x: a cycle that only gc would free
    for opt_in in ({"options": {"eager_fallback": True}}, {}):
        torch._dynamo.reset()
        torch_neuronx.reset_dynamo_metrics()
        if not opt_in:
            monkeypatch.setenv("TORCH_NEURONX_COMPILE_FALLBACK", "1")
        with pytest.warns(RuntimeWarning, match="running one compiled graph eagerly"):
            out = torch.compile(f, backend="neuron", **opt_in)(x)
        torch.testing.assert_close(out.cpu(), (x.cos() * 2 + 1).cpu())
        m = torch_neuronx.get_dynamo_metrics()
        assert m["eager_fallbacks"] == 1 and "neuron_test.twice.default" in m["eager_fallback_reasons"][0], m


def test_compiled_activation_checkpointing_replays_random_ops_on_neuron():
    # AOT autograd wraps a recomputed random op in run_and_save_rng_state /
    # run_with_rng_state, whose device switch needs neuron's kernels.
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    lin = torch.nn.Linear(16, 16).to("neuron")

    def body(a):
        return torch.nn.functional.dropout(lin(a), 0.5, training=True).relu()

    x = torch.randn(8, 16, device="neuron", requires_grad=True)
    results = []
    for fn in (
        lambda a: body(a).sum(),
        torch.compile(
            lambda a: checkpoint(body, a, use_reentrant=False).sum(),
            backend="neuron",
            options={"fallback_random": True},
        ),
    ):  # ATen's random ops: eager's numbers
        torch.neuron.manual_seed(1)
        out = fn(x)
        out.backward()
        results.append((out.item(), x.grad.clone()))
        x.grad = None
    assert results[0][0] == results[1][0]
    assert torch.equal(results[0][1].cpu(), results[1][1].cpu())  # the backward replayed the forward's mask
