"""Renders docs/figures.md from build/bench/*.json (`make figures`; `make
bench` and `make scale` run it at their end): a header, then one section per
benchmark in alphabetical order, each between `<!-- figures:NAME -->` and
`<!-- /figures:NAME -->` markers: its tables, the command that reproduces
them and one line of the run's context.

A benchmark's JSON always replaces its section; a section whose benchmark has
no JSON in build/bench is kept as it is in the current docs/figures.md, so
running one benchmark refreshes its section alone and nothing is lost.

Run: .venv/bin/python benchmarks/render_figures.py [--check]
     (--check: exit 1, changing nothing, if docs/figures.md would change)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from _figures import ROOT, SCHEMA, Table, markdown_text

BENCH = ROOT / "build" / "bench"
DOC = ROOT / "docs" / "figures.md"
SECTION = re.compile(r"^<!-- figures:(?P<name>[\w.-]+) -->\n.*?^<!-- /figures:(?P=name) -->$", re.M | re.S)

HEADER = """\
# Figures

The benchmarks' latest figures, each with the command that reproduces it and
the run's context (date, commit, machine, versions, settings). This page is
generated: `make bench` and `make scale` (and the scripts they run, each on its
own) write `build/bench/<benchmark>.json`, and `make figures` renders this page
from those files. Do not edit it by hand; run the benchmark again. A benchmark
without a JSON in `build/bench` keeps its section as it was. The emulator's
figures are wall times on the machine named, usually a small shared VM: read
the ratios, measured in the same run, before the absolute numbers.
"""


def context_line(record: dict) -> str:
    c, m = record["context"], record["context"]["machine"]
    env = (
        ", ".join(f"`{k}={v}`" for k, v in c["env"].items())
        or "none of `OMP_NUM_THREADS`, `TORCH_NEURONX_*`, `NEURON_*`"
    )
    load = f", load {c['load'][0]:.2f} at start" if c.get("load") else ""
    date = c["date"].replace("T", " ").removesuffix("+00:00")
    cpu = markdown_text(m["cpu_model"])
    return (
        f"Run {date} UTC, commit {c['commit']}, {c['seconds']:g} s; {m['cpus']} cores ({cpu}), "
        f"{m['memory_gib']} GiB RAM{load}; torch {c['torch']}, torch_neuronx {c['torch_neuronx']}; env: {env}."
    )


def section(record: dict) -> str:
    name = record["benchmark"]
    parts = [f"<!-- figures:{name} -->", f"## {name}", ""]
    for t in record["tables"]:
        parts += [Table.from_dict(t).markdown(level=3, escape=True), ""]
    parts += [f"Command: `{record['command']}`", "", context_line(record), "", f"<!-- /figures:{name} -->"]
    return "\n".join(parts)


def load_records(bench: Path) -> dict[str, dict]:
    records = {}
    for path in sorted(bench.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise SystemExit(f"{path}: not JSON ({e})") from e
        if record.get("schema") != SCHEMA:
            raise SystemExit(f"{path}: schema {record.get('schema')!r}, this renderer reads {SCHEMA}")
        if record["benchmark"] != path.stem:
            raise SystemExit(f"{path}: names benchmark {record['benchmark']!r}")
        records[path.stem] = record
    return records


def render(records: dict[str, dict], current: str) -> str:
    sections = {m["name"]: m.group(0) for m in SECTION.finditer(current)}
    sections.update({name: section(record) for name, record in records.items()})
    body = "\n\n".join(sections[name] for name in sorted(sections))
    return HEADER + ("\n" + body + "\n" if body else "")


def shown(path: Path) -> Path:
    path = path.resolve()
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page would change; write nothing")
    parser.add_argument("--bench", type=Path, default=BENCH, help="folder of the JSON files (build/bench)")
    parser.add_argument("--out", type=Path, default=DOC, help="the page (docs/figures.md)")
    args = parser.parse_args(argv)
    current = args.out.read_text() if args.out.exists() else ""
    records = load_records(args.bench) if args.bench.is_dir() else {}
    text = render(records, current)
    if args.check:
        if text != current:
            print(f"{shown(args.out)} is out of date with {shown(args.bench)}: run `make figures`", file=sys.stderr)
            return 1
        print(f"{shown(args.out)} is up to date")
        return 0
    if text != current:
        tmp = args.out.with_name(f".{args.out.name}.tmp")
        tmp.write_text(text)
        tmp.replace(args.out)
    kept = sorted(m["name"] for m in SECTION.finditer(current) if m["name"] not in records)
    print(
        f"{shown(args.out)}: {len(records)} section(s) from {shown(args.bench)}"
        + (f", kept as they were: {', '.join(kept)}" if kept else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
