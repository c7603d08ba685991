import copy
import math

import numpy as np
import pytest
import torch

from training.config import GRPOConfig
from training.rollout import Rollout
from training.trainer import PolicyTrainer

VOCAB = 64


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def tiny_model(seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    return LlamaForCausalLM(LlamaConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=64, max_position_embeddings=128))


def make_rollouts(seed=0, n_groups=4, G=4, roles=("coder",), truncate_last=False, reward_levels=2):
    g = np.random.default_rng(seed)
    out = []
    for role in roles:
        for t in range(n_groups):
            prompt = [int(x) for x in g.integers(2, VOCAB, size=int(g.integers(2, 9)))]
            for k in range(G):
                comp = [int(x) for x in g.integers(2, VOCAB, size=int(g.integers(1, 12)))]
                out.append(Rollout(prompt, comp, [-4.0] * len(comp), float(g.integers(0, reward_levels)),
                                   f"{role}/t{t}", role, truncated=truncate_last and k == G - 1))
    return out


def flat(model):
    return torch.cat([p.detach().reshape(-1).clone() for p in model.parameters()])


def run(rollouts, steps=1, model=None, **cfg):
    model = model or tiny_model()
    # adam_eps 1e-4: Adam's first step is ~lr * sign(grad); with a tiny eps, gradients that are 0 up to
    # rounding (1e-10) would turn float noise into visible weight differences between equivalent runs
    kw = dict(lr=1e-3, micro_batch_size=4, adam_eps=1e-4)
    kw.update(cfg)
    tr = PolicyTrainer(model, GRPOConfig(**kw), pad_token_id=0)
    ms = [tr.step(rollouts) for _ in range(steps)]
    return tr, ms


# ------------------------------------------------------------------------------- ratios / old log-probs
def test_first_update_has_ratio_exactly_one():
    _, (m,) = run(make_rollouts(), updates_per_batch=1)
    assert m["ratio_mean"] == 1.0 and m["ratio_max"] == 1.0 and m["clip_frac"] == 0.0
    assert m["optimizer_steps"] == 1


def test_stale_gradients_on_the_model_do_not_leak_into_the_first_update():
    """A model handed over with .grad still set (an SFT warm-up's last backward) updates exactly
    like the same weights without it."""
    clean, stale = tiny_model(), tiny_model()
    for p in stale.parameters():
        p.grad = torch.full_like(p, 0.5)
    run(make_rollouts(), model=clean, updates_per_batch=2)
    run(make_rollouts(), model=stale, updates_per_batch=2)
    assert torch.equal(flat(clean), flat(stale))


def test_second_minibatch_sees_the_updated_policy():
    _, (m,) = run(make_rollouts(), updates_per_batch=2, lr=2e-2)
    assert m["optimizer_steps"] == 2
    assert m["ratio_max"] > 1.0 + 1e-4  # mini-batch 1 is scored against pre-update log-probs


def test_sampler_old_logprobs_mode():
    rs = make_rollouts()
    model = tiny_model()
    tr = PolicyTrainer(copy.deepcopy(model), GRPOConfig(updates_per_batch=1), pad_token_id=0)
    # give the rollouts their exact log-probs under the model: the ratio is then 1 again
    from training.batch import collate

    for r in rs:
        mb = collate([r], [0], [0.0], 0)
        r.logprobs = tr._logprobs(mb)[0].detach().tolist()
    _, (m,) = run(rs, model=model, updates_per_batch=1, old_logprobs="sampler")
    assert abs(m["ratio_mean"] - 1.0) < 1e-5
    assert m["logprob_diff"] < 1e-5
    with pytest.raises(ValueError, match="logprobs"):
        run([Rollout([1, 2], [3], [], 1.0, "g", "coder"), Rollout([1, 2], [4], [], 0.0, "g", "coder")],
            old_logprobs="sampler")


