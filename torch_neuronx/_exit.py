"""What must happen before Python finalizes, registered with `atexit` at import.

A thread other than the main one that takes the GIL while the interpreter
finalizes is terminated by CPython, and a C++ thread terminated that way
aborts the process ("terminate called without an active exception"). Two of
the device's threads release Python objects after the main thread could
already be exiting:

- each process group's worker: completing a Work runs, then destroys, the
  Future's callbacks, which can hold Python functions (`Future.then` in DDP's
  communication hooks);
- PyTorch's autograd thread of each neuron device (which runs a backward
  called with multithreading enabled: from a thread other than the one that
  imported torch_neuronx, or with TORCH_NEURONX_AUTOGRAD_THREAD=1; see
  _autograd_thread.py): since torch 2.14 every
  `backward()` stashes a `contextvars.Context` in the thread-local state that
  the engine copies into its GraphTask, and the device thread that runs the
  last node may drop the GraphTask's last reference after `backward()` has
  returned (measured: a three-line script with one backward on neuron aborted
  at exit in 16 of 30 runs). CUDA's device threads share the race; CPU-only
  backward runs on the calling thread.

The handler releases the GIL and lets both finish: it waits for the groups'
workers to go idle, then runs one Python-free backward through the autograd
thread of each neuron device that held memory. A device thread takes tasks in
order, so when that backward returns, the thread has released the GraphTasks
before it; the flush's own GraphTask holds no Python object.
"""

import atexit
import sys

import torch

from . import _C

# How long exit waits for the groups' workers (a collective whose peer never
# comes would otherwise hold the exit until its timeout).
_DRAIN_LIMIT_S = 10.0


def _flush_autograd_device_threads() -> None:
    neuron = torch.neuron
    if not neuron.is_initialized() or neuron._is_in_bad_fork():
        return  # no backward ran on neuron in this process
    for index in range(neuron.device_count()):
        if neuron.max_memory_reserved(index) == 0:
            continue  # never held a tensor: no backward ran there
        leaf = torch.zeros((), device=torch.device("neuron", index), requires_grad=True)
        out = leaf * 2
        # The engine itself, not torch.autograd.backward: that would stash a
        # Python object in this GraphTask too. It releases the GIL while it
        # runs, through the device thread (multithreading on for this call).
        with torch.autograd.set_multithreading_enabled(True):
            try:
                torch.autograd.Variable._execution_engine.run_backward(
                    (out,), (torch.ones_like(out),), False, False, (), True, True
                )
            except RuntimeError:  # no thread could start (a process at its memory limit): none to flush either
                return


def _before_finalization() -> None:
    step_trace = sys.modules.get("torch_neuronx.observability.step_trace")
    if step_trace is not None:  # a trace the script ended inside of
        step_trace.stop()
    strict = sys.modules.get("torch_neuronx.observability.strict")
    if strict is not None:  # strict mode's last memory check, report (warn) and run record
        strict.at_exit()
    _C._drain_process_groups(_DRAIN_LIMIT_S)
    _flush_autograd_device_threads()


def register() -> None:
    atexit.register(_before_finalization)
