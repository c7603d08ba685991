"""The tiny world's tokenizer, model and SFT warm-up (small and fast: a few seconds on CPU)."""

from __future__ import annotations

import os

import pytest

# Idle OpenMP threads must sleep, not spin: on a busy 2-core machine spinning makes torch ~10x
# slower (only effective if torch is not imported yet; the CLI sets the same default).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from coevo import tinyworld as tw  # noqa: E402
from coevo.tinyworld import sft_examples as exm  # noqa: E402
from coevo.tinyworld.model import count_params  # noqa: E402
from coevo.tinyworld.sft import collate, encode  # noqa: E402
from coevo.tinyworld.tokenizer import BOS, EOS, MARKERS, PAD  # noqa: E402
from roles.prompts import build_prompt, encode_example  # noqa: E402


@pytest.fixture(scope="module")
def world():
    return tw.build_world(0, n_train=200, n_heldout=16)


@pytest.fixture(scope="module")
def tok(world):
    return tw.train_tokenizer(world, vocab_size=512, n_examples=800)


def test_tokenizer_roundtrip_and_specials(world, tok):
    assert tok.bos_token == BOS and tok.eos_token == EOS and tok.pad_token == PAD
    assert len({tok.bos_token_id, tok.eos_token_id, tok.pad_token_id}) == 3
    assert not getattr(tok, "chat_template", None)  # roles use the plain template
    assert len(tok) <= 512 + len(MARKERS) + 3
    for ex in exm.sample_examples(world.heldout_tasks, 60, seed=1):
        for text in (ex.prompt, ex.completion):
            ids = tok(text, add_special_tokens=False)["input_ids"]
            assert tok.decode(ids) == text
    # markers are single tokens and are not dropped by skip_special_tokens
    for m in MARKERS:
        ids = tok(m, add_special_tokens=False)["input_ids"]
        assert len(ids) == 1
        assert tok.decode(ids, skip_special_tokens=True) == m
    # unseen text still round-trips (byte level), digits are split
    odd = "déjà vu ✓ 12345\t\n"
    assert tok.decode(tok(odd, add_special_tokens=False)["input_ids"]) == odd
    assert tok.tokenize("12345") == ["1", "2", "3", "4", "5"]


def test_tokenizer_from_texts(world):
    from coevo.tinyworld.tokenizer import world_corpus

    texts = world_corpus(world.train_tasks, n_examples=200, seed=3)
    tok = tw.train_tokenizer(texts, vocab_size=400)
    assert tok.decode(tok(texts[0], add_special_tokens=False)["input_ids"]) == texts[0]
    assert len(tok("<|answer|>", add_special_tokens=False)["input_ids"]) == 1


def test_tokenizer_save_load(tmp_path, world, tok):
    from transformers import AutoTokenizer

    tok.save_pretrained(tmp_path)
    back = AutoTokenizer.from_pretrained(tmp_path)
    assert len(back) == len(tok)
    assert (back.bos_token_id, back.eos_token_id, back.pad_token_id) == \
        (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id)
    task = world.heldout_tasks[0]
    p = build_prompt("coder", task, back)
    assert p.startswith("<|role|>coder\n")  # no chat template after reload either
    assert encode_example(back, p, task.solutions[0]) == encode_example(tok, p, task.solutions[0])


def test_model_forward_and_save_load(tmp_path, tok):
    from transformers import AutoModelForCausalLM

    model = tw.make_model(tok, size="nano", seed=0)
    again = tw.make_model(tok, size="nano", seed=0)
    for a, b in zip(model.parameters(), again.parameters()):
        assert torch.equal(a, b)
    assert model.config.model_type == "llama"
    assert count_params(model) < 300_000
    ids = torch.randint(0, len(tok), (3, 17))
    with torch.no_grad():
        out = model(input_ids=ids)
    assert out.logits.shape == (3, 17, len(tok))
    model.save_pretrained(tmp_path)
    back = AutoModelForCausalLM.from_pretrained(tmp_path)
    with torch.no_grad():
        assert torch.allclose(back(input_ids=ids).logits, out.logits, atol=1e-5)
    assert back.config.eos_token_id == tok.eos_token_id
    assert back.config.pad_token_id == tok.pad_token_id


def test_collate_masks_prompt_and_padding(world, tok):
    exs = exm.sample_examples(world.train_tasks, 4, seed=2)
    pairs = encode(tok, exs)
    ids, mask, labels = collate(pairs, tok.pad_token_id)
    for i, (p, c) in enumerate(pairs):
        n = len(p) + len(c)
        assert ids[i, :n].tolist() == p + c
        assert mask[i].sum() == n
        assert labels[i, len(p):n].tolist() == c and c[-1] == tok.eos_token_id
        assert (labels[i, : len(p)] == -100).all() and (labels[i, n:] == -100).all()


