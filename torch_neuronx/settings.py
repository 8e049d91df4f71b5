"""Every environment variable TorchNeuron reads, in one table.

The table is the contract: the Python readers parse through `get`, the C++
readers (the emulator driver, the HAL loader, the core) follow the same rules
(`tests/python/device/test_settings.py` holds them to it), `python -m torch_neuronx
info` prints it and `docs/settings.md` is generated from it
(`python -m torch_neuronx settings --markdown`).

Rules: an unset or empty variable takes its default. Booleans accept
0/1/true/false/yes/no/on/off in any case; integers, sizes, core lists and
choices refuse what does not parse. A bad value raises `SettingError` naming
the variable, the value and what it accepts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")
_SIZE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


class SettingError(ValueError):
    """A variable's value that its reader cannot take."""


class SettingWarning(UserWarning):
    """Import found a bad value: the device's first use raises SettingError's text."""


@dataclass(frozen=True)
class Setting:
    name: str
    kind: str  # bool, int, size, cores, choice, path, text
    default: str  # as documented ("" = unset)
    reader: str  # who reads it: emulator, HAL, core, Python
    help: str
    choices: tuple[str, ...] = ()  # in any case
    aliases: tuple[tuple[str, str], ...] = ()  # choices: other words for one
    low: int | None = None  # ints: the accepted range
    high: int | None = None

    def accepts(self) -> str:
        """What the variable accepts, in words."""
        if self.kind == "bool":
            return "0/1, true/false, yes/no, on/off (any case)"
        if self.kind == "choice":
            also = f" (also {', '.join(f'{a} = {c}' for a, c in self.aliases)})" if self.aliases else ""
            return ", ".join(self.choices) + also
        if self.kind == "int":
            hi = "" if self.high is None else str(self.high)
            return f"an integer {self.low}..{hi}".rstrip(".") + ("" if self.high is not None else " or more")
        if self.kind == "size":
            return "bytes, or a number with K, M, G or T (1024-based; `512M`, `1.5G`)"
        if self.kind == "cores":
            return "core ids and ranges (`0-1,3`)"
        if self.kind == "steps":
            return "`skip:count` (two integers, count >= 1)"
        return "a path" if self.kind == "path" else "any text"


