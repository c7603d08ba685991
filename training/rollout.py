"""The unit of training data: one sampled completion with its reward and group.

A :class:`Rollout` knows token ids, the sampler's per-token log-probs, a scalar reward, the GRPO
group it belongs to and the role that produced it; nothing about prompts as text or execution.

Groups. A GRPO group is G samples of *one* prompt of one role (``"tester/task_17"``); advantages
are computed from the rewards of the group's samples (see :mod:`training.advantages`).

Reward ``NaN`` means "no reward for this sample" (e.g. a Tester sample for a task without a
correct program): the sample is dropped from its group's statistics and from the loss.

``truncated`` marks a completion that hit the length limit without EOS. With overlong filtering
(``GRPOConfig.mask_truncated``) such samples keep their reward in the group statistics but are
excluded from the loss; see :mod:`training.trainer` for the exact rule.

Episodes (multi-turn repair, RLEF). Each model turn of an episode is one rollout: its prompt holds
the task, the earlier attempts and the execution feedback they got, its completion is that turn's
attempt. Rollouts with the same ``group`` and ``episode`` key are the turns of one episode: they
carry the episode's one reward, count once in their group's statistics and all get the episode's
advantage (:mod:`training.advantages`). The feedback is prompt text, so it never enters the loss:
only the tokens the model wrote do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Rollout:
    """One sampled completion."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]  # per completion token, under the sampling policy; [] = not available
    reward: float  # NaN = no reward (dropped from its group)
    group: str  # GRPO group key: G samples of one (role, prompt), e.g. "tester/task_17"
    role: str
    truncated: bool = False  # hit max_new_tokens without EOS
    episode: str | None = None  # turns of one multi-turn episode share a key (within the group)
    temperature: float | None = None  # drawn at this sampling temperature (None: the trainer's own)

    @property
    def n_tokens(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)

    @property
    def has_reward(self) -> bool:
        return self.reward is not None and math.isfinite(float(self.reward))


def check_rollouts(rollouts: Sequence[Rollout], vocab_size: int | None = None,
                   need_logprobs: bool = False) -> None:
    """Raise ``ValueError`` naming the first malformed rollout (index and field)."""
    for i, r in enumerate(rollouts):
        if not r.prompt_ids:
            raise ValueError(f"rollouts[{i}].prompt_ids: empty (the first completion token needs a prompt)")
        if r.logprobs and len(r.logprobs) != len(r.completion_ids):
            raise ValueError(f"rollouts[{i}].logprobs: {len(r.logprobs)} values for "
                             f"{len(r.completion_ids)} completion tokens")
        if need_logprobs and r.completion_ids and not r.logprobs:
            raise ValueError(f"rollouts[{i}].logprobs: required with old_logprobs='sampler'")
        if not isinstance(r.group, str) or not r.group:
            raise ValueError(f"rollouts[{i}].group: must be a non-empty string")
        if r.episode is not None and (not isinstance(r.episode, str) or not r.episode):
            raise ValueError(f"rollouts[{i}].episode: must be None or a non-empty string")
        if r.reward is not None and not isinstance(r.reward, (int, float)):
            raise ValueError(f"rollouts[{i}].reward: must be a number (NaN for none), got {r.reward!r}")
        if r.reward is not None and math.isinf(float(r.reward)):
            raise ValueError(f"rollouts[{i}].reward: infinite")
        if vocab_size is not None:
            for name in ("prompt_ids", "completion_ids"):
                ids = getattr(r, name)
                if ids and (min(ids) < 0 or max(ids) >= vocab_size):
                    raise ValueError(f"rollouts[{i}].{name}: token id outside [0, {vocab_size})")
