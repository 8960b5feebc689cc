"""cross_entropy's ``specials=``: ``"formula"`` gives the log-softmax formula's NaN for a
counted sample whose logits hold NaN or +inf, or are all -inf (torch's own kernel does: it
computes ``x - max - log(sum)``), an ignored sample skipped; ``"limits"`` (the default) the
exact value's limit; a bad value refused with the list."""

import numpy as np
import pytest

import exactref as er

INF, NAN = np.inf, np.nan
X = np.array([[1, 2, 3], [1, INF, 2], [-INF, -INF, -INF], [1, NAN, 0], [0, -INF, 1]],
             np.float32)
Y = np.array([0, 1, 2, -100, 2])


def numpy_formula(x, y):
    with np.errstate(invalid="ignore", divide="ignore"):
        m = x.max(axis=1, keepdims=True)
        t = x - m
        lsm = t - np.log(np.exp(t).sum(axis=1, keepdims=True))
    loss = np.array([-lsm[i, c] if c != -100 else 0.0 for i, c in enumerate(y)], np.float32)
    return loss


def test_formula_rows():
    r = er.cross_entropy(X, er.asarray(Y, "int64"), reduction="none", specials="formula")
    got = np.asarray(r.rounded.numpy())
    want = numpy_formula(X, Y)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert r.covers(want).all()
    lim = er.cross_entropy(X, er.asarray(Y, "int64"), reduction="none")
    assert not lim.covers(want).all()  # the +inf row has a limit (0 for its own class)
    for red in ("mean", "sum"):
        assert np.isnan(er.cross_entropy(X, er.asarray(Y, "int64"), reduction=red,
                                         specials="formula").rounded.numpy())


def test_torch_is_the_formula():
    torch = pytest.importorskip("torch")
    t = torch.nn.functional.cross_entropy(torch.from_numpy(X), torch.from_numpy(Y),
                                          reduction="none").numpy()
    assert er.cross_entropy(X, er.asarray(Y, "int64"), reduction="none",
                            specials="formula").covers(t).all()


def test_bad_specials_refused():
    with pytest.raises(ValueError, match="'limits', 'formula'"):
        er.cross_entropy(X, er.asarray(Y, "int64"), specials="ieee")
