"""Exhaustive sweeps (``exactref.audit.exhaustive``, ``exactref audit --exhaustive``): every
input of a format, the same report for any chunking, completion order, resumption or
scheduler, checked against an independent count over the whole format."""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import random

import exhaustive_kernels as kernels
import gmpy2
import numpy as np
import pytest

import exactref as er
from exactref.audit import ExhaustiveError, KernelInputError, exhaustive
from exactref.audit._exhaustive import Tally, _Job, run_chunk
from exactref.cli import main

K = "exhaustive_kernels"
ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)


@pytest.fixture(scope="module")
def client():
    """A 2-worker LocalCluster (threads in this process: fast to start), closed at the end."""
    distributed = pytest.importorskip("distributed", reason="dask is the optional extra "
                                                            "exactref[dask]")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _plain(report) -> dict:
    return report.to_dict(timing=False)


@pytest.fixture(scope="module")
def numpy_exp16():
    return exhaustive("numpy:exp", "exp", "float16")


def test_float16_sweep_counts_every_input(numpy_exp16):
    """The sweep's counts equal a count made here over all 65536 inputs at once: the
    distance of numpy's exp from er.exp's rounding, by the histogram's own bucket edges."""
    r = numpy_exp16
    assert (r.inputs, r.total, r.complete, r.uncovered) == (65536, 65536, True, 0)
    ref = er.exp(er.asarray(ALL16, "float16"))
    with np.errstate(all="ignore"):
        out = np.exp(ALL16)
        a, e = out.astype(np.float64), ref.rounded.numpy().astype(np.float64)
        same = (a == e) | (np.isnan(a) & np.isnan(e))
        _, ex = np.frexp(np.where(np.isfinite(e), e, 0.0))
        ulp = np.ldexp(1.0, np.maximum(np.where(e == 0, -14, ex - 1), -14) - 10)
        d = np.where(same, 0.0, np.abs(a - e) / ulp)
    assert np.isfinite(d).all()  # numpy's exp has no non-finite mismatch in float16
    assert r.histogram.counts[0] == int(np.count_nonzero(d == 0))
    assert r.histogram.cases == 65536 and r.max_ulps == float(d.max())
    assert int(np.count_nonzero(~np.asarray(ref.covers(out).mask))) == 0
    worst = np.lexsort((np.arange(65536), -d))[:10]
    assert [w["code"] for w in r.worst] == [int(i) for i in worst if d[i] > 0]
    assert r.passed and "PASS: 65536 of 65536 inputs run, 0 not covered" in r.render()


def test_chunkings_and_completion_orders_give_one_report(numpy_exp16):
    base = _plain(exhaustive(f"{K}:exp_off_by_4", "exp", "float16"))
    assert _plain(exhaustive(f"{K}:exp_off_by_4", "exp", "float16", chunk=1000)) == base
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        threaded = exhaustive(f"{K}:exp_off_by_4", "exp", "float16", chunk=777, executor=ex)
    assert _plain(threaded) == base and threaded.where.startswith("ThreadPoolExecutor")
    # the chunks' tallies merged in any order: the same aggregates
    job = _Job(kernels.exp_off_by_4, "exp", "float16", None, 10)
    parts = [run_chunk(job, a, min(a + 4096, 65536)) for a in range(0, 65536, 4096)]
    random.Random(1).shuffle(parts)
    merged = Tally(10)
    for p in parts:
        merged.merge(p)
    assert merged.to_json() == exhaustive(kernels.exp_off_by_4, "exp", "float16",
                                          chunk=65536).tally.to_json()
    with pytest.raises(ValueError, match="count them twice"):
        merged.merge(parts[0])


def test_buggy_kernel_found_with_its_input():
    r = exhaustive(kernels.exp_off_by_4, "exp", "float16", chunk=5000, top=3)
    assert (r.uncovered, r.max_ulps, r.passed) == (1, 4.0, False)
    top = r.worst[0]
    assert (top["code"], top["ulps"], top["covered"]) == (kernels.BAD_FLOAT16, 4.0, False)
    assert top["inputs"] == ["0x1p+0"] and top["expected"] == "0x1.5cp+1"
    # the exact rounding of e into float16, by MPFR
    with gmpy2.context(precision=11):
        assert float(gmpy2.exp(1)) == float.fromhex(top["expected"])
    assert r.uncovered_worst == [top] and len(r.worst) == 3
    assert r.histogram.as_dict()["<=4"] == 1
    assert "0x1p+0 (bits 0x3c00): actual 0x1.5dp+1" in r.render()


