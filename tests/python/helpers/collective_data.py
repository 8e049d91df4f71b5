"""Inputs the collective workers compare against a local reference: every
dtype the neuron group reduces, and each rank's deterministic data, which any
rank can rebuild for any other."""

import torch

DTYPES = [torch.float32, torch.bfloat16, torch.float16, torch.int64, torch.int32, torch.uint8, torch.bool]


def data(rank, dtype, n, salt=0):
    """Rank `rank`'s n elements of dtype (`salt` varies them per use)."""
    g = torch.Generator().manual_seed(1000 + 17 * salt + rank)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.rand(n, generator=g) * 4 - 2).to(dtype)
    return torch.randint(0, 7, (n,), generator=g, dtype=torch.int64).to(dtype)
