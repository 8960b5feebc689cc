"""``exactref formats`` and ``exactref round``: the format table, and one value rounded."""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from .._exact import (
    NAN,
    FloatValue,
    Rounding,
    resolve_overflow,
    resolve_rounding,
    round_scalar,
    round_to_integer,
)
from .._formats import FORMATS, dtype

__all__ = ["register", "format_table", "round_report", "parse_value"]


def register(sub) -> None:
    p = sub.add_parser("formats", help="print the table of every format exactref rounds into")
    p.add_argument("--kind", choices=["bool", "int", "uint", "float", "complex"],
                   help="only formats of this kind")
    p.set_defaults(func=_run_formats)
    p = sub.add_parser("round", help="round one exact value into a format and show its neighbours")
    p.add_argument("value", help="a decimal (0.1), hex float (0x1.8p+3), integer, ratio (1/3), "
                                 "inf or nan; taken exactly")
    p.add_argument("--to", required=True, metavar="FORMAT", help="the target format (bfloat16, ...)")
    p.add_argument("--rounding", default="nearest_even",
                   help="nearest_even (default), nearest_away, toward_zero, toward_positive, "
                        "toward_negative or odd")
    p.add_argument("--overflow", default=None, help="ieee, saturate or nan (floats); wrap, error "
                                                    "or saturate (integers)")
    p.set_defaults(func=_run_round)


# ------------------------------------------------------------------------------- formats
def _fmt_num(x) -> str:
    if isinstance(x, int):
        return str(x)
    return f"{x:.6g}"


def format_table(kind=None) -> str:
    """The format table as aligned plain text.

    >>> print(format_table("float").splitlines()[0])  # doctest: +NORMALIZE_WHITESPACE
    format bits p emin emax max finite smallest normal smallest subnormal inf nan -0 overflow
    """
    header = ["format", "bits", "p", "emin", "emax", "max finite", "smallest normal",
              "smallest subnormal", "inf", "nan", "-0", "overflow"]
    rows = []
    for f in FORMATS.values():
        if kind and f.kind != kind:
            continue
        c = f.component
        if c.is_integer:
            rows.append([f.name, str(f.bits), "", "", "", str(f.int_max), str(f.int_min), "",
                         "", "", "", f.default_overflow])
            continue
        yes = {True: "yes", False: "no"}
        rows.append([f.name, str(f.bits), str(c.precision), str(c.emin), str(c.emax),
                     _fmt_num(c.max_finite), _fmt_num(c.smallest_normal),
                     _fmt_num(c.smallest_subnormal), yes[c.has_inf], yes[c.has_nan],
                     yes[c.has_negzero], c.default_overflow])
    if kind in (None, "int", "uint", "bool"):
        note = "integer rows: 'max finite' is the largest value, 'smallest normal' the smallest"
    else:
        note = ""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
             for r in [header, *rows]]
    notes = [f"{f.name}: {f.note}" for f in FORMATS.values() if f.note and (
        not kind or f.kind == kind)]
    tail = ([""] + [note] if note else []) + ([""] + notes if notes else [])
    return "\n".join(lines + tail)


def _run_formats(args) -> int:
    print(format_table(args.kind))
    return 0


# --------------------------------------------------------------------------------- round
_RATIO = re.compile(r"^\s*([+-]?\d+)\s*/\s*(\d+)\s*$")


def parse_value(text: str):
    """The exact value a user typed: Fraction, ``±inf`` float, or NaN marker; and its zero sign.

    >>> parse_value("0.1")
    (Fraction(1, 10), False)
    >>> parse_value("-0x1.8p+1"), parse_value("-0")
    ((Fraction(-3, 1), False), (Fraction(0, 1), True))
    """
    t = text.strip().lower()
    if t in ("nan", "+nan", "-nan"):
        return NAN, False
    if t.lstrip("+-") in ("inf", "infinity"):
        return (float("-inf") if t.startswith("-") else float("inf")), False
    negzero = t.startswith("-")
    m = _RATIO.match(t)
    if m:
        if int(m.group(2)) == 0:
            raise ValueError(f"{text!r} divides by zero")
        value = Fraction(int(m.group(1)), int(m.group(2)))
        return value, negzero and value == 0
    if t.lstrip("+-").startswith("0x"):
        fv = FloatValue(float.fromhex(t)) if "p" in t or "." in t else FloatValue(int(t, 16))
        return fv.to_fraction(), negzero and fv.is_zero
    try:
        value = Fraction(t)
        return value, negzero and value == 0
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a number; expected a decimal (0.1), a hex float "
            f"(0x1.8p+3), an integer, a ratio (1/3), inf or nan") from None


