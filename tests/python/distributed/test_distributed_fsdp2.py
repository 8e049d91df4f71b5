"""FSDP2 (`fully_shard`) on a small transformer on neuron, in real processes:
20 AdamW steps whose loss curve matches a single-process reference (float32,
relative difference at most 1e-5), and a torch.distributed.checkpoint saved
mid-run that a freshly sharded model reloads and resumes from exactly."""

import pytest
from helpers.dist_launch import launch_ok


@pytest.mark.parametrize("world", [2, 4])
def test_fsdp2_training_matches_one_process_and_resumes_from_a_checkpoint(world, tmp_path):
    launch_ok("fsdp2_train_and_resume", world, tmp_path, expect="worst relative difference")
