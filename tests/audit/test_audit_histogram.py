"""The audit's error histogram in ulps (issue 12): the distance of each output from the exact
rounding, bucketed per group and per (op, result format); its JSON fields, its tables, and
``--plot``. The kernels' expected counts come from numpy's float64 arithmetic on the operands
the kernel saw, not from exactref."""

from __future__ import annotations

import io
import json
import pathlib
import re
import sys

import ml_dtypes
import numpy as np
import pytest

from exactref._formats import FORMATS
from exactref.audit import BUCKETS, SCHEMA, AuditConfig, UlpHistogram, run_audit
from exactref.audit._histogram import distances
from exactref.cli import main
from exactref.cli._audit import format_report, print_report

HERE = pathlib.Path(__file__).parent
F32_MAX = float(np.finfo(np.float32).max)
ULP1 = 2.0**-23  # float32's spacing at 1


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


@pytest.fixture
def kernels():
    import wrong_kernels

    wrong_kernels.CALLS.clear()
    yield wrong_kernels
    wrong_kernels.CALLS.clear()


def _audit(kernel, dtypes=("float32",), kinds=("same",), samples=256):
    return run_audit(AuditConfig(target=f"wrong_kernels:{kernel}", op_name="add",
                                 ops=("add",), dtypes=dtypes, kinds=kinds, samples=samples))


def _correct_sum(x, y):
    """The oracle: the float64 sum rounded into the result dtype (correct for float16/32)."""
    with np.errstate(all="ignore"):
        return (x.astype(np.float64) + y.astype(np.float64)).astype(np.result_type(x, y))


# ----------------------------------------------------------------------- one element
def _bucket_of(fmt, actual, reference):
    dt = FORMATS[fmt].np_dtype
    h = UlpHistogram.of(np.array([actual], dt), np.array([reference], dt), FORMATS[fmt])
    assert h.cases == 1
    return BUCKETS[h.counts.index(1)], h.max_ulps


@pytest.mark.parametrize("fmt, actual, reference, bucket, ulps", [
    ("float32", 1.0, 1.0, "0", 0),
    ("float32", 1 + ULP1, 1.0, "<=1", 1),
    ("float32", 1 - ULP1 / 2, 1.0, "<=0.5", 0.5),  # a step below a power of two: half a gap
    ("float32", 1.0, 1 - ULP1 / 2, "<=1", 1),  # ... and up from below: the smaller gap
    ("float32", 1 + 2 * ULP1, 1.0, "<=2", 2),
    ("float32", 1 - 3 * ULP1 / 2, 1.0, "<=2", 1.5),  # three of the gaps below 1
    ("float32", 1 + 3 * ULP1, 1.0, "<=4", 3),
    ("float32", 1 + 1024 * ULP1, 1.0, "<=1024", 1024),
    ("float32", 1 + 1025 * ULP1, 1.0, ">1024", 1025),
    ("float32", 2.0**-149, 0.0, "<=1", 1),  # the subnormal spacing at zero
    ("float32", -(2.0**-149) * 3, 2.0**-149, "<=4", 4),
    ("float32", -0.0, 0.0, "0", 0),  # the table's exact %: a zero of either sign
    ("float32", np.nan, np.nan, "0", 0),
    ("float32", np.inf, np.inf, "0", 0),
    ("float32", -np.inf, np.inf, "nonfinite", 0),
    ("float32", np.inf, F32_MAX, "nonfinite", 0),  # an overflow the exact value does not have
    ("float32", F32_MAX, np.inf, "nonfinite", 0),
    ("float32", np.nan, 1.0, "nonfinite", 0),
    ("float32", 1.0, np.nan, "nonfinite", 0),
    ("float16", 3 * 2.0**-24, 2.0**-24, "<=2", 2),
    ("float16", 65504.0, 65472.0, "<=1", 1),  # 65472 + its gap of 32
    ("bfloat16", 1 + 2.0**-7, 1.0, "<=1", 1),
    ("float8_e4m3fn", 448.0, 416.0, "<=1", 1),
    ("float8_e8m0fnu", 2.0**-126, 2.0**-127, "<=1", 1),  # no zero, no subnormals
    ("int8", 5, 3, "<=2", 2),
    ("int8", -128, 127, "<=256", 255),
    ("uint64", 2**64 - 1, 0, ">1024", float(2**64 - 1)),  # no wrap, no int64 overflow
    ("int64", -2**63, 2**63 - 1, ">1024", float(2**64 - 1)),
    ("bool", True, False, "<=1", 1),
    # float64's -max and max: the difference overflows, the distance 2**54 - 2 does not
    ("float64", -sys.float_info.max, sys.float_info.max, ">1024", 2.0**54 - 2),
])
def test_each_distance_falls_in_its_bucket(fmt, actual, reference, bucket, ulps):
    assert _bucket_of(fmt, actual, reference) == (bucket, ulps)


