"""``python -m torch_neuronx info``: a neuron-ls-style listing of the devices.
``python -m torch_neuronx report [run.json]``: the summary of a strict-mode run record.
``python -m torch_neuronx settings [--markdown]``: every environment variable read."""

import argparse
import sys

from ._info import info_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_neuronx")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("info", help="list the NeuronCores, their memory, the driver and the settings in effect")
    report = sub.add_parser(
        "report",
        help="summarise a strict-mode run record (TORCH_NEURONX_STRICT=warn "
        "with TORCH_NEURONX_REPORT=run.json writes one)",
    )
    report.add_argument("record", nargs="?", help="the run record (default: $TORCH_NEURONX_REPORT)")
    report.add_argument(
        "--trace",
        help="a neuron trace (export_chrome_trace's JSON; default: the one the run "
        "record names, written with TORCH_NEURONX_TRACE)",
    )
    report.add_argument("--steps", type=int, help="steps in the trace (default: the run record's, else 1)")
    report.add_argument(
        "--png",
        help="draw the trace's time per op family, measured and estimated, and the estimate per engine, into this PNG",
    )
    table = sub.add_parser("settings", help="every environment variable torch_neuronx reads, with what it accepts")
    table.add_argument("--markdown", action="store_true", help="as docs/settings.md (generated from this table)")
    args = parser.parse_args(argv)
    if args.command == "settings":
        from . import settings

        if args.markdown:
            print(settings.markdown(), end="")
        else:
            for s in settings.TABLE:
                print(
                    f"{s.name}\n  default: {s.default or 'unset'}; accepts: {s.accepts()}; read by: {s.reader}\n"
                    f"  {s.help}"
                )
        return 0
    if args.command == "report":
        from .observability.strict_report import main as report_main

        return report_main(args.record, trace=args.trace, steps=args.steps, png=args.png)
    if args.command in (None, "info"):
        print(info_text(), end="")
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
