"""Training batches have no query row that attends to nothing.

On CUDA, attention kernels answer a query row whose every key is masked with NaN (transformers >= 5
no longer unmasks such rows). A left-padded prompt made such rows: the NaN stayed out of the loss,
but its backward (0 x NaN) turned every gradient NaN and the optimizer step wrote NaN into every
weight (seen on an H200: `configs/single_gpu.yaml` crashed in its second step's sampling). The CPU
kernels answer 0 there, so these tests register an attention function that behaves as the CUDA
kernels do (NaN on a row with no key, in forward and backward) and train with it.
"""

import math

import pytest
import torch
from test_trainer import flat, make_rollouts, run

transformers = pytest.importorskip("transformers")


def _nan_unattended(module, query, key, value, attention_mask, **kw):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if attention_mask is not None and attention_mask.dtype == torch.bool:
        # as the CUDA kernels: a key no query may see contributes nothing (not 0 x NaN)
        unseen = ~attention_mask.any(-2)[..., None]  # [b, 1, k, 1]
        key = torch.where(unseen, torch.zeros_like(key), key)
        value = torch.where(unseen, torch.zeros_like(value), value)
    out, w = sdpa_attention_forward(module, query, key, value, attention_mask, **kw)
    if attention_mask is not None and attention_mask.dtype == torch.bool:
        dead = ~attention_mask.any(-1)  # [b, 1, q]: rows with no key to attend
        scale = torch.where(dead, torch.full_like(dead, float("nan"), dtype=out.dtype),
                            torch.ones_like(dead, dtype=out.dtype))
        out = out * scale.permute(0, 2, 1)[..., None]  # out: [b, q, heads, d]
    return out, w


@pytest.fixture(scope="module")
def nan_attention():
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register("cuda_like_unattended", _nan_unattended)
    ALL_MASK_ATTENTION_FUNCTIONS.register("cuda_like_unattended", sdpa_mask)
    return "cuda_like_unattended"


def _model(impl, seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=128)
    cfg._attn_implementation = impl
    return LlamaForCausalLM(cfg)


def test_the_stand_in_kernel_does_poison_a_left_padded_row(nan_attention):
    """The attack: with a left pad, this kernel's NaN reaches the weights' gradients."""
    m = _model(nan_attention)
    ids = torch.tensor([[0, 0, 5, 6, 7], [3, 4, 5, 6, 7]])
    att = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    pos = (att.cumsum(-1) - 1).clamp(min=0)
    logits = m(input_ids=ids, attention_mask=att, position_ids=pos).logits
    assert torch.isfinite(logits[:, 2:]).all()  # the real tokens' logits are fine
    (logits[:, 2:].float().log_softmax(-1).sum() * 1.0).backward()
    assert not all(torch.isfinite(p.grad).all() for p in m.parameters() if p.grad is not None)


@pytest.mark.parametrize("share", [False, True])
def test_training_steps_keep_weights_finite_with_prompts_of_many_lengths(nan_attention, share):
    rs = make_rollouts(seed=3, n_groups=4, G=4)  # prompts of 2..8 tokens: rows of a micro-batch differ
    assert len({len(r.prompt_ids) for r in rs}) > 1
    model = _model(nan_attention)
    tr, ms = run(rs, steps=2, model=model, share_prompts=share)
    assert tr._share_prompts == share
    assert all(m["optimizer_steps_skipped_nonfinite"] == 0 for m in ms)
    assert all(math.isfinite(m["grad_norm"]) and m["grad_norm"] > 0 for m in ms)
    assert torch.isfinite(flat(model)).all()


def test_log_probs_match_the_sdpa_model_row_by_row(nan_attention):
    """Same weights, the stand-in kernel vs plain sdpa: the trainer's log-probs agree."""
    from training.batch import collate

    rs = make_rollouts(seed=5, n_groups=3, G=2)
    a, _ = run(rs, steps=0, model=_model(nan_attention))
    b, _ = run(rs, steps=0, model=_model("sdpa"))
    mb = collate(rs, list(range(len(rs))), [0.0] * len(rs), 0)
    with torch.no_grad():
        la, lb = a._logprobs(mb), b._logprobs(mb)
    m = mb.loss_mask > 0
    assert torch.isfinite(la[m]).all()
    assert torch.allclose(la[m], lb[m], atol=1e-5)


def test_optimizer_step_with_a_nan_gradient_is_skipped_and_counted():
    from test_trainer import tiny_model

    rs = make_rollouts(seed=1)
    model = tiny_model()
    before = flat(model)

    def poison(grad):
        return grad * float("nan")

    h = next(model.parameters()).register_hook(poison)
    tr, (m,) = run(rs, steps=1, model=model)
    h.remove()
    assert m["optimizer_steps_skipped_nonfinite"] == m["optimizer_steps"] > 0
    assert torch.equal(flat(model), before)  # nothing written into the weights
    assert math.isnan(m["grad_norm"])
