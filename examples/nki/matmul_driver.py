"""The driver (ours, not AWS code) that matmul.py and matmul_nisa.py share,
after AWS's matrix_multiplication_torch.py: the tutorial's sizes on `neuron`
tensors against PyTorch on the CPU, each kernel's estimate printed."""

import torch

import torch_neuronx

KERNELS = ("nki_matmul_tiled_", "nki_matmul_hoist_load_", "nki_matmul_block_free_dimension_",
           "nki_matmul_fully_optimized_")


def reference(lhsT, rhs):
    """lhsT.T @ rhs with float32 accumulation, rounded once to the inputs' dtype."""
    return torch.matmul(lhsT.T.float(), rhs.float()).to(lhsT.dtype)


def main(module):
    torch.manual_seed(0)
    device = "neuron"
    # the small workload with the basic kernel (tutorial: lhs (64, 128), rhs (128, 512), bf16)
    lhs_small = torch.rand((64, 128), dtype=torch.bfloat16)
    rhs_small = torch.rand((128, 512), dtype=torch.bfloat16)
    output_small = module.nki_matmul_basic_(lhs_small.to(device).T, rhs_small.to(device))
    torch.testing.assert_close(output_small.cpu(), reference(lhs_small.T, rhs_small), atol=1e-4, rtol=1e-2)
    print("nki_matmul_basic_: NKI and Torch match")
    print(torch_neuronx.nki.last_estimate())
    # the large workload with the tiled kernels (tutorial: lhs (4096, 1024), rhs (1024, 2048), bf16)
    lhs = torch.rand((4096, 1024), dtype=torch.bfloat16)
    rhs = torch.rand((1024, 2048), dtype=torch.bfloat16)
    expected = reference(lhs.T, rhs)
    lhs_dev, rhs_dev = lhs.to(device), rhs.to(device)
    for name in KERNELS:
        output = getattr(module, name)(lhs_dev.T, rhs_dev)  # the tutorial passes lhs.T, a strided view
        torch.testing.assert_close(output.cpu(), expected, atol=1e-4, rtol=1e-2)
        print(f"{name}: NKI and Torch match")
        print(torch_neuronx.nki.last_estimate())