@pytest.mark.parametrize("extra", [dict(updates_per_batch=2), dict(updates_per_batch=2, epochs=2),
                                   dict(updates_per_batch=1, epochs=3)])
def test_recomputed_old_logprobs_are_the_pre_update_policys(extra):
    """pi_old of every mini-batch and epoch is the policy before the batch's first optimizer step:
    recomputing it gives the update that the rollouts' own exact pre-update log-probs give."""
    rs = make_rollouts(seed=7, reward_levels=3)
    model = tiny_model()
    tr = PolicyTrainer(copy.deepcopy(model), GRPOConfig(updates_per_batch=1), pad_token_id=0)
    from training.batch import collate

    for r in rs:
        r.logprobs = tr._logprobs(collate([r], [0], [0.0], 0))[0].detach().tolist()
    rec, (m_rec,) = run(rs, model=copy.deepcopy(model), lr=2e-2, old_logprobs="recompute", **extra)
    smp, (m_smp,) = run(rs, model=copy.deepcopy(model), lr=2e-2, old_logprobs="sampler", **extra)
    assert m_rec["ratio_max"] > 1.0 + 1e-4  # the later steps are off-policy, so the check has teeth
    assert m_rec["ratio_mean"] == pytest.approx(m_smp["ratio_mean"], abs=1e-5)
    torch.testing.assert_close(flat(rec.model), flat(smp.model), atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------- reference implementation
def naive_update(model, rollouts, lr, eps_low=0.2, eps_high=0.28):
    """One optimizer step over the whole batch, one unpadded sequence at a time (ratio 1)."""
    from training.advantages import group_advantages

    adv, keep = group_advantages([r.reward for r in rollouts], [r.group for r in rollouts])
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, eps=1e-4)
    n_tok = sum(len(r.completion_ids) for r, k in zip(rollouts, keep) if k)
    total = 0.0
    for r, a, k in zip(rollouts, adv, keep):
        if not k:
            continue
        ids = torch.tensor([r.prompt_ids + r.completion_ids])
        logits = model(input_ids=ids).logits[0, len(r.prompt_ids) - 1:-1]
        lp = torch.log_softmax(logits.float(), -1).gather(-1, torch.tensor(r.completion_ids)[:, None])[:, 0]
        ratio = torch.exp(lp - lp.detach())
        tok = -torch.minimum(ratio * a, ratio.clamp(1 - eps_low, 1 + eps_high) * a)
        loss = tok.sum() / n_tok
        loss.backward()
        total += loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return total


def test_matches_naive_unpadded_reference():
    rs = make_rollouts(seed=3)
    ref = tiny_model()
    loss = naive_update(ref, rs, lr=1e-3)
    tr, (m,) = run(rs, updates_per_batch=1, micro_batch_size=3)
    assert m["loss"] == pytest.approx(loss, rel=1e-4, abs=1e-6)
    torch.testing.assert_close(flat(tr.model), flat(ref), atol=2e-6, rtol=0)


def naive_update_agg(model, rollouts, lr, aggregation, scale, eps=0.2):
    """As naive_update, for the GRPO / Dr. GRPO aggregations written as TRL writes them (ratio 1):
    seq_mean_token_mean = mean over sequences of each one's token mean; constant_norm = token sum
    / (sequences x L), L = the longest completion of the batch (max_completion_length unset)."""
    from training.advantages import group_advantages

    adv, keep = group_advantages([r.reward for r in rollouts], [r.group for r in rollouts], scale=scale)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, eps=1e-4)
    n_seq = int(keep.sum())
    L = max(len(r.completion_ids) for r in rollouts)
    total = 0.0
    for r, a, k in zip(rollouts, adv, keep):
        if not k:
            continue
        ids = torch.tensor([r.prompt_ids + r.completion_ids])
        logits = model(input_ids=ids).logits[0, len(r.prompt_ids) - 1:-1]
        lp = torch.log_softmax(logits.float(), -1).gather(-1, torch.tensor(r.completion_ids)[:, None])[:, 0]
        ratio = torch.exp(lp - lp.detach())
        tok = -torch.minimum(ratio * a, ratio.clamp(1 - eps, 1 + eps) * a)
        n = len(r.completion_ids)
        loss = tok.sum() / n / n_seq if aggregation == "seq_mean_token_mean" else tok.sum() / (n_seq * L)
        loss.backward()
        total += loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return total


