"""Each hardware limit the NKI emulator checks raises NKIError naming the
kernel, the source line, the tile, the limit and the value, before the kernel
writes any device memory (the output argument below stays untouched)."""

import nki
import nki.isa as nisa
import nki.language as nl
import pytest
import torch

from torch_neuronx.nki import NKIError


def _in_place(body):
    """A kernel that first stores ones into `out`, then runs `body` (which
    breaks a limit): the store must not happen."""

    @nki.jit
    def kernel(x, out):
        ones = nl.full((128, 64), 1.0, dtype=nl.float32)
        nl.store(out[0:128, 0:64], value=ones)
        body(x)

    kernel.__name__ = body.__name__
    return kernel


def _raises(body, match, x_shape=(256, 1024), line_text=None):
    x = torch.zeros(x_shape, device="neuron")
    out = torch.zeros(128, 64, device="neuron")
    with pytest.raises(NKIError, match=match) as info:
        _in_place(body)(x, out)
    msg = str(info.value)
    assert f"NKI kernel '{body.__name__}'" in msg, msg
    assert "test_nki_limits.py:" in msg, msg  # the source line
    if line_text:
        assert line_text in msg, msg
    assert torch.count_nonzero(out.cpu()) == 0, "the kernel wrote device memory before failing"
    return msg


def test_partition_dimension_over_128():
    def partitions(x):
        nl.load(x[0:256, 0:64])

    msg = _raises(partitions, "partition dimension 256", line_text="nl.load(x[0:256, 0:64])")
    assert "128" in msg


def test_sbuf_tile_with_more_than_128_partitions():
    def big_tile(x):
        nl.ndarray((129, 4), dtype=nl.float32, buffer=nl.sbuf)

    _raises(big_tile, r"partition dimension 129 .* exceeds the limit of 128")


def test_matmul_moving_free_size_over_512():
    def moving(x):
        a = nl.load(x[0:128, 0:128])
        b = nl.load(x[0:128, 0:1024])
        nl.matmul(a, b, transpose_x=True)

    _raises(moving, r"moving free size 1024 exceeds the limit of 512")


def test_matmul_stationary_free_size_over_128():
    def stationary(x):
        a = nl.load(x[0:128, 0:256])
        b = nl.load(x[0:128, 0:512])
        nisa.nc_matmul(a, b)

    _raises(stationary, r"stationary free size 256 exceeds the limit of 128")


def test_matmul_contraction_must_be_the_partition_axis():
    def contraction(x):
        a = nl.load(x[0:128, 0:128])
        b = nl.load(x[0:64, 0:512])
        nl.matmul(a, b, transpose_x=True)

    _raises(contraction, "contraction dimension must be the partition axis")


def test_matmul_accumulates_only_into_psum():
    def into_sbuf(x):
        a = nl.load(x[0:128, 0:128])
        b = nl.load(x[0:128, 0:512])
        dst = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_matmul(dst, a, b)

    _raises(into_sbuf, "accumulate in PSUM")


def test_psum_holds_fp32_or_bf16_only():
    def int_psum(x):
        nl.zeros((128, 512), dtype=nl.int32, buffer=nl.psum)

    _raises(int_psum, "PSUM holds fp32, bf16 or fp16 only, not int32")


def test_load_reads_hbm_and_store_writes_hbm():
    def load_sbuf(x):
        t = nl.load(x[0:128, 0:64])
        nl.load(t)

    _raises(load_sbuf, r"nl.load: the source must be in HBM")

    def store_to_sbuf(x):
        t = nl.load(x[0:128, 0:64])
        u = nl.ndarray((128, 64), dtype=nl.float32)
        nl.store(u, value=t)

    _raises(store_to_sbuf, r"nl.store: the destination must be in HBM")


def test_sbuf_capacity_counts_live_tiles():
    def sbuf_over(x):
        # 8 live tiles of 128 x 8192 fp32 = 8 x 32 KiB per partition = 256 KiB > 224 KiB
        tiles = [nl.ndarray((128, 8192), dtype=nl.float32, buffer=nl.sbuf) for _ in range(8)]
        for t in tiles:
            t[...] = 0.0
        for t in tiles:
            nl.exp(t)

    msg = _raises(sbuf_over, r"SBUF capacity exceeded: 262144 bytes per partition .* limit of 229376")
    assert "28 MiB" in msg


