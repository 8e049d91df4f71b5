"""`nl.dropout`, `nl.rand`, `nl.random_seed`: the device RNG, not supported
yet; each raises NKIError naming the PyTorch alternative."""

from ..errors import NKIError


def _no_rng(name):
    def refuse(*args, **kwargs):
        raise NKIError(
            f"nl.{name} is not supported yet: it needs the device RNG inside kernels; draw random "
            f"numbers with PyTorch outside the kernel (torch.rand, torch.nn.functional.dropout)"
        )

    refuse.__name__ = name
    return refuse


dropout, rand, random_seed = _no_rng("dropout"), _no_rng("rand"), _no_rng("random_seed")
