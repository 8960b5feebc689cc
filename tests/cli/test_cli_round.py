"""``exactref round``: a value into bool as the library casts it, complex values part by part,
and values the shell would otherwise read as options."""

from __future__ import annotations

from fractions import Fraction

import pytest

import exactref as er
from exactref.cli import main
from exactref.cli._formats_cmd import parse_complex, round_report


def _result(capsys, *argv) -> str:
    assert main(["round", *argv]) == 0
    return [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("result")][0]


@pytest.mark.parametrize("text, value", [
    ("0.1", 0.1), ("0.5", 0.5), ("-0.3", -0.3), ("2", 2.0), ("1e-300", 1e-300),
    ("inf", float("inf")), ("-inf", float("-inf")), ("nan", float("nan")),
    ("-1/3", -1 / 3), ("0x1p-1074", 5e-324)])
def test_bool_is_true_for_every_nonzero_value_as_the_api(capsys, text, value):
    """A cast to bool is "nonzero -> True" (er.round_to, er.asarray, numpy, torch), not the
    integer the value rounds to: 0.1 is True."""
    api = er.round_to(value, "bool").array.tolist()
    assert api is er.asarray(value, "bool").tolist() is True
    assert _result(capsys, text, "--to", "bool").split()[1] == "True"


@pytest.mark.parametrize("text", ["0", "-0", "0/7", "0x0p+0"])
def test_bool_of_zero_is_false(capsys, text):
    assert er.round_to(0.0, "bool").array.tolist() is False
    assert _result(capsys, text, "--to", "bool").split()[1] == "False"


def test_bool_ignores_the_rounding_mode(capsys):
    assert er.round_to(0.1, "bool", rounding=er.Rounding.TOWARD_ZERO).array.tolist() is True
    line = _result(capsys, "0.1", "--to", "bool", "--rounding", "toward_zero")
    assert line.split()[1] == "True"


def test_complex_rounds_both_parts_and_shows_them():
    text = round_report("0.1+0.2j", "complex64")
    assert "real inexact  yes" in text and "imag inexact  yes" in text
    exact = [er.asarray(v, "float32").value() for v in (0.1, 0.2)]
    parts = [float(v) for v in exact]
    last = text.splitlines()[-1]
    assert last.startswith(f"result        complex({exact[0].hex()}, {exact[1].hex()}) = "
                           f"{complex(*parts)!r}")
    assert f"imag result   {parts[1]!r}" in text and f"real result   {parts[0]!r}" in text


def test_a_real_value_into_a_complex_format_shows_the_zero_imaginary_part():
    text = round_report("0.1", "complex64")
    assert "imag result   0.0" in text and "imag inexact  no" in text
    assert text.splitlines()[-1].startswith("result        complex(0x1.99999ap-4, 0x0p+0)")


@pytest.mark.parametrize("text", ["0.1 + 0.2j", "(0.1+0.2j)", "0.1+0.2J", " 0.1 +0.2j ",
                                  "( 0.1 + 0.2j )"])
def test_complex_spellings(text):
    assert parse_complex(text) == ((Fraction(1, 10), False), (Fraction(1, 5), False))


@pytest.mark.parametrize("text", ["-1e-3", "-0x1p-3", "-inf", "-1/3", "-0.1-0.2j"])
def test_a_negative_value_is_a_value_not_an_option(capsys, text):
    """argparse reads '-1e-3' as an unknown option; the value of round is one."""
    to = "complex64" if "j" in text else "float16"
    assert main(["round", text, "--to", to]) == 0
    assert capsys.readouterr().out.startswith("exact value")
    assert main(["round", "--to", to, text]) == 0
    assert capsys.readouterr().out.startswith("exact value")


@pytest.mark.parametrize("fmt", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"])
def test_nan_into_a_format_without_nan_is_undefined_not_nan(capsys, fmt):
    """float6/float4 have no NaN: the report says the value has no encoding (as
    er.round_to's undefined flag), never 'nan'."""
    line = _result(capsys, "nan", "--to", fmt)
    assert "undefined" in line and f"{fmt} has no NaN" in line and "nan " not in line
    assert er.round_to(float("nan"), fmt).undefined.tolist() is True
    assert _result(capsys, "nan", "--to", "float8_e4m3fn").split()[1] == "nan"
