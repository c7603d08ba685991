import json
import math

import pytest

from coevo.cli import main
from training.plot import collect_series, plot_metrics, stacked_rows


def write_metrics(run_dir, n=6):
    run_dir.mkdir(parents=True, exist_ok=True)
    with open(run_dir / "metrics.jsonl", "w") as f:
        for s in range(1, n + 1):
            f.write(json.dumps({"step": s, "time": 1000.0 + s, "loss": 1.0 / s, "reward/coder": 0.1 * s,
                                "reward/tester": 0.05 * s, "clip_frac/low": 0.01, "clip_frac/high": 0.02 * s,
                                "grad_norm": None if s == 3 else 0.5, "tokens_per_s": 1000.0 + s,
                                "note": "text"}) + "\n")
        f.write('{"step": 99, "loss": ')  # a torn last line is ignored


def _is_png(path):
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_metrics_writes_png(tmp_path):
    run = tmp_path / "run"
    write_metrics(run)
    out = plot_metrics(run)
    assert out == run / "curves.png" and _is_png(out) and out.stat().st_size > 5000
    out2 = plot_metrics(run / "metrics.jsonl", tmp_path / "sub" / "x.png", keys=["reward"], smooth=3)
    assert _is_png(out2)


def test_extra_series_replace_their_panel(tmp_path, monkeypatch):
    run = tmp_path / "run"
    write_metrics(run)
    evals = [{"step": 0, "code_acc": 0.4, "tasks": 64, "seconds": 9.0}, {"step": 6, "code_acc": 0.5, "tasks": 64}]
    seen = {}
    import training.plot as tp

    real = tp.collect_series
    monkeypatch.setattr(tp, "collect_series", lambda recs: seen.setdefault(len(seen), real(recs)))
    out = plot_metrics(run, tmp_path / "e.png", extra={"eval": evals})
    assert _is_png(out)
    merged = seen[1]  # the extra records' series
    assert merged == {"eval/code_acc": ([0, 6], [0.4, 0.5])}  # counts and timings left out


def test_the_last_evaluation_s_reliability_diagram_is_drawn(tmp_path, monkeypatch):
    run = tmp_path / "run"
    write_metrics(run)
    curve = [{"lo": 0.5, "hi": 0.6, "n": 4, "score": 0.55, "right": 0.25},
             {"lo": 0.9, "hi": 1.0, "n": 0, "score": 0.0, "right": 0.0},  # an empty bin stays out
             {"lo": 0.8, "hi": 0.9, "n": 6, "score": 0.85, "right": 0.8}]
    evals = [{"step": 0, "code_acc": 0.4, "calibration": {"select": {"ece": 0.9, "curve": []}}},
             {"step": 6, "code_acc": 0.5, "calibration": {"select": {"ece": 0.2, "curve": curve}}}]
    import training.plot as tp

    drawn = []
    real = tp._reliability
    monkeypatch.setattr(tp, "_reliability", lambda ax, pts: (drawn.append(pts), real(ax, pts)))
    assert _is_png(plot_metrics(run, tmp_path / "c.png", extra={"eval": evals}))
    assert drawn == [{"step": 6, "curves": {"select": ([0.55, 0.85], [0.25, 0.8], [4, 6], 0.2)}}]
    assert tp.reliability_points([{"step": 1, "code_acc": 0.3}]) == {}
    assert _is_png(plot_metrics(run, tmp_path / "d.png", extra={"eval": evals[:1]}))  # nothing to draw: no panel


def test_rejection_reasons_are_stacked_in_their_own_panel(tmp_path, monkeypatch):
    run = tmp_path / "run"
    run.mkdir()
    with open(run / "metrics.jsonl", "w") as f:
        for s in range(1, 5):
            f.write(json.dumps({"step": s, "loss": 1.0, "reject/malformed": 0.5 - 0.1 * s, "reject/duplicate": 0.25,
                                "reject/heldout": 0.0, "proposer/valid_frac": 0.25 + 0.1 * s}) + "\n")
    import training.plot as tp

    calls = []
    real = tp._stack
    monkeypatch.setattr(tp, "_stack", lambda ax, panel, keys, series: (calls.append((panel, keys)),
                                                                      real(ax, panel, keys, series)))
    assert _is_png(plot_metrics(run, tmp_path / "r.png"))
    assert calls == [("reject", ["reject/duplicate", "reject/heldout", "reject/malformed"])]
    series = {"a/x": ([1, 2, 4], [0.1, 0.2, 0.4]), "a/y": ([2, 3], [0.5, 0.6])}
    assert stacked_rows(["a/x", "a/y"], series) == ([1, 2, 3, 4], [[0.1, 0.2, 0.0, 0.4], [0.0, 0.5, 0.6, 0.0]])


def test_collect_series_skips_text_and_nulls(tmp_path):
    run = tmp_path / "run"
    write_metrics(run)
    from training.metrics_file import read_metrics

    s = collect_series(read_metrics(run))
    assert "note" not in s and "time" not in s and "step" not in s
    assert s["grad_norm"][0] == [1, 2, 4, 5, 6]
    assert s["reward/coder"][1] == pytest.approx([0.1 * i for i in range(1, 7)])
    assert all(math.isfinite(v) for _, ys in s.values() for v in ys)


def test_plot_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        plot_metrics(tmp_path)
    (tmp_path / "metrics.jsonl").write_text("")
    with pytest.raises(ValueError, match="no metric lines"):
        plot_metrics(tmp_path)
    write_metrics(tmp_path)
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_metrics(tmp_path, keys=["nope"])


def test_cli_plot(tmp_path, capsys):
    run = tmp_path / "run"
    write_metrics(run)
    assert main(["plot", str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert _is_png(tmp_path / "c.png")
    assert "wrote" in capsys.readouterr().err
    assert main(["plot", str(run)]) == 0 and _is_png(run / "curves.png")
    capsys.readouterr()
    # a directory without metrics: one error line naming the file, exit 2, no traceback
    (tmp_path / "empty").mkdir()
    assert main(["plot", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "metrics.jsonl" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert main(["plot", str(tmp_path / "missing")]) == 2
    assert "no such run directory" in capsys.readouterr().err
    assert main(["plot", str(run), "--keys", "nope"]) == 2
    assert "nothing to plot" in capsys.readouterr().err
