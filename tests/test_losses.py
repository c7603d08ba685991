import math
from types import SimpleNamespace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from training.config import GRPOConfig
from training.losses import loss_denominator, policy_loss, sampler_importance_weights, token_logprobs


def cfg(**kw):
    base = dict(eps_low=0.2, eps_high=0.28, beta=0.0, aggregation="token_mean", max_completion_length=None)
    base.update(kw)
    return SimpleNamespace(**base)


# ratios [[1.5, 0.5, -], [1.1, 0.7, 1.4]] (old log-probs 0), advantages [1, -2]
NEW = [[math.log(1.5), math.log(0.5), 0.0], [math.log(1.1), math.log(0.7), math.log(1.4)]]
MASK = [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]
ADV = [1.0, -2.0]
# per-token losses, by hand:
#   row 0 (A=+1): r=1.5 -> clipped to 1.28 -> -1.28 ; r=0.5 -> min(0.5, 0.8) = 0.5 -> -0.5
#   row 1 (A=-2): r=1.1 -> 2.2 ; r=0.7 -> clipped 0.8 -> min(-1.4, -1.6) -> 1.6 ; r=1.4 -> min(-2.8, -2.56) -> 2.8
TOKEN_LOSSES = [[-1.28, -0.5], [2.2, 1.6, 2.8]]


def inputs(requires_grad=False):
    new = torch.tensor(NEW, dtype=torch.float32, requires_grad=requires_grad)
    return new, torch.zeros(2, 3), torch.tensor(ADV), torch.tensor(MASK)


def test_token_mean_hand_computed():
    new, old, adv, mask = inputs()
    loss, st = policy_loss(new, old, adv, mask, cfg())
    assert loss.item() == pytest.approx(4.82 / 5, abs=1e-6)
    assert st["n_tokens"] == 5
    assert st["clip_frac_low"] == pytest.approx(1 / 5)  # r=0.7 with A<0
    assert st["clip_frac_high"] == pytest.approx(1 / 5)  # r=1.5 with A>0
    assert st["clip_frac"] == pytest.approx(2 / 5)
    assert st["ratio_mean"] == pytest.approx(5.2 / 5, abs=1e-6)
    assert st["ratio_max"] == pytest.approx(1.5, abs=1e-6)
    assert st["kl"] == 0.0


def test_seq_mean_token_mean_and_constant_norm_hand_computed():
    new, old, adv, mask = inputs()
    loss, _ = policy_loss(new, old, adv, mask, cfg(aggregation="seq_mean_token_mean"))
    assert loss.item() == pytest.approx(((-1.28 - 0.5) / 2 + (2.2 + 1.6 + 2.8) / 3) / 2, abs=1e-6)
    loss, _ = policy_loss(new, old, adv, mask, cfg(aggregation="constant_norm", max_completion_length=4))
    assert loss.item() == pytest.approx(4.82 / (2 * 4), abs=1e-6)
    loss, _ = policy_loss(new, old, adv, mask, cfg(aggregation="constant_norm"))  # L = T = 3
    assert loss.item() == pytest.approx(4.82 / (2 * 3), abs=1e-6)


def test_gradient_is_zero_where_clipped():
    new, old, adv, mask = inputs(requires_grad=True)
    loss, _ = policy_loss(new, old, adv, mask, cfg())
    loss.backward()
    # d l / d new = -A * r where the unclipped branch is active, 0 where the clip is active or masked
    expect = torch.tensor([[0.0, -0.5, 0.0], [2.2, 0.0, 2.8]]) / 5
    torch.testing.assert_close(new.grad, expect, atol=1e-6, rtol=1e-5)


def test_symmetric_clip_and_ratio_one():
    new, old, adv, mask = inputs()
    # with eps_high = eps_low = 0.2, r=1.5 with A>0 is clipped at 1.2
    loss, st = policy_loss(new, old, adv, mask, cfg(eps_high=0.2))
    assert loss.item() == pytest.approx((-1.2 - 0.5 + 2.2 + 1.6 + 2.8) / 5, abs=1e-6)
    # on-policy (ratio 1): the loss is minus the token-weighted mean advantage, nothing clipped
    loss, st = policy_loss(old.clone(), old, adv, mask, cfg())
    assert loss.item() == pytest.approx(-(2 * 1.0 + 3 * -2.0) / 5)
    assert st["clip_frac"] == 0 and st["ratio_mean"] == 1.0


