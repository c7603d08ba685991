"""The degraded level: ``isolation="process"`` (what ``auto`` falls back to without namespaces).

Host files, the network and (under the executor's uid) signals are not protected at this level,
so only the guarantees that still hold are tested: limits, cleanup, trusted verdicts, independence
of cells, the warning and the reported level. Every hostile program here is bounded."""

from __future__ import annotations

import os
import time

import pytest

from matrix import workers as sandbox
from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

TASK = Task("t", "process level", entry_point="f")


@pytest.fixture(scope="module")
def ex():
    sandbox._WARNED.clear()
    cfg = ExecConfig(timeout=1.0, memory_mb=256, max_procs=8, max_output_bytes=64 << 10, workers=2,
                     isolation="process")
    with Executor(cfg) as e:
        yield e


def status(ex, code, test="assert f() == 3"):
    return ex.run_matrix(TASK, [code], [Test.assertion(test)]).status[0][0]


def test_level_is_reported(ex, capsys):
    assert ex.isolation == "process"
    assert "process" in ex.isolation_detail
    assert ex.run_matrix(TASK, ["def f():\n    return 3\n"], [Test.assertion("assert f() == 3")]
                         ).isolation == "process"


@pytest.mark.parametrize("code,expected", [
    ("def f():\n    return 3\n", "pass"),
    ("import sys\ndef f():\n    sys.exit(0)\n", "error"),
    ("import os\ndef f():\n    os._exit(0)\n", "error"),
    ("def f():\n    print('PASS')\n", "fail"),
    ("class A:\n    def __eq__(s, o):\n        return True\ndef f():\n    return A()\n", "fail"),
    ("class L(int):\n    def __eq__(s, o):\n        return True\ndef f():\n    return L(1)\n", "fail"),
    ("def f():\n    return bytearray(3 << 30)\n", "memory"),
    ("def f():\n    for _ in range(100):\n        print('x' * (1 << 20))\n", "output_limit"),
    ("def f():\n    while True:\n        pass\n", "timeout"),
])
def test_limits_and_verdicts_hold(ex, code, expected):
    assert status(ex, code) == expected


def test_fork_bomb_is_bounded_and_killed(ex):
    code = """
import os
def f():
    n = 0
    for _ in range(100):          # bounded
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.execv("/bin/sleep", ["sleep", "47.3"])
        n += 1
    return n
"""
    r = ex.run_calls(TASK, [code], ["f()"])[0][0]
    assert r.status == "pass"
    if ex._workers[0].cfg.get("uid") or os.geteuid() != 0:  # the kernel never caps uid 0
        assert r.value < ex.config.max_procs
    time.sleep(0.2)
    left = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as fh:
                    if b"47.3" in fh.read():
                        left.append(d)
            except OSError:
                pass
    assert left == []


def test_cells_stay_independent(ex):
    good = "def f(x):\n    return x + 1\n"
    bad = "import os\ndef f(x):\n    os.kill(os.getpid(), 9)\n"
    tests = [Test.assertion(f"assert f({i}) == {i + 1}") for i in range(3)]
    r = ex.run_matrix(TASK, [bad, good, bad + "# again\n", good + "# again\n"], tests)
    assert r.status[1] == r.status[3] == ["pass"] * 3
    assert all(s == "error" for s in r.status[0] + r.status[2])


def test_a_killed_worker_is_replaced(ex):
    ex.run_matrix(TASK, ["def f():\n    return 3\n"], [Test.assertion("assert f() == 3")])
    for w in ex._workers:
        w.proc.kill()
    r = ex.run_matrix(TASK, [f"def f():\n    return 3\n# program {i}\n" for i in range(4)],
                      [Test.assertion("assert f() == 3")] * 3)
    assert r.passed.all()