def test_sft_loss_decreases(world, tok):
    model = tw.make_model(tok, size="nano", seed=0)
    stats = tw.sft_train(model, tok, world.train_tasks[:40], steps=30, batch_size=8, lr=3e-3,
                         seed=0, progress=False, bucket=4)
    assert stats.steps == 30 and len(stats.losses) == 30
    head = sum(stats.losses[:5]) / 5
    tail = sum(stats.losses[-5:]) / 5
    assert tail < head - 0.5, (head, tail)
    assert stats.completion_tokens > 0 and stats.tokens > stats.completion_tokens
    assert not model.training
    assert all(p.grad is None for p in model.parameters())  # nothing left for the RL trainer


def test_sft_single_thread_is_reproducible_and_restores_threads(world, tok):
    """A seeded warm-up on one thread gives the same model twice (another seed does not) and
    leaves the caller's thread count as it was."""
    before = torch.get_num_threads()
    states = []
    for _ in range(2):
        model = tw.make_model(tok, size="nano", seed=0)
        tw.sft_train(model, tok, world.train_tasks[:20], steps=12, batch_size=4, lr=3e-3, seed=0,
                     progress=False, bucket=2, threads=1)
        assert torch.get_num_threads() == before
        states.append(model.state_dict())
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
    model = tw.make_model(tok, size="nano", seed=0)
    tw.sft_train(model, tok, world.train_tasks[:20], steps=12, batch_size=4, lr=3e-3, seed=1,
                 progress=False, bucket=2, threads=1)
    assert not all(torch.equal(states[0][k], v) for k, v in model.state_dict().items())


def test_sft_schedule_ignores_the_clock_within_budget(world, tok, monkeypatch):
    """A slow start (a busy machine, start-up costs) must not change the learning rates of a run
    that keeps within its time budget: they follow the step count, as without a budget."""
    import types

    from coevo.tinyworld import sft as sft_mod

    def lrs(budget, clock):
        monkeypatch.setattr(sft_mod, "time", types.SimpleNamespace(perf_counter=clock))
        model = tw.make_model(tok, size="nano", seed=0)
        return tw.sft_train(model, tok, world.train_tasks[:20], steps=6, batch_size=4, lr=3e-3,
                            seed=0, progress=False, bucket=2, time_budget_s=budget).lrs

    def slow_start():
        ticks = iter(range(10_000))
        return lambda: 0.0 if next(ticks) == 0 else 8.0 + next(ticks) * 1e-3  # 8 s before step 0

    plain = lrs(None, slow_start())
    assert lrs(100.0, slow_start()) == plain  # 8 s < 10% of the budget: the clock has no say
    assert lrs(20.0, slow_start()) != plain  # 8 s of a 20 s budget: behind pace, stretched


def test_sft_time_budget_stops_early(world, tok):
    model = tw.make_model(tok, size="nano", seed=0)
    stats = tw.sft_train(model, tok, world.train_tasks[:20], steps=10_000, batch_size=4,
                         progress=False, time_budget_s=0.5, bucket=2)
    assert stats.stopped_by_time and stats.steps < 10_000
    assert stats.lrs[-1] < stats.lrs[len(stats.lrs) // 2] or len(stats.lrs) < 4


def test_tiny_world_model_runs_on_its_own_thread_count():
    """coevo.run_driver.configure_torch: tiny.threads for the tiny world's model, model.threads for a
    model loaded from a path."""
    from coevo.run_driver import configure_torch
    from coevo.settings import CoevoConfig

    before = torch.get_num_threads()
    try:
        cfg = CoevoConfig()
        cfg.model.threads = 3
        configure_torch(cfg)
        assert torch.get_num_threads() == cfg.tiny.threads == 2
        cfg.model.path = "some/model"
        configure_torch(cfg)
        assert torch.get_num_threads() == 3
        cfg.model.path, cfg.tiny.threads = None, 0
        configure_torch(cfg)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_the_warm_up_says_where_it_is_without_a_terminal(world, tok, capsys):
    """`coevo demo > log 2>&1` showed nothing for the SFT warm-up's minutes: without a progress
    display it now gives status lines (first and last step, one at most every 30 s, with the ETA);
    on a terminal its [sft] lines carry the ETA."""
    said: list[str] = []
    model = tw.make_model(tok, size="nano", seed=0)
    tw.sft_train(model, tok, world.train_tasks[:20], steps=4, batch_size=4, seed=0, progress=False, bucket=2,
                 say=said.append)
    assert len(said) == 2 and said[0].startswith("SFT warm-up: step 1/4 (first step ")
    assert said[1].startswith("SFT warm-up: step 4/4 (") and "s/step, ETA 0s): loss " in said[1]
    tw.sft_train(model, tok, world.train_tasks[:20], steps=2, batch_size=4, seed=0, progress=True, bucket=2,
                 say=said.append)
    err = capsys.readouterr().err
    assert len(said) == 2 and "[sft] step 2/2 loss" in err and ", ETA 0s" in err
