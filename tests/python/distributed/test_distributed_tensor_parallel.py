"""Tensor parallelism on neuron, in real processes: parallelize_module with
ColwiseParallel / RowwiseParallel on an MLP and on an attention block gives the
forward output and the gradients of the unsharded module; TP x FSDP on a 2-D
mesh of 4 processes trains like the unsharded module."""

import pytest
from helpers.dist_launch import launch_ok


@pytest.mark.parametrize("world", [2, 4])
def test_colwise_and_rowwise_mlp_and_attention_equal_the_unsharded_module(world, tmp_path):
    launch_ok("tp_mlp_and_attention", world, tmp_path, expect="tp ok")


def test_tp_by_fsdp_on_a_2d_mesh_of_four_processes_trains_like_one(tmp_path):
    launch_ok("tp_by_fsdp", 4, tmp_path, expect="tp x fsdp ok")
