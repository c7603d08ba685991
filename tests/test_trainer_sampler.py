"""The trainer's options for rollouts sampled by another engine (vLLM) and for GPU runs, on CPU:
sampler correction (truncated importance sampling), GSPO's sequence ratio, weight export for a
rollout engine, gradient checkpointing and bf16 autocast."""

import math
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_trainer import flat, make_rollouts, run, tiny_model  # noqa: E402

from training.config import GRPOConfig  # noqa: E402
from training.rollout import Rollout  # noqa: E402
from training.trainer import PolicyTrainer  # noqa: E402

IS_KEYS = ("mismatch/logprob_diff_max", "mismatch/kl", "is/ratio_mean", "is/ratio_min", "is/ratio_max",
           "is/outside_frac")


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def with_sampler_logprobs(rollouts, value):
    return [Rollout(r.prompt_ids, r.completion_ids, [value] * len(r.completion_ids), r.reward, r.group, r.role,
                    r.truncated) for r in rollouts]


def without_sampler_logprobs(rollouts):
    return [Rollout(r.prompt_ids, r.completion_ids, [], r.reward, r.group, r.role, r.truncated) for r in rollouts]


def test_correction_is_inert_without_sampler_logprobs():
    rs = without_sampler_logprobs(make_rollouts(seed=3))
    a, ma = run(rs, steps=2)
    b, mb = run(rs, steps=2, is_correction="token_truncate")
    assert torch.equal(flat(a.model), flat(b.model))
    for x, y in zip(ma, mb):
        assert {k: v for k, v in x.items() if not k.startswith("time") and k != "tokens_per_s"} == \
               {k: v for k, v in y.items() if not k.startswith("time") and k != "tokens_per_s"}
        assert not any(k in y for k in IS_KEYS)


def test_token_truncate_caps_the_weight():
    # the sampler gave every token log-prob -50, far below the trainer's (about -log 64): the ratio
    # trainer/sampler is huge and capped at 2, so (lr 0: the policy never moves) the loss doubles exactly
    rs = make_rollouts(seed=4, reward_levels=3)
    _, (base,) = run(without_sampler_logprobs(rs), lr=0.0)
    _, (m,) = run(with_sampler_logprobs(rs, -50.0), lr=0.0, is_correction="token_truncate", is_clip_max=2.0)
    assert base["loss"] != 0.0
    assert m["loss"] == pytest.approx(2 * base["loss"], rel=1e-6)
    assert m["is/ratio_mean"] == m["is/ratio_min"] == m["is/ratio_max"] == 2.0
    assert m["is/outside_frac"] == 1.0
    assert 40 < m["logprob_diff"] <= m["mismatch/logprob_diff_max"] < 50
    assert m["mismatch/kl"] > 1e10  # k3 of a ratio ~e^46
    assert all(math.isfinite(v) for v in m.values())


def test_token_mask_drops_every_token_outside_the_range():
    rs = with_sampler_logprobs(make_rollouts(seed=4, reward_levels=3), -50.0)
    tr, (m,) = run(rs, is_correction="token_mask", is_clip_max=3.0)
    assert m["loss"] == 0.0 and m["grad_norm"] == 0.0
    assert m["is/ratio_max"] == 0.0 and m["is/outside_frac"] == 1.0
    assert torch.equal(flat(tr.model), flat(tiny_model()))


def test_sequence_mode_weighs_whole_sequences():
    rs = make_rollouts(seed=4, reward_levels=3)
    _, (base,) = run(without_sampler_logprobs(rs), lr=0.0)
    _, (m,) = run(with_sampler_logprobs(rs, -50.0), lr=0.0, is_correction="sequence_truncate", is_clip_max=2.0)
    assert m["loss"] == pytest.approx(2 * base["loss"], rel=1e-6)
    assert m["is/outside_frac"] == 1.0


def test_correction_with_matching_sampler_is_nearly_inert():
    # sampler log-probs from the trainer's own forward: weights 1 up to float noise
    rs = make_rollouts(seed=5, reward_levels=3)
    model = tiny_model()
    probe = PolicyTrainer(model, GRPOConfig(lr=0.0, micro_batch_size=64), pad_token_id=0)
    from training.batch import collate

    exact = []
    for i, r in enumerate(rs):
        mb = collate(rs, [i], [0.0] * len(rs), 0)
        with torch.no_grad():
            exact.append(Rollout(r.prompt_ids, r.completion_ids, probe._logprobs(mb)[0].tolist(), r.reward, r.group,
                                 r.role, r.truncated))
    a, (ma,) = run(without_sampler_logprobs(rs))
    b, (mb_,) = run(exact, is_correction="token_truncate")
    assert mb_["mismatch/logprob_diff_max"] < 1e-5
    assert abs(mb_["is/ratio_mean"] - 1.0) < 1e-5
    torch.testing.assert_close(flat(a.model), flat(b.model), rtol=1e-4, atol=1e-6)


def test_gspo_sequence_level_trains_and_starts_at_ratio_one():
    rs = make_rollouts(seed=6, reward_levels=3)
    _, (tok,) = run(rs, lr=0.0)
    _, (seq,) = run(rs, lr=0.0, importance_sampling_level="sequence")
    assert seq["loss"] == pytest.approx(tok["loss"], rel=1e-6)  # all ratios 1 when the policy does not move
    tr, ms = run(rs, steps=2, importance_sampling_level="sequence", eps_low=3e-4, eps_high=4e-4)
    assert ms[0]["ratio_max"] >= 1.0 and ms[1]["clip_frac"] > 0  # the tight GSPO range clips
    assert not torch.equal(flat(tr.model), flat(tiny_model()))