def test_kl_term_k3():
    new, old, adv, mask = inputs()
    ref = torch.zeros(2, 3)
    loss, st = policy_loss(new, old, adv, mask, cfg(beta=0.1), ref_logp=ref)

    def k3(lp):  # ref = 0
        return math.exp(-lp) + lp - 1

    kls = [k3(NEW[0][0]), k3(NEW[0][1]), k3(NEW[1][0]), k3(NEW[1][1]), k3(NEW[1][2])]
    assert st["kl"] == pytest.approx(sum(kls) / 5, rel=1e-5)
    assert loss.item() == pytest.approx(4.82 / 5 + 0.1 * sum(kls) / 5, rel=1e-5)
    # beta = 0: the reference is ignored
    loss0, st0 = policy_loss(new, old, adv, mask, cfg(), ref_logp=ref)
    assert loss0.item() == pytest.approx(4.82 / 5, abs=1e-6) and st0["kl"] == 0.0


def test_padding_positions_are_inert():
    new, old, adv, mask = inputs(requires_grad=True)
    # garbage (even -inf) in masked positions must not change the loss or produce NaN gradients
    bad_old = old.clone()
    bad_old[0, 2] = float("-inf")
    loss, _ = policy_loss(new, bad_old, adv, mask, cfg())
    loss.backward()
    assert loss.item() == pytest.approx(4.82 / 5, abs=1e-6)
    assert torch.isfinite(new.grad).all()


@pytest.mark.parametrize("agg", ["token_mean", "seq_mean_token_mean", "constant_norm"])
def test_micro_batches_with_global_denominator_sum_to_whole(agg):
    torch.manual_seed(0)
    B, T = 6, 5
    new = torch.randn(B, T, requires_grad=True)
    old = new.detach() + 0.3 * torch.randn(B, T)
    adv = torch.randn(B)
    mask = (torch.rand(B, T) > 0.3).float()
    mask[:, 0] = 1
    c = cfg(aggregation=agg, max_completion_length=7)
    whole, _ = policy_loss(new, old, adv, mask, c)
    g_whole = torch.autograd.grad(whole, new)[0]
    d = loss_denominator(agg, mask.sum().item(), B, 7)
    parts = [policy_loss(new[i:i + 2], old[i:i + 2], adv[i:i + 2], mask[i:i + 2], c, denominator=d)[0]
             for i in range(0, B, 2)]
    total = sum(parts)
    g_parts = torch.autograd.grad(total, new)[0]
    assert total.item() == pytest.approx(whole.item(), rel=1e-5, abs=1e-6)
    torch.testing.assert_close(g_parts, g_whole, rtol=1e-5, atol=1e-6)


def test_loss_denominator():
    assert loss_denominator("token_mean", 10, 3, None) == 10
    assert loss_denominator("token_mean", 0, 0, None) == 1  # empty: no division by zero
    assert loss_denominator("seq_mean_token_mean", 10, 3, None) == 3
    assert loss_denominator("constant_norm", 10, 3, 8) == 24
    with pytest.raises(ValueError):
        loss_denominator("constant_norm", 10, 3, None)
    with pytest.raises(ValueError):
        loss_denominator("sum", 1, 1, 1)


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_token_logprobs(temperature):
    torch.manual_seed(0)
    logits = torch.randn(5, 4, 11, requires_grad=True)
    tok = torch.randint(0, 11, (5, 4))
    ref = torch.log_softmax(logits / temperature, -1).gather(-1, tok[..., None])[..., 0]
    out = token_logprobs(logits, tok, temperature)
    torch.testing.assert_close(out, ref)
    # the chunked path (tiny chunk budget) gives the same values and gradients
    chunked = token_logprobs(logits, tok, temperature, chunk_bytes=4 * 11 * 4 * 2)
    torch.testing.assert_close(chunked, ref)
    g1 = torch.autograd.grad(out.sum(), logits)[0]
    g2 = torch.autograd.grad(chunked.sum(), logits)[0]
    torch.testing.assert_close(g1, g2)
    # bf16 logits are scored in float32
    assert token_logprobs(logits.detach().bfloat16(), tok).dtype == torch.float32


