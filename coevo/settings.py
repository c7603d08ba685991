"""The run configuration: one YAML file maps onto :class:`CoevoConfig` (see ``configs/``).

Sections: ``model`` (which model), ``tiny`` (the tiny world, used when ``model.path`` is empty),
``data`` (task files), ``execution`` (sandbox limits), ``loop`` (the co-evolution step and its
schedule), ``curriculum``, ``train`` (GRPO+ update, :class:`training.config.GRPOConfig`) and
``eval`` (held-out evaluation; ``eval.api`` samples it from a model served over an
OpenAI-compatible API instead: :class:`roles.api_config.ApiConfig`) and ``rollout`` (which engine
samples the training rollouts). Every field has a default; the defaults are the CPU tiny-world
run. ``coevo train --config FILE key.sub=value ...`` overrides single fields.

``train.temperature`` is always set to ``loop.temperature`` (the training forward must score
completions under the distribution they were sampled from), and ``train.total_steps`` defaults to
``loop.steps`` (times the number of roles with ``loop.update: per_role``, since the trainer's
schedule counts its update calls).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from coevo.curriculum import CurriculumConfig
from coevo.evaluate import EvalConfig
from coevo.loop import LoopConfig
from roles.vllm_engine import VLLMConfig
from training.config import GRPOConfig


@dataclass
class ModelConfig:
    path: str | None = None  # local transformers model directory; empty = the tiny world's model
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    device: str = "auto"  # auto | cpu | cuda | cuda:N
    threads: int = 0  # torch CPU threads (0 = all cores)
    # how the roles' prompts are written for model.path: auto = the tokenizer's chat template when it
    # has one, else coevo's plain format; plain = the plain format even where the tokenizer ships a
    # chat template (a base model carrying its instruct sibling's); chat = the template (required)
    prompt: str = "auto"

    def validate(self):
        if self.dtype not in ("auto", "float32", "bfloat16", "float16"):
            raise ValueError("dtype: must be auto, float32, bfloat16 or float16")
        if self.prompt not in ("auto", "chat", "plain"):
            raise ValueError("prompt: must be auto, chat or plain")
        if self.threads < 0:
            raise ValueError("threads: must be >= 0 (0 = all cores)")


@dataclass
class TinyConfig:
    seed: int = 0  # seeds the world's tasks, the model's initialisation and SFT
    size: str = "small"  # model size: nano | tiny | small (1.9M parameters) | base
    vocab_size: int = 768  # the tokenizer's vocabulary (BPE trained on the world's texts)
    n_train: int = 800  # training tasks of the world
    n_heldout: int = 64  # held-out tasks (compositions never seen in training)
    sft_steps: int = 900  # SFT warm-up steps (~34% held-out code accuracy after SFT: room for RL to show)
    sft_batch_size: int = 8  # SFT examples per step
    sft_lr: float = 3e-3  # SFT peak learning rate (AdamW)
    sft_time_budget_s: float = 480.0  # the SFT warm-up stops (with a decayed LR) by this time
    # share of the warm-up's Proposer targets drawn one step longer than a reference (up to four
    # steps) instead of another one-edit variant: fewer duplicate proposals, another SFT start
    # (README, self-play); 0 keeps the warm-up as it was
    proposer_grow: float = 0.0
    # torch threads while the model is the tiny world's (SFT and RL; 0 = model.threads): a fixed
    # count, so the float results (which depend on how work is split) are the same on any machine;
    # two: a 2M-parameter model's SFT step 0.165 -> 0.108 s, an update micro-batch 0.56 -> 0.31 s on
    # an idle 2-core CPU (the sandbox runs between the phases, not beside them)
    threads: int = 2

    def validate(self):
        # checked here, not when the world is built minutes later (a traceback after the run began)
        from coevo.tinyworld.model import SIZES

        if self.size not in SIZES:
            raise ValueError(f"size: must be one of {', '.join(SIZES)}, got {self.size!r}")
        for name, low in (("vocab_size", 1), ("n_train", 1), ("n_heldout", 0), ("sft_steps", 0),
                          ("sft_batch_size", 1), ("threads", 0)):
            if getattr(self, name) < low:
                raise ValueError(f"{name}: must be >= {low}")
        if not self.sft_lr > 0:
            raise ValueError("sft_lr: must be > 0")
        if not 0 <= self.proposer_grow <= 1:
            raise ValueError("proposer_grow: must be in [0, 1]")
        if self.sft_time_budget_s < 0:
            raise ValueError("sft_time_budget_s: must be >= 0 (0 = no time budget)")


@dataclass
class DataConfig:
    train: str | None = None  # tasks file (any format `coevo data convert` reads); empty = tiny world
    heldout: str | None = None  # held-out tasks file for evaluation; empty = tiny world or none
    # auto (from the records) | coevo | mbpp | mbpp-sanitized | mbpp-plus (evalplus) | humaneval |
    # codecontests | apps (APPS, TACO) | livecodebench | deepcoder | verl
    format: str = "auto"
    limit: int = 0  # 0 = all tasks

    def validate(self):
        from coevo.data import FORMATS

        if self.format not in FORMATS:
            raise ValueError(f"format: must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.limit < 0:
            raise ValueError("limit: must be >= 0 (0 = all tasks)")


@dataclass
class ExecutionConfig:
    timeout: float = 2.0  # wall-clock seconds per cell (one program x one test)
    memory_mb: int = 1024  # memory per cell's whole process tree, MiB (64..2048)
    workers: int = 0  # 0 = all cores
    isolation: str = "auto"  # auto | namespace | process

    def validate(self):
        if self.timeout <= 0:
            raise ValueError("timeout: must be positive")
        if not 64 <= self.memory_mb <= 2048:
            raise ValueError("memory_mb: must be between 64 and 2048")
        if self.isolation not in ("auto", "namespace", "process"):
            raise ValueError("isolation: must be auto, namespace or process")


ROLLOUT_BACKENDS = ("hf", "vllm")


@dataclass
class RolloutConfig:
    backend: str = "hf"  # hf: coevo's own decode loop (roles.generation); vllm: colocated vLLM (coevo[vllm], CUDA)
    vllm: VLLMConfig = field(default_factory=VLLMConfig)  # the vllm backend's engine settings

    def validate(self):
        if self.backend not in ROLLOUT_BACKENDS:
            raise ValueError(f"backend: must be one of {list(ROLLOUT_BACKENDS)}")


@dataclass
class CoevoConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    tiny: TinyConfig = field(default_factory=TinyConfig)
    data: DataConfig = field(default_factory=DataConfig)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    loop: LoopConfig = field(default_factory=LoopConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    # GRPO+ as in DeepCoder, but the tiny model from scratch takes a larger learning rate than the
    # 1e-6 used for 14B models, and the Coder's samples weigh 4x the Tester's and Fixer's: with
    # equal weights the joint run's code accuracy gained about half of what coder-only training
    # gained (the shared update went mostly to the other roles); measured in the README
    train: GRPOConfig = field(default_factory=lambda: GRPOConfig(
        lr=1e-4, micro_batch_size=8, role_weights={"coder": 2.0, "tester": 0.5, "fixer": 0.5, "proposer": 0.5}))
    eval: EvalConfig = field(default_factory=EvalConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)  # which engine samples the training rollouts

    def validate(self):
        from coevo.loop import ALL_ROLES

        if self.loop.roles and "coder" not in self.loop.roles:  # documented "any subset with coder"; a
            # demo with --roles tester ran its 8 minutes and left a model worse at code
            raise ValueError(f"loop.roles: must include coder (any subset with coder), got {self.loop.roles}")
        for role in self.train.role_weights:  # a misspelt role's weight would be ignored, silently
            if role not in ALL_ROLES:
                near = difflib.get_close_matches(str(role), ALL_ROLES, n=1, cutoff=0.5)
                hint = f"did you mean '{near[0]}'?" if near else f"roles: {', '.join(ALL_ROLES)}"
                raise ValueError(f"train.role_weights.{role}: unknown role; {hint}")
