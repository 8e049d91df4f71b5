"""The NKI language as AWS documents it now (NKI 0.3 and later), the names
AWS's NKI Library kernels use: tensor views (`ap`, `slice`, `select`,
`permute`, ...), `nisa.tensor_tensor_scan`, `nl.NKIObject`, constants,
`nki.isa.constants` and the enums' names, the newer dtypes, activations and
the modules `nki.typing` and `nki.collectives`. Each is checked against
PyTorch on `neuron` tensors."""

import dataclasses

import nki
import nki.isa as nisa
import nki.language as nl
import numpy as np
import pytest
import torch
from helpers.nki_tiles import load as _load

import torch_neuronx  # noqa: F401


def _copy_out(view, like):
    """A kernel's output holding `view` (an SBUF view), through a tensor_copy and a DMA."""
    out = nl.ndarray(like, dtype=view.dtype, buffer=nl.shared_hbm)
    sb = nl.ndarray(like, dtype=view.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=view)
    nisa.dma_copy(dst=out, src=sb)
    return out


@nki.jit
def ap_odd_columns(x):
    sb = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=x)
    p, f = x.shape
    assert sb.strides == (f, 1) and sb.offset == 0 and sb.get_pattern() == [[f, p], [1, f]]
    view = sb.ap(pattern=[[f, p], [2, f // 2]], offset=1)
    return _copy_out(view, (p, f // 2))


@nki.jit
def sliced_permuted(x):
    """x[:, 2:10] transposed, through hbm views: slice on the way in, permute on the way out."""
    p = x.shape[0]
    sb = nl.ndarray((p, 8), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=x.slice(1, 2, 10))
    out = nl.ndarray((8, p), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out.permute((1, 0)), src=sb)
    return out


@nki.jit
def selected_broadcast(x):
    """Row 3 of x (select on hbm drops the dim), as a (1, f) tile broadcast to 4 partitions."""
    f = x.shape[1]
    row = nl.ndarray((1, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=row, src=x.select(0, 3).expand_dim(0))
    assert row.select(0, 0).shape == (1, f)  # on chip, the partition dimension stays
    rows = nl.ndarray((4, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=rows, src=x.select(0, 3).expand_dim(0).broadcast(0, 4))
    return _copy_out(rows, (4, f))


@nki.jit
def split_and_flatten(x):
    """(p, 4*k) viewed as (p, 4, k), its last two dims swapped, flattened back."""
    p, f = x.shape
    sb = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=x)
    view = sb.reshape_dim(1, (4, f // 4)).permute((0, 2, 1)).flatten_dims(1, 2)
    squeezed = sb.expand_dim(1).squeeze_dim(1)
    assert squeezed.shape == (p, f)
    return _copy_out(view, (p, f))


def test_views_address_the_storage_as_awss_nki_tensor_does():
    x = torch.randn(128, 64)
    assert torch.equal(ap_odd_columns(x.neuron()).cpu(), x[:, 1::2])
    y = torch.randn(32, 16)
    assert torch.equal(sliced_permuted(y.neuron()).cpu(), y[:, 2:10].T)
    assert torch.equal(selected_broadcast(y.neuron()).cpu(), y[3].expand(4, 16))
    z = torch.randn(16, 32)
    assert torch.equal(split_and_flatten(z.neuron()).cpu(), z.reshape(16, 4, 8).transpose(1, 2).reshape(16, 32))


def test_views_that_read_through_another_tensor_say_so():
    @nki.jit
    def k(x):
        sb = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=sb, src=x)
        return _copy_out(sb.ap(pattern=[[64, 128], [1, 64]], dtype=nl.int32), (128, 64))

    with pytest.raises(nki.NKIUnsupported, match="reinterpreting"):
        k(torch.zeros(128, 64, device="neuron"))

    @nki.jit
    def out_of_storage(x):
        sb = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        return _copy_out(sb.ap(pattern=[[64, 128], [1, 65]]), (128, 65))

    with pytest.raises(nki.NKIError, match="tensor_copy reads of tile .* index 128 is out of bounds for dimension 0"):
        out_of_storage(torch.zeros(128, 64, device="neuron"))

    @nki.jit
    def built_but_unused(x):  # AWS's kernels build the view of a tile they then skip
        sb = _load(x)
        past = sb.ap(pattern=[[64, 128], [1, 64]], offset=64 * 128)
        assert tuple(past.shape) == (128, 64)
        return _copy_out(sb, (128, 64))

    x = torch.randn(128, 64)
    assert torch.equal(built_but_unused(x.neuron()).cpu(), x)


@nki.jit
def scan(x, init, op0, op1, reverse0=False, reverse1=False):
    p, f = x.shape
    a = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    ones = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=0.5)
    initial = init
    if not isinstance(init, float):
        initial = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=initial, src=init)
    r = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor_scan(
        dst=r, data0=ones, data1=a, initial=initial, op0=op0, op1=op1, reverse0=reverse0, reverse1=reverse1
    )
    out = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=r)
    return out


def _scan_reference(x, init, f0, f1, reverse0, reverse1):
    prev = init.reshape(-1).clone() if isinstance(init, torch.Tensor) else torch.full((x.shape[0],), init)
    out = torch.empty_like(x)
    for i in range(x.shape[1]):
        t = f0(prev, torch.full_like(prev, 0.5)) if reverse0 else f0(torch.full_like(prev, 0.5), prev)
        prev = f1(x[:, i], t) if reverse1 else f1(t, x[:, i])
        out[:, i] = prev
    return out


@pytest.mark.parametrize(
    "op0, op1, reverse0, reverse1",
    [(nl.multiply, nl.add, False, False), (nl.add, nl.subtract, False, True), (nl.subtract, nl.maximum, True, False)],
)
def test_tensor_tensor_scan_runs_step_by_step_in_fp32(op0, op1, reverse0, reverse1):
    torch.manual_seed(0)
    x = torch.randn(128, 40)
    fns = {nl.multiply: torch.mul, nl.add: torch.add, nl.subtract: torch.sub, nl.maximum: torch.maximum}
    got = scan(x.neuron(), 1.5, op0, op1, reverse0, reverse1).cpu()
    assert torch.equal(got, _scan_reference(x, 1.5, fns[op0], fns[op1], reverse0, reverse1))
    init = torch.randn(128, 1)
    got = scan(x.neuron(), init.neuron(), op0, op1, reverse0, reverse1).cpu()
    assert torch.equal(got, _scan_reference(x, init, fns[op0], fns[op1], reverse0, reverse1))


@nki.jit
def shuffle(x, mask, bias=None):
    p, f = x.shape
    a = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=x)
    b = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=b, value=-1.0)
    if x != None and bias == None:  # noqa: E711  (AWS's kernels check optional tensors so)
        nisa.nc_stream_shuffle(dst=b, src=a, shuffle_mask=mask)
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=b)
    return out


def test_nc_stream_shuffle_moves_partitions_within_each_quadrant():
    x = torch.randn(64, 8)
    mask = [31 - i for i in range(32)]
    mask[5] = 255  # partition 5 of each quadrant keeps its value
    want = torch.full_like(x, -1.0)
    for j in range(64):
        if mask[j % 32] != 255:
            want[j] = x[(j // 32) * 32 + mask[j % 32]]
    assert torch.equal(shuffle(x.neuron(), mask).cpu(), want)


@nki.jit
def broadcast_first_partition(x):
    """Partition 0 of x onto all 96 partitions of a fresh tile, a quadrant at a
    time, as AWS's NKI Library broadcasts: no mask entry keeps dst's old value,
    so the never-written tile is not read."""
    src = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=x)
    dst = nl.ndarray((96, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    for q in range(3):
        nisa.nc_stream_shuffle(src=src[0:1, :], dst=dst[q * 32 : (q + 1) * 32, :], shuffle_mask=[0] * 32)
    out = nl.ndarray(dst.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=dst)
    return out


def test_nc_stream_shuffle_writing_every_partition_reads_no_old_values():
    x = torch.randn(4, 8)
    assert torch.equal(broadcast_first_partition(x.neuron()).cpu(), x[0:1].expand(96, 8))


@dataclasses.dataclass
class Tiling(nl.NKIObject):
    rows: int
    cols: int


class Offsets(nl.NKIObject):
    pass


@nki.jit
def with_objects(x, tiling: Tiling):
    offsets = Offsets(start=2)
    out = nl.ndarray((tiling.rows, tiling.cols), dtype=x.dtype, buffer=nl.shared_hbm)
    sb = nl.ndarray((tiling.rows, tiling.cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=sb, src=x[0 : tiling.rows, offsets.start : offsets.start + tiling.cols])
    nisa.dma_copy(dst=out, src=sb)
    return out


def test_nkiobject_dataclasses_pass_through_kernels():
    x = torch.randn(64, 32)
    assert torch.equal(with_objects(x.neuron(), Tiling(16, 8)).cpu(), x[:16, 2:10])


def test_nkiobject_dataclasses_without_annotations_take_their_fields_by_keyword():
    @dataclasses.dataclass
    class Section(nl.NKIObject):  # as AWS's NKI Library writes some: fields without annotations
        index = None
        offset = None

    @dataclasses.dataclass
    class Sizes(nl.NKIObject):
        rows: int
        spare: list = dataclasses.field(default_factory=list)

    s = Section(index=2, offset=256)
    assert (s.index, s.offset) == (2, 256)
    assert Sizes(4).spare == [] and Sizes(rows=4).rows == 4
    assert Sizes().rows is None  # a field left out is None, as AWS's compiler takes it
    with pytest.raises(TypeError, match="unexpected keyword argument 'colz'"):
        Sizes(4, colz=1)


@nki.jit
def constants(x, path=None):
    """x plus a constant table: built in the kernel from NumPy, or read from a .npy file."""
    ident = nl.shared_identity_matrix(128, dtype=nl.float32)
    const = nl.shared_constant(
        path if path is not None else np.arange(x.shape[0] * x.shape[1], dtype=np.float32).reshape(x.shape)
    )
    c = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=c, src=const)
    xt = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    acc = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, ident, xt)  # identity.T @ x
    res = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=res, data1=acc, data2=c, op=nl.add)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_shared_constants_hold_their_values(tmp_path):
    x = torch.randn(128, 16)
    table = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    assert torch.equal(constants(x.neuron()).cpu(), x + torch.from_numpy(table))
    np.save(tmp_path / "table.npy", table * 2)
    assert torch.equal(constants(x.neuron(), str(tmp_path / "table.npy")).cpu(), x + 2 * torch.from_numpy(table))


@nki.jit
def activations(x, op):
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    r = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=r, op=op, data=t)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=r)
    return out