def test_a_distance_past_float64_is_the_largest_float64():
    """1.0 where the reference is 0: 2**1074 ulps of float64, past every float64."""
    assert _bucket_of("float64", 1.0, 0.0) == (">1024", sys.float_info.max)


@pytest.mark.parametrize("actual, bucket", [
    (complex(1 + ULP1, 1), "<=1"),
    (complex(1 + ULP1, 1 + 4 * ULP1), "<=4"),  # the larger part's distance
    (complex(np.nan, 1), "nonfinite"),
    (complex(1, np.inf), "nonfinite"),
    (complex(1, 1), "0"),
])
def test_a_complex_element_is_as_far_as_its_farther_part(actual, bucket):
    assert _bucket_of("complex64", actual, complex(1, 1))[0] == bucket


def test_an_output_of_another_dtype_is_measured_in_the_result_format():
    """float32's 1 + 2**-23 where the reference is bfloat16's 1: 1/65536 of bfloat16's gap."""
    d = distances(np.array([1 + ULP1, 1.0], np.float32),
                  np.array([1.0, 1.0], ml_dtypes.bfloat16), FORMATS["bfloat16"])
    assert d.tolist() == [2.0**-16, 0.0]


def test_histograms_add_up():
    a = UlpHistogram.from_distances([0, 0, 1, np.nan])
    b = UlpHistogram.from_distances([3, 0.25])
    s = a + b
    assert s.as_dict() == {"0": 2, "<=0.5": 1, "<=1": 1, "<=4": 1, "nonfinite": 1}
    assert (s.cases, s.exact, s.within_half, s.nonfinite, s.max_ulps) == (6, 2, 3, 1, 3.0)


# ----------------------------------------------------------------------- kernels
def _expected_one_ulp_away(x, y) -> dict:
    r = _correct_sum(x, y)
    top = np.isfinite(r) & (np.abs(r) == np.finfo(r.dtype).max)  # moved onto an infinity
    same = ~np.isfinite(r)  # NaN and infinities stay
    counts = {"0": int(np.count_nonzero(same)), "<=1": int(np.count_nonzero(~same & ~top)),
              "nonfinite": int(np.count_nonzero(top))}
    return {k: v for k, v in counts.items() if v}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_kernel_one_ulp_off_everywhere(kernels, dtype):
    report = _audit("add_one_ulp_away", dtypes=(dtype,))
    (g,) = report.groups
    (x, y), = kernels.CALLS
    expected = _expected_one_ulp_away(x, y)
    assert expected.get("<=1", 0) > 200  # most of the corpus is finite
    assert g.histogram.as_dict() == expected
    assert g.histogram.max_ulps == 1.0
    assert g.status == "fail" and g.histogram.exact == g.exact  # the table's exact %


def test_an_exact_kernel(kernels):
    report = _audit("add_exact", dtypes=("float32", "float16"), kinds=("same", "mixed"))
    assert [g.status for g in report.groups] == ["pass"] * 3
    for g in report.groups:
        assert g.histogram.as_dict() == {"0": g.cases} and g.histogram.max_ulps == 0
    assert len(kernels.CALLS) == 3


def test_a_kernel_that_returns_nan(kernels):
    (g,) = _audit("add_nan").groups
    (x, y), = kernels.CALLS
    nan = int(np.count_nonzero(np.isnan(_correct_sum(x, y))))
    assert 0 < nan < g.cases
    assert g.histogram.as_dict() == {"0": nan, "nonfinite": g.cases - nan}
    assert g.histogram.max_ulps == 0.0  # non-finite mismatches are counted, not measured


def test_groups_sum_into_their_op_and_result_format(kernels):
    """float16 + float32 and float32 + float32 both give float32: one row of two groups."""
    report = _audit("add_one_ulp_away", dtypes=("float32", "float16"), kinds=("same", "mixed"))
    by_result: dict = {}
    for g, (x, y) in zip(report.groups, kernels.CALLS, strict=True):
        assert g.expected_dtype == str(np.result_type(x, y))
        assert g.histogram.as_dict() == _expected_one_ulp_away(x, y)
        by_result.setdefault(g.expected_dtype, []).append(g.histogram)
    rows = {dt: (n, h) for op, dt, n, h in report.accuracy()}
    assert sorted(rows) == ["float16", "float32"]
    for dt, hs in by_result.items():
        n, h = rows[dt]
        assert n == len(hs) == (2 if dt == "float32" else 1)
        assert h.counts == [sum(c) for c in zip(*(g.counts for g in hs), strict=True)]


