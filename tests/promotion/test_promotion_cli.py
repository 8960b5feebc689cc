"""``exactref promotion`` table / diff / explain, checked against golden files."""

from __future__ import annotations

import pytest

from exactref.cli import main


def _numpy_suffix(*policies) -> str:
    """The numpy policy follows the installed ml_dtypes: its golden files are per minor."""
    if "numpy" not in policies:
        return ""
    import ml_dtypes

    from exactref._versions import minor_name

    return f"_ml_dtypes_{minor_name(ml_dtypes.__version__)}"


def run(capsys, *argv):
    code = main(["promotion", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("policy", ["torch", "numpy", "jax", "jax_x64", "array_api", "aclnn",
                                    "kael"])
def test_table(capsys, golden, policy):
    code, out, _ = run(capsys, "table", "--policy", policy)
    assert code == 0
    golden(f"table_{policy}{_numpy_suffix(policy)}.txt", out)


def test_table_markdown_and_op(capsys, golden):
    code, out, _ = run(capsys, "table", "--policy", "kael", "--markdown", "--op", "add")
    assert code == 0 and "| dtype | b | i64 | f32 | f64 |" in out
    golden("table_kael_add.md", out)


@pytest.mark.parametrize("policy,op", [("numpy", "sqrt"), ("jax", "abs"), ("torch", "clamp"),
                                       ("aclnn", "fma")])
def test_table_unary_and_ternary(capsys, golden, policy, op):
    """One operand: a column per dtype and the Python scalars alone; three operands: the row
    is the first, the column the other two."""
    code, out, _ = run(capsys, "table", "--policy", policy, "--op", op)
    assert code == 0
    assert (f"{op} of an array with dimensions" in out) == (op in ("sqrt", "abs"))
    golden(f"table_{policy}_{op}{_numpy_suffix(policy)}.txt", out)


@pytest.mark.parametrize("p,q,op", [("torch", "kael", "add"), ("torch", "numpy", None),
                                    ("torch", "jax", "sqrt"), ("torch", "kael", "fma"),
                                    ("aclnn", "torch", "maximum"),
                                    ("torch", "jax", None), ("aclnn", "torch", None),
                                    ("numpy", "array_api", "div")])
def test_diff(capsys, golden, p, q, op):
    code, out, _ = run(capsys, "diff", p, q, *(["--op", op] if op else []))
    assert code == 0 and out.startswith(f"{p} vs {q}")
    golden(f"diff_{p}_{q}{'_' + op if op else ''}{_numpy_suffix(p, q)}.txt", out)


def test_explain(capsys, golden):
    code, out, _ = run(capsys, "explain", "int64[3]", "0.5", "--policy", "kael")
    assert code == 0 and out.rstrip().endswith("result: float32")
    golden("explain_kael_int64_half.txt", out)
    code, out, _ = run(capsys, "explain", "int8[3]", "float64[]", "1j")
    golden("explain_torch_three_tiers.txt", out)
    code, out, _ = run(capsys, "explain", "uint16[3]", "int8[3]")
    assert "error: PromotionError" in out
    golden("explain_torch_error.txt", out)


def test_errors_and_help(capsys):
    code, _, err = run(capsys, "explain", "int8[3]", "--policy", "tensorflow")
    assert code == 4 and "unknown promotion policy" in err
    code, out, _ = run(capsys)
    assert code == 4 and "table" in out
