"""bf16 / half bmm and baddbmm on neuron, without a warning, leave oneDNN on
for the process (test_structured_kernels.py: a new interpreter, so that no
earlier test decides the flag)."""

import warnings

import torch  # noqa: F401

import torch_neuronx  # noqa: F401  (registers the device)

assert torch.backends.mkldnn.enabled
for dtype in (torch.bfloat16, torch.half):
    a = torch.randn(4, 3, 128, dtype=dtype)
    b = torch.randn(128, 174, dtype=dtype).expand(4, 128, 174)  # a stride-0 batch, as Inductor passes
    c = torch.randn(4, 3, 174, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = torch.empty(4, 3, 174, dtype=dtype, device="neuron")
        torch.bmm(a.to("neuron"), b.to("neuron"), out=res)
        assert torch.equal(res.cpu(), torch.bmm(a, b))
        assert torch.equal(torch.bmm(a.to("neuron"), b.to("neuron")).cpu(), torch.bmm(a, b))
        got = torch.baddbmm(c.to("neuron"), a.to("neuron"), b.to("neuron"), beta=0.5)
        assert torch.equal(got.cpu(), torch.baddbmm(c, a, b, beta=0.5))
        c_dev = c.to("neuron")
        c_dev.baddbmm_(a.to("neuron"), b.to("neuron"))
        assert torch.equal(c_dev.cpu(), c.baddbmm(a, b))
assert torch.backends.mkldnn.enabled
print("onednn on")
