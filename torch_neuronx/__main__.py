"""``python -m torch_neuronx info``: a neuron-ls-style listing of the devices.
``python -m torch_neuronx report [run.json]``: the summary of a strict-mode run record."""

import argparse
import sys

from ._info import info_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_neuronx")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("info", help="list the NeuronCores, their memory, the driver and the settings in effect")
    report = sub.add_parser("report", help="summarise a strict-mode run record (TORCH_NEURONX_STRICT=warn "
                                           "with TORCH_NEURONX_REPORT=run.json writes one)")
    report.add_argument("record", nargs="?", help="the run record (default: $TORCH_NEURONX_REPORT)")
    report.add_argument("--trace", help="a neuron trace (export_chrome_trace's JSON; default: the one the run "
                                        "record names, written with TORCH_NEURONX_TRACE)")
    report.add_argument("--steps", type=int, help="steps in the trace (default: the run record's, else 1)")
    report.add_argument("--png", help="draw the trace's time per op family, measured and estimated, and the "
                                      "estimate per engine, into this PNG")
    args = parser.parse_args(argv)
    if args.command == "report":
        from ._strict_report import main as report_main

        return report_main(args.record, trace=args.trace, steps=args.steps, png=args.png)
    if args.command in (None, "info"):
        print(info_text(), end="")
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