@pytest.mark.parametrize("loss_type,aggregation,scale", [("grpo", "seq_mean_token_mean", "group"),
                                                         ("dr_grpo", "constant_norm", "none")])
def test_grpo_and_dr_grpo_match_naive_unpadded_references(loss_type, aggregation, scale):
    rs = make_rollouts(seed=3, reward_levels=3)
    ref = tiny_model()
    loss = naive_update_agg(ref, rs, 1e-3, aggregation, scale)
    tr, (m,) = run(rs, loss_type=loss_type, updates_per_batch=1, micro_batch_size=3)
    assert m["loss"] == pytest.approx(loss, rel=1e-4, abs=1e-6)
    torch.testing.assert_close(flat(tr.model), flat(ref), atol=2e-6, rtol=0)


@pytest.mark.parametrize("extra", [dict(micro_batch_size=1), dict(micro_batch_size=64),
                                   dict(max_tokens_per_micro_batch=20), dict(gradient_checkpointing=True)])
def test_micro_batching_does_not_change_the_update(extra):
    rs = make_rollouts(seed=1)
    base, mb = run(rs, steps=2)
    other, mo = run(rs, steps=2, **extra)
    torch.testing.assert_close(flat(other.model), flat(base.model), atol=2e-6, rtol=0)
    assert mo[-1]["loss"] == pytest.approx(mb[-1]["loss"], rel=1e-4, abs=1e-7)


def test_padding_token_and_left_padding_are_inert():
    rs = make_rollouts(seed=2)
    model = tiny_model()
    a = PolicyTrainer(copy.deepcopy(model), GRPOConfig(lr=1e-3, adam_eps=1e-4), pad_token_id=0)
    b = PolicyTrainer(copy.deepcopy(model), GRPOConfig(lr=1e-3, adam_eps=1e-4), pad_token_id=VOCAB - 1)
    ma, mb = a.step(rs), b.step(rs)
    torch.testing.assert_close(flat(a.model), flat(b.model), atol=1e-6, rtol=0)
    assert ma["loss"] == pytest.approx(mb["loss"], abs=1e-6)


# ------------------------------------------------------------------------------- which samples count
def _with(rs, i, **kw):
    rs = copy.deepcopy(rs)
    for k, v in kw.items():
        setattr(rs[i], k, v)
    return rs


def test_overlong_filtering_semantics():
    rs = make_rollouts(seed=4, truncate_last=True)
    i = 3  # the truncated sample of group 0
    assert rs[i].truncated
    base, (m,) = run(rs)
    assert m["samples_truncated"] == 4 and m["samples_in_loss"] == 12
    # (a) its tokens are not in the loss: other tokens give the same update
    other_tokens, _ = run(_with(rs, i, completion_ids=[5] * 30, logprobs=[-1.0] * 30))
    torch.testing.assert_close(flat(other_tokens.model), flat(base.model), atol=0, rtol=0)
    # (b) its reward is in the group statistics: another reward changes the others' advantages
    other_reward, _ = run(_with(rs, i, reward=7.0))
    assert (flat(other_reward.model) - flat(base.model)).abs().max() > 1e-6
    # (c) without overlong filtering its tokens count
    off, (m_off,) = run(rs, mask_truncated=False)
    assert m_off["samples_in_loss"] == 16 and m_off["tokens"] > m["tokens"]