TABLE: tuple[Setting, ...] = (
    # The Neuron runtime's own names (the emulator honours them as NRT does).
    Setting(
        "NEURON_LOGICAL_NC_CONFIG",
        "choice",
        "2",
        "emulator",
        "Logical NeuronCore config: `2` pairs physical cores (4 cores of 24 GiB per Trainium2 chip), "
        "`1` gives 8 cores of 12 GiB.",
        choices=("1", "2"),
    ),
    Setting(
        "NEURON_RT_VISIBLE_CORES",
        "cores",
        "all",
        "emulator",
        "Logical cores this process sees; they become `neuron:0..n-1`.",
    ),
    Setting("NEURON_RT_NUM_CORES", "int", "all", "emulator", "Keep only the first N visible cores.", low=0),
    Setting(
        "NEURON_LAUNCH_BLOCKING",
        "bool",
        "0",
        "emulator",
        "Every queued item completes before its submission returns (matters with `TORCH_NEURONX_EMU_QUEUE=thread`).",
    ),
    Setting(
        "NEURON_PLATFORM_TARGET_OVERRIDE",
        "choice",
        "trn2",
        "Python",
        "The NeuronCore generation NKI kernels are checked and estimated for; overrides "
        "`nki.jit(platform_target=...)`.",
        choices=("trn1", "inf2", "gen2", "trn2", "gen3", "trn3", "gen4"),
    ),
    # The HAL and the emulator.
    Setting(
        "TORCH_NEURONX_DRIVER",
        "choice",
        "emu",
        "HAL",
        "The HAL driver: `emu` (the NeuronCore emulator) or `null` (the skeleton a hardware port starts "
        "from: no devices).",
        choices=("emu", "null"),
    ),
    Setting(
        "TORCH_NEURONX_EMU_HBM",
        "size",
        "per LNC",
        "emulator",
        "Device memory per logical core (default: 24 GiB at LNC=2, 12 GiB at LNC=1).",
    ),
    Setting(
        "TORCH_NEURONX_EMU_CHIPS",
        "int",
        "1",
        "emulator",
        "Emulated Trainium2 chips; cores = chips x 8 / LNC.",
        low=1,
        high=16,
    ),
    Setting(
        "TORCH_NEURONX_EMU_QUEUE",
        "choice",
        "inline",
        "emulator",
        "Stream execution: `inline` runs queued work on the calling thread (cheapest per op), `thread` "
        "runs each stream on a worker thread.",
        choices=("inline", "thread"),
    ),
    Setting(
        "TORCH_NEURONX_EMU_HOST_ADDRESSABLE",
        "bool",
        "1",
        "emulator",
        "Off: the devices do not report host-addressable memory, as a hardware driver may not; ops, "
        "collectives and compiled graphs then stage device bytes through host copies "
        "(`torch_neuronx.host_staging_stats()`).",
    ),
    # The core and the Python package.
    Setting(
        "TORCH_NEURONX_FALLBACK_WARN",
        "bool",
        "1",
        "core",
        "Off silences the once-per-op warning of the copying CPU fallback (it is still counted).",
    ),
    Setting(
        "TORCH_NEURONX_DIRECT_COLLECTIVES",
        "bool",
        "1",
        "core",
        "Off makes allreduce, all-gather and reduce-scatter past 64 KiB per rank go through the process "
        "group's shared-memory slots instead of reading the peers' device memory in place (same results, "
        "bitwise). Set it alike on every rank.",
    ),
    Setting(
        "TORCH_NEURONX_AUTOGRAD_THREAD",
        "bool",
        "0",
        "Python",
        "On keeps PyTorch's autograd thread per device for neuron's backward; by default, with the "
        "emulator, the backward runs on the thread that calls it, as a CPU tensor's does.",
    ),
    Setting(
        "TORCH_NEURONX_COMPILE_FALLBACK",
        "bool",
        "0",
        "Python",
        "On: a graph the `neuron` compile backend cannot compile runs eagerly (with a warning) instead "
        'of raising; also `options={"eager_fallback": True}`.',
    ),
    Setting(
        "TORCH_NEURONX_STRICT",
        "choice",
        "off",
        "Python",
        "Strict mode for the whole process: `warn` reports, `error` refuses what would fail or be slow "
        "on Trainium (docs/observe.md); `warn` prints the report at exit.",
        choices=("off", "warn", "error"),
        aliases=(("0", "off"), ("false", "off"), ("1", "warn"), ("true", "warn")),
    ),
    Setting(
        "TORCH_NEURONX_REPORT",
        "path",
        "",
        "Python",
        "Strict mode's run record (JSON) is written here at exit (`{rank}` becomes the process's rank); "
        "`python -m torch_neuronx report` reads it.",
    ),
    Setting(
        "TORCH_NEURONX_TRACE",
        "path",
        "",
        "Python",
        "Profile a window of optimizer steps into this Chrome/Perfetto trace (`{rank}` as above), with a "
        "per-step summary.",
    ),
    Setting(
        "TORCH_NEURONX_TRACE_STEPS",
        "steps",
        "2:3",
        "Python",
        "That window, `skip:count` optimizer steps; also the steps strict mode's report estimates.",
    ),
    Setting(
        "TORCH_NEURONX_HOST_ID",
        "text",
        "hostname + network namespace",
        "Python",
        "What counts as one host for the `neuron` process group: ranks with equal ids meet in shared "
        "memory, others over TCP (Gloo; `GLOO_SOCKET_IFNAME` picks the interface).",
    ),
)

BY_NAME = {s.name: s for s in TABLE}

