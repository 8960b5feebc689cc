"""Dtype promotion under six ecosystems' rules, with the reasons.

``result_type(*operands, policy="torch", op=None)`` answers "what dtype does this mixed
operation produce" under one of the policies; :func:`explain` says why, step by step;
:func:`check_inplace` and :func:`can_cast` answer for in-place operations and stores. A case a
policy rejects raises :class:`PromotionError` (a ``TypeError``) naming the dtypes, the policy,
what the library itself raises and the fix.

=============  ==========================================================================
policy         rules
=============  ==========================================================================
``torch``      PyTorch 2.13: dimensioned tensors, then 0-d tensors, then Python scalars
               (the default; ``get_policy("torch", default_dtype="float64")``)
``numpy``      NumPy 2.4 with NEP 50 weak Python scalars, ml_dtypes 0.6 types included
``jax``        JAX's lattice with weak types, x64 off (``jax_x64``: x64 on)
``array_api``  the Python array API standard 2024.12; what it leaves open raises
``aclnn``      Ascend aclnn's tensor-tensor and tensor-scalar derivation tables
``kael``       kael ADR 0003, exactly
=============  ==========================================================================

>>> import exactref as er
>>> er.result_type("int8[3]", "uint8[3]"), er.result_type("int8[3]", "uint8[3]", policy="aclnn")
(exactref.int16, exactref.int16)
"""

from . import (  # noqa: F401  (register policies)
    _aclnn,
    _array_api,
    _jax,
    _kael,
    _numpy,
    _numpy_installed,
    _torch,
)
from ._engine import (
    POLICY_NAMES,
    Policy,
    Resolution,
    Trace,
    can_cast,
    check_inplace,
    explain,
    get_policy,
    promote_types,
    resolve,
    result_type,
)
from ._errors import PromotionError, PromotionOverflowError
from ._operands import Scalar, operand
from ._ops import ARITY, OPS, TERNARY, UNARY, add_function, arity, canonical_op, family
from ._ops import family as op_family
from ._torch import C10_NAME as TORCH_C10_NAME
from ._torch import CPU_KERNEL_GAPS as TORCH_CPU_KERNEL_GAPS

__all__ = [
    "ARITY",
    "OPS",
    "POLICY_NAMES",
    "Policy",
    "PromotionError",
    "PromotionOverflowError",
    "Resolution",
    "Scalar",
    "TERNARY",
    "Trace",
    "UNARY",
    "add_function",
    "arity",
    "can_cast",
    "canonical_op",
    "check_inplace",
    "explain",
    "family",
    "get_policy",
    "operand",
    "promote_types",
    "resolve",
    "result_type",
    # for exactref.equivalents.torch: c10's dtype names, the CPU kernels torch lacks (by rule
    # family), and an op's rule family
    "TORCH_C10_NAME",
    "TORCH_CPU_KERNEL_GAPS",
    "op_family",
]
