"""gen-tests leaves no files behind: the pytest verification job (harness ``_cv_pytest``) removes
its ``cv-pytest-*`` work directory and its ``cv-project-*`` project mirror when it is done, also
where the sandbox gives it no fresh /tmp of its own (the directories piled up in the host's /tmp)."""

import os
import tempfile

import pytest

from coevo.testgen import harness

TEXT = "def test_one():\n    assert 1 + 1 == 2\n"


def _harness() -> dict:
    ns: dict = {"__coevo_job__": {"name": "x", "file": "x.py"}}
    exec(compile(harness.source(), "<harness>", "exec"), ns)
    return ns


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    cwd = os.getcwd()
    yield tmp
    os.chdir(cwd)


def test_the_pytest_job_removes_its_work_directory(private_tmp):
    ns = _harness()
    job = {"files": {"test_generated.py": TEXT}, "paths": [], "timeout": 120, "runs": [[1, False], [2, True]]}
    res = ns["_cv_pytest"](job)
    assert [r["test_generated.py::test_one"] for r in res["runs"]] == ["passed", "passed"], res
    assert sorted(os.listdir(private_tmp)) == []


def test_the_in_process_pytest_job_removes_its_work_directory(private_tmp):
    ns = _harness()
    job = {"files": {"test_generated.py": TEXT}, "paths": [], "timeout": 120, "runs": [[1, False]],
           "inprocess": True}
    res = ns["_cv_pytest"](job)
    assert res["runs"][0]["test_generated.py::test_one"] == "passed", res
    assert sorted(os.listdir(private_tmp)) == []


def test_the_project_pytest_job_removes_its_mirror(private_tmp, tmp_path):
    ns = _harness()
    proj = tmp_path / "proj"
    (proj / "tests").mkdir(parents=True)
    project = {"dir": "tests", "name": "test_generated.py", "links": {},
               "files": {"pytest.ini": "[pytest]\n"}}
    job = {"files": {"test_generated.py": TEXT}, "paths": [], "timeout": 120, "runs": [[1, False]],
           "project": project}
    res = ns["_cv_pytest"](job)
    assert res["runs"][0]["test_generated.py::test_one"] == "passed", res
    assert sorted(os.listdir(private_tmp)) == []
