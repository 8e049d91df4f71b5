"""`nki.collectives`: collectives between the ranks of a kernel launched on
several NeuronCores (`ReplicaGroup`, `all_reduce`, `all_gather`, ...), as
AWS's API names them. A kernel module that uses them imports; the calls
raise NKIUnsupported until the emulator runs multi-rank kernels."""

from .errors import NKIUnsupported
from .language.types import NKIObject


class ReplicaGroup(NKIObject):
    """The groups of ranks a collective runs over: a list of lists of rank ids."""

    def __init__(self, replica_groups=None, **kwargs):
        super().__init__(**kwargs)
        self.replica_groups = [list(g) for g in replica_groups] if replica_groups is not None else None


def _not_yet(name):
    def collective(*args, **kwargs):
        raise NKIUnsupported(
            f"nki.collectives.{name} is not supported by the NKI emulator yet (docs/nki.md lists what is)"
        )

    collective.__name__ = name
    return collective


all_reduce = _not_yet("all_reduce")
all_gather = _not_yet("all_gather")
all_gather_v = _not_yet("all_gather_v")
reduce_scatter = _not_yet("reduce_scatter")
all_to_all = _not_yet("all_to_all")
all_to_all_v = _not_yet("all_to_all_v")
collective_permute = _not_yet("collective_permute")
collective_permute_implicit = _not_yet("collective_permute_implicit")
collective_permute_implicit_reduce = _not_yet("collective_permute_implicit_reduce")
collective_permute_implicit_current_processing_rank_id = _not_yet(
    "collective_permute_implicit_current_processing_rank_id"
)
rank_id = _not_yet("rank_id")
