"""The vLLM rollout backend, as far as it can be checked without vLLM and a GPU: the pure helpers
that turn vLLM's documented outputs (``RequestOutput.outputs``: ``CompletionOutput`` with
``index``, ``token_ids``, ``logprobs`` as one ``{token_id: Logprob}`` per position,
``finish_reason``) into our ``Sample`` objects, and the one-line errors when the backend is asked
for where it cannot run. The engine itself (``VLLMEngine``) is never run here: see its module doc."""

import importlib.util
import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from matrix.errors import InputError
from roles.generation import GenRequest
from roles.vllm_engine import (
    VLLMConfig,
    request_seed,
    require_vllm,
    sampled_logprobs,
    samples_from_outputs,
    token_limits,
)

ROOT = Path(__file__).resolve().parents[1]
HAVE_VLLM = importlib.util.find_spec("vllm") is not None


@dataclass
class Logprob:  # the fields of vllm.logprobs.Logprob that we read
    logprob: float
    rank: int | None = None


@dataclass
class Completion:  # the fields of vllm.outputs.CompletionOutput that we read
    index: int
    token_ids: list
    logprobs: list | None
    finish_reason: str | None


@dataclass
class Output:  # vllm.outputs.RequestOutput
    outputs: list = field(default_factory=list)


def lp(tokens, values):
    return [{t: Logprob(v, 1), 999: Logprob(-9.0, 2)} for t, v in zip(tokens, values)]


def test_request_seed():
    a = request_seed(0, "def f():", 0)
    assert a == request_seed(0, "def f():", 0) and 0 <= a < 2**63
    assert len({a, request_seed(1, "def f():", 0), request_seed(0, "def f():", 1), request_seed(0, "def g():", 0)}) == 4


def test_token_limits():
    assert token_limits([3, 10, 20], 8, None) == [8, 8, 8]
    assert token_limits([3, 10, 20], 8, 16) == [8, 6, 0]


def test_sampled_logprobs():
    assert sampled_logprobs([5, 7], lp([5, 7], [-0.5, -1.25])) == [-0.5, -1.25]
    assert sampled_logprobs([5, 7], [{5: -0.5}, {7: -1.0}]) == [-0.5, -1.0]  # plain floats
    assert sampled_logprobs([], []) == []
    # anything short of one finite log-prob per sampled token: none at all
    assert sampled_logprobs([5, 7], None) == []
    assert sampled_logprobs([5, 7], lp([5], [-0.5])) == []
    assert sampled_logprobs([5, 7], lp([5, 8], [-0.5, -1.0])) == []
    assert sampled_logprobs([5, 7], [{5: Logprob(-0.5)}, None]) == []
    for bad in (math.nan, math.inf, -math.inf):
        assert sampled_logprobs([5, 7], lp([5, 7], [-0.5, bad])) == []


def test_samples_from_outputs_order_truncation_and_logprobs():
    reqs = [GenRequest("coder", "t1", "p1", n=2, meta={"k": 1}), GenRequest("tester", "t2", "p2", n=1),
            GenRequest("coder", "t3", "p3", n=2), GenRequest("fixer", "t4", "p4", n=0)]
    prompts = [[1, 2], [3], [4, 4, 4], [5]]
    outs = [Output([Completion(1, [9, 0], lp([9, 0], [-2.0, -0.1]), "stop"),  # index order, not list order
                    Completion(0, [8, 8, 8], lp([8, 8, 8], [-1.0, -1.5, -0.5]), "length")]),
            Output([Completion(0, [7], [{7: Logprob(math.nan)}], "stop")]),
            None,  # no room in the context
            None]  # n = 0
    got = samples_from_outputs(reqs, prompts, outs, lambda ids: "|".join(map(str, ids)))
    assert [(s.task_id, s.index) for s in got] == [("t1", 0), ("t1", 1), ("t2", 0), ("t3", 0), ("t3", 1)]
    s0, s1, s2, s3, _ = got
    assert (s0.completion_ids, s0.logprobs, s0.truncated, s0.text) == ([8, 8, 8], [-1.0, -1.5, -0.5], True, "8|8|8")
    assert (s1.completion_ids, s1.logprobs, s1.truncated) == ([9, 0], [-2.0, -0.1], False)
    assert s0.prompt_ids == [1, 2] and s0.meta == {"k": 1} and s0.meta is not reqs[0].meta
    assert s2.logprobs == [] and s2.role == "tester"  # NaN from the sampler: no sampler log-probs
    assert (s3.completion_ids, s3.logprobs, s3.truncated, s3.prompt_ids) == ([], [], True, [4, 4, 4])
    # greedy: a deterministic policy, every log-prob 0 (as the in-process engine)
    g = samples_from_outputs(reqs[1:2], prompts[1:2], [Output([Completion(0, [7, 6], None, "stop")])], str,
                             greedy=True)
    assert g[0].logprobs == [0.0, 0.0]
    with pytest.raises(ValueError, match="completions for n=2"):
        samples_from_outputs(reqs[:1], prompts[:1], [Output([Completion(0, [1], None, "stop")])], str)
    with pytest.raises(ValueError, match="outputs"):
        samples_from_outputs(reqs, prompts, outs[:2], str)


def test_config_validation():
    VLLMConfig().validate()
    for kw, name in ((dict(gpu_memory_utilization=1.0), "gpu_memory_utilization"), (dict(sleep_level=3), "sleep_level"),
                     (dict(max_model_len=-1), "max_model_len"), (dict(max_num_seqs=0), "max_num_seqs"),
                     (dict(dtype="int8"), "dtype")):
        with pytest.raises(ValueError, match=f"^{name}:"):
            VLLMConfig(**kw).validate()


@pytest.mark.skipif(HAVE_VLLM, reason="vLLM is installed here")
def test_missing_vllm_is_a_one_line_input_error():
    with pytest.raises(InputError, match="rollout.backend.*coevo\\[vllm\\]"):
        require_vllm()
    from roles.vllm_engine import VLLMEngine

    with pytest.raises(InputError):
        VLLMEngine("unused", tokenizer=None)


@pytest.mark.skipif(HAVE_VLLM, reason="vLLM is installed here")
def test_train_with_the_vllm_backend_stops_before_any_work(tmp_path):
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "coevo", "train", "--config", str(ROOT / "configs" / "smoke.yaml"),
                        "--out", str(out), "rollout.backend=vllm"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2
    last = r.stderr.strip().splitlines()[-1]
    assert "rollout.backend" in last and "coevo[vllm]" in last and "Traceback" not in r.stderr
    assert not (out / "init").exists()  # no warm-up, no model