def test_a_group_that_compared_nothing_has_no_histogram(kernels):
    (g,) = _audit("returns_none").groups
    assert g.status == "fail" and g.histogram is None
    assert g.to_json()["ulp_histogram"] is None and g.to_json()["max_error_ulps"] is None
    report = _audit("returns_none")
    assert report.accuracy() == [] and "accuracy (" not in format_report(report)


# ----------------------------------------------------------------------- JSON
def test_the_json_report_carries_the_histograms(kernels, tmp_path, capsys):
    path = tmp_path / "audit.json"
    rc = main(["audit", "wrong_kernels:add_one_ulp_away", "--op", "add", "--dtypes",
               "float32,float16", "--kinds", "same,mixed", "--no-progress", "--json",
               str(path)])
    assert rc == 1, capsys.readouterr().out
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA == "exactref.audit/3"
    assert data["ulp_buckets"] == list(BUCKETS)
    for g, (x, y) in zip(data["groups"], kernels.CALLS, strict=True):
        assert list(g["ulp_histogram"]) == list(BUCKETS)  # every bucket, in order
        assert sum(g["ulp_histogram"].values()) == g["cases"]
        assert {k: v for k, v in g["ulp_histogram"].items() if v} == \
            _expected_one_ulp_away(x, y)
        assert g["max_error_ulps"] == 1.0
    acc = {(a["op"], a["dtype"]): a for a in data["accuracy"]}
    assert sorted(acc) == [("add", "float16"), ("add", "float32")]
    f32 = acc[("add", "float32")]
    assert f32["groups"] == 2 and f32["max_error_ulps"] == 1.0
    groups32 = [g for g in data["groups"] if g["expected_dtype"] == "float32"]
    assert f32["cases"] == sum(g["cases"] for g in groups32)
    assert f32["ulp_histogram"] == {b: sum(g["ulp_histogram"][b] for g in groups32)
                                    for b in BUCKETS}


def test_diff_says_when_the_error_grew(tmp_path, capsys):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    args = ["--op", "add", "--dtypes", "float32", "--kinds", "same", "--no-progress"]
    assert main(["audit", "wrong_kernels:add_exact", *args, "--json", str(old)]) == 0
    assert main(["audit", "wrong_kernels:add_one_ulp_away", *args, "--json", str(new)]) == 1
    capsys.readouterr()
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "max_error_ulps 0.0 -> 1.0" in out
    # a report of the previous schema has no max_error_ulps: still comparable
    data = json.loads(old.read_text())
    data["schema"] = "exactref.audit/2"
    for g in data["groups"]:
        del g["ulp_histogram"], g["max_error_ulps"]
    old.write_text(json.dumps(data))
    assert main(["diff", str(old), str(new)]) == 1
    assert "max_error_ulps" not in capsys.readouterr().out


