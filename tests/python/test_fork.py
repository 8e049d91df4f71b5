"""Fork safety: a child forked after the runtime started gets a clear error
on neuron use; one forked before it started works."""

from conftest import run_ok

CHILD = """
import os, sys, torch
{before}
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        torch.ones(2, device='neuron').cpu()
        os.write(w, b'worked')
    except RuntimeError as e:
        os.write(w, str(e).encode()[:300])
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(r, 400).decode())
"""


def test_fork_after_start_errors_clearly():
    out = run_ok(CHILD.format(before="torch.ones(1, device='neuron'); assert torch.neuron.is_initialized()"))
    assert "forked after the NeuronCore runtime started" in out
    assert "spawn" in out


def test_fork_before_start_works():
    out = run_ok(CHILD.format(before="torch.neuron.device_count(); assert not torch.neuron.is_initialized()"))
    assert out.strip() == "worked"


def test_parent_keeps_working_and_bad_fork_is_reported():
    out = run_ok("""
        import os, torch
        torch.ones(1, device='neuron')
        pid = os.fork()
        if pid == 0:
            os._exit(0 if torch.neuron._is_in_bad_fork() else 1)
        _, status = os.waitpid(pid, 0)
        print(os.WEXITSTATUS(status), torch.neuron._is_in_bad_fork(), torch.ones(2, device='neuron').sum().item())
    """, env={"TORCH_NEURONX_FALLBACK_WARN": "0"})
    assert out.split() == ["0", "False", "2.0"]
