"""The table of every environment variable (torch_neuronx/settings.py): every
reader in the code is in it, the docs are generated from it, every reader
parses by its rules, and a bad value never breaks `import torch`."""

import pathlib
import re

import pytest
from helpers.processes import run_ok

from torch_neuronx import settings

ROOT = pathlib.Path(__file__).resolve().parents[3]

# How the code reads a variable: Python and the C++ core and HAL.
PY_READS = (
    r"environ\.get\(\s*\"([A-Z0-9_]+)\"",
    r"environ\[\"([A-Z0-9_]+)\"\]",
    r"settings\.(?:value|flag|get)\(\"([A-Z0-9_]+)\"",
    r"^[A-Z_]*ENV(?:, [A-Z_]*ENV)* = (\"[A-Z0-9_]+\"(?:, \"[A-Z0-9_]+\")*)",
)
CPP_READS = (r"getenv\(\"([A-Z0-9_]+)\"\)", r"\benv\(\"([A-Z0-9_]+)\"\)", r"env_(?:flag|size)\(\"([A-Z0-9_]+)\"")


def read_in_code() -> set[str]:
    names = set()
    for path in (ROOT / "torch_neuronx").rglob("*.py"):
        text = path.read_text()
        for pattern in PY_READS:
            for m in re.finditer(pattern, text, re.M):
                names.update(re.findall(r"[A-Z0-9_]+", m.group(1)))
    for folder in ("csrc", "hal"):
        for path in (ROOT / folder).rglob("*.[ch]*"):
            for pattern in CPP_READS:
                names.update(re.findall(pattern, path.read_text()))
    return names


def test_every_variable_the_code_reads_is_in_the_table_and_every_entry_is_read():
    read = read_in_code() - set(settings.FOREIGN)
    table = set(settings.BY_NAME)
    assert read - table == set(), "read by the code but missing from torch_neuronx/settings.py"
    assert table - read == set(), "in the table but read nowhere"


def test_docs_settings_md_is_generated_from_the_table():
    assert (ROOT / "docs" / "settings.md").read_text() == settings.markdown(), (
        "docs/settings.md is stale: python -m torch_neuronx settings --markdown > docs/settings.md"
    )


@pytest.mark.parametrize("text", ["1", "true", "TRUE", "Yes", "on", " On "])
def test_booleans_accept_the_words_for_on_in_any_case(text):
    assert settings.parse("TORCH_NEURONX_FALLBACK_WARN", text) is True


@pytest.mark.parametrize("text", ["0", "false", "False", "NO", "off"])
def test_booleans_accept_the_words_for_off_in_any_case(text):
    assert settings.parse("TORCH_NEURONX_FALLBACK_WARN", text) is False


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("TORCH_NEURONX_FALLBACK_WARN", "2"),
        ("TORCH_NEURONX_FALLBACK_WARN", "enabled"),
        ("TORCH_NEURONX_EMU_HBM", "1.5.3G"),
        ("TORCH_NEURONX_EMU_HBM", "12X"),
        ("TORCH_NEURONX_EMU_HBM", "0"),
        ("TORCH_NEURONX_EMU_CHIPS", "17"),
        ("TORCH_NEURONX_EMU_CHIPS", "+3"),
        ("NEURON_RT_NUM_CORES", "-1"),
        ("NEURON_RT_VISIBLE_CORES", "3-1"),
        ("TORCH_NEURONX_TRACE_STEPS", "2:0"),
        ("TORCH_NEURONX_STRICT", "wran"),
        ("NEURON_LOGICAL_NC_CONFIG", "4"),
    ],
)
def test_what_does_not_parse_is_refused_naming_the_variable_and_what_it_accepts(name, text):
    with pytest.raises(settings.SettingError, match=rf"{name}='{re.escape(text)}' is not valid: it accepts"):
        settings.parse(name, text)


def test_values_parse_to_their_types():
    assert settings.parse("TORCH_NEURONX_EMU_HBM", "1.5GiB") == 3 << 29
    assert settings.parse("NEURON_RT_VISIBLE_CORES", "0-1, 3") == [0, 1, 3]
    assert settings.parse("TORCH_NEURONX_TRACE_STEPS", "2:3") == (2, 3)
    assert settings.parse("TORCH_NEURONX_STRICT", "TRUE") == "warn"


@pytest.mark.parametrize(
    ("env", "owner"),
    [
        ({"TORCH_NEURONX_STRICT": "wran"}, "Python"),
        ({"TORCH_NEURONX_FALLBACK_WARN": "maybe"}, "core"),
        ({"NEURON_LAUNCH_BLOCKING": "sometimes"}, "emulator"),
    ],
)
def test_a_bad_value_warns_at_import_and_fails_the_first_use_of_the_device(env, owner):
    ((name, value),) = env.items()
    assert settings.BY_NAME[name].reader == owner
    out = run_ok("settings_first_use", env=env, fresh=True)  # the warnings of the import itself
    assert f"WARNING SettingWarning: torch_neuronx: {name}='{value}' is not valid" in out
    assert f"ERROR {name}='{value}' is not valid: it accepts" in out


@pytest.mark.parametrize(("text", "expected"), [("false", "0"), ("No", "0"), ("TRUE", "1"), ("on", "1")])
def test_the_emulator_reads_booleans_by_the_table(text, expected):
    out = run_ok("device_info", env={"NEURON_LAUNCH_BLOCKING": text})
    assert f"  NEURON_LAUNCH_BLOCKING={expected}\n" in out


def test_info_lists_every_variable_with_its_value():
    out = run_ok("device_info", env={"TORCH_NEURONX_TRACE_STEPS": "1:2"})
    for s in settings.TABLE:
        assert f"  {s.name}" in out
    assert "  TORCH_NEURONX_TRACE_STEPS=1:2\n" in out