def test_contract_reaches_the_reference(capsys):
    """A declared accuracy (ulps of float32, exp's compute format) widens the allowed
    interval: fewer outputs one float16 ulp up are uncovered; the distances stay the exact
    rounding's. The command line's --accuracy gives the same report."""
    plain = exhaustive(kernels.exp_one_up, "exp", "float16", top=0)
    loose = exhaustive(kernels.exp_one_up, "exp", "float16", top=0,
                       contract={"accuracy": 2.0**14})
    assert 0 < loose.uncovered < plain.uncovered
    assert loose.histogram.counts == plain.histogram.counts
    assert loose.to_dict()["contract"] == {"accuracy": 16384.0}
    assert main(["audit", f"{K}:exp_one_up", "--op", "exp", "--exhaustive", "float16", "--top",
                 "0", "--workers", "1", "--accuracy", "16384"]) == 1
    assert f"{loose.uncovered} not covered" in capsys.readouterr().out


def test_binary_8_bit_sweep_every_pair():
    r = exhaustive(kernels.multiply_off, "multiply", "float8_e5m2", chunk=10000)
    assert (r.total, r.inputs, r.uncovered) == (65536, 65536, 1)
    x, y = kernels.BAD_PAIR
    assert r.worst[0]["code"] == x * 256 + y and not r.worst[0]["covered"]
    assert r.worst[0]["inputs"] == ["0x1.8p+0", "0x1.4p+1"]  # 1.5 * 2.5
    assert r.histogram.counts[0] == 65535


def test_p3109_and_4_bit_formats():
    """A P3109 format's kernel gets (and returns) float64 values of the format, which no
    dtype holds; float4_e2m1fn has 16 inputs."""
    def add(x, y):
        assert x.dtype == np.float64 and x.size <= 16384
        return er.add(er.asarray(x, "binary8p3se"), er.asarray(y, "binary8p3se")).rounded.numpy()

    r = exhaustive(add, "add", "binary8p3se", chunk=16384)
    assert (r.total, r.uncovered, r.histogram.as_dict(), r.result_format) == (
        65536, 0, {"0": 65536}, "binary8p3se")
    wrong = exhaustive(lambda x: x, "negative", "binary8p4sf", top=1)
    assert wrong.uncovered > 0 and wrong.worst[0]["inputs"][0].startswith(("0x", "-0x"))
    tiny = exhaustive(np.exp, "exp", "float4_e2m1fn")
    assert (tiny.total, tiny.inputs) == (16, 16)


def test_resumed_from_its_state_file(tmp_path):
    base = _plain(exhaustive(kernels.exp_off_by_4, "exp", "float16"))
    state = tmp_path / "sweep.json"
    seen = []

    def stop_after_three(done, total):
        seen.append(done)
        if len(seen) == 4:  # the start, then three chunks
            raise KeyboardInterrupt  # Ctrl-C

    part = exhaustive(kernels.exp_off_by_4, "exp", "float16", chunk=4000, state=str(state),
                      progress=stop_after_three)
    assert part.interrupted and part.inputs == 12000 and not part.complete
    assert seen == [0, 4000, 8000, 12000]
    assert "run again with the state file" in part.render()
    saved = json.loads(state.read_text())
    assert saved["tally"]["ranges"] == [[0, 12000]]
    rest = exhaustive(kernels.exp_off_by_4, "exp", "float16", chunk=3000, state=str(state))
    assert rest.ran == 65536 - 12000 and _plain(rest) == base
    assert rest.to_dict()["timing"]["ran"] == 65536 - 12000
    again = exhaustive(kernels.exp_off_by_4, "exp", "float16", state=str(state))
    assert again.ran == 0 and _plain(again) == base  # nothing left to run


class _Killed(BaseException):
    """The process dies here: nothing after it runs (no finally writes the state again)."""


