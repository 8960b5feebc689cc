"""Ascend aclnn's dtype derivation: its tensor-tensor and tensor-scalar tables, verbatim.

Sources: the CANN operator documentation, page "互推导关系" (mutual derivation): the Tensor-Tensor
table (aclnnAdd, aclnnMul, ... with two aclTensor inputs) and the Tensor-Scalar table
(aclnnAdds, aclnnMuls, ... with an aclScalar); and "互转换关系" (mutual conversion), which says
which derived dtype may be stored into which output dtype. Both tables are copied below as
they are printed, ``x`` meaning "cannot be derived" (the API rejects the pair).

Note the orientation of the tensor-scalar table: its rows are the SCALAR dtype and its columns
the TENSOR dtype; it is not symmetric (a float16 tensor with a float32 scalar computes in
float16, a float32 tensor with a float16 scalar in float32).

Choices where the documents are silent (marked ``# Note:``):

* A Python scalar is an aclScalar of the dtype the C++ ``at::Scalar`` carries, as torch_npu
  passes it: bool -> ACL_BOOL, int -> ACL_INT64, float -> ACL_DOUBLE, complex ->
  ACL_COMPLEX128. Pass :class:`~exactref.promotion.Scalar` to choose another dtype.
* A 0-d tensor is an aclTensor: the tensor-tensor table applies.
* More than two operands fold left to right: the tensors with the tensor-tensor table, then each
  scalar with the tensor-scalar table. Two scalars and no tensor are rejected.
* The tables cover add, sub and mul (and their ``s`` forms); comparisons compare in the derived
  dtype and output bool. div, floor_divide, remainder, pow, bitwise and logical ops are not
  covered by these tables and raise.
* maximum, minimum, fmax, fmin and fmod (aclnnMaximum, aclnnMinimum, aclnnFmodTensor and
  aclnnFmodScalar) take the same tables: the tensor-tensor table for tensors, the tensor-scalar
  table for a scalar (an assumption: their pages do not print a table of their own).
* addcmul, addcdiv and clamp (aclnnAddcmul, aclnnAddcdiv, aclnnClamp with aclScalar bounds,
  aclnnClampTensor) fold their tensors with the tensor-tensor table and their scalars with the
  tensor-scalar table, as above.
* One operand: sqrt, rsqrt, reciprocal, abs and negative keep a floating (or complex) tensor's
  dtype. For an integer or bool tensor the documents of aclnnSqrt and aclnnReciprocal accept
  the input but let the caller choose a floating ``out`` dtype: the result is unspecified
  (torch_npu passes float32; use policy="torch"). abs of complex and of bool, and negative of
  bool, are not documented: unspecified too.
* atan2 (aclnnAtan2) derives its dtype by the tables as the binary ops do, then follows the
  rule of the real functions (the aliases of sqrt): a floating derived dtype is kept; for an
  integer or bool one the output dtype is the caller's, unspecified; complex is unspecified
  too (atan2 is a real function). The reference copied here has no page for aclnnAtan2.
* fma has no aclnn op: it is the dtype of ``x * y + z``, aclnnMul then aclnnAdd.

>>> import exactref as er
>>> er.result_type("float16[3]", er.Scalar(2.5, "float32"), policy="aclnn")
exactref.float16
>>> er.result_type("float32[3]", er.Scalar(2.5, "float16"), policy="aclnn")
exactref.float32
"""

from __future__ import annotations

from .._formats import FORMATS, Format
from ._engine import Policy, Resolution, Trace, register
from ._operands import Operand
from ._ops import OPS

__all__ = ["AclnnPolicy", "TENSOR_TENSOR", "TENSOR_SCALAR", "CONVERSION"]

SOURCE = "CANN aclnn documentation, 互推导关系 (Tensor-Tensor and Tensor-Scalar tables)"
CHECKED = "the tables as published, copied verbatim into tests/promotion/test_promotion_aclnn.py"

