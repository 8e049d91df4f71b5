"""`nl.tile_size`: the hardware's tile limits, as AWS's kernels read them
(the Trainium2 values of torch_neuronx.trainium; a trace checks the limits of
its own target, chip/targets.py)."""

from ... import trainium

_TRN2 = trainium.TRN2


class tile_size:  # noqa: N801  (AWS's name)
    """The hardware's tile limits (the Trainium2 values of torch_neuronx.trainium)."""

    pmax = _TRN2.pmax
    gemm_stationary_fmax = _TRN2.gemm_stationary_fmax
    gemm_moving_fmax = _TRN2.gemm_moving_fmax
    psum_fmax = psum_bank_fmax = _TRN2.psum_fmax
    psum_bank_fmax_bytes = _TRN2.psum_bank_bytes
    psum_num_banks = _TRN2.psum_banks
    bn_stats_fmax = _TRN2.bn_stats_fmax
    sbuf_size_bytes = _TRN2.sbuf_bytes
    total_available_sbuf_size = sbuf_fmax_bytes = _TRN2.sbuf_bytes_per_partition