def test_killed_run_resumed(tmp_path, monkeypatch):
    """A run killed outright after its fourth write of the state file (each chunk's, with
    no interval between writes): the run started again completes it with the report of an
    uninterrupted run."""
    from exactref.audit import _exhaustive

    saves = []
    real = _exhaustive._save_state

    def save_then_die(path, identity, tally):
        if len(saves) >= 4:  # dead: the finally's write never happens
            return
        real(path, identity, tally)
        saves.append(tally.inputs)
        if len(saves) == 4:
            raise _Killed

    monkeypatch.setattr(_exhaustive, "_SAVE_EVERY", 0.0)
    monkeypatch.setattr(_exhaustive, "_save_state", save_then_die)
    state = tmp_path / "killed.json"
    with pytest.raises(_Killed):
        exhaustive(kernels.exp_off_by_4, "exp", "float16", chunk=5000, state=str(state))
    monkeypatch.undo()
    assert saves == [5000, 10000, 15000, 20000]
    assert json.loads(state.read_text())["tally"]["ranges"] == [[0, 20000]]
    resumed = exhaustive(kernels.exp_off_by_4, "exp", "float16", chunk=6000, state=str(state))
    assert resumed.ran == 65536 - 20000
    assert _plain(resumed) == _plain(exhaustive(kernels.exp_off_by_4, "exp", "float16"))


def test_state_file_of_another_run_refused(tmp_path):
    state = tmp_path / "s.json"
    exhaustive(kernels.exp_off_by_4, "exp", "float16", slice="0:100", state=str(state))
    with pytest.raises(ExhaustiveError, match=r"of another run \(op 'exp' there, 'log' here"):
        exhaustive(kernels.exp_off_by_4, "log", "float16", slice="0:100", state=str(state))
    with pytest.raises(ExhaustiveError, match="slice"):
        exhaustive(kernels.exp_off_by_4, "exp", "float16", slice="0:200", state=str(state))
    with pytest.raises(ExhaustiveError, match="is a directory"):
        exhaustive(kernels.exp_off_by_4, "exp", "float16", state=str(tmp_path))
    with pytest.raises(ExhaustiveError, match="does not exist"):
        exhaustive(kernels.exp_off_by_4, "exp", "float16", state=str(tmp_path / "no" / "s"))
    state.write_text("{not json")
    with pytest.raises(ExhaustiveError, match="not an exhaustive sweep's state"):
        exhaustive(kernels.exp_off_by_4, "exp", "float16", slice="0:100", state=str(state))


def test_float16_on_a_local_cluster_same_report(client, numpy_exp16):
    on_dask = exhaustive("numpy:exp", "exp", "float16", chunk=8192, scheduler=client)
    assert _plain(on_dask) == _plain(numpy_exp16)
    assert on_dask.where.startswith("Dask at")
    by_address = exhaustive("numpy:exp", "exp", "float16", chunk=16384,
                            scheduler=client.scheduler.address)  # a Client of its own, closed
    assert _plain(by_address) == _plain(numpy_exp16)
    buggy = exhaustive(kernels.exp_off_by_4, "exp", "float16", chunk=3000, scheduler=client)
    assert _plain(buggy) == _plain(exhaustive(kernels.exp_off_by_4, "exp", "float16"))


def test_kernel_error_on_a_local_cluster(client):
    with pytest.raises(KernelInputError, match=r"on the input 0x1p\+1 \(bits 0x4000\)"):
        exhaustive(kernels.exp_raises, "exp", "float16", chunk=4096, scheduler=client)


def test_an_unreachable_scheduler_is_a_usage_error(monkeypatch):
    pytest.importorskip("distributed", reason="dask is the optional extra 'exactref[dask]'")
    import exactref.audit._exhaustive as ex

    monkeypatch.setattr(ex, "_CONNECT_S", 1)
    # a port nothing listens on: refused at once, or timed out after a second
    with pytest.raises(ExhaustiveError, match=r"cannot reach a Dask scheduler at "
                                              r"'tcp://127.0.0.1:1' .*pass 'local'"):
        exhaustive(np.exp, "exp", "float16", scheduler="tcp://127.0.0.1:1")


def test_dask_tasks_batch_consecutive_chunks_and_report_the_same(client, monkeypatch):
    import exactref.audit._exhaustive as ex

    assert ex._batches([(0, 4), (4, 8), (8, 9), (9, 20)], 8) == [[(0, 4), (4, 8)],
                                                                  [(8, 9)], [(9, 20)]]
    assert ex._batches([], 8) == []
    here = exhaustive("numpy:exp", "exp", "float16", chunk=4096)
    monkeypatch.setattr(ex, "DASK_TASK_INPUTS", 3 * 4096 + 1)  # 3 chunks a task, 6 tasks
    seen = []
    real = client.submit
    monkeypatch.setattr(client, "submit", lambda fn, job, batch, **k: seen.append(
        (fn.__name__, len(batch))) or real(fn, job, batch, **k))
    on_dask = exhaustive("numpy:exp", "exp", "float16", chunk=4096, scheduler=client)
    assert sorted(seen) == [("run_chunks", 1)] + [("run_chunks", 3)] * 5  # 16 chunks
    assert _plain(on_dask) == _plain(here)


