"""Fork safety: a child forked after the runtime started gets a clear error
on neuron use; one forked before it started works."""

from helpers.processes import run_ok


def test_fork_after_start_errors_clearly():
    out = run_ok("fork_child_uses_neuron", "after-start")
    assert "forked after the NeuronCore runtime started" in out
    assert "spawn" in out


def test_fork_before_start_works():
    out = run_ok("fork_child_uses_neuron", "before-start")
    assert out.strip() == "worked"


def test_parent_keeps_working_and_bad_fork_is_reported():
    out = run_ok("fork_parent_keeps_working", env={"TORCH_NEURONX_FALLBACK_WARN": "0"})
    assert out.split() == ["0", "False", "2.0"]
