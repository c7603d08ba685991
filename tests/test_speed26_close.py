"""Closing an executor's pool (matrix/workers.py): every worker is told to end (its stdin closed)
before the pool waits on any of them, so that the workers wind down together; and after close
every worker process has ended and what it held is given back."""

from __future__ import annotations

import os

from matrix import workers
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test


class _FakeWorker:
    def __init__(self, i, log):
        self.i, self.log = i, log

    def end_input(self):
        self.log.append(("eof", self.i))

    def close(self, wait: float = 2.0):
        self.end_input()
        self.log.append(("wait", self.i))


def test_every_worker_gets_its_end_before_the_pool_waits_on_one():
    log: list = []
    pool = workers.Pool.__new__(workers.Pool)
    pool.workers = [_FakeWorker(i, log) for i in range(3)]
    pool.cgroups = None
    pool.close()
    first_wait = next(k for k, e in enumerate(log) if e[0] == "wait")
    assert {e[1] for e in log[:first_wait] if e[0] == "eof"} == {0, 1, 2}
    assert [e[1] for e in log if e[0] == "wait"] == [0, 1, 2]
    assert pool.workers == []


def test_after_close_every_worker_has_ended_and_given_back_what_it_held():
    ex = Executor(ExecConfig(workers=2, timeout=2.0))
    task = Task(task_id="t", prompt="", entry_point="f")
    res = ex.run_matrix(task, ["def f(x):\n    return x\n"], [Test.assertion("assert f(1) == 1")])
    assert res.status == [["pass"]]
    ws = list(ex._pool.workers)
    stages = [w.stage for w in ws if w.stage]
    bases = [w.uid_base for w in ws if w.uid_base is not None]
    ex.close()
    for w in ws:
        assert w.proc.poll() is not None
        assert w.proc.stdin.closed and w.proc.stdout.closed
        assert w.uid_base is None
    assert not any(os.path.exists(s) for s in stages)
    assert not set(bases) & workers._lent_uids
