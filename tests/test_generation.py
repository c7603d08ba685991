import copy
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from tinymodel import tiny_model_path

from matrix.errors import InputError
from matrix.tasks import Task
from roles.generation import (
    GenerationConfig,
    GenerationEngine,
    GenRequest,
    _sample,
    logprobs_from_logits,
    teacher_forced_logprobs,
)
from roles.model_io import load_model
from roles.prompts import build_prompt

TASK = Task("t1", "Return the sum of a and b.", "function", "add")


@pytest.fixture(scope="module")
def model_tok():
    # one thread: a tiny model gains nothing from more, and OpenMP threads crawl on a busy CPU
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_model(tiny_model_path(), device="cpu")
    torch.set_num_threads(threads)


def _engine(model_tok, **kw):
    model, tok = model_tok
    return GenerationEngine(model, tok, GenerationConfig(**kw))


def _requests(tok):
    return [GenRequest("coder", "t1", build_prompt("coder", TASK, tok), n=3, meta={"x": 1}),
            GenRequest("tester", "t1", build_prompt("tester", TASK, tok, n_tests=3), n=2),
            GenRequest("proposer", "p", build_prompt("proposer", None, tok), n=1)]


def test_shapes_order_and_mixed_roles(model_tok):
    _, tok = model_tok
    eng = _engine(model_tok, max_new_tokens=24, seed=3, batch_size=4)
    out = eng.generate(_requests(tok))
    assert [(s.role, s.index) for s in out] == [("coder", 0), ("coder", 1), ("coder", 2),
                                                 ("tester", 0), ("tester", 1), ("proposer", 0)]
    assert out[0].meta == {"x": 1} and out[5].task_id == "p"
    for s in out:
        assert 1 <= len(s.completion_ids) <= 24
        assert len(s.logprobs) == len(s.completion_ids) == len(s.completion_mask)
        assert all(lp <= 1e-6 and math.isfinite(lp) for lp in s.logprobs)
        ended = s.completion_ids[-1] == tok.eos_token_id
        assert s.truncated == (not ended)
        assert tok.eos_token_id not in s.completion_ids[:-1]
        if s.truncated:
            assert len(s.completion_ids) == 24
        assert s.prompt_ids == tok(build_prompt(s.role, TASK if s.role != "proposer" else None,
                                                tok, n_tests=3 if s.role == "tester" else None),
                                   add_special_tokens=False)["input_ids"]
        assert isinstance(s.text, str)
    assert eng.stats["completion_tokens"] == sum(len(s.completion_ids) for s in out)


def test_seed_reproducible_and_seed_matters(model_tok):
    _, tok = model_tok
    a = _engine(model_tok, max_new_tokens=20, seed=7).generate(_requests(tok))
    b = _engine(model_tok, max_new_tokens=20, seed=7).generate(_requests(tok))
    c = _engine(model_tok, max_new_tokens=20, seed=8).generate(_requests(tok))
    assert [s.completion_ids for s in a] == [s.completion_ids for s in b]
    assert [s.logprobs for s in a] == [s.logprobs for s in b]
    assert [s.completion_ids for s in a] != [s.completion_ids for s in c]
    # the n samples of one request differ, and so do two identical requests
    assert len({tuple(s.completion_ids) for s in a[:3]}) == 3
    twice = _engine(model_tok, max_new_tokens=20, seed=7).generate(
        [GenRequest("coder", "t1", "<|role|>coder\n", 1)] * 2)
    assert twice[0].completion_ids != twice[1].completion_ids


def test_batch_companions_and_batch_size_do_not_matter(model_tok):
    _, tok = model_tok
    reqs = _requests(tok)
    full = _engine(model_tok, max_new_tokens=20, seed=5, batch_size=64).generate(reqs)
    alone = _engine(model_tok, max_new_tokens=20, seed=5, batch_size=1).generate([reqs[1]])
    reordered = _engine(model_tok, max_new_tokens=20, seed=5, batch_size=2).generate(reqs[::-1])
    assert [s.completion_ids for s in alone] == [s.completion_ids for s in full[3:5]]
    assert [s.completion_ids for s in reordered[1:3]] == [s.completion_ids for s in full[3:5]]