def _grad(fn, x):
    x = x.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(x).sum(), x)
    return g


@pytest.mark.parametrize(
    "op, reference",
    [
        (nl.gelu_apprx_sigmoid, lambda x: x * torch.sigmoid(1.702 * x)),
        (nl.gelu_apprx_sigmoid_dx, lambda x: _grad(lambda v: v * torch.sigmoid(1.702 * v), x)),
        (nl.gelu_dx, lambda x: _grad(torch.nn.functional.gelu, x)),
        (nl.silu_dx, lambda x: _grad(torch.nn.functional.silu, x)),
        (nl.erf_dx, lambda x: _grad(torch.erf, x)),
    ],
)
def test_activations_and_their_derivatives(op, reference):
    x = torch.linspace(-6, 6, 128 * 32).reshape(128, 32)
    torch.testing.assert_close(activations(x.neuron(), op).cpu(), reference(x), rtol=1e-5, atol=1e-6)


@nki.jit
def loops(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.dynamic_range(x.shape[0] // 32):
        for j in range(2):  # a plain Python loop, unrolled by tracing as NKI 0.7 does
            t = nl.ndarray((32, x.shape[1] // 2), dtype=x.dtype, buffer=nl.sbuf)
            cols = slice(j * x.shape[1] // 2, (j + 1) * x.shape[1] // 2)
            nisa.dma_copy(dst=t, src=x[i * 32 : (i + 1) * 32, cols])
            nisa.dma_copy(dst=out[i * 32 : (i + 1) * 32, cols], src=t)
    return out


def test_dynamic_range_and_python_range_loops():
    x = torch.randn(96, 8)
    assert torch.equal(loops(x.neuron()).cpu(), x)


def test_isa_enums_and_constants_as_awss_modules_spell_them():
    from nki.isa.constants import dge_mode, oob_mode

    assert dge_mode is nisa.dge_mode and oob_mode is nisa.oob_mode
    assert nisa.nc_version.gen3.name == "gen3" and nisa.dge_mode.hwdge.name == "hwdge"
    assert nisa.nc_version.gen4 > nisa.nc_version.gen3 and nisa.oob_mode.skip == 1
    assert nisa.get_nc_version() is nisa.nc_version.gen3  # outside a kernel: trn2


def test_instructions_not_emulated_yet_import_and_refuse_when_called():
    from nki.isa import nc_matmul_mx, rng  # a kernel module that names them loads

    with pytest.raises(nki.NKIUnsupported, match="nki.isa.rng is not supported"):
        rng()
    assert nc_matmul_mx.__name__ == "nc_matmul_mx"
    with pytest.raises(AttributeError, match="no such name"):
        nisa.not_an_instruction  # noqa: B018
    import nki.collectives as ncc

    group = ncc.ReplicaGroup([[0, 1]])
    assert group.replica_groups == [[0, 1]]
    with pytest.raises(nki.NKIUnsupported, match="nki.collectives.all_reduce"):
        ncc.all_reduce([], [], group, nl.add)


@nki.jit
def widen(x):
    assert x.dtype == nl.bfloat16 and {nl.bfloat16: "half"}[x.dtype] == "half"
    assert str(x.dtype) == "bfloat16" and x.dtype == torch.bfloat16  # AWS's kernels compare str(dtype) with names
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_nl_dtypes_are_numpy_dtypes_to_numpy_and_torch_dtypes_to_tiles():
    pytest.importorskip("ml_dtypes", reason="NumPy knows bfloat16 only through ml_dtypes, which torch does not need")
    data = (
        np.linspace(-2, 2, 128 * 8, dtype=np.float32).reshape(128, 8).astype(nl.bfloat16)
    )  # test data, as AWS's tests build it
    assert data.dtype.name == "bfloat16" and np.dtype(nl.float32) == np.float32
    got = widen(torch.from_numpy(data.view(np.uint16)).view(torch.bfloat16).neuron()).cpu()
    assert torch.equal(got, torch.from_numpy(data.astype(np.float32)))


def test_packed_mx_dtypes_import_and_refuse_a_buffer():
    assert nl.float8_e4m3fn == torch.float8_e4m3fn and nl.float8_e8m0fnu.torch is torch.float8_e8m0fnu
    assert nl.bool is nl.bool_ and isinstance(nl.bfloat16, nl.dtype)
    assert nki.typing.tensor is nl.NkiTensor is nl.tensor

    @nki.jit
    def k(x):
        return nl.ndarray((128, 4), dtype=nl.float8_e4m3fn_x4, buffer=nl.shared_hbm)

    with pytest.raises(nki.NKIUnsupported, match="packed MX format of Trainium3"):
        k(torch.zeros(1, device="neuron"))
    assert nl.float4_e2m1fn_x4.itemsize == 2 and nl.float8_e5m2_x4.itemsize == 4  # four values to a word

    @nki.jit
    def quantize(x):
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.quantize_mx(dst=t, src=t, dst_scale=t)
        return x

    with pytest.raises(nki.NKIError, match="available only on NeuronCore-v4 and newer .* traced for trn2"):
        quantize(torch.zeros(32, 8, device="neuron"))


@nki.jit
def copy_rows(x):
    """Program i copies rows [128 i, 128 i + 128)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    t = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[i * 128 : (i + 1) * 128, :])
    nisa.dma_copy(dst=out[i * 128 : (i + 1) * 128, :], src=t)
    return out


def test_spmd_dims_spread_programs_over_the_physical_cores():
    x = torch.randn(512, 256)
    one = copy_rows[4](x.neuron())
    serial = torch_neuronx.nki.last_estimate()
    assert torch.equal(one.cpu(), x) and serial.cores == 1
    for grid in (nl.spmd_dim(nl.nc(2), 2), nl.nc(2) * 2, nl.spmd_dim(2, nl.nc(2)), 2 * nl.nc(2)):
        assert int(grid) == 4
        assert torch.equal(copy_rows[grid](x.neuron()).cpu(), x)
        e = torch_neuronx.nki.last_estimate()
        assert e.cores == 2 and e.total_us < 0.75 * serial.total_us  # two programs at a time
    assert (nl.nc(2) * 2).core_of(3) == 1 and (2 * nl.nc(2)).core_of(3) == 1 and (2 * nl.nc(2)).core_of(2) == 0


def test_a_grid_over_more_cores_than_the_target_has_is_refused(monkeypatch):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    with pytest.raises(nki.NKIError, match="a grid over 2 physical cores .* a trn1 logical NeuronCore has 1"):
        copy_rows[nl.nc(2)](torch.randn(256, 8).neuron())


@nki.jit
def accumulate_rows(x, op):
    """The sum (or another op's fold) of x's 128-row blocks, accumulated into one
    tile across affine_range iterations as AWS's kernels write it: dst = dst op block."""
    acc = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for i in nl.affine_range(x.shape[0] // 128):
        block = nl.ndarray((128, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=block, src=x[i * 128 : (i + 1) * 128, :])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=block, op=op)
    out = nl.ndarray(acc.shape, dtype=acc.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=acc)
    return out


def test_affine_iterations_may_accumulate_into_their_destination():
    x = torch.randn(512, 64)
    got = accumulate_rows(x.neuron(), nl.add).cpu()
    torch.testing.assert_close(got, x.reshape(4, 128, 64).sum(dim=0))
    with pytest.raises(nki.NKIError, match="loop-carried dependency in nl.affine_range"):
        accumulate_rows(x.neuron(), nl.subtract)  # not an accumulation: the iterations depend on each other


@nki.jit
def running_products(a, b):
    return_style = nisa.tensor_tensor_scan(_load(a), _load(b), initial=0.0, op0=np.multiply, op1=np.add)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=return_style)
    return out


def test_tensor_tensor_scan_in_the_returning_style():
    a, b = torch.rand(16, 10), torch.rand(16, 10)
    expected = torch.zeros(16, 10)
    prev = torch.zeros(16)
    for i in range(10):
        prev = a[:, i] * prev + b[:, i]
        expected[:, i] = prev
    torch.testing.assert_close(running_products(a.neuron(), b.neuron()).cpu(), expected)


@nki.jit
def dst_positional_operands_by_keyword(a, b):
    """AWS's NKI Library passes the destination first and the operands by keyword."""
    sa, sb = _load(a), _load(b)
    acc = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, stationary=sa, moving=sb)
    res = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(res, src=acc)
    out = nl.ndarray(acc.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_a_leading_destination_with_operands_by_keyword():
    a, b = torch.randn(64, 32), torch.randn(64, 16)
    got = dst_positional_operands_by_keyword(a.neuron(), b.neuron()).cpu()
    torch.testing.assert_close(got, a.T @ b, rtol=64 * 2**-24, atol=1e-5)


def test_on_chip_views_stay_two_dimensional_as_awss_language_guide_says():
    @nki.jit
    def shapes(x):
        t = nl.ndarray((64, 64, 64), dtype=nl.float32, buffer=nl.sbuf)
        h = nl.ndarray((4, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        got = [t[0, 0, 10].shape, t[:, 0].shape, t[:, 0, 10].shape, t[0, :, :].shape, h[0, :, :].shape]
        assert got == [(1, 1), (64, 64), (64, 1), (1, 64, 64), (128, 32)], got
        sb = _load(x)
        col = sb[:, 3]  # a column stays (P, 1), so it takes [:, :1] as AWS's kernels index it
        return _copy_out(col[:, :1], (x.shape[0], 1))

    x = torch.randn(16, 8)
    assert torch.equal(shapes(x.neuron()).cpu(), x[:, 3:4])


def test_a_tensor_is_true_and_a_comparison_of_tiles_refuses_to_be():
    @nki.jit
    def optional(x, bias=None):
        t = _load(x)
        if bias:  # AWS's kernels test optional tensors so
            nisa.tensor_tensor(dst=t, data1=t, data2=_load(bias), op=nl.add)
        return _copy_out(t, tuple(x.shape))

    x, b = torch.randn(8, 8), torch.randn(8, 8)
    assert torch.equal(optional(x.neuron(), b.neuron()).cpu(), x + b)
    assert torch.equal(optional(x.neuron()).cpu(), x)

    @nki.jit
    def branch_on_data(x):
        t = nl.load(x)
        if t > 0:
            pass
        return x

    with pytest.raises(nki.NKIError, match="comparison of tiles is not allowed"):
        branch_on_data(torch.zeros(8, 8).neuron())
