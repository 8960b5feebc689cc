"""The index of ops: which module declares which names (no imports, so ``import exactref``
stays light; each module registers exactly its names, checked when the registry loads)."""

#: Which module declares which ops (the index; each module registers exactly these names).
CATALOG = {
    "exactref.arithmetic.basic": ("add", "subtract", "multiply", "fma", "addcmul"),
    "exactref.arithmetic.division": ("divide", "floor_divide", "remainder", "fmod",
                                     "reciprocal", "addcdiv"),
    "exactref.arithmetic.roots": ("sqrt", "rsqrt"),
    "exactref.arithmetic.selection": ("abs", "negative", "maximum", "minimum", "fmax", "fmin",
                                      "clamp"),
    "exactref.arithmetic.comparison": ("equal", "not_equal", "less", "less_equal", "greater",
                                       "greater_equal"),
    "exactref.arithmetic.conversion": ("cast",),
    "exactref.linalg._ops": ("matmul", "gemm", "dot", "sum"),
    "exactref.linalg._reductions": ("mean", "var", "std", "cumsum"),
    "exactref.linalg._conv": ("linear", "conv1d", "conv2d"),
    "exactref.linalg._norms": ("layer_norm", "rms_norm", "group_norm"),
    "exactref.linalg._l2_normalize": ("l2_normalize",),
    "exactref.quantize._op": ("quantize",),
    "exactref.quantize._linear": ("quantize_linear", "dequantize_linear"),
    "exactref.linalg._softmax": ("logsumexp", "softmax", "log_softmax"),
    "exactref.linalg._cross_entropy": ("cross_entropy",),
    "exactref.linalg._attention": ("scaled_dot_product_attention",),
    "exactref.arithmetic.functions": ("exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
                                      "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
                                      "cosh", "tanh", "erf", "erfc", "sigmoid", "silu", "mish",
                                      "gelu", "softplus", "logit", "atan2", "pow", "cbrt"),
}


#: Ops registered outside the catalog (``register(spec, extra=True)``): name -> module.
_EXTRA: dict = {}


def catalog_names() -> tuple:
    """The catalog's op names, in catalog order."""
    return tuple(n for names in CATALOG.values() for n in names)


def op_names() -> tuple:
    """Every op name, in catalog order, then those registered outside it (no import needed)."""
    return catalog_names() + tuple(_EXTRA)


def modules() -> dict:
    """Module -> the op names it declares: the catalog, then the ops registered outside it."""
    out = dict(CATALOG)
    for name, module in _EXTRA.items():
        out[module] = out.get(module, ()) + (name,)
    return out


def add_extra(name: str, module: str) -> None:
    _EXTRA[name] = module


def remove_extra(name: str) -> None:
    _EXTRA.pop(name, None)
