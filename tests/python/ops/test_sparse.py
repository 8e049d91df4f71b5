"""Sparse tensors on neuron, as CUDA has them: COO and the compressed
layouts (CSR, CSC, BSR) whose indices and values are neuron tensors;
construction, conversion, coalescing, sparse-dense products and
nn.Embedding(sparse=True) gradients give the CPU's results. Quantized tensors
raise NotImplementedError."""

import pytest
import torch
import torch.nn as nn

import torch_neuronx


def dense_example():
    torch.manual_seed(0)
    x = torch.randn(5, 4)
    x[x.abs() < 0.8] = 0
    return x


def test_to_sparse_and_back():
    x = dense_example()
    s = x.to("neuron").to_sparse()
    assert s.is_sparse and s.device.type == "neuron"
    assert s._indices().device.type == "neuron" and s._values().device.type == "neuron"
    assert s._nnz() == int((x != 0).sum())
    assert torch.equal(s.to_dense().cpu(), x)
    assert torch.equal(s.cpu().to_dense(), x) and s.cpu().is_sparse
    assert torch.equal(x.to_sparse().to("neuron").to_dense().cpu(), x)
    assert torch_neuronx.get_fallback_ops() == {}


def test_construct_and_coalesce():
    i = torch.tensor([[0, 1, 1, 0], [2, 0, 0, 2]])
    v = torch.tensor([1.0, 2.0, 3.0, 4.0])
    ref = torch.sparse_coo_tensor(i, v, (2, 3))
    s = torch.sparse_coo_tensor(i.to("neuron"), v.to("neuron"), (2, 3))
    assert s.device.type == "neuron" and not s.is_coalesced()
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 2
    assert torch.equal(c.indices().cpu(), ref.coalesce().indices())
    assert torch.equal(c.values().cpu(), ref.coalesce().values())
    assert torch.equal(torch.sparse_coo_tensor(i, v, (2, 3), device="neuron").to_dense().cpu(), ref.to_dense())


def test_sparse_dense_products():
    x = dense_example()
    w = torch.randn(4, 3)
    s, sd, wd = x.to_sparse(), x.to("neuron").to_sparse(), w.to("neuron")
    torch.testing.assert_close(torch.sparse.mm(sd, wd).cpu(), torch.sparse.mm(s, w))
    torch.testing.assert_close(torch.mm(sd, wd).cpu(), torch.mm(s, w))
    bias = torch.randn(5, 3)
    torch.testing.assert_close(
        torch.addmm(bias.to("neuron"), sd, wd, beta=0.5, alpha=2).cpu(), torch.addmm(bias, s, w, beta=0.5, alpha=2)
    )
    torch.testing.assert_close((sd * 3).to_dense().cpu(), (s * 3).to_dense())
    torch.testing.assert_close((sd + sd).to_dense().cpu(), (s + s).to_dense())
    torch.testing.assert_close(torch.sparse.sum(sd).cpu(), torch.sparse.sum(s))


def test_values_are_neuron_tensors_that_index_and_update():
    s = dense_example().to("neuron").to_sparse()
    vals = s.values()
    assert torch.equal(vals[torch.tensor([0, 2])].cpu(), s.cpu().values()[torch.tensor([0, 2])])
    vals.mul_(2)  # the values are the tensor's own, not a copy
    assert torch.equal(s.to_dense().cpu(), dense_example() * 2)
    s.zero_()
    assert s._nnz() == 0 and torch.equal(s.to_dense().cpu(), torch.zeros(5, 4))


def test_sparse_embedding_gradients_train_like_the_cpu():
    torch.manual_seed(0)
    cpu = nn.Embedding(10, 3, sparse=True)
    dev = nn.Embedding(10, 3, sparse=True).to("neuron")
    dev.weight.data.copy_(cpu.weight.data)
    idx = torch.tensor([[1, 2, 4], [4, 3, 9]])
    for model, device in ((cpu, "cpu"), (dev, "neuron")):
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for _ in range(2):
            opt.zero_grad()
            (model(idx.to(device)) ** 2).sum().backward()
            assert model.weight.grad.is_sparse and model.weight.grad.device.type == device
            opt.step()
    torch.testing.assert_close(dev.weight.detach().cpu(), cpu.weight.detach())
    assert torch_neuronx.get_fallback_ops() == {}


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr"])
def test_compressed_layouts(layout):
    x = dense_example()[:4]
    convert = {
        "csr": lambda t: t.to_sparse_csr(),
        "csc": lambda t: t.to_sparse_csc(),
        "bsr": lambda t: t.to_sparse_bsr((2, 2)),
    }[layout]
    c, d = convert(x), convert(x.to("neuron"))
    assert d.layout == c.layout and d.device.type == "neuron" and d.values().device.type == "neuron"
    assert torch.equal(d.to_dense().cpu(), x)
    assert torch.equal(d.cpu().to_dense(), x) and torch.equal(c.to("neuron").to_dense().cpu(), x)
    members = {
        "csr": ("crow_indices", "col_indices"),
        "bsr": ("crow_indices", "col_indices"),
        "csc": ("ccol_indices", "row_indices"),
    }[layout]
    for m in members:
        assert torch.equal(getattr(d, m)().cpu(), getattr(c, m)())
    w = torch.randn(4, 3)
    torch.testing.assert_close((d @ w.to("neuron")).cpu(), c @ w)
    if layout == "csr":
        torch.testing.assert_close(
            torch.addmm(torch.ones(4, 3, device="neuron"), d, w.to("neuron")).cpu(), torch.addmm(torch.ones(4, 3), c, w)
        )
        torch.testing.assert_close((d * 2).to_dense().cpu(), (c * 2).to_dense())
        assert torch.equal(d.to_sparse_coo().to_dense().cpu(), x)
    assert torch_neuronx.get_fallback_ops() == {}


def test_quantized_tensors_raise_not_implemented():
    with pytest.raises(NotImplementedError, match="quantized tensors are not supported on neuron"):
        torch.quantize_per_tensor(torch.randn(4, device="neuron"), 0.1, 0, torch.quint8)
