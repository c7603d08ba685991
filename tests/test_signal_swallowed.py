"""A stop signal that lands while Python runs a garbage-collector callback or a ``__del__``: Python
drops an exception raised there ("Exception ignored in: ..."), so the ``_Terminated`` (SIGTERM) or
``KeyboardInterrupt`` (Ctrl-C) the handler raised would be lost and the command would run on to its
end and exit 0 (seen: `coevo gen-tests` under hypothesis' gc callback, SIGTERM -> exit 0 with the
suite written). The stop must still reach the command: raised again in the command's own code."""

import signal
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import gc, os, signal, sys, time
    from coevo import cli

    sig = getattr(signal, sys.argv[1])
    previous = cli._stop_on_sigterm()
    fired = []

    def in_gc(phase, info):
        if phase == "start" and not fired:
            fired.append(1)
            os.kill(os.getpid(), sig)
            for _ in range(10000):  # the signal's Python handler runs here, inside the callback
                pass

    class Dropped:
        def __del__(self):
            if not fired:
                fired.append(1)
                os.kill(os.getpid(), sig)
                for _ in range(10000):
                    pass

    where = sys.argv[2]
    try:
        if where == "gc":
            gc.callbacks.append(in_gc)
            gc.collect()
        else:
            Dropped()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            pass
        print("ran on")
    except cli._Terminated:
        print("terminated")
    except KeyboardInterrupt:
        print("interrupted")
    finally:
        gc.callbacks[:] = [c for c in gc.callbacks if c is not in_gc]
        cli._restore_stop_handlers(previous)
""")


@pytest.mark.parametrize("where", ["gc", "del"])
@pytest.mark.parametrize("sig, said", [("SIGTERM", "terminated"), ("SIGINT", "interrupted")])
def test_a_stop_signal_raised_where_python_drops_exceptions_still_stops(sig, said, where):
    # (Ctrl-C as a terminal sends it: a shell's background job, `pytest &` or a script's `cmd &`,
    # starts with SIGINT ignored, which the command rightly keeps; the child starts with it default)
    out = subprocess.run([sys.executable, "-c", SCRIPT, sig, where], capture_output=True, text=True, timeout=60,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [said], (out.stdout, out.stderr)
    assert "Exception ignored" not in out.stderr, out.stderr
