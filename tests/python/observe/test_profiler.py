"""torch.profiler on neuron (csrc/profiler/): device tracks per stream with
every op's execution path, copies with bytes and direction, NKI kernels,
flows from the CPU ops, the estimated-Trainium2 track, record_function
ranges and profile_memory, read back from export_chrome_trace's JSON."""

import json
import subprocess
import sys

import nki
import nki.language as nl
import torch
from helpers.chrome_trace import ESTIMATE_TRACK, Trace
from helpers.dist_launch import launch_ok
from helpers.processes import worker_env
from torch.profiler import ProfilerActivity, profile, record_function

import torch_neuronx

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


@nki.jit
def scale_kernel(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(a), 2.0))
    return out


def _train_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).to("neuron")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 32).to("neuron")
    with record_function("train_step"):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
    return loss.item()


def test_a_training_step_has_device_tracks_flows_and_an_estimated_track(tmp_path):
    _train_step()  # warm: the profile holds one ordinary step
    with profile(activities=ACTIVITIES, profile_memory=True) as prof:
        _train_step()
        scale_kernel(torch.ones(128, 64, device="neuron")).cpu()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = Trace(path)
    pid = trace.device_pid(0)
    tracks = trace.tracks(pid)
    assert ESTIMATE_TRACK in tracks.values()
    assert any(name.startswith("stream ") for name in tracks.values()), tracks

    measured = trace.measured(pid)
    ops = [e for e in measured if e["args"].get("kind") == "op"]
    names = {e["name"] for e in ops}
    assert {"aten::addmm", "aten::mm"} <= names, names  # forward and backward matmuls
    assert {e["args"]["path"] for e in ops} <= {"native", "host dispatch", "copying fallback"}
    assert "host dispatch" in {e["args"]["path"] for e in ops}
    copies = [e for e in measured if e["args"].get("kind") == "copy"]
    assert {"Memcpy HtoD", "Memcpy DtoH"} <= {e["name"] for e in copies}
    assert all(e["args"]["bytes"] > 0 for e in copies)
    [kernel] = [e for e in measured if e["name"] == "nki::scale_kernel"]
    assert kernel["args"]["estimated Trainium2 us"] > 0

    # Each device slice is linked to the CPU op that issued it.
    starts, ends = trace.flows("s"), trace.flows("f")
    assert len(starts) == len(
        [e for e in trace.events if e.get("ph") == "s" and e.get("cat") == "ac2g"]
    )  # one per CPU op
    assert ends and set(ends) <= set(starts)
    assert all(ends[i]["pid"] == pid and starts[i]["pid"] != pid for i in ends)

    # The estimated track: what the caller asked for (depth 0), each no
    # earlier than the host issued it, one after another.
    est = sorted(trace.estimated(pid), key=lambda e: e["ts"])
    assert {"aten::addmm (estimated)", "Memcpy HtoD (estimated)", "nki::scale_kernel (estimated)"} <= {
        e["name"] for e in est
    }
    assert {e["args"]["engine"] for e in est} <= {"tensor", "vector", "scalar", "gpsimd", "dma", "collective"}
    assert all(e["dur"] > 0 for e in est)
    assert all(b["ts"] >= a["ts"] + a["dur"] - 0.01 for a, b in zip(est, est[1:]))  # us, rounded to ns
    step_est = sum(e["dur"] for e in est)
    step_measured = sum(e["dur"] for e in measured if f"{e['name']} (estimated)" in {x["name"] for x in est})
    assert 0 < step_est < step_measured  # a 128x128-PE core against this host's CPU

    # record_function ranges and the profiler's own tables
    assert any(e.get("name") == "train_step" and e.get("ph") == "X" for e in trace.events)
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["aten::addmm"].device_time_total > 0
    # the estimated slices are listed apart and left out of the device total
    assert averages["aten::addmm (estimated)"].device_time_total > 0
    table = prof.key_averages().table()
    device = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1]
    measured_total = sum(e.self_device_time_total for e in device if not e.is_user_annotation)
    assert f"Self NEURON time total: {torch.autograd.profiler_util._format_time(measured_total)}" in table
    assert max(e.device_memory_usage for e in averages.values()) > 0  # profile_memory: neuron allocations


def test_the_copying_fallback_path_shows_in_the_trace(tmp_path):
    x = torch.randn(8, 8, device="neuron")
    torch_neuronx._C._set_zero_copy(False)
    try:
        with profile(activities=ACTIVITIES) as prof:
            torch.tanh(x)
    finally:
        torch_neuronx._C._set_zero_copy(True)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = Trace(tmp_path / "t.json")
    paths = {e["name"]: e["args"].get("path") for e in trace.measured(trace.device_pid(0))}
    assert paths.get("tanh") == "copying fallback" or paths.get("aten::tanh") == "copying fallback", paths