def test_nan_reward_samples_are_dropped():
    rs = make_rollouts(seed=5)
    rs[0].reward = float("nan")
    _, (m,) = run(rs)
    assert m["samples_no_reward"] == 1 and m["samples_in_loss"] == 15
    # all rewards missing: nothing to learn, nothing changes
    rs2 = [_with([r], 0, reward=float("nan"))[0] for r in rs]
    model = tiny_model()
    before = flat(model)
    tr, (m2,) = run(rs2, model=model)
    assert m2["optimizer_steps"] == 0 and m2["samples_in_loss"] == 0
    assert torch.equal(flat(tr.model), before)
    assert tr.step_count == 1


def test_dynamic_sampling_drops_zero_variance_groups():
    rs = make_rollouts(seed=6)
    for r in rs[:4]:  # group 0: all rewards equal
        r.reward = 1.0
    _, (m,) = run(rs)  # GRPO+: kept with zero advantage
    _, (d,) = run(rs, loss_type="dapo")
    assert m["groups_zero_std"] >= 1 and m["groups_dropped"] == 0
    assert d["groups_dropped"] == m["groups_zero_std"]
    assert d["samples_in_loss"] == m["samples_in_loss"] - 4 * m["groups_zero_std"]
    assert d["tokens"] < m["tokens"]


def _count_forwards(model):
    """Wrap ``model.forward`` to count the rows it runs."""
    rows = []
    inner = model.forward

    def counted(*a, **kw):
        ids = kw.get("input_ids", a[0] if a else None)
        rows.append(int(ids.shape[0]))
        return inner(*a, **kw)

    model.forward = counted
    return rows


@pytest.mark.parametrize("M,share", [(1, False), (2, False), (2, True)])
def test_zero_advantage_samples_run_no_pass_and_change_nothing(monkeypatch, M, share):
    """A zero-variance group (advantage exactly 0, no KL term) adds nothing to the gradient: the
    update with its passes left out equals the update with them run, and it runs fewer rows."""
    rs = make_rollouts(seed=6, n_groups=6)
    for r in rs[:4] + rs[8:12]:  # groups 0 and 2: all rewards equal
        r.reward = 1.0
    lean_model, full_model = tiny_model(), tiny_model()
    lean_rows, full_rows = _count_forwards(lean_model), _count_forwards(full_model)
    lean, (ml,) = run(rs, model=lean_model, updates_per_batch=M, share_prompts=share)
    with monkeypatch.context() as mp:
        mp.setattr(PolicyTrainer, "_no_pass", lambda self, adv: np.zeros(len(adv), dtype=bool))
        full, (mf,) = run(rs, model=full_model, updates_per_batch=M, share_prompts=share)
    assert ml["samples_no_pass"] == 4 * ml["groups_zero_std"] >= 8 and mf["samples_no_pass"] == 0
    assert sum(lean_rows) < sum(full_rows)
    assert torch.allclose(flat(lean.model), flat(full.model), atol=1e-6, rtol=0)
    assert not torch.equal(flat(lean.model), flat(tiny_model()))  # it did learn
    for k in ("tokens", "samples_in_loss", "optimizer_steps", "groups_zero_std"):
        assert ml[k] == mf[k], k
    assert ml["grad_norm"] == pytest.approx(mf["grad_norm"], rel=1e-5)


def test_zero_advantage_samples_still_run_with_a_kl_term():
    rs = make_rollouts(seed=6)
    for r in rs[:4]:
        r.reward = 1.0
    model = tiny_model()
    tr = PolicyTrainer(model, GRPOConfig(lr=1e-3, micro_batch_size=4, beta=0.1), pad_token_id=0,
                       ref_model=copy.deepcopy(model))
    assert tr.step(rs)["samples_no_pass"] == 0


def test_a_minibatch_of_only_zero_advantages_still_steps():
    """Adam moves the weights on a zero gradient (its moments): such a mini-batch keeps its step."""
    rs = make_rollouts(seed=6, n_groups=2)
    for r in rs:
        r.reward = 1.0
    _, (m,) = run(rs, updates_per_batch=1)
    assert m["optimizer_steps"] == 1 and m["samples_no_pass"] == 0


