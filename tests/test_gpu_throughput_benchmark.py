"""benchmarks/gpu_throughput.py runs with --device cpu on a tiny local model and prints one JSON line
with both frameworks' rollout tokens/s and training-step MFU; rows that cannot run say why."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_cpu_run_prints_one_json_line():
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_throughput.py"), "--device", "cpu",
                        "--prompts", "2", "--G", "2", "--micro", "1", "--prompt-len", "8", "--completion-len", "5",
                        "--batches", "1", "--warmup", "0"], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    out = json.loads(lines[0])
    assert out["device"] == "cpu" and out["model"]["random_weights"] and out["peak_tflops"] > 0
    for name in ("coevo_hf", "trl_hf"):
        row = out[name]
        assert row["available"] and row["rollout_tokens_per_s_per_gpu"] > 0 and 0 < row["mfu"]
        assert row["completion_tokens"] == {"min": 5, "max": 5}  # EOS disabled: fixed lengths on both sides
    assert out["coevo_hf"]["logprob_diff"] is not None
    if importlib.util.find_spec("vllm") is None:
        for name in ("coevo_vllm", "trl_vllm"):
            assert out[name] == {"available": False, "reason": "vllm is not installed (pip install 'coevo[vllm]')"}
        assert out["rollout_speedup_coevo_vllm_vs_trl_vllm"] is None
