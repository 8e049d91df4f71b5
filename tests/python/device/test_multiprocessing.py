"""torch.multiprocessing shares neuron tensors between processes as it shares
CUDA tensors: by a handle to the same device memory (torch_neuronx/_multiprocessing.py,
hal ipc table). Each test runs workers/multiprocessing_share.py, which spawns
real child processes."""

from helpers.processes import run_ok


def lines(scenario: str) -> list[str]:
    return run_ok("multiprocessing_share", scenario, timeout=240).splitlines()


def test_tensors_cross_processes_by_reference_both_ways():
    received, exited, writes, back = lines("round-trip")
    # A strided bf16 view (rows 1-3, every other column) and a Parameter arrive as such.
    assert received == "received neuron torch.bfloat16 (3, 3) 126.0 Parameter True"
    assert exited == "child exit 0"
    # The child's in-place writes landed in the parent's memory: the view gained 9,
    # the row outside it did not, and the Parameter doubled.
    assert writes == "parent sees writes 135.0 15.0 6.0"
    # A tensor the child allocated and sent outlives the child.
    assert back == "child's tensor after it exited [0.0, 10.0, 20.0, 30.0] neuron:0"


def test_sender_does_not_reuse_memory_a_receiver_holds():
    held, read, dropped, exited = lines("reuse")
    assert held == "reserved while held MiB 4"  # freed by the sender, kept for the receiver
    assert read == "receiver reads 7.0"  # the sender's next allocation did not overwrite it
    assert dropped == "reserved after drop MiB 0"  # returned to the cache once the receiver let go
    assert exited == "child exit 0"


def test_share_memory_hogwild_training_updates_one_model():
    codes, error = lines("hogwild")
    assert codes == "exit codes [0, 0]"
    before, after = float(error.split()[2]), float(error.split()[4])
    assert before > 1 and after < 0.2 * before, error  # the parent's weights are the ones trained


def test_what_cannot_be_sent_says_why():
    out = "\n".join(lines("errors"))
    assert "storage: Cannot pickle a neuron storage" in out
    assert "non-leaf: Cowardly refusing to serialize non-leaf tensor" in out
    assert "received again: cannot share this neuron storage" in out and "tensor.clone()" in out
    assert "received clone: sent" in out
    assert "empty: torch.Size([0, 3])" in out