@pytest.mark.parametrize("temperature,top_p", [(1.0, 1.0), (0.7, 1.0), (0.8, 0.9), (1.3, 0.5)])
def test_logprobs_match_teacher_forcing(model_tok, temperature, top_p):
    model, tok = model_tok
    eng = _engine(model_tok, max_new_tokens=30, seed=1, temperature=temperature, top_p=top_p)
    out = eng.generate(_requests(tok))
    tf = teacher_forced_logprobs(model, out, eng.pad_id, temperature, top_p)
    for s, ref in zip(out, tf):
        assert len(ref) == len(s.logprobs)
        assert max(abs(a - b) for a, b in zip(s.logprobs, ref)) < 1e-4


def test_greedy_is_deterministic_with_zero_logprobs(model_tok):
    model, tok = model_tok
    eng = _engine(model_tok, max_new_tokens=15, temperature=0.0)
    a = eng.generate([GenRequest("coder", "t1", build_prompt("coder", TASK, tok), n=2)])
    assert a[0].completion_ids == a[1].completion_ids and set(a[0].logprobs) == {0.0}
    with torch.no_grad():
        ids = torch.tensor([a[0].prompt_ids])
        first = model(input_ids=ids).logits[0, -1].argmax().item()
    assert a[0].completion_ids[0] == first


def test_eos_stop_and_truncation(model_tok):
    model, tok = model_tok
    eos = tok.eos_token_id
    # make EOS overwhelmingly likely: every sample stops after one token
    bias = torch.zeros(model.config.vocab_size)
    bias[eos] = 100.0
    head = model.get_output_embeddings()
    old = getattr(head, "bias", None)
    head.bias = torch.nn.Parameter(bias)
    try:
        out = _engine(model_tok, max_new_tokens=10, seed=0).generate(_requests(tok))
    finally:
        head.bias = old
    assert all(s.completion_ids == [eos] and not s.truncated and s.text == "" for s in out)
    # max_new_tokens=1 without EOS: truncated
    out = _engine(model_tok, max_new_tokens=1, seed=0).generate(_requests(tok))
    assert all(len(s.completion_ids) == 1 for s in out)
    assert all(s.truncated == (s.completion_ids[0] != eos) for s in out)


def test_context_length_limits_generation(model_tok):
    model, tok = model_tok
    ctx = model.config.max_position_embeddings
    long_prompt = "x = 1\n" * 2000
    eng = _engine(model_tok, max_new_tokens=50, seed=0, max_prompt_tokens=ctx - 5)
    out = eng.generate([GenRequest("coder", "t", long_prompt, 1),
                        GenRequest("coder", "t", "<|role|>coder\n", 1)])
    assert len(out[0].prompt_ids) == ctx - 5 and len(out[0].completion_ids) <= 5
    assert len(out[1].completion_ids) <= 50


def test_sampler_respects_top_p():
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    seen = set()
    for i in range(200):
        tok, lp = _sample(logits, torch.tensor([i / 200]), 1.0, 0.7)
        seen.add(tok.item())
        assert abs(lp.item() - math.log([0.5, 0.3][tok.item()] / 0.8)) < 1e-5
    assert seen == {0, 1}
    lp = logprobs_from_logits(logits, torch.tensor([2]), 1.0, 0.7)
    assert lp.item() == float("-inf")


def test_bad_config_and_requests(model_tok):
    with pytest.raises(ValueError):
        GenerationConfig(top_p=0)
    with pytest.raises(ValueError):
        GenerationConfig(temperature=-1)
    with pytest.raises(ValueError):
        _engine(model_tok).generate([GenRequest("coder", "t", "", 1)])
    assert _engine(model_tok).generate([GenRequest("coder", "t", "x", 0)]) == []