#: The documents' abbreviations.
ABBREV = {
    "f32": "float32", "f16": "float16", "f64": "float64", "bf16": "bfloat16", "s8": "int8",
    "u8": "uint8", "s16": "int16", "u16": "uint16", "s32": "int32", "u32": "uint32",
    "s64": "int64", "u64": "uint64", "bool": "bool", "c32": "complex32", "c64": "complex64",
    "c128": "complex128",
}
_SHORT = {v: k for k, v in ABBREV.items()}

#: Tensor-Tensor: row and column are the two input dtypes (symmetric).
TENSOR_TENSOR = """
| dtype | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | bool | c32 | c64 | c128 |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| f32 | f32 | f32 | f64 | f32 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c64 | c64 | c128 |
| f16 | f32 | f16 | f64 | f32 | f16 | f16 | f16 | x | f16 | x | f16 | x | f16 | c32 | c64 | c128 |
| f64 | f64 | f64 | f64 | f64 | f64 | f64 | f64 | x | f64 | x | f64 | x | f64 | c128 | c128 | c128 |
| bf16 | f32 | f32 | f64 | bf16 | bf16 | bf16 | bf16 | x | bf16 | x | bf16 | x | bf16 | c32 | c64 | c128 |
| s8 | f32 | f16 | f64 | bf16 | s8 | s16 | s16 | x | s32 | x | s64 | x | s8 | c32 | c64 | c128 |
| u8 | f32 | f16 | f64 | bf16 | s16 | u8 | s16 | x | s32 | x | s64 | x | u8 | c32 | c64 | c128 |
| s16 | f32 | f16 | f64 | bf16 | s16 | s16 | s16 | x | s32 | x | s64 | x | s16 | c32 | c64 | c128 |
| u16 | x | x | x | x | x | x | x | u16 | x | x | x | x | x | x | x | x |
| s32 | f32 | f16 | f64 | bf16 | s32 | s32 | s32 | x | s32 | x | s64 | x | s32 | c32 | c64 | c128 |
| u32 | x | x | x | x | x | x | x | x | x | u32 | x | x | x | x | x | x |
| s64 | f32 | f16 | f64 | bf16 | s64 | s64 | s64 | x | s64 | x | s64 | x | s64 | c32 | c64 | c128 |
| u64 | x | x | x | x | x | x | x | x | x | x | x | u64 | x | x | x | x |
| bool | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | x | s32 | x | s64 | x | bool | c32 | c64 | c128 |
| c32 | c64 | c32 | c128 | c32 | c32 | c32 | c32 | x | c32 | x | c32 | x | c32 | c32 | c64 | c128 |
| c64 | c64 | c64 | c128 | c64 | c64 | c64 | c64 | x | c64 | x | c64 | x | c64 | c64 | c64 | c128 |
| c128 | c128 | c128 | c128 | c128 | c128 | c128 | c128 | x | c128 | x | c128 | x | c128 | c128 | c128 | c128 |
"""

#: Tensor-Scalar: ROWS are the SCALAR dtype, COLUMNS the TENSOR dtype.
TENSOR_SCALAR = """
| Data Type | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | bool | c32 | c64 | c128 |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| f32 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c32 | c64 | c128 |
| f16 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c32 | c64 | c128 |
| f64 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c128 | c128 | c128 |
| bf16 | f32 | f16 | f64 | bf16 | f32 | f32 | f32 | x | f32 | x | f32 | x | f32 | c32 | c64 | c128 |
| s8 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s8 | c32 | c64 | c128 |
| u8 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | u8 | c32 | c64 | c128 |
| s16 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s16 | c32 | c64 | c128 |
| u16 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | x | c32 | c64 | c128 |
| s32 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s32 | c32 | c64 | c128 |
| u32 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | x | c32 | c64 | c128 |
| s64 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | s64 | c32 | c64 | c128 |
| u64 | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | x | c32 | c64 | c128 |
| bool | f32 | f16 | f64 | bf16 | s8 | u8 | s16 | u16 | s32 | u32 | s64 | u64 | bool | c32 | c64 | c128 |
| c32 | c64 | c32 | c128 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c32 | c64 | c128 |
| c64 | c64 | c32 | c128 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c32 | c64 | c128 |
| c128 | c64 | c32 | c128 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c64 | c32 | c64 | c128 |
"""