def test_role_weight_zero_equals_absent_role():
    rs = make_rollouts(seed=7, roles=("coder", "tester"))
    only_coder = [r for r in rs if r.role == "coder"]
    a, (ma,) = run(rs, role_weights={"tester": 0.0})
    b, _ = run(only_coder)
    torch.testing.assert_close(flat(a.model), flat(b.model), atol=1e-6, rtol=0)
    assert ma["samples/tester"] == 0 and ma["samples/coder"] == 16
    assert "reward/tester" in ma and "adv_abs/coder" in ma


def test_positive_advantage_completions_become_more_likely():
    rs = make_rollouts(seed=8, reward_levels=2)
    model = tiny_model()
    from training.batch import collate

    tr = PolicyTrainer(model, GRPOConfig(lr=3e-3, updates_per_batch=1), pad_token_id=0)

    def seq_lp():
        with torch.no_grad():
            return [tr._logprobs(collate([r], [0], [0.0], 0))[0].sum().item() for r in rs]

    before = seq_lp()
    tr.step(rs)
    after = seq_lp()
    from training.advantages import group_advantages

    adv, _ = group_advantages([r.reward for r in rs], [r.group for r in rs])
    moved = [(a - b) for a, b in zip(after, before)]
    pos = [d for d, a in zip(moved, adv) if a > 0]
    neg = [d for d, a in zip(moved, adv) if a < 0]
    assert np.mean(pos) > 0 > np.mean(neg)


# ------------------------------------------------------------------------------- optimizer, schedule, state
def test_optimizer_state_persists_across_steps():
    tr, ms = run(make_rollouts(), steps=3, updates_per_batch=2, epochs=2)
    assert [m["optimizer_steps"] for m in ms] == [4, 4, 4]
    assert tr.optimizer_steps == 12 and tr.step_count == 3
    st = tr.optimizer.state[next(iter(tr.model.parameters()))]
    assert int(st["step"]) == 12 and "exp_avg" in st


def test_lr_schedule():
    c = GRPOConfig(lr=1.0, warmup_steps=2, lr_schedule="cosine", total_steps=10, min_lr_ratio=0.1)
    assert [c.lr_at(s) for s in (0, 1)] == [0.5, 1.0]
    assert c.lr_at(2) == pytest.approx(1.0)
    assert c.lr_at(6) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5)))
    assert c.lr_at(10) == pytest.approx(0.1) and c.lr_at(50) == pytest.approx(0.1)
    lin = GRPOConfig(lr=2.0, lr_schedule="linear", total_steps=4)
    assert [lin.lr_at(s) for s in range(5)] == pytest.approx([2.0, 1.5, 1.0, 0.5, 0.0])
    assert GRPOConfig(lr=3.0).lr_at(1000) == 3.0
    _, ms = run(make_rollouts(), steps=3, lr=1e-3, warmup_steps=2)
    assert [m["lr"] for m in ms] == pytest.approx([5e-4, 1e-3, 1e-3])


def test_state_dict_round_trip_continues_identically():
    rs1, rs2 = make_rollouts(seed=10), make_rollouts(seed=11)
    a, _ = run(rs1)
    b = PolicyTrainer(copy.deepcopy(a.model), GRPOConfig(lr=1e-3, micro_batch_size=4, adam_eps=1e-4),
                      pad_token_id=0)
    b.load_state_dict(copy.deepcopy(a.state_dict()))
    assert b.step_count == 1
    a.step(rs2)
    b.step(rs2)
    torch.testing.assert_close(flat(a.model), flat(b.model), atol=0, rtol=0)