def test_float32_slice_on_a_local_cluster(client):
    sl = "0x3f800000:0x3f808000"  # [1, 1 + 2**-8): the first 32768 float32 above 1
    on_dask = exhaustive("numpy:exp", "exp", "float32", slice=sl, chunk=4096, scheduler=client)
    here = exhaustive("numpy:exp", "exp", "float32", slice=sl)
    assert _plain(on_dask) == _plain(here)
    assert (here.start, here.stop, here.inputs, here.uncovered) == (0x3F800000, 0x3F808000,
                                                                     32768, 0)
    x = np.arange(0x3F800000, 0x3F808000, dtype=np.uint32).view(np.float32)
    d = er.ulps_from_exact(er.exp(er.asarray(x)), np.exp(x))
    assert here.max_ulps == float(d.max()) and here.histogram.counts[0] == int((d == 0).sum())
    assert "bit patterns 0x3f800000:0x3f808000" in here.render()


def test_kernel_processes_cannot_import():
    with pytest.raises(ExhaustiveError, match="pass it as 'module:function'"):
        with concurrent.futures.ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("spawn")) as ex:
            exhaustive(lambda x: np.exp(x), "exp", "float8_e4m3fn", executor=ex)
    with pytest.raises(ExhaustiveError, match="cannot import 'no_such_module'"):
        exhaustive("no_such_module:exp", "exp", "float16")


def test_kernel_errors_name_the_input():
    with pytest.raises(KernelInputError, match=r"raised ValueError: no exp of 2 today on the "
                                               r"input 0x1p\+1 \(bits 0x4000\)") as info:
        exhaustive(kernels.exp_raises, "exp", "float16", chunk=20000)
    assert info.value.codes == (0x4000,)
    with pytest.raises(KernelInputError, match="returned float32 where exp of float16 gives "
                                               "float16"):
        exhaustive(kernels.exp_float32_out, "exp", "float16")


@pytest.mark.parametrize("args, match", [
    (("exp", "float99"), "the format 'float99'"),
    (("exp", "float64"), "at most 32 bits"),
    (("exp", "int8"), "8-bit int format"),
    (("add", "float16"), "binary op: every pair of float16 inputs is 2\\*\\*32"),
    (("matmul", "float8_e4m3fn"), "cannot be swept"),
    (("expp", "float16"), "did you mean exp"),
])
def test_bad_op_or_format(args, match):
    with pytest.raises(ExhaustiveError, match=match):
        exhaustive(np.exp, *args)


@pytest.mark.parametrize("kw, match", [
    ({"chunk": 0}, "chunk=0: expected an integer from 1"),
    ({"slice": "5:5"}, "not a non-empty range"),
    ({"slice": "0:70000"}, "not a non-empty range"),
    ({"slice": "a:b"}, "expected START:STOP"),
    ({"top": -1}, "top=-1"),
    ({"workers": 2}, "workers=2 sets the size of the LocalCluster"),
    ({"executor": object(), "scheduler": "local"}, "not both"),
    ({"scheduler": 3}, "expected a dask.distributed address"),
    ({"contract": {"order": "pairwise"}}, "exp has no order"),
])
def test_bad_arguments(kw, match):
    with pytest.raises(ExhaustiveError, match=match):
        exhaustive(np.exp, "exp", "float16", **kw)


