"""attention-nki has no layer to swap: Transformers selects attention by
`attn_implementation` (see the package's `flash_attn_forward`)."""

__all__: list = []
