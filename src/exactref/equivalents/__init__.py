"""Equivalents: references for what another library's kernels may legitimately compute.

``er.add`` and ``er.multiply`` give the mathematical answer. A library converts its operands,
its scalars and ``alpha`` in its own way before its kernel runs, and its kernels may store
intermediate results; an *equivalent* reproduces those steps exactly and models the kernel's
freedoms, so that ``covers(library_output)`` checks the library against what it promises.

* :mod:`exactref.equivalents.torch`: PyTorch 2.13's CPU ``torch.add``, ``torch.mul`` and their
  autograd (``add``, ``multiply``/``mul``, ``add_backward``, ``multiply_backward``).
* :mod:`exactref.equivalents.numpy`: NumPy 2's ufuncs, ml_dtypes types included.
* :mod:`exactref.equivalents.jax`: JAX on the CPU (XLA), denormal flushing included.

Neither imports its library: operands may be the library's arrays, er.Arrays or Python scalars.

A library's equivalents of the elementwise family are built from the op records
(:mod:`exactref.equivalents._family`): a record's counterpart for the library names the model
of that library's kernel (``spec.counterparts.of("numpy").data["model"]``) and its parameters,
and the library's module keeps only what is library-wide (its promotion, its conversions, its
flush rule) and its models.
``docs/pytorch_equivalents.md`` describes the PyTorch models and where PyTorch departs from the
mathematical answer.
"""

from . import jax, numpy, torch

__all__ = ["jax", "numpy", "torch"]
