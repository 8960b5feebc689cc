"""``exactref formats`` and ``exactref round``: the format table, and one value rounded."""

from __future__ import annotations

import re
from fractions import Fraction

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

__all__ = ["register", "format_table", "round_report", "parse_value", "parse_complex"]


def register(sub) -> None:
    p = sub.add_parser("formats", help="print the table of every format exactref rounds into")
    p.add_argument("--kind", choices=["bool", "int", "uint", "float", "complex"],
                   help="only formats of this kind")
    p.set_defaults(func=_run_formats)
    p = sub.add_parser("round", help="round one exact value into a format and show its neighbours")
    p.add_argument("value", help="a decimal (0.1), hex float (0x1.8p+3), integer, ratio (1/3), "
                                 "inf, nan or complex (1.5-2j); taken exactly")
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
_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$")
#: The largest decimal exponent ``round`` reads exactly. Every format's values lie far inside
#: (float64's largest finite value is about 1.8e308, its smallest subnormal 4.9e-324).
MAX_DECIMAL_EXPONENT = 4000
#: The longest number (in characters) ``round`` reads exactly.
MAX_DIGITS = 4000
_EXPECTED = ("expected a decimal (0.1), a hex float (0x1.8p+3), an integer, a ratio (1/3), "
             "inf, nan, or a complex number (1.5-2j)")


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
    if len(t) > MAX_DIGITS:
        raise ValueError(f"{text[:20]!r}... has {len(t)} characters; exactref round reads "
                         f"numbers of at most {MAX_DIGITS} (write a long one as a ratio or "
                         f"with an exponent)")
    negzero = t.startswith("-")
    m = _RATIO.match(t)
    if m:
        if int(m.group(2)) == 0:
            raise ValueError(f"{text!r} divides by zero")
        value = Fraction(int(m.group(1)), int(m.group(2)))
        return value, negzero and value == 0
    if t.lstrip("+-").startswith("0x"):
        try:
            fv = FloatValue(float.fromhex(t)) if "p" in t or "." in t else \
                FloatValue(int(t, 16))
        except (ValueError, OverflowError):
            raise ValueError(f"cannot read {text!r} as a hex number; {_EXPECTED}") from None
        return fv.to_fraction(), negzero and fv.is_zero
    m = _DECIMAL.match(t)
    if m and m.group(2) and abs(int(m.group(2)[1:])) > MAX_DECIMAL_EXPONENT:
        raise ValueError(
            f"{text!r}: the decimal exponent {int(m.group(2)[1:])} lies beyond "
            f"+-{MAX_DECIMAL_EXPONENT}, far outside every format (float64 spans about 4.9e-324 "
            f"to 1.8e308); write inf or 0 for such a value")
    try:
        value = Fraction(t)
        return value, negzero and value == 0
    except ValueError:
        raise ValueError(f"cannot read {text!r} as a number; {_EXPECTED}") from None


def parse_complex(text: str):
    """``(real, imag)``, each what :func:`parse_value` returns; ``imag`` is None for a real
    number. Complex numbers are written as Python writes them: ``1.5-2j``, ``(1+0.5j)``,
    ``2j``; each part is any number :func:`parse_value` reads.

    >>> parse_complex("(1.5-2j)")
    ((Fraction(3, 2), False), (Fraction(-2, 1), False))
    >>> parse_complex("0.1")
    ((Fraction(1, 10), False), None)
    """
    t = text.strip().lower()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    t = re.sub(r"\s*([+-])\s*", r"\1", t)  # "0.1 + 0.2j" as "0.1+0.2j"
    if not t.endswith("j"):
        return parse_value(t), None
    body = t[:-1]
    split = None
    for i in range(len(body) - 1, 0, -1):  # the sign that starts the imaginary part
        if body[i] in "+-" and body[i - 1] not in "ep":
            split = i
            break
    real_text, imag_text = ("0", body) if split is None else (body[:split], body[split:])
    if imag_text in ("", "+", "-"):
        imag_text += "1"
    return parse_value(real_text), _imag_sign(parse_value(imag_text), imag_text)


def _imag_sign(parsed, text):
    value, negzero = parsed
    if isinstance(value, Fraction) and value == 0:
        return value, text.strip().startswith("-")
    return value, negzero


def _bits(value: float, fmt) -> str:
    raw = int(fmt.encode([value])[0])  # the P3109 formats' codes too (no numpy dtype)
    digits = (fmt.bits + 3) // 4
    return f"0x{raw:0{digits}X}"


def _show(value, fmt) -> str:
    if isinstance(value, float) and value != value:
        return "nan"
    fv = FloatValue(value)
    return f"{float(fv)!r:<24} {fv.hex():<26} bits {_bits(value, fmt)}"


def _describe(value, negzero) -> str:
    """The exact value as the report's first line shows it."""
    if not isinstance(value, Fraction):
        return "nan" if value is NAN else str(value)
    binary = value.denominator & (value.denominator - 1) == 0
    desc = "-0" if (value == 0 and negzero) else str(value)
    if len(desc) > 60:  # a long integer or ratio: its size, not its digits
        desc = f"{'-' if value < 0 else ''}(a number of {len(str(abs(value.numerator)))} digits)"
    dec = f"{float(value)!r}" if abs(value) < 2**1024 else "huge"
    if binary:
        shown = FloatValue(-0.0 if negzero and value == 0 else value).hex()
        return desc + f" = {shown}"
    return desc + f" = {dec} (not a binary fraction)"