def test_token_logprobs_score_each_row_at_its_own_temperature():
    # the Proposer's samples drawn at loop.proposer_temperature, the rest at loop.temperature: one
    # micro-batch, each row scored under the distribution it was sampled from
    from training.losses import row_temperatures

    torch.manual_seed(1)
    logits = torch.randn(4, 3, 7)
    tok = torch.randint(0, 7, (4, 3))
    temps = row_temperatures(1.0, torch.tensor([0.0, 0.7, 0.0, 0.5]))
    assert temps.tolist() == pytest.approx([1.0, 0.7, 1.0, 0.5])
    want = torch.stack([token_logprobs(logits[i], tok[i], float(temps[i])) for i in range(4)])
    torch.testing.assert_close(token_logprobs(logits, tok, temps), want)
    torch.testing.assert_close(token_logprobs(logits, tok, temps, chunk_bytes=3 * 7 * 4), want)  # row by row
    assert row_temperatures(0.9, None) == 0.9


def test_works_with_a_resolved_config():
    c = GRPOConfig().resolved()
    new, old, adv, mask = inputs()
    loss, _ = policy_loss(new, old, adv, mask, c)
    assert loss.item() == pytest.approx(4.82 / 5, abs=1e-6)


# ------------------------------------------------------------------------------- GSPO: sequence-level ratio
def test_sequence_level_ratio_hand_computed():
    # row 0: token ratios 1.5, 0.5 -> s_0 = sqrt(0.75) = 0.8660 ; row 1: 1.1, 0.7, 1.4 -> s_1 = 1.078^(1/3) = 1.02535
    s0, s1 = math.sqrt(0.75), 1.078 ** (1 / 3)
    new, old, adv, mask = inputs()
    loss, st = policy_loss(new, old, adv, mask, cfg(importance_sampling_level="sequence"))
    # eps 0.2/0.28: neither is clipped; A = +1 / -2 -> per token -s0 (x2), +2 s1 (x3)
    assert loss.item() == pytest.approx((-2 * s0 + 3 * 2 * s1) / 5, abs=1e-6)
    assert st["clip_frac"] == 0.0
    assert st["ratio_mean"] == pytest.approx((2 * s0 + 3 * s1) / 5, abs=1e-6)
    assert st["ratio_max"] == pytest.approx(s1, abs=1e-6)


def test_sequence_level_clip_and_gradient():
    # GSPO's tight range (3e-4 / 4e-4); advantages swapped so that both sequences are clipped:
    # row 0: s0 = 0.866 < 1 - 3e-4 with A = -2 -> -min(-1.732, -1.9994) = 1.9994, no gradient
    # row 1: s1 = 1.0254 > 1 + 4e-4 with A = +1 -> -min(1.0254, 1.0004) = -1.0004, no gradient
    new, old, _, mask = inputs(requires_grad=True)
    c = cfg(importance_sampling_level="sequence", eps_low=3e-4, eps_high=4e-4)
    loss, st = policy_loss(new, old, torch.tensor([-2.0, 1.0]), mask, c)
    assert loss.item() == pytest.approx((2 * 2 * (1 - 3e-4) - 3 * (1 + 4e-4)) / 5, abs=1e-6)
    assert st["clip_frac_low"] == pytest.approx(2 / 5) and st["clip_frac_high"] == pytest.approx(3 / 5)
    loss.backward()
    assert torch.count_nonzero(new.grad) == 0
    # unclipped (A = +1 / -2 as before): s_b stands on each of b's n_b tokens and d s_b / d new_bt =
    # s_b / n_b, so d loss / d new_bt = -A_b * s_b / N_tokens on b's tokens
    new, old, adv, mask = inputs(requires_grad=True)
    loss, _ = policy_loss(new, old, adv, mask, c)
    loss.backward()
    s0, s1 = math.sqrt(0.75), 1.078 ** (1 / 3)
    expect = torch.tensor([[-s0, -s0, 0.0], [2 * s1] * 3]) / 5
    torch.testing.assert_close(new.grad, expect, rtol=1e-5, atol=1e-7)