@pytest.mark.skipif(os.geteuid() != 0, reason="the executor's uid is root only when run as root")
def test_a_root_executor_never_runs_programs_as_root(ex, tmp_path):
    # red-team pass 8: where the Python installation is not readable by other users (a pyenv under
    # /root), the uid switch was dropped and programs ran as root with every capability: one wrote
    # host files, moved itself out of its cell's cgroup and killed the cells of another task
    probe = ("import os\ndef f():\n    caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0]\n"
             "    return [os.getuid(), os.geteuid(), os.getgid(), int(caps.split()[1], 16)]\n")
    res = ex.run_matrix(TASK, [probe], [Test.assertion("assert f() == 0")])
    uid, euid, gid, caps = res.values[0][0]
    assert uid != 0 and euid != 0 and gid != 0 and caps == 0, res.values
    victim = tmp_path / "root_owned"
    victim.write_text("keep")
    os.chmod(victim, 0o644)
    os.chmod(tmp_path, 0o755)
    writer = f"def f():\n    open({str(victim)!r}, 'w').write('gone')\n    return 3\n"
    assert status(ex, writer) == "error" and victim.read_text() == "keep"
    # and the standard library still imports (what the zygote loaded before the switch)
    imports = "import fractions, heapq, collections\ndef f():\n    return int(fractions.Fraction(6, 2))\n"
    assert status(ex, imports) == "pass"


@pytest.mark.parametrize("opener", [
    "os.open('//proc/%d/mem' % os.getppid(), os.O_RDONLY)",  # the hook compared the text with "/proc/"
    "os.chdir('/proc'); os.open('%d/mem' % os.getppid(), os.O_RDONLY)",
    "os.symlink('/proc/%d/mem' % os.getppid(), '/tmp/m%d' % os.getpid()); open('/tmp/m%d' % os.getpid(), 'rb')",
    "open(pathlib.Path('/proc/self/mem'), 'rb')",
])
def test_no_spelling_of_a_path_opens_a_process_memory(ex, opener):
    # red-team pass 8: `//proc/<coevo pid>/mem` opened the parent's memory read-write in process mode
    code = f"import os, pathlib\ndef f():\n    {opener}\n    return 3\n"
    res = ex.run_matrix(TASK, [code], [Test.assertion("assert f() == 3")])
    assert res.status[0][0] == "error" and "forbidden operation: open" in res.errors[0][0], res.errors


def test_generic_tests_judge_a_right_program_right(ex):
    # red-team pass 9 (a regression of the uid switch above): where the programs' uid cannot read
    # the Python installation, the test process imported `symtable` after the switch, so every
    # generic test failed every program, right ones included
    test = "def check(f):\n    for x in range(3):\n        assert f(x) == 2 * x\ncheck(f)"
    res = ex.run_matrix(TASK, ["def f(x):\n    return 2 * x\n", "def f(x):\n    return x + 2\n"],
                        [Test.assertion(test)])
    assert res.status == [["pass"], ["fail"]], res.errors


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/dev/shm"), reason="root executor, host /dev/shm")
def test_what_a_cell_leaves_in_dev_shm_goes_with_it(ex):
    # red-team pass 9: a program filled the host's /dev/shm; the pages stayed charged to the
    # worker's cell cgroup after the cell was killed, and every later cell of every task ran out
    # of memory (a right program of another task: `memory` on every test); the files outlived the run
    filler = ("def f():\n    for i in range(5):\n"
              "        with open('/dev/shm/coevo_fill_%d' % i, 'wb') as fh:\n"
              "            fh.write(b'x' * (44 << 20))\n    return 3\n")
    needy = "def f():\n    b = bytearray(120 << 20)\n    return 3\n"
    litter = ("def f():\n    for d in ('/tmp', '/var/tmp'):\n"
              "        open(d + '/coevo_fill_litter', 'w').write('x')\n    return 3\n")  # (pass 11)
    res = ex.run_matrix(TASK, [filler, needy, needy, litter], [Test.assertion("assert f() == 3")])
    try:
        assert res.status[1:] == [["pass"], ["pass"], ["pass"]], res.errors
        assert not [n for d in ("/dev/shm", "/tmp", "/var/tmp") for n in os.listdir(d) if n.startswith("coevo_fill_")]
    finally:
        for d in ("/dev/shm", "/tmp", "/var/tmp"):
            for n in os.listdir(d):
                if n.startswith("coevo_fill_"):
                    os.unlink(os.path.join(d, n))


