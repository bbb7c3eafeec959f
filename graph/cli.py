"""The ``nodeweave`` command."""

import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="nodeweave", description="nodeweave: layer graphs on NumPy.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="build, run and describe a multi-input, multi-output model")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from graph.demo import run_demo

        run_demo()
    return 0