@pytest.mark.parametrize("kw, field", [
    (dict(is_correction="token_truncate", old_logprobs="sampler"), "is_correction"),
    (dict(is_correction="tis"), "is_correction"),
    (dict(is_correction="token_mask", is_clip_max=None, is_clip_min=None), "is_clip_max"),
    (dict(is_correction="token_mask", is_clip_max=0.5, is_clip_min=0.5), "is_clip_min"),
    (dict(is_correction="token_mask", is_clip_max=-1.0), "is_clip_max"),
    (dict(importance_sampling_level="seq"), "importance_sampling_level"),
])
def test_config_validation(kw, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        GRPOConfig(**kw).validate()


def test_gradient_checkpointing_on_cpu_gives_the_same_update():
    rs = make_rollouts(seed=7, reward_levels=3)
    a, ma = run(rs, steps=2)
    b, mb = run(rs, steps=2, gradient_checkpointing=True)
    assert any(getattr(m, "gradient_checkpointing", False) for m in b.model.modules())
    torch.testing.assert_close(flat(a.model), flat(b.model), rtol=1e-5, atol=1e-7)
    assert mb[1]["loss"] == pytest.approx(ma[1]["loss"], rel=1e-5, abs=1e-7)


def test_bf16_autocast_on_cpu_with_correction_and_gspo():
    rs = with_sampler_logprobs(make_rollouts(seed=8, reward_levels=3), -4.0)
    tr, (m,) = run(rs, bf16=True, is_correction="token_truncate", importance_sampling_level="sequence")
    assert tr.bf16 and math.isfinite(m["loss"]) and m["grad_norm"] > 0
    assert 0 < m["is/ratio_mean"] <= 2.0


def test_training_half_precision_weights_without_deepspeed_warns():
    with pytest.warns(UserWarning, match="bfloat16 weights with plain AdamW"):
        PolicyTrainer(tiny_model().to(torch.bfloat16), GRPOConfig(), pad_token_id=0)


def test_weight_export_for_a_rollout_engine():
    rs = make_rollouts(seed=9, reward_levels=3)
    tr, _ = run(rs)
    assert tr.weights_version == tr.optimizer_steps == 2
    names = [n for n, _ in tr.iter_full_parameters()]
    assert names == [n for n, _ in tr.model.named_parameters()]
    for (_, t), p in zip(tr.iter_full_parameters(), tr.model.parameters()):
        assert torch.equal(t, p.data)
    # without ZeRO-3 (and on CPU) the sampling context changes nothing
    before_w = flat(tr.model)
    with tr.generation_context(), tr.generation_context(gather=True):
        assert torch.equal(flat(tr.model), before_w) and not torch.is_autocast_enabled("cpu")
    before = tr.weights_version
    tr.load_state_dict(tr.state_dict())
    assert tr.weights_version == before + 1


# ----------------------------------------------------------------------- old_logprobs: auto
def _own_logprobs(model, rollouts):
    """The rollouts with the log-probs ``model`` gives their completions (as its sampler would)."""
    with torch.no_grad():
        out = []
        for r in rollouts:
            ids = torch.tensor([r.prompt_ids + r.completion_ids])
            lp = torch.log_softmax(model(input_ids=ids).logits[0].float(), -1)
            p = len(r.prompt_ids)
            got = lp[p - 1:-1].gather(-1, torch.tensor(r.completion_ids)[:, None])[:, 0].tolist()
            out.append(Rollout(r.prompt_ids, r.completion_ids, got, r.reward, r.group, r.role, r.truncated))
    return out


@pytest.mark.parametrize("own,kw,expect", [
    (False, {}, "recompute"),
    (True, {}, "sampler"),
    (True, {"is_correction": "token_truncate"}, "recompute"),
    (True, {"bf16": True}, "recompute"),
    (True, {"disable_dropout": False}, "recompute"),
    (True, {"old_logprobs": "recompute"}, "recompute"),
    (False, {"old_logprobs": "sampler"}, "sampler"),
])
def test_auto_old_logprobs_takes_the_samplers_only_when_they_are_the_trainers(own, kw, expect):
    tr = PolicyTrainer(tiny_model(), GRPOConfig(**kw), pad_token_id=0, own_sampler=own)
    assert tr.config.old_logprobs == kw.get("old_logprobs", "auto") and tr.cfg.old_logprobs == expect


def test_auto_with_own_sampler_updates_as_recompute_without_its_extra_forward():
    """Rollouts whose log-probs are the model's own (the in-process sampler's): the update with
    them as old log-probs equals the recomputed one up to rounding, with fewer rows run."""
    base = tiny_model()
    rs = _own_logprobs(base, make_rollouts(seed=3))
    rows = {}
    models = {}
    for own in (True, False):
        m = tiny_model()
        seen = rows[own] = []
        inner = m.forward

        def counted(*a, _inner=inner, _seen=seen, **kw):
            _seen.append(int(kw["input_ids"].shape[0]))
            return _inner(*a, **kw)

        m.forward = counted
        tr = PolicyTrainer(m, GRPOConfig(lr=1e-3, micro_batch_size=4, adam_eps=1e-4, updates_per_batch=2,
                                         share_prompts=False), pad_token_id=0, own_sampler=own)
        met = tr.step(rs)
        assert met["logprob_diff"] < 1e-5
        models[own] = m
    assert sum(rows[True]) < sum(rows[False])
    assert torch.allclose(flat(models[True]), flat(models[False]), atol=1e-6, rtol=0)
    assert not torch.equal(flat(models[True]), flat(base))
