"""Arrays of other libraries in and out: numpy, torch, jax, anything with ``__array__``.

torch and jax are imported lazily, only when a value of theirs arrives or is asked for.

>>> import numpy as np
>>> from exactref.interop import to_numpy
>>> data, fmt = to_numpy(np.float16([1, 2]))
>>> data.dtype.name, fmt
('float16', exactref.float16)
"""

from __future__ import annotations

import sys

import numpy as np

from ._formats import FORMATS, Format, dtype

__all__ = ["is_torch_tensor", "is_array_like", "to_numpy", "to_torch"]

# torch dtypes numpy cannot hold: the integer view torch and numpy share, by storage size
_VIEW_INT = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def is_torch_tensor(x) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def is_array_like(x) -> bool:
    """True for numpy, torch and jax arrays, numpy scalars, and anything with ``__array__``."""
    return isinstance(x, (np.ndarray, np.generic)) or is_torch_tensor(x) or hasattr(
        x, "__array__")


def to_numpy(x) -> tuple[np.ndarray, Format]:
    """``(array, format)`` for a numpy/jax/torch array or numpy scalar, without copying values.

    Values that have no plain array of numbers raise a TypeError that says what to pass:
    torch tensors on the meta device, of a sparse (or other non-strided) layout, nested or
    quantized, and numpy masked arrays with masked elements (their mask would be ignored).

    >>> to_numpy(np.ma.masked_array([1.0, 2.0], mask=[False, True]))
    Traceback (most recent call last):
    ...
    TypeError: a numpy masked array with 1 masked element: exactref reads every value and would ignore the mask; pass arr.filled(fill_value) (a value in place of each masked one) or arr.compressed() (the unmasked values, flattened)
    """
    if is_torch_tensor(x):
        return _torch_to_numpy(x)
    if isinstance(x, np.ma.MaskedArray):
        hidden = int(np.count_nonzero(np.ma.getmaskarray(x)))
        if hidden:
            raise TypeError(
                f"a numpy masked array with {hidden} masked element{'s' * (hidden != 1)}: "
                f"exactref reads every value and would ignore the mask; pass "
                f"arr.filled(fill_value) (a value in place of each masked one) or "
                f"arr.compressed() (the unmasked values, flattened)")
        x = np.ma.getdata(x)  # nothing masked: the values are the data
    arr = np.asarray(x)
    if arr.dtype.byteorder not in ("=", "|"):
        arr = arr.astype(arr.dtype.newbyteorder("="))  # big-endian: the same values, native
    try:
        return arr, dtype(arr.dtype)
    except ValueError:
        raise TypeError(
            f"arrays of dtype {arr.dtype} hold no numbers exactref can round; expected a numeric "
            f"dtype (bool, integers, floats, complex, ml_dtypes formats)") from None


def _check_torch_values(t) -> None:
    """A TypeError for a tensor that holds no plain array of values, saying what to pass."""
    import torch

    if t.device.type == "meta":
        raise TypeError(
            f"a tensor on the meta device (shape {tuple(t.shape)}, {t.dtype}) has a shape but no "
            f"values to compare; run the kernel on a device that computes (cpu, cuda) and pass "
            f"that output")
    if t.is_nested:
        raise TypeError("a nested tensor has no single shape; pass its tensors one by one "
                        "(t.unbind())")
    if t.layout != torch.strided:
        raise TypeError(
            f"a tensor of layout {t.layout} (sparse or blocked): exactref reads dense values; "
            f"pass t.to_dense()")
    if t.is_quantized:
        raise TypeError(
            f"a quantized tensor ({t.dtype}): its values are scale * (q - zero_point); pass "
            f"t.dequantize() for those values, or t.int_repr() for the stored integers")


def _torch_to_numpy(t):
    import torch

    _check_torch_values(t)
    fmt = dtype(t.dtype)
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    t = t.contiguous()
    if fmt.name in ("float64", "float32", "float16", "complex64", "complex128", "bool", "int8",
                    "int16", "int32", "int64", "uint8"):
        return t.numpy(), fmt
    if fmt.kind == "complex":  # complex32: pairs of float16
        parts = torch.view_as_real(t).numpy()
        return np.ascontiguousarray(parts).view(fmt.np_dtype)[..., 0], fmt
    if fmt.kind == "uint":  # uint16/32/64: view through the signed type of the same size
        signed = getattr(torch, _VIEW_INT[fmt.itemsize])
        return t.view(signed).numpy().view(fmt.np_dtype), fmt
    view = getattr(torch, _VIEW_INT[fmt.itemsize])
    return t.view(view).numpy().view(fmt.np_dtype), fmt


def to_torch(data: np.ndarray, fmt: Format, device=None):
    """A torch tensor of ``fmt`` holding ``data`` (bfloat16, float8 and complex32 included)."""
    import torch

    if not fmt.torch_name:
        raise TypeError(
            f"PyTorch has no {fmt.name} dtype; convert to one it has first, for example "
            f"er.asarray(x, 'float32')")
    tdt = getattr(torch, fmt.torch_name)
    data = np.array(data, order="C", copy=True)  # keeps shape () (ascontiguousarray would not)
    if fmt.name in ("float64", "float32", "float16", "complex64", "complex128", "bool", "int8",
                    "int16", "int32", "int64", "uint8"):
        out = torch.from_numpy(data)
    elif fmt.kind == "complex":
        parts = data.reshape(-1).view(FORMATS["float16"].np_dtype).reshape(*data.shape, 2)
        out = torch.view_as_complex(torch.from_numpy(parts.copy()))
    else:
        view = _VIEW_INT[fmt.itemsize]
        out = torch.from_numpy(data.view(view)).view(tdt)
    return out.to(device) if device is not None else out