# ---------------------------------------------------------------------------- command line
def test_cli_sweep(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc = main(["audit", f"{K}:exp_off_by_4", "--op", "exp", "--exhaustive", "float16",
               "--workers", "1", "--chunk", "20000", "--top", "2", "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 1 and "FAIL: 65536 of 65536 inputs run, 1 not covered" in text
    d = json.loads(out.read_text())
    assert d["worst"][0]["code"] == kernels.BAD_FLOAT16 and len(d["worst"]) == 2
    assert d["ulp_histogram"]["<=4"] == 1 and d["timing"]["ran"] == 65536
    rc = main(["audit", "numpy:exp", "--op", "exp", "--exhaustive", "float8_e4m3fn",
               "--workers", "1", "--slice", "0:128"])
    assert rc == 0 and "PASS: 128 of 128 inputs run" in capsys.readouterr().out


def test_cli_progress_bar_when_asked(capsys, monkeypatch):
    """--progress shows the bar on stderr; the workers are spawned processes, no more than
    the chunks (a thread pool stands in for them here: spawning costs seconds)."""
    asked = []

    class Spawned(concurrent.futures.ThreadPoolExecutor):
        def __init__(self, max_workers, mp_context, initializer):
            asked.append((max_workers, mp_context.get_start_method(), initializer.__name__))
            super().__init__(max_workers)  # (signals are the main thread's: no initializer)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Spawned)
    assert main(["audit", "numpy:exp", "--op", "exp", "--exhaustive", "float8_e4m3fn",
                 "--workers", "2", "--chunk", "128", "--progress"]) == 0
    captured = capsys.readouterr()
    assert "sweep" in captured.err and "256/256" in captured.err
    assert "Spawned, 2 workers" in captured.out and asked == [(2, "spawn", "_ignore_interrupts")]  # two chunks
    assert main(["audit", "numpy:exp", "--op", "exp", "--exhaustive", "float16", "--slice",
                 "0:16384"]) == 0  # one chunk: this process, whatever the CPUs; no bar
    captured = capsys.readouterr()
    assert "this process" in captured.out and "sweep" not in captured.err


def test_cli_resumes_and_refuses_another_run(tmp_path, capsys):
    state = str(tmp_path / "s.json")
    common = ["--op", "exp", "--exhaustive", "float16", "--workers", "1", "--state", state]
    assert main(["audit", "numpy:exp", *common, "--slice", "0:1000"]) == 0
    assert main(["audit", "numpy:exp", *common, "--slice", "0:1000", "--chunk", "7"]) == 0
    assert "PASS: 1000 of 1000" in capsys.readouterr().out
    assert main(["audit", "numpy:exp", *common, "--slice", "0:2000"]) == 4
    assert "is of another run (slice [0, 1000] there, [0, 2000] here)" in \
        capsys.readouterr().err


@pytest.mark.parametrize("argv, match", [
    (["numpy:exp", "--op", "exp", "--exhaustive", "float99"], "the format 'float99'"),
    (["numpy:add", "--op", "add", "--exhaustive", "float16"], "binary op"),
    (["numpy:exp", "--op", "exp", "--exhaustive", "float16", "--samples", "9"],
     "--samples does not apply to --exhaustive"),
    (["numpy:exp", "--op", "exp", "--state", "x.json"], "--state applies to exhaustive sweeps "
                                                        "only"),
    (["numpy", "--exhaustive", "float16"], "library target"),
    (["numpy:exp", "--exhaustive", "float16"], "needs --op"),
    (["numpy:exp", "--op", "exp", "--exhaustive", "float16", "--scheduler", "tcp://h:1",
      "--workers", "2"], "the workers are the cluster's"),
    (["numpy:exp", "--op", "exp", "--exhaustive", "float16", "--slice", "9"], "START:STOP"),
    (["numpy:exp", "--op", "exp", "--exhaustive", "float16", "--chunk", "0"], "--chunk 0"),
    (["numpy:exp", "--op", "exp", "--exhaustive", "float16", "--top", "-2"], "top=-2"),
])
def test_cli_usage_errors(argv, match, capsys):
    assert main(["audit", *argv]) == 4
    assert match in capsys.readouterr().err


def test_cli_without_dask_says_how_to_install(monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    assert main(["audit", "numpy:exp", "--op", "exp", "--exhaustive", "float16",
                 "--scheduler", "local", "--workers", "2"]) == 4
    assert "pip install 'exactref[dask]'" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_on_a_local_cluster_of_processes(capsys):
    """--scheduler local: a LocalCluster of 2 spawned processes (each imports the kernel by
    its module:function name), the same report as this process's."""
    argv = ["audit", f"{K}:exp8_off", "--op", "exp", "--exhaustive", "float8_e5m2",
            "--chunk", "64"]
    assert main([*argv, "--workers", "1"]) == 1
    here = capsys.readouterr().out
    assert main([*argv, "--scheduler", "local", "--workers", "2"]) == 1
    there = capsys.readouterr().out
    drop = lambda text: [ln for ln in text.splitlines() if " inputs/s, " not in ln]  # noqa: E731
    assert drop(here) == drop(there)