def test_sbuf_tiles_that_die_free_their_space():
    @nki.jit
    def reuse(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        for _i in nl.affine_range(16):  # 16 x 32 KiB per partition in all, but one live at a time
            t = nl.full((128, 8192), 1.0, dtype=nl.float32)
            s = nl.sum(t, axis=[1], keepdims=True)
        nl.store(out[0:128, 0:1], value=s)
        return out

    assert reuse(torch.zeros(1, device="neuron")).cpu()[0, 0] == 8192


def test_psum_capacity_is_eight_banks():
    def psum_over(x):
        tiles = [nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(9)]
        for t in tiles:
            nl.copy(t)

    _raises(psum_over, r"PSUM capacity exceeded: 9 banks .* limit of 8 banks")


def test_affine_range_loop_carried_dependency():
    def carried(x):
        acc = nl.zeros((128, 64), dtype=nl.float32)
        for i in nl.affine_range(4):
            t = nl.load(x[0:128, i * 64 : (i + 1) * 64])
            acc[...] = nl.add(acc, t)  # reads what the previous iteration wrote: needs sequential_range

    _raises(carried, r"loop-carried dependency in nl.affine_range: iteration 1 reads")


def test_sequential_range_allows_the_same_dependency_and_affine_allows_accumulation():
    @nki.jit
    def running(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((128, 64), dtype=nl.float32)
        for i in nl.sequential_range(4):
            acc[...] = nl.add(acc, nl.load(x[0:128, i * 64 : (i + 1) * 64]))
        acc2 = nl.zeros((128, 64), dtype=nl.float32)
        for i in nl.affine_range(4):
            acc2 += nl.load(x[0:128, i * 64 : (i + 1) * 64])
        nl.store(out, value=nl.add(acc, acc2))
        return out

    x = torch.randn(128, 256)
    ref = 2 * sum(x[:, i * 64 : (i + 1) * 64] for i in range(4))
    torch.testing.assert_close(running(x.neuron()).cpu(), ref)


def test_storing_uninitialised_sbuf_is_caught():
    def uninit(x):
        t = nl.ndarray((128, 64), dtype=nl.float32)
        t[0:64, :] = nl.load(x[0:64, 0:64])  # rows 64..127 never written
        u = nl.exp(t)
        nl.store(x[0:128, 0:64], value=u)

    msg = _raises(uninit, "computed from uninitialised SBUF/PSUM")
    assert "first read at" in msg


def test_masked_store_of_the_initialised_rows_is_fine():
    @nki.jit
    def masked(x):
        out = nl.ndarray((100, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:64]
        t = nl.load(x[i_p, i_f], mask=(i_p < 100))  # rows 100..127 stay uninitialised
        u = nl.exp(t)  # computes on them, as AWS's tutorials do
        nl.store(out[i_p, i_f], value=u, mask=(i_p < 100))
        return out

    x = torch.randn(100, 64)
    assert torch.equal(masked(x.neuron()).cpu(), torch.exp(x))


def test_out_of_bounds_access_without_mask():
    def oob(x):
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        nl.load(x[200 + i_p, i_f])

    _raises(oob, r"index 327 is out of bounds for dimension 0 of size 256")


def test_reduction_along_partitions_is_refused():
    def partition_reduce(x):
        nl.sum(nl.load(x[0:128, 0:64]), axis=0)

    _raises(partition_reduce, "partition axis")


@pytest.mark.parametrize("target,fits", [("trn1", False), ("trn2", True), ("trn3", True)])
def test_platform_target_sets_the_sbuf_limit(monkeypatch, target, fits):
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", target)

    @nki.jit
    def two_hundred_kib(x):
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.full((128, 200 * 256), 1.0, dtype=nl.float32)  # 200 KiB per partition
        nl.store(out, value=nl.sum(t, axis=[1], keepdims=True))
        return out

    x = torch.zeros(1, device="neuron")
    if fits:
        assert two_hundred_kib(x).cpu()[0, 0] == 200 * 256
        assert torch_neuronx_estimate().target == target
    else:
        with pytest.raises(NKIError, match=r"over the trn1 limit of 196608 bytes per partition .*24 MiB"):
            two_hundred_kib(x)


def torch_neuronx_estimate():
    import torch_neuronx

    return torch_neuronx.nki.last_estimate()


def test_platform_target_argument_and_bad_name(monkeypatch):
    monkeypatch.delenv("NEURON_PLATFORM_TARGET_OVERRIDE", raising=False)

    @nki.jit(platform_target="trn1")
    def k(x):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(x))
        return out

    k(torch.zeros(128, 64, device="neuron"))
    assert torch_neuronx_estimate().target == "trn1"
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn9")
    with pytest.raises(NKIError, match="platform target 'trn9' is not one of"):
        k(torch.zeros(128, 64, device="neuron"))


def test_mixed_devices_are_refused():
    @nki.jit
    def k(a, b):
        return a

    with pytest.raises(NKIError, match="different devices"):
        k(torch.zeros(2, device="neuron"), torch.zeros(2))


def test_tiles_the_kernel_places_over_each_other_take_their_memory_once():
    @nki.jit
    def ring(x, depth, past):
        """Eight 64 KiB tiles at `depth` addresses, all read at the end: a circular buffer."""
        tiles = []
        for i in range(8):
            t = nl.ndarray((128, 32768), dtype=nl.bfloat16, buffer=nl.sbuf, address=(0, (i % depth) * 65536 + past))
            nisa.memset(dst=t, value=float(i))
            tiles.append(t)
        acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        for t in tiles:
            nisa.tensor_reduce(dst=acc, op=nl.add, data=t, axis=1)
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=acc)
        return out

    x = torch.zeros(1).neuron()
    assert torch.equal(ring(x, 2, 0).cpu(), torch.full((128, 1), 7.0 * 32768))
    with pytest.raises(nki.NKIError, match="SBUF capacity exceeded"):
        ring(x, 2, 128 * 1024)  # the second address ends at 256 KiB, past a trn2 partition's 224 KiB


def test_each_core_of_an_lnc2_launch_has_its_own_sbuf():
    @nki.jit
    def big_on_both(x):
        """Each core allocates 160 KiB per partition (320 KiB in all, over one
        core's 224 KiB) at the same point of the trace: core 0 has no work
        (AWS's cross_entropy on one position), so its tile is never used."""
        t = nl.ndarray((128, 81920), dtype=nl.bfloat16, buffer=nl.sbuf)
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        if nl.program_id(0) == 1:
            nisa.memset(dst=t, value=1.0)
            acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_reduce(dst=acc, op=nl.add, data=t, axis=1)
            nisa.dma_copy(dst=out, src=acc)
        return out

    assert torch.equal(big_on_both[2](torch.zeros(1).neuron()).cpu(), torch.full((128, 1), 81920.0))
