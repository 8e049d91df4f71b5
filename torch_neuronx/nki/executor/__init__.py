"""Running a traced kernel: the layer between the trace and `nki.jit`.

  - `operand.py`: an access bound to a call's tensors (strided view or gather/scatter);
  - `fuse.py`: plan-time rewrites that make a replay cheaper on the host;
  - `plan.py`: the replayable plan of one trace (`Plan`);
  - `device.py`: one call: binds a plan to the arguments' memory (neuron or CPU) and runs it.

Reads traces (trace/); knows nothing of the language, the ISA or the cost model.
"""
