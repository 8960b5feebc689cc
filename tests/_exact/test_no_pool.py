"""No process pool behind the user's back (issue 19 item 4).

A plain script, without ``if __name__ == "__main__":``, that evaluates a function at more than
:data:`PARALLEL_MIN` distinct inputs once ran its top-level code three times: the evaluation
started a forkserver pool on its own, whose workers imported ``__main__`` again. Each script
here runs in a fresh interpreter with ``-W error``, and its output is counted: one line from
the script, nothing on stderr (no resource-tracker report of leaked semaphores, no warning).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from exactref._exact import _functions

# More distinct float64 inputs than the threshold: exp costs about 1 us each through MPFR.
N = _functions.PARALLEL_MIN + 7000


def _run(tmp_path, body: str, env_extra=None, timeout=240):
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if k != "EXACTREF_WORKERS"}
    env["EXACTREF_CACHE_DIR"] = str(tmp_path / "cache")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-W", "error", str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_a_script_without_the_main_guard_runs_once(tmp_path):
    done = _run(tmp_path, f"""
        import numpy as np
        import exactref as er
        x = np.random.default_rng(0).standard_normal({N})
        assert np.unique(x).size > {_functions.PARALLEL_MIN}
        y = er.exp(x)
        import multiprocessing
        print("top level ran:", y.rounded.size, "values,",
              len(multiprocessing.active_children()), "child processes")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"top level ran: {N} values, 0 child processes"], \
        done.stdout
    assert done.stderr == ""


def test_asked_for_workers_give_the_serial_values_and_leave_nothing(tmp_path):
    """Asked for (``set_workers(2)``, left on at exit), in a guarded script: the values are
    bit for bit the serial ones, the script's line is printed once and nothing reaches stderr
    (the pool was shut down at exit, no semaphore leaked). A ``with workers(n)`` block's pool,
    shut down at the block's end, is tested in this process (test_workers.py)."""
    done = _run(tmp_path, f"""
        import multiprocessing
        import numpy as np
        import exactref as er
        from exactref._exact import function_values

        FIELDS = ("c1", "c2", "r", "E", "special", "zero", "zsign")

        if __name__ == "__main__":
            x = np.random.default_rng(1).standard_normal({N}) * 3
            # bits=53: float64's calls, MPFR per element (float32's are decided from
            # enclosures, MPFR only for the few undecided: too few to share)
            serial = function_values("sinh", x, bits=53)
            er.set_workers(2)
            shared = function_values("sinh", x, bits=53)
            assert len(multiprocessing.active_children()) == 2
            assert all(np.array_equal(getattr(serial, f), getattr(shared, f)) for f in FIELDS)
            print("main ran")
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["main ran"], done.stdout
    assert done.stderr == ""


def test_asking_for_workers_without_the_guard_is_a_clear_error(tmp_path):
    """Python's rule for ``spawn``: the workers import the main module. A guard-less script
    that asks for workers gets exactref's RuntimeError naming the guard, not a second run."""
    done = _run(tmp_path, f"""
        import numpy as np
        import exactref as er
        er.set_workers(2)
        er.exp(np.random.default_rng(0).standard_normal({N}))
        print("top level ran")
    """)
    assert done.returncode == 1
    assert "top level ran" not in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: exactref's worker processes stopped"), last
    assert 'if __name__ == "__main__":' in last