def test_kl_to_frozen_reference():
    rs = make_rollouts(seed=12)
    tr, ms = run(rs, steps=3, beta=0.1, updates_per_batch=1, lr=1e-2)
    ref0 = flat(tiny_model())
    assert torch.equal(flat(tr.ref_model), ref0)  # the reference never moves
    assert ms[0]["kl"] == pytest.approx(0.0, abs=1e-7)  # policy == reference before the first update
    assert ms[2]["kl"] > 1e-6


def test_bf16_autocast_on_cpu_runs():
    _, (m,) = run(make_rollouts(), bf16=True)
    assert math.isfinite(m["loss"]) and m["grad_norm"] > 0


def test_metrics_keys():
    _, (m,) = run(make_rollouts(roles=("coder", "tester")))
    for k in ("loss", "clip_frac", "clip_frac/low", "clip_frac/high", "grad_norm", "lr", "tokens_per_s",
              "time/update_s", "groups", "groups_zero_std", "groups_dropped", "reward/coder", "reward/tester",
              "adv_abs/tester", "samples/coder", "logprob_diff"):
        assert k in m, k
    assert all(isinstance(v, float) and math.isfinite(v) for v in m.values())


def test_rejects_malformed_rollouts():
    tr = PolicyTrainer(tiny_model(), GRPOConfig(), pad_token_id=0)
    with pytest.raises(ValueError, match=r"rollouts\[0\].prompt_ids"):
        tr.step([Rollout([], [1], [0.0], 1.0, "g", "coder")])
    with pytest.raises(ValueError, match=r"rollouts\[1\].logprobs"):
        tr.step([Rollout([1], [1], [0.0], 1.0, "g", "coder"), Rollout([1], [1, 2], [0.0], 1.0, "g", "coder")])
    with pytest.raises(ValueError, match="token id"):
        tr.step([Rollout([1], [VOCAB], [0.0], 1.0, "g", "coder")])


# ------------------------------------------------------------------------------- config
def test_config_presets_and_overrides():
    c = GRPOConfig().resolved()
    assert (c.scale_rewards, c.aggregation, c.eps_low, c.eps_high, c.mask_truncated, c.dynamic_sampling, c.beta) \
        == ("group", "token_mean", 0.2, 0.28, True, False, 0.0)
    assert GRPOConfig(loss_type="grpo").resolved().aggregation == "seq_mean_token_mean"
    d = GRPOConfig(loss_type="dr_grpo").resolved()
    assert (d.scale_rewards, d.aggregation) == ("none", "constant_norm")
    assert GRPOConfig(loss_type="dapo").resolved().dynamic_sampling is True
    assert GRPOConfig(loss_type="dapo", dynamic_sampling=False).resolved().dynamic_sampling is False


@pytest.mark.parametrize("kw,field", [
    (dict(loss_type="ppo"), "loss_type"), (dict(eps_low=1.5), "eps_low"), (dict(beta=-1), "beta"),
    (dict(scale_rewards="std"), "scale_rewards"), (dict(aggregation="sum"), "aggregation"),
    (dict(micro_batch_size=0), "micro_batch_size"), (dict(updates_per_batch=0), "updates_per_batch"),
    (dict(lr_schedule="cosine"), "total_steps"), (dict(role_weights={"coder": -1.0}), "role_weights"),
    (dict(bf16="yes"), "bf16"), (dict(temperature=0.0), "temperature"), (dict(old_logprobs="x"), "old_logprobs"),
    (dict(deepspeed=3), "deepspeed"), (dict(grad_clip=-1.0), "grad_clip"),
])
def test_config_validation_names_the_field(kw, field):
    with pytest.raises(ValueError, match=rf"^{field}: "):
        GRPOConfig(**kw).validate()


