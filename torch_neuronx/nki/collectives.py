"""`nki.collectives`: collectives between the ranks of a kernel launched on
several NeuronCores (`ReplicaGroup`, `all_reduce`, `all_gather`, ...), as
AWS's API names them. A kernel module that uses them imports; the calls
raise NKIUnsupported until the emulator runs multi-rank kernels."""

from .errors import not_yet
from .language.types import NKIObject


class ReplicaGroup(NKIObject):
    """The groups of ranks a collective runs over: a list of lists of rank ids."""

    def __init__(self, replica_groups=None, **kwargs):
        super().__init__(**kwargs)
        self.replica_groups = [list(g) for g in replica_groups] if replica_groups is not None else None


all_reduce = not_yet("nki.collectives.all_reduce")
all_gather = not_yet("nki.collectives.all_gather")
all_gather_v = not_yet("nki.collectives.all_gather_v")
reduce_scatter = not_yet("nki.collectives.reduce_scatter")
all_to_all = not_yet("nki.collectives.all_to_all")
all_to_all_v = not_yet("nki.collectives.all_to_all_v")
collective_permute = not_yet("nki.collectives.collective_permute")
collective_permute_implicit = not_yet("nki.collectives.collective_permute_implicit")
collective_permute_implicit_reduce = not_yet("nki.collectives.collective_permute_implicit_reduce")
collective_permute_implicit_current_processing_rank_id = not_yet(
    "nki.collectives.collective_permute_implicit_current_processing_rank_id"
)
rank_id = not_yet("nki.collectives.rank_id")