def test_load_model_errors(tmp_path):
    with pytest.raises(InputError, match="no such model directory"):
        load_model(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a model directory"):
        load_model(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{}")
    with pytest.raises(InputError, match="no tokenizer files"):
        load_model(tmp_path / "bad")


def test_same_samples_when_the_cache_cannot_drop_rows(model_tok, monkeypatch):
    from transformers import cache_utils

    _, tok = model_tok
    reqs = _requests(tok)
    a = _engine(model_tok, max_new_tokens=25, seed=2).generate(reqs)
    for cls in vars(cache_utils).values():
        if isinstance(cls, type) and "batch_select_indices" in vars(cls):
            monkeypatch.delattr(cls, "batch_select_indices")
    b = _engine(model_tok, max_new_tokens=25, seed=2).generate(reqs)
    assert [s.completion_ids for s in a] == [s.completion_ids for s in b]
    assert [s.truncated for s in a] == [s.truncated for s in b]


def test_length_chunks_hand_worked():
    from roles.generation import length_chunks

    # 400-token Proposer prompts never share a batch with 40-token Coder prompts
    assert length_chunks([400, 400, 130, 120, 43, 43, 39], batch_size=64) == [[0, 1], [2, 3], [4, 5, 6]]
    assert length_chunks([43, 43, 39, 39], batch_size=3) == [[0, 1, 2], [3]]
    assert length_chunks([], batch_size=4) == []
    assert length_chunks([10, 5, 4], batch_size=8) == [[0, 1], [2]]  # 5 * 2 >= 10; 4 * 2 < 10


@given(st.lists(st.integers(1, 600), max_size=80), st.integers(1, 16))
def test_length_chunks_partition_in_order_with_bounded_padding(lengths, batch_size):
    from roles.generation import PAD_RATIO, length_chunks

    lengths = sorted(lengths, reverse=True)
    chunks = length_chunks(lengths, batch_size)
    assert [i for c in chunks for i in c] == list(range(len(lengths)))
    for c in chunks:
        assert 1 <= len(c) <= batch_size
        assert lengths[c[-1]] * PAD_RATIO >= lengths[c[0]]


def test_rows_of_one_prompt_share_its_prefill(model_tok):
    model, tok = model_tok
    reqs = _requests(tok)
    seen: list[int] = []
    hook = model.model.embed_tokens.register_forward_hook(lambda mod, args, out: seen.append(int(args[0].numel())))
    try:
        eng = _engine(model_tok, max_new_tokens=25, seed=3)
        shared = eng.generate(reqs)
        shared_tokens, seen[:] = sum(seen), []
        eng.share_prefill = False
        each = eng.generate(reqs)
        each_tokens = sum(seen)
    finally:
        hook.remove()
    assert [s.completion_ids for s in shared] == [s.completion_ids for s in each]
    for s, e in zip(shared, each):
        assert max((abs(a - b) for a, b in zip(s.logprobs, e.logprobs)), default=0.0) < 1e-4
    # the coder's prompt (3 samples) and the tester's (2) are prefilled once each, not 5 times
    coder, tester = len(shared[0].prompt_ids), len(shared[3].prompt_ids)
    assert each_tokens - shared_tokens >= 2 * coder + 1 * tester


def _random_causal_lm(kind: str):
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    shape = dict(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 max_position_embeddings=128)
    if kind == "llama":  # grouped-query attention, a scaled rotary embedding
        model = LlamaForCausalLM(LlamaConfig(**shape, num_key_value_heads=2, rope_theta=500.0,
                                             attention_bias=True))
    else:  # Qwen2: biased q/k/v projections, one key/value head
        model = Qwen2ForCausalLM(Qwen2Config(**shape, num_key_value_heads=1))
    return model.eval()


@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_static_kv_decoder_steps_match_the_model_call(kind, padded):
    from roles import kv_decode

    model = _random_causal_lm(kind)
    assert kv_decode.supports(model)
    B, L, T = 3, 7, 6
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 97, (B, L), generator=gen)
    mask = torch.ones(B, L, dtype=torch.long)
    if padded:  # left padding (attention with a mask); else none (fused attention, no mask)
        mask[1, :3] = 0
        mask[2, :6] = 0
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    tokens = torch.randint(1, 97, (B, T), generator=gen)
    with torch.inference_mode():
        out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True)
        cache = out.past_key_values if getattr(out, "past_key_values", None) is not None else out["cache"]
        decoder = kv_decode.StaticKVDecoder(model, cache, mask, T)
        for t in range(T):
            step_pos = pos[:, -1:] + 1 + t
            got = decoder.step(tokens[:, t], step_pos)
            # the reference: the whole sequence so far through the model, no cache
            full_ids = torch.cat([ids, tokens[:, :t + 1]], dim=1)
            full_mask = torch.cat([mask, torch.ones(B, t + 1, dtype=torch.long)], dim=1)
            full_pos = (full_mask.cumsum(-1) - 1).clamp(min=0)
            want = model(input_ids=full_ids, attention_mask=full_mask, position_ids=full_pos).logits[:, -1]
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)
            if t == 2:  # finished rows leave the batch: the rest go on unchanged
                keep = torch.tensor([0, 2])
                decoder.select(keep)
                ids, mask, pos, tokens = ids[keep], mask[keep], pos[keep], tokens[keep]
                B = 2


