"""Tracing a kernel: the layer above `chip/` that `language/` and `isa/` record through.

  - `buffers.py`: allocations (`Buffer`), memory kinds and recorded instructions (`Instr`);
  - `state.py`: one trace (`Trace`): recording, the checks made while recording, capacity;
  - `indexing.py`: index expressions and the index tensors of an access;
  - `access.py`: a region of a buffer (`Access`), gathered and scattered;
  - `tile.py`: what kernel code holds (`Tile`); its operators call the functions
    `nki.language` binds (`bind_operators`), as this layer cannot import the language;
  - `alloc.py`: new buffers and tiles; `operands.py`: checks and conversions of operands;
  - `emit.py`: recording one instruction.

Nothing here imports `language/`, `isa/` or anything above them.
"""