def test_config_loads_from_yaml(tmp_path):
    from coevo.yaml_config import load_config

    p = tmp_path / "t.yaml"
    p.write_text("loss_type: dapo\neps_high: 0.3\nrole_weights: {tester: 0.5}\nbf16: auto\n"
                 "deepspeed: configs/ds_zero2.json\n")
    c = load_config(GRPOConfig, p)
    assert c.loss_type == "dapo" and c.eps_high == 0.3 and c.role_weights == {"tester": 0.5}
    from matrix.errors import InputError

    p.write_text("updates_per_batch: 0\n")
    with pytest.raises(InputError, match="updates_per_batch"):
        load_config(GRPOConfig, p)


# ------------------------------------------------------------------------------- with the real sampler
def test_trainer_log_probs_match_the_generation_engine():
    """Samples from roles' engine (left-padded prompts, explicit positions) score the same in the
    trainer's right-padded completion layout: logprob_diff ~ 0 and the first ratio is 1."""
    from tinymodel import tiny_model_path

    from roles.generation import GenerationConfig, GenerationEngine, GenRequest
    from roles.model_io import load_model

    model, tok = load_model(tiny_model_path(), device="cpu")
    eng = GenerationEngine(model, tok, GenerationConfig(temperature=0.7, max_new_tokens=12, seed=3))
    samples = eng.generate([GenRequest("coder", "a", "def add(a, b):", n=4),
                            GenRequest("tester", "b", "assert add(1, 2) == 3\nassert", n=4)])
    rs = [Rollout(s.prompt_ids, s.completion_ids, s.logprobs, float(i % 2), f"{s.role}/{s.task_id}", s.role,
                  s.truncated) for i, s in enumerate(samples)]
    tr = PolicyTrainer(model, GRPOConfig(temperature=0.7, mask_truncated=False, lr=1e-4),
                       pad_token_id=tok.pad_token_id)
    m = tr.step(rs)
    assert m["logprob_diff"] < 1e-4
    assert m["samples_in_loss"] == 8


# ------------------------------------------------------------------------------- shared prompts
def _tokens_through(model):
    """A list that collects the number of token positions each forward feeds the model."""
    seen: list[int] = []
    model.model.embed_tokens.register_forward_hook(lambda mod, args, out: seen.append(int(args[0].numel())))
    return seen


@pytest.mark.parametrize("extra", [dict(), dict(micro_batch_size=64), dict(updates_per_batch=1, beta=0.1),
                                   dict(micro_batch_size=3, max_tokens_per_micro_batch=40)])
def test_shared_prompts_give_the_same_update_with_fewer_tokens(extra):
    rs = make_rollouts(seed=5, n_groups=5, G=5)
    for r in rs:
        r.prompt_ids = r.prompt_ids * 3  # prompts as long as completions, as in the tiny world
    # completions of one and of zero tokens (the latter is left out of the loss) among them
    rs[0] = _with(rs, 0, completion_ids=[7], logprobs=[-4.0])[0]
    rs[6] = _with(rs, 6, completion_ids=[], logprobs=[])[6]
    a_model, b_model = tiny_model(), tiny_model()
    seen_a, seen_b = _tokens_through(a_model), _tokens_through(b_model)
    a, ma = run(rs, steps=2, model=a_model, share_prompts=False, **extra)
    b, mb = run(rs, steps=2, model=b_model, share_prompts=True, **extra)
    assert b._share_prompts and not a._share_prompts
    torch.testing.assert_close(flat(b.model), flat(a.model), atol=2e-6, rtol=0)
    for x, y in zip(ma, mb):
        for k in ("loss", "clip_frac", "ratio_mean", "grad_norm"):
            assert y[k] == pytest.approx(x[k], rel=1e-4, abs=1e-6), k
    # small micro-batches bounded by tokens hold few rows of one prompt: less to share there
    assert sum(seen_b) < (1.0 if "max_tokens_per_micro_batch" in extra else 0.8) * sum(seen_a)


def test_shared_prompts_are_off_with_activation_checkpointing():
    tr, _ = run(make_rollouts(seed=1), gradient_checkpointing=True)
    assert not tr._share_prompts