@pytest.mark.skipif(os.geteuid() != 0, reason="cell uids of their own need a root executor")
def test_two_runs_at_once_never_share_a_cell_uid(monkeypatch):
    """The attack: two root runs whose pids agree modulo 100,000 used to get the same cell uids
    (a shared process count; in process mode, the right to signal each other's programs). A run
    whose pid leads to a pair another live run holds takes the next free pair; a run killed with
    -9 frees its pairs."""
    import multiprocessing as mp

    mine = sandbox._uids(0)
    here = os.getpid()

    def other_run(conn):
        sandbox._held_uids.clear()
        monkeypatch.setattr(os, "getpid", lambda: here)  # the same pid as this run
        conn.send(sandbox._uids(0))
        time.sleep(60)

    ctx = mp.get_context("fork")
    a_end, b_end = ctx.Pipe()
    first = ctx.Process(target=other_run, args=(b_end,))
    first.start()
    theirs = a_end.recv()
    assert set(theirs).isdisjoint(mine) and theirs[1] == theirs[0] + 1
    second = ctx.Process(target=other_run, args=(b_end,))
    second.start()
    third = a_end.recv()
    assert set(third).isdisjoint(set(mine) | set(theirs))
    first.kill()  # -9: the kernel drops its lock
    first.join()
    fourth = ctx.Process(target=other_run, args=(b_end,))
    fourth.start()
    assert a_end.recv() == theirs
    for p in (second, fourth):
        p.kill()
        p.join()


def test_a_killed_run_leaves_no_traceback_from_its_workers(tmp_path):
    """`kill -9` of a run (coevo matrix, train, select) while its sandbox workers answer: each
    worker wrote its next result into a closed pipe and printed a BrokenPipeError traceback into the
    user's terminal (stderr is the run's). A worker whose executor is gone stops without a word."""
    import json
    import signal
    import subprocess
    import sys

    tasks = tmp_path / "tasks.jsonl"
    codes = tmp_path / "codes.jsonl"
    tests = tmp_path / "tests.jsonl"
    ids = [f"t{i}" for i in range(60)]
    tasks.write_text("".join(json.dumps({"task_id": t, "prompt": "sq", "entry_point": "sq"}) + "\n" for t in ids))
    code = "def sq(x):\n    s = 0\n    for i in range(30000):\n        s += i\n    return x * x\n"
    codes.write_text("".join(json.dumps({"task_id": t, "code": code + f"# {i}\n"}) + "\n"
                             for t in ids for i in range(4)))
    tests.write_text("".join(json.dumps({"task_id": t, "test": f"assert sq({k}) == {k * k}"}) + "\n"
                             for t in ids for k in range(6)))
    for delay in (0.3, 0.6, 1.0, 1.5):  # while the workers start, and while they answer
        proc = subprocess.Popen([sys.executable, "-m", "coevo", "matrix", "--tasks", str(tasks), "--codes", str(codes),
                                 "--tests", str(tests), "--out", str(tmp_path / "m.jsonl"), "--workers", "2",
                                 "--quiet"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        try:
            _, err = proc.communicate(timeout=60)  # to the end of stderr: every worker has exited
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        assert b"Traceback" not in err, err.decode(errors="replace")[-2000:]


@pytest.mark.skipif(os.geteuid() != 0, reason="cells run under uids of their own only for a root executor")
def test_a_cell_cannot_reach_another_workers_cell_directory(ex):
    # review of red-team pass 18: process mode's cell directories were made 0777 (so a generic test's
    # test and program processes could remove each other's files), which let a program of another
    # worker or another run unlink, rename or rewrite the files of a cell while it ran (an honest
    # test's 'a.txt' vanished: FileNotFoundError). Only the cell's own two processes get in.
    probe = """
import os
def f():
    mine = os.path.realpath(os.getcwd())
    reached = []
    for n in os.listdir('/tmp'):
        d = os.path.realpath('/tmp/' + n)
        if not n.startswith('coevo-cell-') or d == mine:
            continue
        for how in ('list', 'write'):
            try:
                if how == 'list':
                    os.listdir(d)
                else:
                    with open(os.path.join(d, 'planted'), 'w') as fh:
                        fh.write('x')
                reached.append((n, how))
            except OSError:
                pass
    return reached
"""
    foreign = [d for d in os.listdir("/tmp") if d.startswith("coevo-cell-")]
    assert len(foreign) >= 2  # this executor's two workers at least
    m = ex.run_matrix(TASK, [probe], [Test.assertion("assert f() == []")])
    assert m.status[0][0] == "pass", m.errors[0][0]
    # the cell's own two processes still share its files (a generic test writes, the program reads)
    code = "def f(p):\n    with open(p) as fh:\n        return fh.read()\n"
    test = "with open('t.txt', 'w') as fh:\n    fh.write('hi')\nfor _ in range(1):\n    assert f('t.txt') == 'hi'\n"
    assert ex.run_matrix(TASK, [code], [Test.assertion(test)]).status[0][0] == "pass"
