"""Long work says where it is without a terminal: `coevo matrix`, `select`, `eval` and `solve` draw
progress bars only on a terminal (or with --progress); with stderr a log file (nohup, CI) they
print status lines with an ETA instead, at most one every STATUS_EVERY_S seconds (none for work
shorter than that), prefixed like the command's other lines (``coevo matrix: ...``). Results are
the same either way. The interval is set to 0 here so every chunk of work says its line."""

from __future__ import annotations

import json
import re

import pytest

from coevo.cli import main
from coevo.commands import matrix_cmd

N_TASKS = 6


def _files(tmp_path):
    tasks, codes = [], []
    for i in range(N_TASKS):
        tid = f"t/{i}"
        tasks.append({"task_id": tid, "prompt": f"Return x + {i}.", "entry_point": "f",
                      "tests": [{"test": f"assert f(1) == {1 + i}"}, {"test": f"assert f(2) == {2 + i}"}]})
        codes += [{"task_id": tid, "code": f"def f(x):\n    return x + {i}\n"},
                  {"task_id": tid, "code": "def f(x):\n    return x\n"}]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps(c) + "\n" for c in codes), encoding="utf-8")
    return str(tmp_path / "tasks.jsonl"), str(tmp_path / "codes.jsonl")


STATUS = re.compile(r"^coevo (\w+): matrix: (\d+)/(\d+) tasks, (\d+)/(\d+) cells \(\S+ cells/s, ETA \d+[smh]")


def _status_lines(err: str, command: str) -> list[re.Match]:
    lines = [STATUS.match(ln) for ln in err.splitlines()]
    got = [m for m in lines if m]
    assert all(m.group(1) == command for m in got)
    return got


def test_matrix_says_where_it_is_without_a_terminal(tmp_path, capsys, monkeypatch):
    tasks, codes = _files(tmp_path)
    monkeypatch.setattr(matrix_cmd, "STATUS_EVERY_S", 0.0)
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--out", str(out), "--workers", "2"]) == 0
    lines = _status_lines(capsys.readouterr().err, "matrix")
    assert lines, "no status line"
    assert [int(m.group(3)) for m in lines] == [N_TASKS] * len(lines)
    done = [int(m.group(2)) for m in lines]
    assert done == sorted(done) and done[-1] < N_TASKS  # the last chunk's line is the summary's
    assert all(int(m.group(5)) == N_TASKS * 4 for m in lines)
    # the same matrix as one run's
    monkeypatch.setattr(matrix_cmd, "STATUS_EVERY_S", 1e9)
    out2 = tmp_path / "m2.jsonl"
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--out", str(out2), "--workers", "2"]) == 0
    assert not _status_lines(capsys.readouterr().err, "matrix")  # short work: no status line
    strip = [{k: v for k, v in json.loads(ln).items() if k not in ("times",)} for ln in out.read_text().splitlines()]
    strip2 = [{k: v for k, v in json.loads(ln).items() if k not in ("times",)} for ln in out2.read_text().splitlines()]
    assert strip == strip2
    assert [r["passed"] for r in strip] == [[[True, True], [False, False]] if i else [[True, True], [True, True]]
                                           for i in range(N_TASKS)]


def test_quiet_says_nothing(tmp_path, capsys, monkeypatch):
    tasks, codes = _files(tmp_path)
    monkeypatch.setattr(matrix_cmd, "STATUS_EVERY_S", 0.0)
    assert main(["matrix", "--tasks", tasks, "--codes", codes, "--out", str(tmp_path / "m.jsonl"), "-q"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("command", ["select", "eval"])
def test_select_and_eval_say_where_they_are_without_a_terminal(tmp_path, capsys, monkeypatch, command):
    tasks, codes = _files(tmp_path)
    monkeypatch.setattr(matrix_cmd, "STATUS_EVERY_S", 0.0)
    out = tmp_path / "o.json"
    extra = ["--tests", str(tmp_path / "tests.jsonl")] if command == "select" else []
    if command == "select":
        rows = [{"task_id": f"t/{i}", "test": f"assert f(3) == {3 + i}"} for i in range(N_TASKS)]
        (tmp_path / "tests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main([command, "--tasks", tasks, "--codes", codes, "--out", str(out), "--workers", "2"] + extra) == 0
    assert _status_lines(capsys.readouterr().err, command)


def test_status_executor_paces_its_lines_by_the_clock():
    """A fake clock: lines only once ``every_s`` has passed since the last (or the start), the rate
    from the chunks after the first (which carries the start-up)."""
    said: list[str] = []
    now = [0.0]

    class Ex:
        calls: list[int] = []

        def run_matrices(self, jobs, progress=False):
            self.calls.append(len(jobs))
            now[0] += 100.0 if len(self.calls) == 1 else 1.0 * sum(len(j[1]) * len(j[2]) for j in jobs)
            return [j[0] for j in jobs]

    ex = Ex()
    st = matrix_cmd.StatusExecutor(ex, said.append, every_s=10.0, clock=lambda: now[0])
    jobs = [(k, [1, 2], [1, 2]) for k in range(40)]  # 4 cells each, 160 cells, 1 s a cell after start-up
    assert st.run_matrices(jobs) == list(range(40))
    assert sum(ex.calls) == 40 and len(ex.calls) > 2
    assert said and all("cells/s" in s for s in said)
    # after the first chunk (100 s of start-up) the rate is 1 cell/s, not diluted by the start-up
    assert all(" (1 cells/s, " in s for s in said[1:]), said
    assert "ETA" in said[-1]