#: 互转换关系: which derived dtype kinds may be converted into which output kinds.
CONVERSION = {
    "int": ("int", "uint", "float", "complex"),
    "uint": ("int", "uint", "float", "complex"),
    "float": ("float", "complex"),
    "complex": ("complex",),
    "bool": ("int", "uint", "float", "complex"),
}

#: Note: the dtype of a Python scalar's aclScalar (what at::Scalar carries).
PYTHON_SCALAR = {"bool": "bool", "int": "int64", "float": "float64", "complex": "complex128"}

#: families the tables cover; comparisons output bool after deriving the compute dtype.
COVERED = ("add", "sub", "mul", "equality", "ordering", "fmod", "extremum", "fextremum",
           "addcmul", "addcdiv", "clamp", "root", "reciprocal", "abs", "negative",
           "float_function2")
#: Note: ops whose result the documents leave to the caller for these kinds of the derived
#: dtype. atan2 (aclnnAtan2) is the real functions' rule on the tensor-tensor table: exactref's
#: reference has no page for it.
UNARY_UNSPECIFIED = {"root": ("bool", "int", "uint"), "reciprocal": ("bool", "int", "uint"),
                     "abs": ("bool", "complex"), "negative": ("bool",),
                     "float_function2": ("bool", "int", "uint", "complex")}


