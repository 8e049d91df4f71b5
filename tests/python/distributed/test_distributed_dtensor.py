"""DTensor on meshes of device type neuron, in real processes: distribute_tensor
and every redistribute between Shard, Replicate and Partial on a 1-D mesh (world
2 and 4) and a 2-D 2 x 2 mesh, against the full tensor computed locally; the
local shards are neuron tensors of this rank's device."""

import pytest
from helpers.dist_launch import launch_ok


@pytest.mark.parametrize("world", [2, 4])
def test_distribute_and_redistribute_on_neuron_meshes_match_the_full_tensor(world, tmp_path):
    launch_ok("dtensor_redistribute", world, tmp_path, expect="checked")
