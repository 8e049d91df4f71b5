"""The NeuronCore a kernel is checked against, at the bottom of torch_neuronx.nki.

`targets.py` names the NeuronCore generation (its numbers live in
`torch_neuronx.trainium`); `dtypes.py` is NKI's table of data types. Nothing
here imports the rest of the package but `errors.py`.
"""