# ----------------------------------------------------------------------- tables
def _table(text, title="accuracy ("):
    """The lines of the table under ``title``, up to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    block = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        block.append(line)
    return block


def test_the_accuracy_table(kernels):
    report = _audit("add_one_ulp_away", dtypes=("float32", "float16"))
    text = format_report(report)
    header, *rows = _table(text)
    assert header.split("  ")[0] == "op"
    for name in ("result", "exact %", "<=0.5 ulp %", "max error ulps", "nonfinite"):
        assert name in header
    cells = {r.split()[1]: r.split() for r in rows}
    assert sorted(cells) == ["float16", "float32"]
    for g in report.groups:
        row = cells[g.expected_dtype]
        h = g.histogram
        assert row[:4] == ["add", g.expected_dtype, "1", str(g.cases)]
        assert row[4] == row[5] == f"{100 * h.exact / h.cases:.1f}"
        assert row[6:] == ["1", str(h.nonfinite)]
    assert text.splitlines()[-1] == "0 passed, 2 failed"  # still the last line


def test_formats_all_exact_share_a_row(kernels):
    report = _audit("add_exact", dtypes=("float32", "float16", "bfloat16"))
    (row,) = _table(format_report(report))[1:]
    assert row.split()[:6] == ["add", "all", "3", "formats", "3", str(3 * 256)]
    report = _audit("add_one_ulp_away", dtypes=("float32",), kinds=("same",))
    report.groups += _audit("add_exact", dtypes=("float16", "bfloat16")).groups
    rows = _table(format_report(report))[1:]
    assert [r.split()[1] for r in rows] == ["float32", "the"]
    assert "the other 2 formats" in rows[1]


def test_histogram_prints_every_bucket(kernels, capsys):
    rc = main(["audit", "wrong_kernels:add_one_ulp_away", "--op", "add", "--dtypes",
               "float32", "--kinds", "same", "--no-progress", "--histogram"])
    out = capsys.readouterr().out
    assert rc == 1
    header, row = _table(out)
    assert header.split() == ["op", "result", "cases", *BUCKETS, "max", "error", "ulps"]
    (x, y), = kernels.CALLS
    expected = _expected_one_ulp_away(x, y)
    counts = row.split()[3:3 + len(BUCKETS)]
    assert counts == [str(expected[b]) if b in expected else "." for b in BUCKETS]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("histogram", [False, True])
def test_a_terminal_shows_the_accuracy_table(kernels, monkeypatch, histogram):
    monkeypatch.setenv("COLUMNS", "100")
    out = _Terminal()
    print_report(_audit("add_one_ulp_away", dtypes=("float32", "float16")), file=out,
                 histogram=histogram)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    table = _table(text)
    if not histogram:  # the compact table fits; the full one keeps whole rows instead
        assert all(len(line) <= 100 for line in table), table
    assert {line.split()[1] for line in table if line.startswith("add")} == {"float16",
                                                                              "float32"}
    assert "nonfinite" in "\n".join(table)


# ----------------------------------------------------------------------- --plot
def test_plot_writes_a_png(kernels, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "hist.png"
    rc = main(["audit", "wrong_kernels:add_one_ulp_away", "--op", "add", "--dtypes",
               "float32,float16", "--kinds", "same", "--samples", "64", "--no-progress",
               "--plot", str(png)])
    assert rc == 1, capsys.readouterr().out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_of_nothing_compared_still_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    png = tmp_path / "none.png"
    assert main(["audit", "wrong_kernels:returns_none", "--op", "add", "--dtypes", "float32",
                 "--kinds", "same", "--no-progress", "--plot", str(png)]) == 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_usage_error_before_the_audit(monkeypatch, tmp_path,
                                                                   capsys):
    import exactref.audit

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)

    def no_audit(*args, **kwargs):
        raise AssertionError("the audit ran before the missing matplotlib was reported")

    monkeypatch.setattr(exactref.audit, "run_audit", no_audit)
    png = tmp_path / "x.png"
    rc = main(["audit", "numpy", "--dtypes", "float16", "--kinds", "same", "--no-progress",
               "--plot", str(png)])
    captured = capsys.readouterr()
    assert rc == 4
    assert "--plot needs matplotlib" in captured.err
    assert "pip install 'exactref[plot]'" in captured.err
    assert captured.out == "" and not png.exists()


# ----------------------------------------------------------------------- the samples
ROOT = HERE.parents[1]


@pytest.fixture(scope="module")
def default_audit(default_audit_output) -> list:
    """What ``exactref audit`` (numpy, add and multiply, seed 0) prints, as lines (run once
    per session: tests/conftest.py)."""
    rc, lines = default_audit_output
    assert rc == 0
    return lines


@pytest.mark.parametrize("name", ["README.md", "docs/audit.md"])
def test_the_samples_accuracy_rows_are_what_the_default_audit_prints(name, default_audit):
    """tests/test_readme_sample.py checks the groups' rows; this, the accuracy table's."""
    import re

    import ml_dtypes

    text = (ROOT / name).read_text()
    block = text[text.index("```text\nexactref audit numpy: seed 0"):]
    # the accuracy rows are the result formats' numpy gives, which ml_dtypes changes (0.7
    # registers its promotion with numpy): a sample is checked under the version it shows
    recorded = re.search(r"^versions: .*ml_dtypes ([^,\s]+)", block[:block.index("```", 8)],
                         re.M)
    if recorded is None or recorded.group(1) != ml_dtypes.__version__:
        pytest.skip(f"{name}'s sample shows ml_dtypes "
                    f"{recorded.group(1) if recorded else '(none)'}; ml_dtypes "
                    f"{ml_dtypes.__version__} is installed (re-record the sample under it)")
    sample = _table(block)
    shown = [line for line in sample if line != "..."]
    assert len(shown) >= 3 and shown[0].startswith("op ")
    missing = [line for line in shown if line not in default_audit]
    assert not missing, f"{name}: these accuracy lines are not in today's output: {missing}"
