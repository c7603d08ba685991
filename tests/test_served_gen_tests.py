"""`coevo gen-tests` (its JSONL-task mode) end to end through a real OpenAI-compatible server
(`transformers serve`, started by tests/test_served_server.py's :func:`served_add_model`).

Skipped only while `coevo gen-tests` does not accept ``--api-base`` (its model options come from
``coevo.commands.solve_cmd.add_model_arguments``); it runs as soon as it does.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openai")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")


def _gen_tests_takes_api_base() -> bool:
    from coevo.cli import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions:  # the subcommands
        sub = action.choices.get("gen-tests")
        if sub is not None:
            return any("--api-base" in a.option_strings for a in sub._actions)
    return False


@pytest.mark.skipif(not _gen_tests_takes_api_base(), reason="coevo gen-tests does not accept --api-base yet")
@pytest.mark.timeout(240)
def test_gen_tests_through_the_server_keeps_the_right_tests(tmp_path, monkeypatch, capsys):
    import torch
    from test_served_server import add_tasks_file, served_add_model
    from tinymodel import ADD_BAD_TEST, ADD_GOOD_TESTS

    from coevo.cli import main

    base, model = served_add_model()
    monkeypatch.setenv("COEVO_API_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "suite"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rc = main(["gen-tests", "--api-base", base, "--api-model", model, "--api-prompt", "plain",
                   "--api-concurrency", "1", "--tasks", add_tasks_file(tmp_path / "tasks.jsonl"),
                   "--out", str(out), "--n-codes", "6", "--n-tests", "4", "--temperature", "1.0",
                   "--top-p", "1.0", "--max-new-tokens", "48", "--consensus-inputs", "0",
                   "--min-score", "0.5"])  # six samples of a toy model: the right tests score ~0.6
    finally:
        torch.set_num_threads(threads)
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "requests" in err and "tokens used" in err  # the served backend's summary line
    kept = [json.loads(line) for line in (out / "tests.jsonl").read_text().splitlines()]
    assert kept and all(r["test"] in ADD_GOOD_TESTS and r["score"] >= 0.5 for r in kept)
    assert ADD_BAD_TEST not in (out / "test_add.py").read_text()
