"""`coevo gen-tests` end to end: a garbage model and a taught one (see test_solve_cli)."""

import json
import os
import subprocess
import sys

import pytest
from tinymodel import (
    ADD_BAD_TEST,
    ADD_GOOD_TESTS,
    ADD_RIGHT,
    ADD_TASK,
    ADD_WRONG,
    build_add_model,
    tiny_model_path,
)

from coevo.cli import main
from coevo.commands.gen_tests_cmd import render_pytest_file, safe_name
from matrix.tasks import Task, Test, load_tests

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def taught_model(tmp_path_factory):
    return build_add_model(tmp_path_factory.mktemp("taught"))


ADD = Task.from_json(ADD_TASK)


def write_tasks(path, tasks):
    path.write_text("".join(json.dumps(t.to_json()) + "\n" for t in tasks))
    return str(path)


def run_pytest(path, env=None):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)],
                          capture_output=True, text=True, cwd=path, env=env, timeout=120)


def test_garbage_model_gives_runnable_files(tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl", [
        ADD, Task("io/1", "Echo the input.", "stdio", None)])
    out = tmp_path / "gen"
    rc = main(["gen-tests", "--model", tiny_model_path(), "--tasks", tasks, "--out", str(out),
               "--n-codes", "2", "--n-tests", "2", "--max-new-tokens", "32", "--quiet"])
    assert rc == 0
    assert sorted(p.name for p in out.glob("test_*.py")) == ["test_add.py", "test_io_1.py"]
    rows = [json.loads(line) for line in (out / "tests.jsonl").read_text().splitlines()]
    assert all(r["task_id"] in {"add", "io/1"} for r in rows)
    res = run_pytest(out)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "skipped" in res.stdout
    # a second suite of the same tasks elsewhere runs in the same pytest session (no basename clash)
    other = tmp_path / "gen2"
    assert main(["gen-tests", "--model", tiny_model_path(), "--tasks", tasks, "--out", str(other),
                 "--n-codes", "2", "--n-tests", "2", "--max-new-tokens", "32", "--quiet"]) == 0
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out), str(other)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert res.returncode == 0 and "mismatch" not in res.stdout + res.stderr, res.stdout + res.stderr
    # --out reused with fewer tasks: the files of the earlier run that are not rewritten are gone
    tasks = write_tasks(tmp_path / "tasks.jsonl", [ADD])
    (out / "notes.txt").write_text("mine")
    assert main(["gen-tests", "--model", tiny_model_path(), "--tasks", tasks, "--out", str(out),
                 "--n-codes", "2", "--n-tests", "2", "--max-new-tokens", "32", "--quiet"]) == 0
    assert sorted(p.name for p in out.glob("test_*.py")) == ["test_add.py"]
    assert not (out / "solutions" / "io_1.py").exists() and (out / "notes.txt").read_text() == "mine"


def test_taught_model_keeps_only_reliable_tests(tmp_path, taught_model):
    tasks = write_tasks(tmp_path / "tasks.jsonl", [ADD])
    out = tmp_path / "gen"
    rc = main(["gen-tests", "--model", taught_model, "--tasks", tasks, "--out", str(out),
               "--n-codes", "8", "--n-tests", "8", "--temperature", "1.0", "--top-p", "1.0",
               "--max-new-tokens", "48", "--seed", "3", "--quiet"])
    assert rc == 0
    kept = load_tests(out / "tests.jsonl", ["add"])["add"]
    srcs = [t.test for t in kept]
    assert ADD_BAD_TEST not in srcs and set(srcs) & set(ADD_GOOD_TESTS)
    rows = [json.loads(line) for line in (out / "tests.jsonl").read_text().splitlines()]
    assert all(0.5 <= r["score"] <= 1 for r in rows)
    text = (out / "test_add.py").read_text()
    assert text.count("# reliability ") == len(kept)
    assert (out / "solutions" / "add.py").read_text().strip() == ADD_RIGHT
    # the file passes on the selected program and fails on a wrong one
    assert run_pytest(out).returncode == 0
    wrong = tmp_path / "wrong.py"
    wrong.write_text(ADD_WRONG + "\n")
    res = run_pytest(out, env={**os.environ, "COEVO_SOLUTION": str(wrong)})
    assert res.returncode == 1 and "failed" in res.stdout