def _round_integer(value, fmt, mode, rule, text) -> int:
    """``value`` rounded to an integer under ``mode``, then into ``fmt``'s range under the
    overflow ``rule`` (as er.round_to does). Into bool, as a cast to bool everywhere in
    exactref (and numpy, torch, C): every nonzero value is True, NaN and infinities included,
    whatever the rounding mode (0.1 is True, not the integer 0 it rounds to)."""
    if fmt.kind == "bool":
        return int(not (isinstance(value, Fraction) and value == 0))
    if not isinstance(value, Fraction):
        raise ValueError(f"{text} has no value in {fmt.name} (an integer format has no NaN or "
                         f"infinity); round it into a float format")
    k = round_to_integer(value, mode)
    lo, hi = fmt.int_min, fmt.int_max
    if lo <= k <= hi:
        return k
    if rule == "error":
        what = "is" if k == value else f"rounds to {k}, which is"
        raise OverflowError(f"{text} {what} outside {fmt.name}'s range [{lo}, {hi}]; pass "
                            f"--overflow wrap or saturate, or choose a wider format")
    if rule == "saturate":
        return max(lo, min(hi, k))
    return (k - lo) % (hi - lo + 1) + lo


def _part_lines(value, negzero, comp, mode, rule, label=""):
    """The below/above/result/inexact lines of one real value rounded into float format
    ``comp`` (``label``: "real " or "imag " for the parts of a complex value)."""
    lines = []
    if isinstance(value, Fraction):
        below = round_scalar(value, negzero, comp, Rounding.TOWARD_NEGATIVE, "ieee")[0]
        above = round_scalar(value, negzero, comp, Rounding.TOWARD_POSITIVE, "ieee")[0]
        lines.append(f"{label + 'below':<13} {_show(below, comp)}")
        lines.append(f"{label + 'above':<13} {_show(above, comp)}")
    result, inexact, over, under = round_scalar(value, negzero, comp, mode, rule)
    if result != result and not comp.has_nan:  # NaN in a format without NaN: undefined
        lines.append(f"{label + 'result':<13} undefined: {comp.name} has no NaN, so NaN has no "
                     f"encoding (er.round_to gives the placeholder +0 and flags it in "
                     f".undefined; docs/arithmetic.md, 'Formats without NaN')")
        return lines
    lines.append(f"{label + 'result':<13} {_show(result, comp)}")
    flags = [name for name, on in (("overflow", over), ("underflow", under)) if on]
    lines.append(f"{label + 'inexact':<13} {'yes' if inexact else 'no'}"
                 + (f" ({', '.join(flags)})" if flags else ""))
    return lines


def round_report(text: str, fmt_spec, rounding="nearest_even", overflow=None) -> str:
    """What ``exactref round`` prints.

    >>> print(round_report("0.1", "bfloat16"))  # doctest: +NORMALIZE_WHITESPACE
    exact value   1/10 = 0.1 (not a binary fraction)
    format        bfloat16, rounding nearest_even, overflow ieee
    below         0.099609375              0x1.98p-4                  bits 0x3DCC
    above         0.10009765625            0x1.9ap-4                  bits 0x3DCD
    result        0.10009765625            0x1.9ap-4                  bits 0x3DCD
    inexact       yes

    Integer formats round to an integer, then apply the overflow rule:

    >>> print(round_report("300", "int8"))
    exact value   300 = 0x1.2cp+8
    format        int8, rounding nearest_even, overflow wrap
    result        44 (300 wrapped into int8)
    """
    fmt = dtype(fmt_spec)
    mode = resolve_rounding(rounding)
    rule = resolve_overflow(overflow, fmt)
    (value, negzero), imag = parse_complex(text)
    if imag is not None and fmt.kind != "complex":
        if not (isinstance(imag[0], Fraction) and imag[0] == 0):
            raise ValueError(f"{text} has an imaginary part, which {fmt.name} cannot hold; "
                             f"round it into a complex format (complex64, complex128, ...) or "
                             f"pass its real part")
        imag = None
    lines = [f"{'exact value':<13} {_describe(value, negzero)}"
             + (f" + ({_describe(*imag)})j" if imag is not None else "")]
    lines.append(f"{'format':<13} {fmt.name}, rounding {mode.value}, overflow {rule}")
    if fmt.is_integer:
        k = _round_integer(value, fmt, mode, rule, text)
        if fmt.kind == "bool":
            note = "" if isinstance(value, Fraction) and value in (0, 1) else \
                " (nonzero: every nonzero value casts to True)" if k else ""
            lines.append(f"{'result':<13} {bool(k)}{note}")
            return "\n".join(lines)
        whole = round_to_integer(value, mode)
        note = "" if whole == value else " (inexact)"
        if whole != k:
            how = "wrapped" if rule == "wrap" else "saturated"
            note = f" ({whole} {how} into {fmt.name})"
        lines.append(f"{'result':<13} {k}{note}")
        return "\n".join(lines)
    comp = fmt.component
    if fmt.kind != "complex":
        return "\n".join(lines + _part_lines(value, negzero, comp, mode, rule))
    if imag is None:  # a real value in a complex format: its imaginary part is +0
        imag = (Fraction(0), False)
    lines += _part_lines(value, negzero, comp, mode, rule, "real ")
    lines += _part_lines(imag[0], imag[1], comp, mode, rule, "imag ")
    parts = [round_scalar(v, z, comp, mode, rule)[0] for v, z in ((value, negzero), imag)]
    shown = [("nan" if p != p else FloatValue(p).hex()) for p in parts]
    lines.append(f"{'result':<13} complex({shown[0]}, {shown[1]}) = "
                 f"{complex(parts[0], parts[1])!r}, each part rounded once into {comp.name}")
    return "\n".join(lines)


def _run_round(args) -> int:
    print(round_report(args.value, args.to, args.rounding, args.overflow))
    return 0
