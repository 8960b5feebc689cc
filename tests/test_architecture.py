"""Architecture guards (issue 20): which package may import which, no op-name literals outside
the registry, no oversized files, and an op built from its record alone.

The layers (a module may import another package only from a lower layer, and only through
that package's face: its ``__init__``, or a top-level module itself):

====  =====================================================================================
L0    ``_formats``, ``_versions``
L1    ``_exact``, ``promotion``, ``interop``
L2    ``_array``, ``ops``
L3    ``_result``
L4    ``_operands``, ``_stochastic``, ``_contract``
L5    ``arithmetic``
L6    ``linalg``
L7    ``quantize``
L8    ``equivalents``
L9    ``audit``, ``testing``, ``explain``
L10   ``cli``
L11   ``exactref/__init__`` and ``__main__`` (the top: may import any face)
====  =====================================================================================
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import exactref as er

SRC = Path(er.__file__).resolve().parent

#: package -> layer (see the module docstring); "" is exactref itself (its __init__, __main__)
LAYERS = {
    "_formats": 0, "_versions": 0,
    "_exact": 1, "promotion": 1, "interop": 1,
    "_array": 2, "ops": 2,
    "_result": 3,
    "_operands": 4, "_stochastic": 4, "_contract": 4,
    "arithmetic": 5,
    "linalg": 6,
    "quantize": 7,
    "equivalents": 8,
    "audit": 9, "testing": 9, "explain": 9,
    "cli": 10,
    "": 11, "__main__": 11,
}


# ------------------------------------------------------------------------------ the imports
def _modules():
    """(dotted module name, path, is a package __init__) of every module under exactref."""
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        parts = ["exactref", *rel.parts]
        is_init = parts[-1] == "__init__"
        if is_init:
            parts = parts[:-1]
        yield ".".join(parts), path, is_init


def _package(module: str) -> str:
    """The package a dotted exactref module belongs to ("" for exactref itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(module: str, path: Path, is_init: bool):
    """(line, target module, imported name or None) for every import of an exactref module,
    relative ones resolved (imports inside functions included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module.split(".") if is_init else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "exactref" or alias.name.startswith("exactref."):
                    yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target != "exactref" and not target.startswith("exactref."):
                continue
            for alias in node.names:
                yield node.lineno, target, alias.name


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (SRC / rel).with_suffix(".py").exists() or (SRC / rel / "__init__.py").exists()


def _edges():
    """(file:line, source package, target package, what is imported, private?) of every import
    that crosses a package boundary."""
    for module, path, is_init in _modules():
        src_pkg = _package(module)
        for line, target, name in _imports(module, path, is_init):
            full = target if name is None else f"{target}.{name}"
            # "from exactref import linalg" imports the package linalg, not a name of exactref
            if name is not None and target == "exactref" and _is_module(full):
                tgt_module = full
            else:
                tgt_module = target
            tgt_pkg = _package(tgt_module)
            if tgt_pkg == src_pkg:
                continue
            inner = tgt_module.split(".")[2:]  # the modules inside the target package
            private = any(p.startswith("_") for p in inner)
            if name is not None and tgt_module == target and target != "exactref":
                private |= name.startswith("_") and not name.startswith("__")
            where = f"{path.relative_to(SRC.parent).as_posix()}:{line}"
            yield where, src_pkg, tgt_pkg, full, private


def test_public_names_come_from_faces():
    """exactref's lazy public names (``_PUBLIC``: name -> module) load from a package's face
    or a top-level module, as an import would."""
    tree = ast.parse((SRC / "__init__.py").read_text())
    table = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                 and any(getattr(t, "id", None) == "_PUBLIC" for t in n.targets))
    bad = [f"exactref.{k.value} from exactref{v.value}" for k, v in zip(table.keys,
                                                                       table.values, strict=True)
           if any(p.startswith("_") for p in v.value.lstrip(".").split(".")[1:])]
    assert not bad, "public names read from private modules: " + ", ".join(bad)


def test_layer_table_names_every_package():
    packages = {_package(m) for m, _, _ in _modules()}
    assert packages <= set(LAYERS), f"packages without a layer: {sorted(packages - set(LAYERS))}"


def test_no_private_cross_package_imports():
    """Rule 1: another package only through its face (``from .._exact import X``), never
    ``from .._exact._longsum import ...`` nor a ``_name``."""
    bad = [f"{w}: {s or 'exactref'} imports {what}" for w, s, t, what, private in _edges()
           if private]
    assert not bad, f"{len(bad)} private cross-package imports:\n" + "\n".join(bad)


def _metadata(what: str) -> bool:
    """``from .. import __version__``: the top package's metadata, set before anything else
    loads (not an import of its faces)."""
    return what.count(".") == 1 and what.split(".")[1].startswith("__")


def test_imports_go_down_the_layers():
    """Rule 2: a lower layer never imports a higher one (packages of one layer may import
    each other where no cycle forms: :func:`test_no_package_cycles`)."""
    bad = [f"{w}: {s or 'exactref'} (L{LAYERS[s]}) imports {what} ({t or 'exactref'}, "
           f"L{LAYERS[t]})" for w, s, t, what, _ in _edges()
           if s in LAYERS and t in LAYERS and LAYERS[t] > LAYERS[s] and not _metadata(what)]
    assert not bad, f"{len(bad)} imports that do not go down:\n" + "\n".join(bad)


def test_no_package_cycles():
    graph: dict = {}
    where: dict = {}
    for w, s, t, what, _ in _edges():
        if _metadata(what):
            continue
        graph.setdefault(s, set()).add(t)
        where.setdefault((s, t), w)
    cycles = []
    # Tarjan's strongly connected components
    index, low, stack, on, counter = {}, {}, [], set(), [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for u in graph.get(v, ()):
            if u not in index:
                visit(u)
                low[v] = min(low[v], low[u])
            elif u in on:
                low[v] = min(low[v], index[u])
        if low[v] == index[v]:
            comp = []
            while True:
                u = stack.pop()
                on.discard(u)
                comp.append(u)
                if u == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    shown = []
    for comp in cycles:
        links = [f"  {a or 'exactref'} -> {b or 'exactref'} ({where[a, b]})" for a in comp
                 for b in comp if (a, b) in where]
        shown.append(" <-> ".join(p or "exactref" for p in comp) + "\n" + "\n".join(links))
    assert not cycles, "package cycles:\n" + "\n".join(shown)


# ------------------------------------------------------------------------------ op names
#: Op-name literals outside ops/ and promotion/ that stay, as (file under exactref, what, the
#: names): at most 5, each with its reason.
ALLOW: dict = {
}


def _literals(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)
                and isinstance(e.value, str)]
    return []


def op_name_hits(names) -> list:
    """The places outside ops/ and promotion/ that compare with an op-name string, key a dict
    by two or more op names, or bind a literal list of two or more op names to a variable (the
    checks of ``../shared/tools/opnames.py``), as (file, line, what, names)."""
    hits = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("ops/", "promotion/")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                vals = _literals(node.left) + [v for c in node.comparators
                                               for v in _literals(c)]
                found = tuple(sorted({v for v in vals if v in names}))
                if found and any(isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                                 for o in node.ops):
                    hits.append((rel, node.lineno, "compares with", found))
            elif isinstance(node, ast.Dict):
                keys = tuple(sorted({k.value for k in node.keys if isinstance(k, ast.Constant)
                                     and k.value in names}))
                if len(keys) >= 2:
                    hits.append((rel, node.lineno, "dict keyed by", keys))
            elif isinstance(node, ast.Assign):
                vals = [v for v in _literals(node.value) if v in names]
                if len(vals) >= 2:
                    hits.append((rel, node.lineno, "list of", tuple(sorted(set(vals)))))
    return hits


def test_allow_list_is_short():
    assert len(ALLOW) <= 5


def test_no_op_name_literals_outside_the_registry():
    """Rule 3: an op's facts are read from its record (or its counterparts' data), lists of
    ops are ``ops.select(...)`` queries; a string that merely equals an op name gets a named
    constant."""
    names = set(er.ops.op_names())
    assert {"add", "fmod", "softmax"} <= names
    hits = [h for h in op_name_hits(names) if (h[0], h[2], h[3]) not in ALLOW]
    shown = [f"src/exactref/{rel}:{line}: {what} {', '.join(found)}"
             for rel, line, what, found in hits]
    assert not hits, f"{len(hits)} op-name literals outside ops/ and promotion/:\n" + \
        "\n".join(shown)


def test_the_op_name_scan_finds_what_it_should(tmp_path):
    """The scan itself: a comparison, a dict and a list of op names are found; a keyword
    string compared through a named constant is not."""
    code = ('def f(name, op):\n    if name == "fmod":\n        pass\n'
            '    T = {"add": 1, "sub": 2, "fmod": 3}\n    L = ("add", "fmod")\n'
            '    _MEAN = "mean"\n    return op == _MEAN\n')
    tree = ast.parse(code)
    names = {"add", "fmod", "mean"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            vals = _literals(node.left) + [v for c in node.comparators for v in _literals(c)]
            found += [v for v in vals if v in names]
        elif isinstance(node, ast.Dict):
            found += [k.value for k in node.keys if k.value in names]
        elif isinstance(node, ast.Assign):
            vals = [v for v in _literals(node.value) if v in names]
            found += vals if len(vals) >= 2 else []
    assert found.count("fmod") == 3 and found.count("add") == 2


# ------------------------------------------------------------------------------ file sizes
def test_no_source_file_over_1000_lines():
    big = [(p.relative_to(SRC.parent).as_posix(), n) for p in sorted(SRC.rglob("*.py"))
           if (n := len(p.read_text().splitlines())) > 1000]
    assert not big, "files over 1000 lines: " + ", ".join(f"{p} ({n})" for p, n in big)


# ------------------------------------------------------------------------------ a new op
def test_a_throwaway_op_from_its_record_alone():
    """An elementwise op declared here, the way the family declares its ops, works through
    the registry: its record, calling it, its Result, the docs' table and the audit's op
    list; then it is gone."""
    from exactref.arithmetic._elementwise import elementwise
    from exactref.arithmetic._formulas import Part
    from exactref.audit import get_target, resolve_ops

    name = "twice_plus"
    assert name not in er.ops.op_names()
    with er.ops.declaring(name, __name__):
        @elementwise(name, ("x", "y"), kernel="sum of products", promotion="add",
                     summary="2 * x + y, rounded once", kinds=("int", "uint", "float"),
                     counterparts=er.ops.Counterparts(None, None, None))
        def twice_plus(ctx, X, Y):
            """``2 * x + y``, the exact value rounded once."""
            return ctx.sop([Part([(X[0],), (X[0],), (Y[0],)])])

        spec = er.ops.get_op(name)
        assert spec.function.__wrapped__ is twice_plus and spec.promotion == "add"
        assert name in er.ops.op_names() and spec in er.ops.all_ops()
        assert er.ops.select(name=name) == (spec,)
        x = np.array([1.0, 2.0**-22, 3.0], np.float32)
        y = np.array([0.25, 1.0, -6.0], np.float32)
        res = twice_plus(x, y)
        assert res.rounded.tolist() == [2.25, 1 + 2.0**-21, 0.0]
        assert res.rounded.dtype == er.dtype("float32")
        assert res.covers(res.rounded.numpy()).all()
        assert not res.covers(np.array([2.25, 1.0, 0.0], np.float32)).all()
        assert f"| `{name}(x, y)` | 2 * x + y, rounded once | sum of products |" in \
            er.ops.markdown_table()
        assert name in resolve_ops(["all"], get_target("numpy"))
    assert name not in er.ops.op_names()
    with pytest.raises(ValueError, match="unknown op"):
        er.ops.get_op(name)


def test_registered_records_outside_the_catalog():
    spec = er.ops.OpSpec(name="throwaway_identity", operands=("x",), kernel="selection",
                         promotion="negative", function=lambda x: x, summary="x")
    with er.ops.registered(spec):
        assert er.ops.get_op("throwaway_identity") is spec
        assert er.ops.names_of(spec.function.__module__)[-1] == "throwaway_identity"
    assert "throwaway_identity" not in er.ops.op_names()
    with pytest.raises(ValueError, match="not in the catalog"):
        er.ops.register(spec)
