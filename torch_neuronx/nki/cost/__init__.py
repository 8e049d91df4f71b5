"""What a traced kernel would cost on one NeuronCore: an instruction-level
model with every constant from `torch_neuronx.trainium`,
fixed before any comparison with a measurement (docs/nki.md holds the
validation table).

  - `instructions.py`: the engine time of one instruction (a new instruction
    whose time its engine's rule does not give has its entry there);
  - `schedule.py`: `estimate(trace)`, the instructions placed on the engines'
    timelines with their dependencies;
  - `report.py`: the `Estimate` a call records (`nki.last_estimate()`).

Reads traces (trace/) only; nothing here runs a kernel.
"""
