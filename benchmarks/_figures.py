"""A benchmark's figures, printed and kept: a benchmark builds its tables and
calls `report` once at the end, which prints each table as Markdown (for the
person running it) and writes build/bench/<name>.json (the tables, the command
that reproduces them and the run's context), from which
benchmarks/render_figures.py (`make figures`) renders docs/figures.md.

    from _figures import Table, report

    t = Table("allocation latency", ["size", "cpu us", "neuron us", "neuron/cpu"], note="against the CPU allocator")
    t.add("4 MiB", cpu_us, neuron_us, neuron_us / cpu_us)
    report("allocation_latency", [t])

A cell is a str, an int, a float or None (shown as "-"); floats are kept in the
JSON to 6 significant digits and shown with about 3 (`cell`). Columns name
their unit ("cpu us", "GB/s"); ratios are columns computed in the same run.

The environment that shapes the run (OMP_NUM_THREADS, TORCH_NEURONX_*,
NEURON_*) is read when this module is imported, so a benchmark imports it at
the top, before it sets any of them itself.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.util
import json
import math
import numbers
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "bench"
SCHEMA = 1
ENV_PREFIXES = ("TORCH_NEURONX_", "NEURON_")

_START = time.monotonic()
_LOAD = [round(x, 2) for x in os.getloadavg()]  # this shared machine's load when the run started
_ENV = {k: v for k, v in sorted(os.environ.items()) if k == "OMP_NUM_THREADS" or k.startswith(ENV_PREFIXES)}


class Table:
    """One table: a title, column names with their units, rows of cells, and
    an optional note (what the comparison side is, how it was measured)."""

    def __init__(self, title: str, columns: list[str], note: str = ""):
        self.title, self.columns, self.note = title, list(columns), note
        self.rows: list[list] = []

    def add(self, *cells) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"{self.title!r}: {len(cells)} cells for {len(self.columns)} columns {self.columns}")
        self.rows.append([_keep(c) for c in cells])

    def to_dict(self) -> dict:
        return {"title": self.title, "note": self.note, "columns": self.columns, "rows": self.rows}

    @classmethod
    def from_dict(cls, d: dict) -> Table:
        t = cls(d["title"], d["columns"], d.get("note", ""))
        t.rows = [list(r) for r in d["rows"]]
        return t

    def markdown(self, level: int = 3, escape: bool = False) -> str:
        """The table in Markdown under a heading of `level`; escape: also
        escape what a renderer would read as markup (`_c10d_functional
        all_reduce_` in italics), as a page needs and a terminal does not."""
        text = markdown_text if escape else str

        def row(cells):
            return "| " + " | ".join(text(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

        lines = [f"{'#' * level} {text(self.title)}", ""]
        if self.note:
            lines += [text(self.note), ""]
        lines += [row(self.columns), "|" + "---|" * len(self.columns)]
        lines += [row(cell(c) for c in r) for r in self.rows]
        return "\n".join(lines)


def _keep(value):
    """A cell as the JSON keeps it."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):  # numpy's and torch's integers too
        return int(value)
    if isinstance(value, numbers.Real) or hasattr(value, "__float__"):
        value = float(value)
        return float(f"{value:.6g}") if math.isfinite(value) else str(value)
    return str(value)


def cell(value) -> str:
    """A cell as a table shows it: floats to about 3 significant digits."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        a = abs(value)
        if a >= 1000:
            return f"{value:,.0f}"
        if a >= 100:
            return f"{value:.0f}"
        if a >= 10:
            return f"{value:.1f}"
        if a >= 0.1 or a == 0:
            return f"{value:.2f}"
        return f"{value:.2g}"
    return str(value)


_CODE_SPAN = re.compile(r"(`[^`]*`)")
# Markup characters; `_` only at a word's edge (inside a word, as in all_reduce, it is no emphasis).
_MARKUP = re.compile(r"[\\*<~$\[\]]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def markdown_text(text) -> str:
    """Text with Markdown's emphasis, HTML, strikethrough, math and link
    characters escaped, outside code spans."""
    parts = _CODE_SPAN.split(str(text))
    return "".join(p if i % 2 else _MARKUP.sub(lambda m: "\\" + m.group(0), p) for i, p in enumerate(parts))


def command(argv: list[str] | None = None, launcher: list[str] = ()) -> str:
    """The command that reproduces this run, from the repository root: the
    script relative to it, spelled with .venv/bin/python; `launcher` goes
    between the interpreter and the script (["-m", "torch.distributed.run", ...])."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    try:
        script_arg = str(script.relative_to(ROOT))
    except ValueError:
        script_arg = str(script)
    flags = ["-S"] if sys.flags.no_site else []
    return shlex.join([".venv/bin/python", *flags, *launcher, script_arg, *argv[1:]])


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
    ).stdout.strip()


def _commit() -> str:
    try:
        commit = _git("rev-parse", "--short", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("-dirty" if dirty else "")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _version(module: str) -> str:
    """The version of a module as it would import: from the module if this
    process imported it, else from its source (`__version__ = "..."` in its
    version.py or __init__.py: torch's reads "2.14.1+cu130" where its package
    metadata reads "2.14.1"), else from its package metadata. A parent that
    only starts workers need not import torch."""
    loaded = sys.modules.get(module)
    if loaded is not None and getattr(loaded, "__version__", None):
        return str(loaded.__version__)
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for name in ("version.py", "__init__.py"):
            try:
                found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", (Path(folder) / name).read_text(), re.M)
            except OSError:
                continue
            if found:
                return found.group(1)
    try:
        return importlib.metadata.version(module)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def context() -> dict:
    """What the figures depend on besides the code: the machine, the versions,
    the commit, the date and the settings; also the load averages (1, 5, 15
    minutes) when the run started and its wall time in seconds."""
    return {
        "date": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
        "commit": _commit(),
        "machine": {
            "hostname": socket.gethostname(),
            "cpus": os.cpu_count(),
            "cpu_model": _cpu_model(),
            "memory_gib": _memory_gib(),
        },
        "torch": _version("torch"),
        "torch_neuronx": _version("torch_neuronx"),
        "env": dict(_ENV),
        "load": _LOAD,
        "seconds": round(time.monotonic() - _START, 1),
    }


def report(name: str, tables: list[Table], command_line: str | None = None) -> Path:
    """Prints the tables as Markdown and writes build/bench/<name>.json
    (atomically); returns its path. command_line: the reproducing command when
    sys.argv does not give it (a script run under torchrun)."""
    for t in tables:
        print(f"\n{t.markdown()}")
    record = {
        "schema": SCHEMA,
        "benchmark": name,
        "command": command_line or command(),
        "context": context(),
        "tables": [t.to_dict() for t in tables],
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    tmp = OUT / f".{name}.{os.getpid()}.tmp"  # beside the file, so that the rename is atomic
    try:
        with open(tmp, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"\nwrote {shown} (make figures renders docs/figures.md)")
    return path
