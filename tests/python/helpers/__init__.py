"""Helpers of the Python tier, imported by the tests and by the worker
programs they start (tests/python/workers/): nothing here imports torch at
import time, so a worker that tests import order can still use them.

- `processes`: a child interpreter's environment without the caller's
  NEURON_* / TORCH_NEURONX_* settings (`scrubbed_env`; `worker_env` adds
  tests/python to PYTHONPATH, so workers import `helpers` and each other) and
  one-process runs of a worker (`run_python`, `run_ok`, `start`, `finish`);
- `forkserver`: workers and ranks forked from a process that has imported
  torch once, in place of fresh interpreters;
- `dist_launch`: one process per rank (`launch`, `launch_ok`, `assert_all_ok`),
  the examples/ scripts under torchrun (`torchrun`), `shm_entries`, `free_port`;
- `rank`: what a launched rank imports (RANK, WORLD, `init()`);
- `tp_modules`: the modules the tensor-parallel workers shard;
- `netns_hosts`: two "hosts" made of network namespaces.
"""
