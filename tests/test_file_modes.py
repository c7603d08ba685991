"""Every file coevo writes gets the mode a plain open() would give it (0666 less the umask): the
atomic writer (mkstemp makes 0600) and the model's safetensors (written 0600 by safetensors) used
to be private whatever the umask."""

import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(params=[0o022, 0o027], ids=["umask022", "umask027"])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


@pytest.fixture(scope="module")
def tiny():
    from tinymodel import tiny_model_path
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny_model_path()
    return AutoModelForCausalLM.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_atomic_writers_respect_the_umask(tmp_path, umask):
    from matrix.jsonl import write_jsonl_atomic, write_text_atomic

    write_jsonl_atomic(tmp_path / "a.jsonl", [{"x": 1}])
    write_text_atomic(tmp_path / "b.txt", "hi")
    assert mode(tmp_path / "a.jsonl") == 0o666 & ~umask
    assert mode(tmp_path / "b.txt") == 0o666 & ~umask


def test_atomic_rewrite_keeps_an_existing_files_mode(tmp_path):
    from matrix.jsonl import write_text_atomic

    p = tmp_path / "c.txt"
    p.write_text("old")
    os.chmod(p, 0o640)
    write_text_atomic(p, "new")
    assert p.read_text() == "new" and mode(p) == 0o640


def test_checkpoint_files_respect_the_umask(tmp_path, umask, tiny):
    from training.checkpoint import save_checkpoint

    model, _tok = tiny
    folder = save_checkpoint(tmp_path / "run", 1, model=model, state={"n": 3})
    files = files_under(folder)
    assert any(p.suffix == ".safetensors" for p in files)
    assert {p.name: mode(p) for p in files} == {p.name: 0o666 & ~umask for p in files}


def test_exported_model_and_start_respect_the_umask(tmp_path, umask, tiny):
    import coevo.run_driver as P

    model, tok = tiny

    class Trainer:  # what export needs of a PolicyTrainer
        def export(self, out):
            model.save_pretrained(out, safe_serialization=True)

    run = tmp_path / "run"
    run.mkdir()
    P.export(Trainer(), tok, run, [])
    P._save_start(run / "init", model, tok, [], [])
    for folder in (run / "model", run / "init"):
        files = files_under(folder)
        assert any(p.suffix == ".safetensors" for p in files)
        assert {p.name: mode(p) for p in files} == {p.name: 0o666 & ~umask for p in files}
