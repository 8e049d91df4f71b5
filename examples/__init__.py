"""The Hugging Face examples. Each runs as a script (`python examples/demo.py`,
`torchrun examples/generate_tp.py`); tests and benchmarks import what they
share with them from this package (`from examples import build_artifacts`),
with the repository root on sys.path (pytest's `pythonpath`, benchmarks/_paths.py)."""
