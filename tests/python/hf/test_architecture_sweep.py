"""The fast subset of the architecture sweep (make sweep runs all of
Transformers' causal-LM architectures): a few architectures of different
families generate the CPU's greedy tokens on neuron eagerly, and one with a
static cache and compiled decode."""

import architecture_sweep  # tests/sweep, on pytest's pythonpath (pyproject.toml)

EAGER = ["llama", "gpt2", "bloom", "mamba", "bart", "falcon", "phi3", "gemma2"]


def test_eager_subset_gives_the_cpu_tokens():
    rows = architecture_sweep.main(["--only", ",".join(EAGER), "--no-compile", "--timeout", "120"])
    assert [r["eager"] for r in rows] == ["identical"] * len(EAGER), rows


def test_compiled_static_cache_subset_gives_the_cpu_tokens(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    rows = architecture_sweep.main(["--only", "phi3", "--timeout", "240"])
    assert rows[0]["eager"] == "identical" and rows[0]["compiled"] == "identical", rows