def test_nothing_is_recorded_outside_a_profile():
    assert not torch_neuronx._C._trace_active()
    with profile(activities=ACTIVITIES):
        assert torch_neuronx._C._trace_active()
    assert not torch_neuronx._C._trace_active()
    with profile(activities=[ProfilerActivity.CPU]):  # no device activity asked for
        assert not torch_neuronx._C._trace_active()


def test_a_compiled_graph_is_one_slice_with_its_estimate(tmp_path):
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU()).to("neuron")
    compiled = torch.compile(model, backend="neuron")
    x = torch.randn(4, 32, device="neuron")
    with torch.no_grad():
        compiled(x)  # compiled outside the profile
        with profile(activities=ACTIVITIES) as prof:
            compiled(x)
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = Trace(tmp_path / "t.json")
    pid = trace.device_pid(0)
    [graph] = [e for e in trace.measured(pid) if e["args"].get("kind") == "compiled graph"]
    [est] = [e for e in trace.estimated(pid) if e["name"] == graph["name"] + " (estimated)"]
    assert est["dur"] > 0
    # its extern kernels (the addmm) nest inside it and are not estimated twice
    inner = [e for e in trace.measured(pid) if e["args"].get("kind") == "op"]
    assert all(graph["ts"] <= e["ts"] <= graph["ts"] + graph["dur"] for e in inner)
    assert not [e for e in trace.estimated(pid) if e["args"].get("kind") == "op"]


def test_collectives_on_their_device_tracks(tmp_path):
    # real processes on the neuron process group, each checking its own trace
    launch_ok("profile_collective", 2, tmp_path, args=[str(tmp_path)], expect="profiled collectives", timeout=120)


_STEPS = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 4)).to("neuron")
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(32, 64, device="neuron")
for step in range(6):
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
"""


def test_an_unchanged_script_traces_its_steps_and_the_report_draws_them(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(_STEPS)
    env = worker_env(
        TORCH_NEURONX_TRACE=str(tmp_path / "trace-{rank}.json"),
        TORCH_NEURONX_TRACE_STEPS="2:3",
        TORCH_NEURONX_STRICT="warn",
        TORCH_NEURONX_REPORT=str(tmp_path / "run.json"),
    )
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "traced 3 optimizer steps" in run.stderr
    trace = Trace(tmp_path / "trace-0.json")
    assert any(e.get("name", "").startswith("ProfilerStep#") for e in trace.events)
    assert trace.estimated(trace.device_pid(0))
    summary = json.loads((tmp_path / "trace-0.json.summary.json").read_text())
    assert summary["steps"] == 3 and 0 < summary["estimated_trn2_ms_per_step"] < summary["wall_ms_per_step"]
    png = tmp_path / "step.png"
    report = subprocess.run(
        [sys.executable, "-m", "torch_neuronx", "report", str(tmp_path / "run.json"), "--png", str(png)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert report.returncode == 0, report.stderr
    assert "estimated Trainium2 time per step" in report.stdout and "matmul & conv" in report.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_bad_trace_step_window_warns_at_import_and_fails_the_first_use(tmp_path):
    env = worker_env(TORCH_NEURONX_TRACE=str(tmp_path / "t.json"), TORCH_NEURONX_TRACE_STEPS="3")
    run = subprocess.run(
        [sys.executable, "-c", "import torch_neuronx, torch; torch.ones(1, device='neuron')"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0 and "SettingWarning" in run.stderr
    assert "RuntimeError: TORCH_NEURONX_TRACE_STEPS='3' is not valid" in run.stderr


def test_strict_mode_alone_estimates_a_window_of_steps(tmp_path):
    # no profiler: the device's activity buffer over steps 3-5, estimated at the end of the window
    script = tmp_path / "train.py"
    script.write_text(_STEPS)
    env = worker_env(TORCH_NEURONX_STRICT="warn", TORCH_NEURONX_REPORT=str(tmp_path / "run.json"))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    window = json.loads((tmp_path / "run.json").read_text())["trace"]
    assert window["trace"] is None and window["steps"] == 3
    assert 0 < window["estimated_trn2_ms_per_step"] < window["wall_ms_per_step"]
    assert "3 optimizer steps as Trainium2 would run them:" in run.stderr