def parse_markdown_table(text: str) -> tuple[list, list, dict]:
    """Rows, columns and cells of a markdown table in the documents' abbreviations."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    cols = header[1:]
    rows, cells = [], {}
    for ln in lines[2:]:
        parts = [c.strip() for c in ln.strip("|").split("|")]
        rows.append(parts[0])
        for c, v in zip(cols, parts[1:], strict=True):
            cells[parts[0], c] = v
    return rows, cols, cells


def _to_formats(cells: dict) -> dict:
    return {(ABBREV[r], ABBREV[c]): (None if v == "x" else ABBREV[v]) for (r, c), v in
            cells.items()}


_TT = _to_formats(parse_markdown_table(TENSOR_TENSOR)[2])
_TS = _to_formats(parse_markdown_table(TENSOR_SCALAR)[2])  # (scalar, tensor) -> derived


class AclnnPolicy(Policy):
    name = "aclnn"
    title = "Ascend aclnn: the Tensor-Tensor and Tensor-Scalar derivation tables"
    source = SOURCE
    checked = CHECKED
    formats = tuple(FORMATS[ABBREV[a]] for a in parse_markdown_table(TENSOR_TENSOR)[0])
    cast_spelling = "aclnnCast({x}, {t})"
    symmetric = True

    def cast_name(self, fmt: Format) -> str:
        return fmt.acl_name

    def label(self, fmt: Format) -> str:
        return f"{fmt.acl_name} ({_SHORT[fmt.name]})"

    def scalar_columns(self) -> list:
        from ._operands import Scalar
        return [Scalar(0, f) for f in self.formats]

    def tensor_tensor(self, a: Format, b: Format, op, trace: Trace) -> Format:
        out = _TT[a.name, b.name]
        if out is None:
            raise self.error(f"the Tensor-Tensor table has x for {a.name} and {b.name}",
                             dtypes=(a, b), op=op,
                             library_error=("ACLNN_ERR_PARAM_INVALID", "(dtype not supported)"))
        trace.step(f"Tensor-Tensor table: {_SHORT[a.name]} with {_SHORT[b.name]} -> "
                   f"{_SHORT[out]}")
        return FORMATS[out]

    def tensor_scalar(self, t: Format, s: Format, op, trace: Trace) -> Format:
        out = _TS[s.name, t.name]
        if out is None:
            raise self.error(f"the Tensor-Scalar table has x for a {t.name} tensor with a "
                             f"{s.name} scalar", dtypes=(t, s), op=op,
                             library_error=("ACLNN_ERR_PARAM_INVALID", "(dtype not supported)"),
                             remedy="pass the scalar as another dtype, or cast the tensor")
        trace.step(f"Tensor-Scalar table (row: scalar {_SHORT[s.name]}, column: tensor "
                   f"{_SHORT[t.name]}) -> {_SHORT[out]}")
        return FORMATS[out]

    def _scalar_format(self, i: int, o: Operand, op, trace: Trace) -> Format:
        if o.tier == "typed":
            f = self.known(o.format, op)
            trace.note(i, f"aclScalar of dtype {f.acl_name}")
            return f
        f = FORMATS[PYTHON_SCALAR[o.pykind]]
        trace.note(i, f"aclScalar of dtype {f.acl_name} (what at::Scalar carries for a Python "
                      f"{o.pykind})")
        return f

    def _resolve(self, operands, op, trace) -> Resolution:
        fam = OPS[op] if op is not None else None
        if fam is not None and fam not in COVERED:
            raise self.error(f"the aclnn derivation tables do not cover {op}", op=op,
                             reason="unspecified", suggest=False,
                             remedy="use policy='torch' (torch_npu's rules) or cast the "
                                    "operands to one dtype")
        tensors, scalars = [], []
        for i, o in enumerate(operands):
            if o.tier == "array":
                f = self.known(o.format, op)
                trace.note(i, f"aclTensor of dtype {f.acl_name}")
                tensors.append(f)
            else:
                scalars.append(self._scalar_format(i, o, op, trace))
        if not tensors:
            raise self.error("aclnn ops take at least one aclTensor", op=op, suggest=False,
                             reason="unsupported", remedy="make one operand a tensor")
        result = tensors[0]
        for f in tensors[1:]:
            result = self.tensor_tensor(result, f, op, trace)
        for s in scalars:
            result = self.tensor_scalar(result, s, op, trace)
        if len(tensors) == 1 and not scalars:
            trace.step(f"one tensor: {_SHORT[result.name]}")
        if result.kind in UNARY_UNSPECIFIED.get(fam, ()):
            raise self.error(f"the aclnn documents leave {op} of a {result.name} tensor to the "
                             f"caller's out dtype", dtypes=(result,), op=op,
                             reason="unspecified", suggest=False,
                             remedy="cast the tensor to a floating dtype first, or use "
                                    "policy='torch' (torch_npu's rules)")
        if fam in ("equality", "ordering"):
            trace.step(f"{op}: compares in {result.name}, outputs bool")
            return Resolution(FORMATS["bool"], result)
        return Resolution(result, result)

    one_casting_rule = "aclnn has one conversion table (互转换关系); pass casting=None"

    def _can_cast(self, a, b, casting) -> bool:
        return a is b or b.kind in CONVERSION[a.kind]

    def inplace(self, op, target, others, trace) -> Resolution:
        self_fmt = self.known(target.format, op)
        res = self.resolve([target, *others], op, trace)
        if not self.can_cast(res.result, self_fmt):
            raise self.error(
                f"the derived dtype {res.result.name} cannot be converted to self's dtype "
                f"{self_fmt.name} (互转换关系)", dtypes=(res.result, self_fmt), op=op,
                reason="inplace", library_error=("ACLNN_ERR_PARAM_INVALID", None),
                remedy=f"compute out of place into a {res.result.name} output")
        trace.step(f"互转换关系: {res.result.name} converts to {self_fmt.name} on store")
        return res


register("aclnn", AclnnPolicy)
