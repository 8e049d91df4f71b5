"""``python -m torch_neuronx info``: a neuron-ls-style listing of the devices."""

import argparse
import sys

from ._info import info_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_neuronx")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("info", help="list the NeuronCores, their memory, the driver and the settings in effect")
    args = parser.parse_args(argv)
    if args.command in (None, "info"):
        print(info_text(), end="")
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