def _bits(value: float, fmt) -> str:
    arr = np.array([value], dtype=np.float64).astype(fmt.np_dtype)
    nbytes = fmt.itemsize
    raw = int(arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[nbytes])[0])
    raw &= (1 << fmt.bits) - 1
    digits = (fmt.bits + 3) // 4
    return f"0x{raw:0{digits}X}"


def _show(value, fmt) -> str:
    if isinstance(value, float) and value != value:
        return "nan"
    fv = FloatValue(value)
    return f"{float(fv)!r:<24} {fv.hex():<26} bits {_bits(value, fmt)}"


def round_report(text: str, fmt_spec, rounding="nearest_even", overflow=None) -> str:
    """What ``exactref round`` prints.

    >>> print(round_report("0.1", "bfloat16"))  # doctest: +NORMALIZE_WHITESPACE
    exact value   1/10 = 0.1 (not a binary fraction)
    format        bfloat16, rounding nearest_even, overflow ieee
    below         0.099609375              0x1.98p-4                  bits 0x3DCC
    above         0.10009765625            0x1.9ap-4                  bits 0x3DCD
    result        0.10009765625            0x1.9ap-4                  bits 0x3DCD
    inexact       yes
    """
    fmt = dtype(fmt_spec)
    mode = resolve_rounding(rounding)
    rule = resolve_overflow(overflow, fmt)
    value, negzero = parse_value(text)
    lines = []
    if isinstance(value, Fraction):
        binary = value.denominator & (value.denominator - 1) == 0
        desc = "-0" if (value == 0 and negzero) else str(value)
        dec = f"{float(value)!r}" if abs(value) < 2**1024 else "huge"
        if binary:
            desc += f" = {FloatValue(-0.0 if negzero and value == 0 else value).hex()}"
        else:
            desc += f" = {dec} (not a binary fraction)"
        lines.append(f"{'exact value':<13} {desc}")
    else:
        lines.append(f"{'exact value':<13} {'nan' if value is NAN else value}")
    lines.append(f"{'format':<13} {fmt.name}, rounding {mode.value}, overflow {rule}")
    if fmt.is_integer or fmt.kind == "complex":
        if fmt.kind == "complex":
            fmt = fmt.component
        else:
            if not isinstance(value, Fraction):
                raise ValueError(f"{text} has no value in {fmt.name}")
            k = round_to_integer(value, mode)
            lines.append(f"{'result':<13} {k}")
            return "\n".join(lines)
    if isinstance(value, Fraction):
        below = round_scalar(value, negzero, fmt, Rounding.TOWARD_NEGATIVE, "ieee")[0]
        above = round_scalar(value, negzero, fmt, Rounding.TOWARD_POSITIVE, "ieee")[0]
        lines.append(f"{'below':<13} {_show(below, fmt)}")
        lines.append(f"{'above':<13} {_show(above, fmt)}")
    result, inexact, over, under = round_scalar(value, negzero, fmt, mode, rule)
    lines.append(f"{'result':<13} {_show(result, fmt)}")
    flags = [name for name, on in (("overflow", over), ("underflow", under)) if on]
    lines.append(f"{'inexact':<13} {'yes' if inexact else 'no'}"
                 + (f" ({', '.join(flags)})" if flags else ""))
    return "\n".join(lines)


def _run_round(args) -> int:
    print(round_report(args.value, args.to, args.rounding, args.overflow))
    return 0
