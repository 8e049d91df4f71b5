"""Recurrent layers on neuron. ATen sends accelerators to the fused LSTM/GRU
cells (`_thnn_fused_lstm_cell`, `_thnn_fused_gru_cell`, CUDA kernels only);
neuron has its own (csrc/ops/NeuronRnnCells.cpp). Forward and backward match
the CPU's unfused path in train and eval mode, with and without biases."""

import copy

import pytest
import torch
import torch.nn as nn

import torch_neuronx

LAYERS = {
    "LSTM": lambda bias: nn.LSTM(5, 7, num_layers=2, batch_first=True, bias=bias, dropout=0.0),
    "GRU": lambda bias: nn.GRU(5, 7, num_layers=2, bias=bias, bidirectional=True),
    "LSTMCell": lambda bias: nn.LSTMCell(5, 7, bias=bias),
    "GRUCell": lambda bias: nn.GRUCell(5, 7, bias=bias),
    "RNN": lambda bias: nn.RNN(5, 7, bias=bias, nonlinearity="relu"),
}


def first(out):
    return out[0] if isinstance(out, tuple) else out


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
@pytest.mark.parametrize("kind", list(LAYERS))
def test_recurrent_layer_matches_the_cpu(kind, bias, train):
    torch.manual_seed(0)
    cpu = LAYERS[kind](bias).train(train)
    dev = copy.deepcopy(cpu).to("neuron")
    x = torch.randn(3, 4, 5) if "Cell" not in kind else torch.randn(3, 5)
    xc, xd = x.clone().requires_grad_(), x.to("neuron").requires_grad_()
    torch_neuronx.clear_op_tracking()
    yc, yd = first(cpu(xc)), first(dev(xd))
    assert yd.device.type == "neuron"
    (yc * yc).sum().backward()
    (yd * yd).sum().backward()
    torch.testing.assert_close(yd.cpu(), yc, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)
    for (name, p), q in zip(cpu.named_parameters(), dev.parameters()):
        torch.testing.assert_close(q.grad.cpu(), p.grad, rtol=1e-5, atol=1e-5, msg=name)
    assert torch_neuronx.get_fallback_ops() == {}


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_fused_cells_are_twice_differentiable(cell):
    # With create_graph the backward runs autograd's composite
    # `_thnn_differentiable_*_backward` on the fused cell's inputs.
    torch.manual_seed(1)
    b, h = 2, 3
    gates = 4 * h if cell == "lstm" else 3 * h
    inputs = [torch.randn(b, gates, dtype=torch.double, device="neuron", requires_grad=True) for _ in range(2)]
    state = torch.randn(b, h, dtype=torch.double, device="neuron", requires_grad=True)
    fused = torch.ops.aten._thnn_fused_lstm_cell if cell == "lstm" else torch.ops.aten._thnn_fused_gru_cell
    fn = lambda ig, hg, s: fused(ig, hg, s)[0]  # noqa: E731
    assert torch.autograd.gradcheck(fn, (*inputs, state))
    assert torch.autograd.gradgradcheck(fn, (*inputs, state))
