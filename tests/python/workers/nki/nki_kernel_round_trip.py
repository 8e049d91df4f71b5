"""An NKI kernel that reads one argument, writes another in place and
returns an output (test_nki_runtime.py runs it through host_staged.py, on
devices whose memory the host cannot address)."""

import nki
import nki.language as nl
import torch


@nki.jit
def scale_into(x, y):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(y, value=nl.multiply(t, 3.0))
    nl.store(out, value=nl.add(t, 1.0))
    return out


x = torch.randn(128, 64)
y = torch.zeros(128, 64, device="neuron")
out = scale_into(x.neuron(), y)
assert torch.equal(y.cpu(), x * 3) and torch.equal(out.cpu(), x + 1)
print("nki round trip ok")
