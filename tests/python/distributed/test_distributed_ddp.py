"""DistributedDataParallel on the neuron process group: gradients averaged
across ranks, with the default hook and the fp16 / bf16 compression hooks.

DDP accepts torch's own `bf16_compress_hook` by its name only when torch is
built with CUDA and NCCL 2.10+ or XPU (`DistributedDataParallel._check_comm_hook`):
the project's torch 2.14.1 is such a build, so the hook works by name; the
same hook under another name (the workaround on a CPU-only build of torch)
works too (docs/hugging-face.md)."""

from helpers.dist_launch import launch_ok


def test_ddp_gradients_with_default_and_compression_hooks(tmp_path):
    launch_ok("ddp_hooks", 2, tmp_path, expect="ddp ok")
