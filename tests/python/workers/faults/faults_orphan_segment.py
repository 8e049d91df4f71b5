"""Creates a shared-memory segment under this project's naming and exits
without unlinking it (what SIGKILL during init leaves behind); prints its name
(test_distributed_faults.py)."""

import os

n = f"/dev/shm/torch_neuronx_pg_{os.getpid()}_dead_0"
open(n, "wb").write(b"x" * 4096)
print(os.path.basename(n))
