"""The ``exactref`` command line: one subcommand per module of this package.

Each subcommand module defines ``register(subparsers)``, which adds its parser and sets
``func`` (called with the parsed arguments; it returns the exit code).
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys

__all__ = ["main"]

#: Subcommand modules, in the order ``exactref --help`` lists them.
_COMMANDS = ("_audit", "_explain", "_formats_cmd", "_promotion")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="exactref",
        description="Exact, once-rounded references for numerical kernels.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not built yet
            if exc.name != f"{__name__}.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the exit code (pytest's: 4 for a usage error, an
    argparse error included, where argparse itself would exit with 2)."""
    parser = build_parser()
    argv = _negative_value_last(list(sys.argv[1:] if argv is None else argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage and the error (or --help)
        return 4 if exc.code not in (0, None) else 0
    if not getattr(args, "func", None):
        parser.print_help()
        return 4
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, where a reader that went away can still be told apart
        return code
    except BrokenPipeError:  # the reader of stdout went away (| head): not an error of ours
        stdout_closed()
        return 0
    except (ValueError, TypeError, OverflowError) as exc:
        print(f"exactref {args.command}: error: {exc}", file=sys.stderr)
        return 4


def stdout_closed() -> None:
    """Send whatever is still to be printed to nowhere: the reader of stdout is gone
    (``exactref diff a b | head``), and Python's own flush at exit must not raise either."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):  # no file behind it
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stdout for the rest of the run


def _negative_value_last(argv: list) -> list:
    """``exactref round -1e-3 --to float16``: argparse reads a token that starts with ``-`` as
    an option unless it looks like ``-0.3``; the value of ``round`` that reads as a number
    (``-1e-3``, ``-0x1p-3``, ``-inf``, ``-1/3``, ``-0.1-0.2j``) is moved behind ``--``."""
    if not argv or argv[0] != "round" or "--" in argv:
        return argv
    from ._formats_cmd import parse_complex

    takes_value = {"--to", "--rounding", "--overflow"}
    for i in range(1, len(argv)):
        tok = argv[i]
        if not tok.startswith("-") or argv[i - 1] in takes_value or tok.startswith("--"):
            continue
        try:
            parse_complex(tok)
        except (ValueError, ZeroDivisionError):
            continue
        return argv[:i] + argv[i + 1:] + ["--", tok]
    return argv


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
