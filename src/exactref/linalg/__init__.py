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

from ._backward import gemm_backward, matmul_backward, sum_backward
from ._bounds import BoundResult, SumModel
from ._conv import conv1d, conv2d, linear, register_conv
from ._norms import group_norm, layer_norm, register_norms, rms_norm
from ._ops import dot, gemm, matmul, register_long_sums, sum
from ._reductions import cumsum, mean, register_reductions, std, var

matmul.backward = matmul_backward
gemm.backward = gemm_backward
sum.backward = sum_backward
register_long_sums()
register_reductions()
register_conv()
register_norms()

__all__ = ["matmul", "gemm", "dot", "sum", "mean", "var", "std", "cumsum", "linear", "conv1d",
           "conv2d", "layer_norm", "rms_norm", "group_norm", "BoundResult", "SumModel"]