def test_sequence_level_equals_token_level_for_constant_token_ratios():
    new = torch.tensor([[0.3, 0.3, 9.0], [-0.2, -0.2, -0.2]])  # padding position holds garbage
    old = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    adv = torch.tensor([1.0, -1.0])
    a, sa = policy_loss(new, old, adv, mask, cfg())
    b, sb = policy_loss(new, old, adv, mask, cfg(importance_sampling_level="sequence"))
    assert a.item() == pytest.approx(b.item(), abs=1e-7)
    assert sa == pytest.approx(sb)
    with pytest.raises(ValueError, match="importance_sampling_level"):
        policy_loss(new, old, adv, mask, cfg(importance_sampling_level="tokens"))


# ------------------------------------------------------------------------------- sampler correction (TIS)
# trainer - sampler log-prob per token: row 0 ratios 1.5, 0.25, (pad) ; row 1 ratios 3, 1, 0.5
TRAINER = torch.tensor([[math.log(1.5), math.log(0.25), 0.0], [math.log(3.0), 0.0, math.log(0.5)]]) - 1.0
SAMPLER = torch.full((2, 3), -1.0)
SAMPLER[0, 2] = float("-inf")  # padding may hold anything


def test_token_truncate_hand_computed():
    w, st = sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "token_truncate", clip_max=2.0)
    torch.testing.assert_close(w, torch.tensor([[1.5, 0.25, 1.0], [2.0, 1.0, 0.5]]))
    assert st["n"] == 5 and st["units"] == 5
    assert st["w_sum"] == pytest.approx(1.5 + 0.25 + 2 + 1 + 0.5)
    assert st["w_min"] == pytest.approx(0.25) and st["w_max"] == pytest.approx(2.0)
    assert st["outside"] == 1  # the 3.0
    d = [math.log(1.5), math.log(0.25), math.log(3.0), 0.0, math.log(0.5)]
    assert st["diff_sum"] == pytest.approx(sum(abs(x) for x in d), abs=1e-6)
    assert st["diff_max"] == pytest.approx(math.log(4.0), abs=1e-6)
    assert st["k3_sum"] == pytest.approx(sum(math.exp(x) - x - 1 for x in d), abs=1e-6)
    # a floor as well: 0.25 -> 0.5
    w, st = sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "token_truncate", 2.0, 0.5)
    torch.testing.assert_close(w, torch.tensor([[1.5, 0.5, 1.0], [2.0, 1.0, 0.5]]))
    assert st["outside"] == 2


def test_token_mask_hand_computed():
    w, st = sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "token_mask", 2.0, 0.5)
    torch.testing.assert_close(w, torch.tensor([[1.5, 0.0, 1.0], [0.0, 1.0, 0.5]]))
    assert st["outside"] == 2 and st["w_min"] == 0.0


def test_sequence_modes_hand_computed():
    # sequence ratio = product of token ratios: row 0 1.5 * 0.25 = 0.375, row 1 3 * 1 * 0.5 = 1.5
    mask = torch.tensor(MASK)
    w, st = sampler_importance_weights(TRAINER, SAMPLER, mask, "sequence_truncate", clip_max=2.0, clip_min=0.5)
    torch.testing.assert_close(w, torch.tensor([[0.5] * 3, [1.5] * 3]))
    assert st["units"] == 2 and st["outside"] == 1 and st["w_sum"] == pytest.approx(2.0)
    w, _ = sampler_importance_weights(TRAINER, SAMPLER, mask, "sequence_mask", clip_max=1.2)
    torch.testing.assert_close(w, torch.tensor([[0.375] * 3, [0.0] * 3]))


