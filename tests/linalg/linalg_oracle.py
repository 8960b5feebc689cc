"""An exact oracle for long sums: Python Fractions, rounded by the scalar path."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from exactref._exact._scalar import round_scalar


def exact_dot(row, col):
    return sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(row, col, strict=True)),
               Fraction(0))


def rounded(v, fmt, mode):
    return round_scalar(v, False, fmt.component, mode, fmt.component.default_overflow)[0]


def same(x, y):
    return (x == y and np.signbit(x) == np.signbit(y)) or (x == y == 0) or (x != x and y != y)
