"""Trainium time estimates from the numbers of torch_neuronx/trainium.py: per
op (ops.py, also the profiler's estimated track), per collective
(collectives.py) and per block of code (step.py: `torch_neuronx.estimate()`)."""
