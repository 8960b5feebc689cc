"""flush= reaches the row ops (softmax family, norms) through the contract layer's generic
flush (the union with the result on flushed inputs, and the outputs flushed): a simulated
TensorFlow-style kernel (DAZ + FTZ: every float32 operand and result below the smallest normal
read or stored as zero) is covered under ``flush="both"`` and caught without it. The
intermediate flushes add less than the bounds' own float64 slack where the compute format's
smallest normal is below ``2**-52`` (docs/softmax.md, docs/normalizations.md: "Flushed
subnormals")."""

import numpy as np

import exactref as er

F32 = np.float32
TINY = np.finfo(F32).tiny


def ftz(v):
    v = np.asarray(v, F32)
    return np.where(np.abs(v) < TINY, np.copysign(F32(0), v), v).astype(F32)


def tf_softmax(x, log=False):
    x = ftz(x)
    m = x.max(axis=1, keepdims=True)
    t = ftz(x - m)
    e = ftz(np.exp(t.astype(np.float64)).astype(F32))
    s = ftz(e.sum(axis=1, keepdims=True, dtype=F32))
    if log:
        return ftz(t - ftz(np.log(s.astype(np.float64)).astype(F32)))
    return ftz(e * ftz(F32(1) / s))


def tf_layer_norm(x, eps=1e-5):
    x = ftz(x)
    n = x.shape[1]
    mean = ftz(x.sum(axis=1, dtype=F32) / F32(n))
    d = ftz(x - mean[:, None])
    var = ftz(ftz(d * d).sum(axis=1, dtype=F32) / F32(n))
    r = ftz(F32(1) / np.sqrt(ftz(var + F32(eps))))
    return ftz(d * r[:, None])


ROWS = np.array([[0, -88, -90, -95, -100, -1e-39, 1e-40, 2],
                 [1e-39, 2e-39, -3e-39, 0, 5e-39, 0, 0, 1e-38],
                 [1.0, 2.0, -1.0, 1e-39, 0.5, 3.0, -2.0, 0.25]], F32)


def test_tf_style_softmax_needs_flush():
    """Its outputs below the smallest normal come out 0: caught unless declared."""
    y = tf_softmax(ROWS)
    assert not er.softmax(ROWS, dim=-1, order="any").covers(y).all()
    assert er.softmax(ROWS, dim=-1, order="any",
                      contract=er.Contract(flush="both")).covers(y).all()


def test_tf_style_log_softmax_flushes_nothing_visible():
    """log_softmax's outputs are never subnormal here and a flushed exponential changes the
    sum (at least 1) by less than its rounding: the kernel is covered either way."""
    y = tf_softmax(ROWS, log=True)
    assert er.log_softmax(ROWS, dim=-1, order="any").covers(y).all()
    assert er.log_softmax(ROWS, dim=-1, order="any",
                          contract=er.Contract(flush="both")).covers(y).all()


def test_tf_style_layer_norm_needs_flush():
    y = tf_layer_norm(ROWS)
    assert not er.layer_norm(ROWS, 8, algorithm="two-pass").covers(y).all()
    assert er.layer_norm(ROWS, 8, algorithm="two-pass",
                         contract=er.Contract(flush="both")).covers(y).all()