def test_rows_without_sampler_logprobs_get_weight_one():
    w, st = sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "token_truncate", 2.0,
                                       has_sampler=torch.tensor([False, True]))
    torch.testing.assert_close(w[0], torch.ones(3))
    assert st["n"] == 3
    w, st = sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "sequence_mask", 1.2,
                                       has_sampler=torch.tensor([False, False]))
    torch.testing.assert_close(w, torch.ones(2, 3))
    assert st["n"] == 0 and st["units"] == 0


def test_weights_multiply_the_surrogate_not_the_kl():
    new, old, adv, mask = inputs()
    w = torch.tensor([[2.0, 0.5, 7.0], [1.0, 0.0, 3.0]])
    loss, _ = policy_loss(new, old, adv, mask, cfg(), is_weights=w)
    # TOKEN_LOSSES weighted: -1.28*2 - 0.5*0.5 + 2.2*1 + 1.6*0 + 2.8*3
    assert loss.item() == pytest.approx((-2.56 - 0.25 + 2.2 + 0.0 + 8.4) / 5, abs=1e-6)
    ref = torch.zeros(2, 3)
    lk, stk = policy_loss(new, old, adv, mask, cfg(beta=0.1), ref, is_weights=w)
    assert lk.item() == pytest.approx(loss.item() + 0.1 * stk["kl"], abs=1e-6)


def test_sampler_correction_rejects_bad_modes():
    with pytest.raises(ValueError, match="mode"):
        sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "none")
    with pytest.raises(ValueError, match="clip_max"):
        sampler_importance_weights(TRAINER, SAMPLER, torch.tensor(MASK), "token_truncate", None, None)


def _logp_batches():
    return st.integers(1, 4).flatmap(lambda B: st.integers(1, 5).flatmap(lambda T: st.tuples(
        st.lists(st.lists(st.floats(-8, 0), min_size=T, max_size=T), min_size=B, max_size=B),
        st.lists(st.lists(st.floats(-8, 0), min_size=T, max_size=T), min_size=B, max_size=B),
        st.lists(st.lists(st.booleans(), min_size=T, max_size=T), min_size=B, max_size=B))))


