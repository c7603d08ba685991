"""Right programs raising a standard module's own exception, checked with ``pytest.raises`` or
``except``: since red-team pass 35 (review 34 H2) a standard exception class is the test's own only
where the zygote loaded its module (a module loaded later is the program's to change), and
zipfile.BadZipFile, getopt.GetoptError, calendar.IllegalMonthError, email.errors' and
urllib.error's classes were an ERROR where Python passes (all passed before the pass). The zygote
preloads them now (matrix/sandbox/purity.py PRELOAD). A class the program plants in such a module
stays its own, as a class named like one does (passes 34, 35). Each stated verdict is checked against
plain Python here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from matrix.engine import ExecConfig, Executor
from matrix.tasks import Task, Test

pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"), pytest.mark.timeout(300)]


def _raising(mod: str, call: str) -> str:
    return f"import {mod}\ndef f():\n    return {call}\n"


def _throw(mod: str, exc: str) -> str:
    return f"import {mod}\ndef f():\n    raise {exc}('x')\n"


ROWS = [  # (name, program, test, verdict)
    ("zipfile", _raising("zipfile, io", "zipfile.ZipFile(io.BytesIO(b'no'))"),
     "import zipfile, pytest\nwith pytest.raises(zipfile.BadZipFile):\n    f()", "pass"),
    ("getopt", _raising("getopt", "getopt.getopt(['-z'], 'a')"),
     "import getopt\ntry:\n    f()\n    assert False\nexcept getopt.GetoptError:\n    pass", "pass"),
    ("calendar", _raising("calendar", "calendar.monthrange(2020, 13)"),
     "import calendar, pytest\nwith pytest.raises(calendar.IllegalMonthError):\n    f()", "pass"),
    ("email_errors", _throw("email.errors", "email.errors.MessageError"),
     "import email.errors, pytest\nwith pytest.raises(email.errors.MessageError):\n    f()", "pass"),
    ("urllib_error", _throw("urllib.error", "urllib.error.URLError"),
     "import urllib.error, pytest\nwith pytest.raises(urllib.error.URLError):\n    f()", "pass"),
    ("tarfile", _throw("tarfile", "tarfile.ReadError"),
     "import tarfile, pytest\nwith pytest.raises(tarfile.TarError):\n    f()", "pass"),
    # the program's own class named as the standard one is its own (pass 34)
    ("named_zipfile", "import zipfile\nclass BadZipFile(Exception):\n    __module__ = 'zipfile'\n"
     "def f():\n    raise BadZipFile('x')\n",
     "import zipfile, pytest\nwith pytest.raises(zipfile.BadZipFile):\n    f()", "error"),
    ("named_getopt", "import getopt\nclass GetoptError(Exception):\n    __module__ = 'getopt'\n"
     "def f():\n    raise GetoptError('x')\n",
     "import getopt\ntry:\n    f()\nexcept getopt.GetoptError:\n    pass", "error"),
]

_PLAIN = r"""
import json, sys, types
code, test = json.loads(sys.stdin.read())
mod = types.ModuleType("solution")
sys.modules["solution"] = mod
exec(code, mod.__dict__)
try:
    exec(test, mod.__dict__)
    print("pass")
except AssertionError:
    print("fail")
except BaseException:
    print("error")
"""


def _generic(test: str) -> str:
    return "def test_a():\n" + "".join(f"    {line}\n" for line in test.splitlines())


@pytest.fixture(scope="module")
def ex():
    with Executor(ExecConfig(timeout=10.0, workers=1)) as e:
        yield e


@pytest.mark.parametrize("shape", ["split", "generic"])
@pytest.mark.parametrize("name,code,test,verdict", ROWS, ids=[r[0] for r in ROWS])
def test_the_verdict_is_plain_pythons(ex, name, code, test, verdict, shape):
    src = test if shape == "split" else _generic(test)
    res = ex.run_matrix(Task("t", "p", entry_point="f"), [code], [Test.assertion(src)])
    assert res.status[0][0] == verdict, (res.status, res.errors)


@pytest.mark.parametrize("name,code,test,verdict", ROWS, ids=[r[0] for r in ROWS])
def test_the_stated_verdicts_are_plain_pythons(name, code, test, verdict):
    out = subprocess.run([sys.executable, "-c", _PLAIN], input=json.dumps([code, test]),
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == verdict, out.stderr