def test_micro_batches_keep_a_prompts_rows_together():
    from training.batch import plan_micro_batches, prompt_keys

    rs = [Rollout(p, c, [], 1.0, "g", "coder") for p, c in
          [([1, 2, 3], [4]), ([5, 6], [4, 4, 4, 4]), ([1, 2, 3], [4, 4, 4]), ([5, 6], [4]), ([1, 2, 3], [4, 4])]]
    keys = prompt_keys(rs)
    assert keys == [(3, 0), (2, 1), (3, 0), (2, 1), (3, 0)]
    lengths = [r.n_tokens for r in rs]
    # by length alone the two prompts interleave; by prompt, each prompt's rows sit together (longest first)
    assert plan_micro_batches(range(5), lengths, 2) == [[1, 2], [4, 0], [3]]
    assert plan_micro_batches(range(5), lengths, 3, prompt_keys=keys) == [[2, 4, 0], [1, 3]]
    assert plan_micro_batches(range(5), lengths, 8, max_tokens=12, prompt_keys=keys) == [[2, 4], [0, 1], [3]]


def test_shared_prompts_default_to_the_cpu_only(monkeypatch):
    tr, _ = run(make_rollouts(seed=1))  # share_prompts None: the model is on the CPU
    assert tr._share_prompts
    # on a GPU the shared path's second call and cache copies cost more than the prompt tokens save
    monkeypatch.setattr(PolicyTrainer, "device", property(lambda self: torch.device("cuda")))
    assert not PolicyTrainer(tiny_model(), GRPOConfig(lr=1e-3), pad_token_id=0)._share_prompts
    assert PolicyTrainer(tiny_model(), GRPOConfig(lr=1e-3, share_prompts=True), pad_token_id=0)._share_prompts


def test_batch_scaled_advantages_are_per_role():
    """scale_rewards='batch' in a joint batch of roles: each role's advantages are divided by the
    std of that role's rewards, so scaling the Tester's rewards tenfold leaves the Coder's alone
    (pooled, the Coder's |advantage| fell with every larger Tester reward)."""
    rs = make_rollouts(seed=8, n_groups=3, G=4, roles=("coder", "tester"), reward_levels=3)
    _, (m,) = run(rs, scale_rewards="batch", updates_per_batch=1)
    louder = copy.deepcopy(rs)
    for r in louder:
        if r.role == "tester":
            r.reward = 10.0 * r.reward
    _, (m10,) = run(louder, scale_rewards="batch", updates_per_batch=1)
    assert m["adv_abs/tester"] > 0 and m["adv_abs/coder"] > 0
    assert m10["adv_abs/coder"] == pytest.approx(m["adv_abs/coder"], rel=1e-12)
    assert m10["adv_abs/tester"] == pytest.approx(m["adv_abs/tester"], rel=1e-3)  # scale-free (up to adv_eps)


def test_an_empty_completion_keeps_its_reward_in_the_group_but_has_no_tokens():
    """A sample that produced no token (e.g. EOS first) still carries its reward into its group's
    mean and std, and has nothing to put in the loss: the update is exactly that of the same
    sample with tokens, truncated and filtered out (GRPO+'s overlong filtering)."""
    rs = make_rollouts(seed=9)
    empty = _with(rs, 0, completion_ids=[], logprobs=[])
    masked = _with(rs, 0, truncated=True)
    a, (ma,) = run(empty)
    b, (mb,) = run(masked)
    assert ma["samples_in_loss"] == mb["samples_in_loss"] == 15
    assert ma["tokens"] == mb["tokens"] == sum(len(r.completion_ids) for r in rs[1:])
    torch.testing.assert_close(flat(a.model), flat(b.model), atol=0, rtol=0)
    # and its reward counts: another reward for it moves the others' advantages
    c, _ = run(_with(empty, 0, reward=5.0))
    assert (flat(c.model) - flat(a.model)).abs().max() > 1e-6