def test_pytest_files_for_stdio_call_and_test_named_entry_points(tmp_path):
    def write(sub, task, kept, solution, code=None):
        d = tmp_path / sub
        d.mkdir()
        (d / f"test_{sub}.py").write_text(render_pytest_file(task, kept, solution, timeout=20))
        if code is not None:
            (d / solution).write_text(code)

    write("s", Task("s", "Sum two ints.", "stdio", None, setup="import sys"),
          [(Test.stdio("1 2\n", "3\n"), 0.9), (Test.stdio("2 2\n", "5\n"), 0.6)], "sol.py",
          "a, b = map(int, input().split())\nprint(a + b)\n")
    write("f", Task("f", "Add.", "function", "add"),
          [(Test.call_expected("add(1, 2)", "3"), 1.0)], "missing.py")
    # an entry point named like a test is not collected as one
    write("d", Task("d", "Has duplicates?", "function", "test_duplicate"),
          [(Test.assertion("assert test_duplicate([1, 1]) == True"), 0.9)], "sol.py",
          "def test_duplicate(xs):\n    return len(set(xs)) < len(xs)\n")
    res = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    out = res.stdout
    assert "PASSED s/test_s.py::test_input_1_2" in out and "FAILED s/test_s.py::test_input_2_2" in out, out
    assert "ERROR f/test_f.py::test_add_1_2_returns_3" in out and "cannot load" in out  # fails at setup
    assert "PASSED d/test_d.py::test_test_duplicate_2_items_returns_true" in out
    assert "1 failed, 2 passed, 1 error" in out


def test_no_kept_test_skips_even_when_the_program_does_not_compile(tmp_path):
    d = tmp_path / "x"
    d.mkdir()
    (d / "sol.py").write_text("def add(a, b) return a\n")  # a syntax error
    (d / "test_x.py").write_text(render_pytest_file(Task("x", "Add.", "function", "add"), [], "sol.py",
                                                    n_generated=3))
    res = subprocess.run([sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", str(d)],
                         capture_output=True, text=True, cwd=d, timeout=120)
    assert res.returncode == 0 and "1 skipped" in res.stdout and "error" not in res.stdout.lower(), res.stdout
    assert "judged none of the 3 generated tests reliable" in res.stdout
    text = render_pytest_file(Task("x", "Add.", "function", "add"), [], "sol.py", n_generated=0)
    assert "no parseable test" in text


def test_descriptive_distinct_test_names():
    from coevo.commands.gen_tests_cmd import test_names

    tests = [Test.assertion("assert add(1, 2) == 3"), Test.assertion("assert add(1, 2) == 3 "),
             Test.call_expected("add(-1, 0)", "-1"), Test.assertion("assert not add(0, 0)"),
             Test.stdio("3 4\n", "7\n")]
    assert test_names(tests, "add") == ["test_add_1_2_returns_3", "test_add_1_2_returns_3_2",
                                        "test_add_minus_1_0_returns_minus_1", "test_add_0_0_returns_false",
                                        "test_input_3_4"]


def test_safe_names():
    assert safe_name("Mbpp/2") == "Mbpp_2" and safe_name("12") == "t12" and safe_name("///") == "task"


def test_gen_tests_bad_input(tmp_path, capsys):
    tasks = write_tasks(tmp_path / "tasks.jsonl", [ADD])
    rc = main(["gen-tests", "--model", tiny_model_path(), "--tasks", tasks, "--out",
               str(tmp_path / "gen"), "--n-tests", "0", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--n-tests" in err[0]
    assert not (tmp_path / "gen").exists()
    (tmp_path / "file").write_text("x")
    rc = main(["gen-tests", "--model", tiny_model_path(), "--tasks", tasks, "--out",
               str(tmp_path / "file"), "--quiet"])
    assert rc == 2 and "not a directory" in capsys.readouterr().err
    rc = main(["gen-tests", "--tasks", tasks, "--out", str(tmp_path / "gen"), "--quiet"])
    assert rc == 2 and "--model" in capsys.readouterr().err


def test_a_written_test_asserts_what_the_matrix_judged(tmp_path):
    # red-team pass 9: the kept tests were indented with textwrap.indent, which indented the inner
    # lines of a multi-line string too (and split at U+2028 inside a literal): the written test
    # asserted another value and failed on the right program; `2+2+...+2` (400 terms) ended the
    # naming of the tests with a RecursionError and a traceback
    code = 'def f(n):\n    return "\\n".join("ab"[:i + 1] for i in range(n))\n'
    tests = ['assert f(2) == """a\nab"""', 'assert f(1) + "\u2028x" == "a\u2028x"',
             "assert len(f(400)) - (" + "+".join(["2"] * 400) + ") == 398"]
    ns: dict = {}
    exec(code, ns)
    for t in tests:  # what the matrix judges: each passes on the code
        exec(t, dict(ns))
    (tmp_path / "sol.py").write_text(code)
    text = render_pytest_file(Task("t", "f(n) returns n lines", "function", "f"),
                              [(Test.assertion(t), 0.9) for t in tests], "sol.py")
    (tmp_path / "test_t.py").write_text(text)
    res = run_pytest(tmp_path)
    assert res.returncode == 0 and "3 passed" in res.stdout, res.stdout[-2000:]