@settings(max_examples=150, deadline=None)
@given(_logp_batches(), st.sampled_from(["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]),
       st.floats(1.01, 5.0), st.one_of(st.none(), st.floats(0.05, 0.99)))
def test_sampler_weight_properties(batch, mode, cmax, cmin):
    tr, sm, mk = (torch.tensor(x, dtype=torch.float32) for x in batch)
    mask = mk.float()
    w, stats = sampler_importance_weights(tr, sm, mask, mode, cmax, cmin)
    lo = cmin if cmin is not None else 0.0
    assert not w.requires_grad and torch.isfinite(w).all()
    assert ((w == 1.0) | (mask > 0) | torch.tensor(mode.startswith("sequence"))).all()  # padding: 1
    real = w[mask > 0]
    if mode.endswith("truncate"):  # capped into [C_min, C_max]
        assert (real <= cmax * (1 + 1e-6)).all() and (real >= lo * (1 - 1e-6)).all()
    else:  # the raw ratio, or 0
        assert ((real == 0) | ((real <= cmax * (1 + 1e-6)) & (real >= lo * (1 - 1e-6)))).all()
    if mode.startswith("sequence"):  # one weight per sequence
        assert (w == w[:, :1]).all()
    # identical sampler and trainer: every weight is exactly 1 and nothing is outside
    w1, s1 = sampler_importance_weights(tr, tr.clone(), mask, mode, cmax, cmin)
    assert (w1 == 1.0).all() and s1["outside"] == 0 and s1["diff_max"] == 0 and s1["k3_sum"] == 0
    assert stats["n"] == mask.sum().item()
    assert stats["k3_sum"] >= 0 and stats["diff_sum"] >= 0


@settings(max_examples=100, deadline=None)
@given(_logp_batches(), st.floats(0.01, 0.5), st.floats(0.01, 0.5))
def test_unit_weights_and_token_level_leave_the_loss_unchanged(batch, el, eh):
    new, old, mk = (torch.tensor(x, dtype=torch.float32) for x in batch)
    mask = mk.float()
    adv = torch.linspace(-1, 1, new.shape[0])
    c = cfg(eps_low=el, eps_high=eh)
    a, sa = policy_loss(new, old, adv, mask, c)
    b, sb = policy_loss(new, old, adv, mask, c, is_weights=torch.ones_like(new))
    assert a.item() == b.item() and sa == sb
    # one-token sequences: the sequence ratio is the token ratio
    one = mask.clone()
    one[:, 1:] = 0
    x, sx = policy_loss(new, old, adv, one, c)
    y, sy = policy_loss(new, old, adv, one, cfg(eps_low=el, eps_high=eh, importance_sampling_level="sequence"))
    assert x.item() == pytest.approx(y.item(), rel=1e-5, abs=1e-6)


def test_a_micro_batch_carries_the_rows_own_temperatures():
    from training.batch import collate
    from training.rollout import Rollout

    rs = [Rollout([1, 2], [3], [-0.1], 1.0, "g", "coder"), Rollout([1], [4, 5], [-0.2, -0.3], 0.0, "h", "proposer",
                                                                    temperature=0.7)]
    mb = collate(rs, [0, 1], [0.5, -0.5], pad_id=0)
    assert mb.temperature is not None and mb.temperature.tolist() == pytest.approx([0.0, 0.7])
    assert collate(rs, [0], [0.5, -0.5], pad_id=0).temperature is None  # none of its own: the trainer's


# ------------------------------------------------------------------------------- far off-policy tokens
@pytest.mark.parametrize("level", ["token", "sequence"])
def test_a_huge_log_ratio_gives_a_finite_loss_and_gradient(level):
    """exp(new - old) overflows float32 past log-ratio ~88.7. Where the clip takes the gradient
    away (A > 0 above 1 + eps_high) the unclipped branch's 0 * inf made the gradient NaN, and one
    NaN token turned every weight NaN at the optimizer step. The log-ratio is clamped to +-20
    (verl's compute_policy_loss), beyond which the ratio carries no gradient.

    Row: log-ratios [100, 0] (token level) / [200, 0] (sequence level: the mean is 100 too)."""
    big = 100.0 if level == "token" else 200.0
    c = cfg(importance_sampling_level=level)
    for A in (1.0, -1.0, 0.0):
        new = torch.tensor([[big, 0.0]], requires_grad=True)
        loss, st = policy_loss(new, torch.zeros(1, 2), torch.tensor([A]), torch.ones(1, 2), c)
        loss.backward()
        assert math.isfinite(loss.item()) and torch.isfinite(new.grad).all(), (A, loss, new.grad)
        assert math.isfinite(st["ratio_max"]) and math.isfinite(st["ratio_mean"])
        if level == "token":
            # A = +1: token 0 clipped at 1.28 (no gradient), token 1 ratio 1: loss -(1.28 + 1) / 2,
            #         d/d new_1 = -A * 1 / 2
            # A = -1: token 0 capped at e^20 (no gradient): loss (e^20 + 1) / 2; d/d new_1 = +1 / 2
            # A =  0: loss 0, gradient 0
            expect = {1.0: -(1.28 + 1.0) / 2, -1.0: (math.exp(20.0) + 1.0) / 2, 0.0: 0.0}[A]
            assert loss.item() == pytest.approx(expect, rel=1e-6)
            torch.testing.assert_close(new.grad, torch.tensor([[0.0, -A / 2]]))


def test_the_clamp_leaves_ordinary_ratios_alone():
    # log-ratios within +-20 are untouched: e^19.9 with A < 0 keeps its full gradient -A * r / N
    new = torch.tensor([[19.9, -19.9]], requires_grad=True)
    loss, _ = policy_loss(new, torch.zeros(1, 2), torch.tensor([-1.0]), torch.ones(1, 2), cfg())
    loss.backward()
    # token 0 (A = -1): -min(-r, -1.28) = r, unclipped ; token 1: r = e^-19.9 < 0.8 -> clipped at 0.8
    assert loss.item() == pytest.approx((math.exp(19.9) + 0.8) / 2, rel=1e-6)
    torch.testing.assert_close(new.grad, torch.tensor([[math.exp(19.9) / 2, 0.0]]), rtol=1e-5, atol=0.0)
