"""Long exact sums: ``matmul``, ``gemm``, ``dot``, ``sum`` and the reductions ``mean``, ``var``,
``std``, ``cumsum``, each element one exact value rounded
once, with a tolerance that bounds the declared implementations (compute format, summation
order, fused or not), and backward passes.

>>> import exactref as er
>>> from exactref import linalg
>>> a = er.asarray([[1.0, 2.0**-24]], "float32")
>>> linalg.matmul(a, er.asarray([[1.0], [1.0]], "float32")).rounded.tolist()
[[1.0]]
>>> linalg.matmul(a, er.asarray([[1.0], [1.0]], "float32"), rounding="up").rounded.tolist()
[[1.0000001192092896]]
"""

from ..ops import names_of as _names_of
from ._backward import gemm_backward, matmul_backward, sum_backward
from ._bounds import BoundResult, ExactResult, SumModel
from ._conv import conv1d, conv2d, linear, register_conv  # noqa: F401  (__all__ from the records)
from ._l2_normalize import l2_normalize  # noqa: F401
from ._norms import group_norm, layer_norm, register_norms, rms_norm  # noqa: F401
from ._ops import _is_one as scalar_is_one
from ._ops import _is_zero as scalar_is_zero
from ._ops import dot, gemm, matmul, register_long_sums, register_matmul_operand, sum  # noqa: F401
from ._reductions import _var_impl as var_kernel
from ._reductions import cumsum, mean, reduction_axes, register_reductions, std, var  # noqa: F401

matmul.backward = matmul_backward
gemm.backward = gemm_backward
sum.backward = sum_backward
register_long_sums()
register_reductions()
register_conv()
register_norms()

# the ops of the modules above, from their records (the row kernels' ops are exactref.<name>)
__all__ = [*_names_of(f"{__name__}._ops"), *_names_of(f"{__name__}._reductions"),
           *_names_of(f"{__name__}._conv"), *_names_of(f"{__name__}._norms"),
           *_names_of(f"{__name__}._l2_normalize"), "BoundResult", "SumModel"]

# the row kernels' entry points the library equivalents call (exactref.equivalents): loaded on
# first use, so that importing linalg does not load the row kernels
_LAZY = {
    "softmax_kernel": ("._softmax", "_run"),
    "softmax_input": ("._softmax", "_input"),
    "softmax_backward_kernel": ("._softmax_backward", "_backward"),
    "attention_kernel": ("._attention", "scaled_dot_product_attention"),
    "attention_shapes": ("._attention", "_shapes"),
    "attention_masks": ("._attention", "_masks"),
    "cross_entropy_kernel": ("._cross_entropy", "_run"),
    "cross_entropy_parse": ("._cross_entropy", "_parse"),
}

__all__ += ["ExactResult", "register_matmul_operand", "var_kernel", "reduction_axes",
            "scalar_is_one", "scalar_is_zero", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'exactref.linalg' has no attribute {name!r}")