# Variables the package reads but does not own: torchrun's.
FOREIGN = ("RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "WORLD_SIZE")


def _bad(s: Setting, value: str) -> SettingError:
    return SettingError(
        f"{s.name}={value!r} is not valid: it accepts {s.accepts()}. Unset it for the default ({s.default or 'unset'})."
    )


def parse(name: str, value: str):
    """The value of `name` given as text, typed; SettingError if it does not parse."""
    s = BY_NAME[name]
    text = value.strip()
    if s.kind == "bool":
        if text.lower() in TRUE:
            return True
        if text.lower() in FALSE:
            return False
        raise _bad(s, value)
    if s.kind == "choice":
        word = dict(s.aliases).get(text.lower(), text.lower())
        if word not in s.choices:
            raise _bad(s, value)
        return word
    if s.kind == "int":
        if not re.fullmatch(r"\d+", text):
            raise _bad(s, value)
        n = int(text)
        if (s.low is not None and n < s.low) or (s.high is not None and n > s.high):
            raise _bad(s, value)
        return n
    if s.kind == "size":
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?", text.upper())
        if not m or float(m.group(1)) * _SIZE_UNITS[m.group(2)] < 1:
            raise _bad(s, value)
        return round(float(m.group(1)) * _SIZE_UNITS[m.group(2)])
    if s.kind == "cores":
        cores: list[int] = []
        for item in text.split(","):
            m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", item)
            if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
                raise _bad(s, value)
            lo = int(m.group(1))
            cores += [c for c in range(lo, int(m.group(2) or lo) + 1) if c not in cores]
        return cores
    if s.kind == "steps":
        m = re.fullmatch(r"(\d+):(\d+)", text)
        if not m or int(m.group(2)) < 1:
            raise _bad(s, value)
        return int(m.group(1)), int(m.group(2))
    return value


def get(name: str, environ=None):
    """`name`'s typed value from the environment, or None when it is unset or
    empty (the reader applies the default); SettingError if it does not parse."""
    value = (os.environ if environ is None else environ).get(name, "")
    return None if value.strip() == "" else parse(name, value)


def value(name: str, environ=None):
    """`name`'s typed value, or None when it is unset, empty or does not parse
    (a bad value was reported at import and fails the device's first use:
    a reader at import time must never raise)."""
    try:
        return get(name, environ)
    except SettingError:
        return None


def flag(name: str, environ=None) -> bool:
    """A boolean setting, its default applied (also for a bad value: see value())."""
    v = value(name, environ)
    return parse(name, BY_NAME[name].default) if v is None else v


def problems(environ=None) -> list[str]:
    """Every set variable of the table whose value does not parse."""
    out = []
    for s in TABLE:
        try:
            get(s.name, environ)
        except SettingError as e:
            out.append(str(e))
    return out


def check_at_import() -> list[str]:
    """Import's check: every bad value, warned about once (never raised: a typo
    must not break `import torch`); the caller makes the device's first use
    raise them."""
    bad = problems()
    if bad:
        import warnings

        warnings.warn(
            "torch_neuronx: " + " ".join(bad) + " The neuron device raises this at its first use.",
            SettingWarning,
            stacklevel=3,
        )
    return bad


def in_effect(environ=None) -> list[str]:
    """`info`'s lines: each variable, its value or (unset), and a note when bad."""
    env = os.environ if environ is None else environ
    lines = []
    for s in TABLE:
        raw = env.get(s.name)
        if raw is None:
            lines.append(f"{s.name} (unset" + (f": {s.default})" if s.default else ")"))
            continue
        try:
            parse(s.name, raw) if raw.strip() else None
            lines.append(f"{s.name}={raw}")
        except SettingError:
            lines.append(f"{s.name}={raw}  <- not valid: accepts {s.accepts()}")
    return lines


def markdown() -> str:
    """docs/settings.md: the table, generated."""
    lines = [
        "# Settings",
        "",
        "Every environment variable TorchNeuron reads. Generated from `torch_neuronx/settings.py` by",
        "`python -m torch_neuronx settings --markdown > docs/settings.md`; `python -m torch_neuronx info`",
        "prints the values in effect. An unset or empty variable takes its default; a value that does not",
        "parse is refused with an error naming the variable and what it accepts.",
        "",
        "| variable | default | accepts | read by | what it does |",
        "|---|---|---|---|---|",
    ]
    for s in TABLE:
        lines.append(f"| `{s.name}` | {s.default or 'unset'} | {s.accepts()} | {s.reader} | {s.help} |")
    lines += ["", "Read but not owned: torchrun's " + ", ".join(f"`{n}`" for n in FOREIGN) + "."]
    return "\n".join(lines) + "\n"