def test_static_kv_decoder_declines_models_it_does_not_reproduce():
    from transformers import GPT2Config, GPT2LMHeadModel, Qwen2Config, Qwen2ForCausalLM

    from roles import kv_decode

    assert not kv_decode.supports(GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50)))
    sliding = Qwen2ForCausalLM(Qwen2Config(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                           num_attention_heads=2, num_key_value_heads=1, use_sliding_window=True,
                                           sliding_window=4))
    assert not kv_decode.supports(sliding)
    model = _random_causal_lm("llama")
    model.hf_device_map = {"model.embed_tokens": 0, "model.layers": 1, "lm_head": 1}  # spread by accelerate
    assert not kv_decode.supports(model)
    model.hf_device_map = {"": 0}  # one device: the modules can be called one by one
    assert kv_decode.supports(model)
    next(model.parameters()).ds_id = 0  # a ZeRO-3 partitioned parameter
    assert not kv_decode.supports(model)


EOS_NUDGE = 2.0


def test_static_cache_sampling_equals_the_model_call_loop(model_tok):
    from roles import kv_decode

    model, tok = model_tok
    assert kv_decode.supports(model)
    reqs = _requests(tok) + [GenRequest("coder", "t2", "def f(x):", n=4)]  # a short prompt: left padding
    calls: list[int] = []
    hook = model.register_forward_hook(lambda mod, args, out: calls.append(1))
    head = model.get_output_embeddings()
    old_bias = getattr(head, "bias", None)
    bias = torch.zeros(model.config.vocab_size)
    bias[tok.eos_token_id] = EOS_NUDGE  # some samples end early, so rows leave the batch mid-call
    head.bias = torch.nn.Parameter(bias)
    try:
        for temperature, top_p in ((1.0, 1.0), (0.7, 0.9)):
            eng = _engine(model_tok, max_new_tokens=30, seed=5, temperature=temperature, top_p=top_p)
            calls[:] = []
            static = eng.generate(reqs)
            static_calls = len(calls)
            eng.static_cache = False
            calls[:] = []
            plain = eng.generate(reqs)
            assert static_calls < len(calls) // 5  # the static path decodes without calling the model
            assert [s.completion_ids for s in static] == [s.completion_ids for s in plain]
            assert [s.truncated for s in static] == [s.truncated for s in plain]
            assert any(not s.truncated for s in plain) and any(s.truncated for s in plain)  # rows left early
            for s, p in zip(static, plain):
                assert max((abs(a - b) for a, b in zip(s.logprobs, p.logprobs)), default=0.0) < 1e-5
    finally:
        hook.remove()
        head.bias = old_bias


@pytest.mark.parametrize("kind", ["llama", "qwen2"])
def test_decoder_lanes_step_as_their_decoders_would_alone(kind):
    """Two lanes (prompts of 9 and 4 tokens, one padded) decoded as one batch give each lane's
    logits as its own decoder does, also after rows leave both lanes and one lane empties."""
    from roles import kv_decode

    model = _random_causal_lm(kind)
    gen = torch.Generator().manual_seed(2)
    T = 6

    def prefill(B, L, pad):
        ids = torch.randint(1, 97, (B, L), generator=gen)
        mask = torch.ones(B, L, dtype=torch.long)
        mask[0, :pad] = 0
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True)
        cache = out.past_key_values if getattr(out, "past_key_values", None) is not None else out["cache"]
        return cache, mask, pos[:, -1:] + 1

    with torch.inference_mode():
        specs = [(3, 9, 4), (2, 4, 0)]
        parts = [prefill(*s) for s in specs]
        alone = [kv_decode.StaticKVDecoder(model, copy.deepcopy(c), m, T) for c, m, _ in parts]
        lanes = kv_decode.DecoderLanes([kv_decode.StaticKVDecoder(model, c, m, T) for c, m, _ in parts])
        pos = [p for _, _, p in parts]
        toks = [torch.randint(1, 97, (s[0], T), generator=gen) for s in specs]
        for t in range(T):
            want = [d.step(tk[:, t], p + t) for d, tk, p in zip(alone, toks, pos) if tk.shape[0]]
            got = lanes.step(torch.cat([tk[:, t] for tk in toks]), torch.cat(pos) + t)
            torch.testing.assert_close(got, torch.cat(want), atol=1e-5, rtol=1e-4)
            if t == 1:  # row 1 of lane 0 and row 0 of lane 1 finish
                lanes.select(torch.tensor([0, 2, 4]))
                keep0, keep1 = torch.tensor([0, 2]), torch.tensor([1])
                alone[0].select(keep0), alone[1].select(keep1)
                toks, pos = [toks[0][keep0], toks[1][keep1]], [pos[0][keep0], pos[1][keep1]]
            if t == 3:  # lane 1 empties
                lanes.select(torch.tensor([0, 1]))
                assert len(lanes.lanes) == 1 and lanes.rows == 2
                alone, toks, pos = alone[:1], toks[:1], pos[:1]


def test_decode_groups_hand_worked():
    from roles.generation import decode_groups

    assert decode_groups([8, 64, 32], 128) == [[0, 1, 2]]
    assert decode_groups([8, 64, 32], 64) == [[0], [1], [2]]
    assert decode_groups([8, 40, 32, 64, 5], 80) == [[0, 1, 2], [3, 4]]
    assert decode_groups([], 4) == []


def test_prompts_of_very_different_lengths_share_one_decode_loop(model_tok, monkeypatch):
    """A long prompt and short ones are prefilled apart (length_chunks) and decoded as lanes of one
    loop: the same samples as decoding each chunk alone, in fewer decode steps."""
    from roles import generation, kv_decode

    _, tok = model_tok
    long_prompt = build_prompt("proposer", None, tok)
    reqs = [GenRequest("proposer", "p", long_prompt, n=2), GenRequest("coder", "t1", "def f(x):", n=3),
            GenRequest("tester", "t1", "assert", n=2)]
    assert len(tok(long_prompt)["input_ids"]) > 2 * len(tok("def f(x):")["input_ids"])  # chunks apart
    steps: list[int] = []
    real = kv_decode._decode_step
    monkeypatch.setattr(kv_decode, "_decode_step", lambda *a: steps.append(1) or real(*a))
    eng = _engine(model_tok, max_new_tokens=25, seed=4)
    joint = eng.generate(reqs)
    joint_steps = len(steps)
    steps[:] = []
    monkeypatch.setattr(generation, "decode_groups", lambda sizes, cap: [[j] for j in range(len(sizes))])
    apart = _engine(model_tok, max_new_tokens=25, seed=4).generate(reqs)
    assert [s.completion_ids for s in joint] == [s.completion_ids for s in apart]
    for a, b in zip(joint, apart):
        assert np.allclose(a.logprobs, b.logprobs, atol=1e-4)
    assert joint_steps < len(steps)


def test_the_ids_a_sample_ends_at_come_from_the_tokenizer_and_the_models_config():
    """One reading of ``eos_token_id`` for both engines and the model loader: an int, a list of
    them (Llama 3 names three), null; bools and other junk are no ids."""
    from types import SimpleNamespace

    from roles.model_io import stop_ids, token_ids

    assert token_ids(7) == [7] and token_ids([1, 2]) == [1, 2] and token_ids((3,)) == [3]
    assert token_ids(None) == [] and token_ids(True) == [] and token_ids([1, "x", False, 2.0]) == [1]
    assert stop_ids(SimpleNamespace(eos_token_id=5), [128001, 128009]) == {5, 128001, 128009}
    assert stop_ids(SimpleNamespace(eos_token_id=None), 2) == {2}
    with pytest.raises(ValueError, match="EOS"):
        stop_ids(SimpleNamespace(eos_token_id=None), None)


def test_the_summary_does_not_count_samples_that_got_no_completion():
    """A served model refusing prompts past its context gives those samples no completion: the
    summary said 'sampled 15 completions' when every request had been refused."""
    from roles.generation import stats_line

    line = stats_line({"samples": 15, "past_context": 15, "requests": 15, "truncated": 0})
    assert line.startswith("sampled 0 completions (15 more got none: their prompt filled the model's context)")
    assert stats_line({"samples": 4, "tokens_per_s": 9.0}).startswith("sampled 4 completions; ")
