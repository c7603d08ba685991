"""The self-play curriculum: a pool of tasks with running solve-rate estimates.

* Every task carries an estimate of the current Coder's solve rate (exponential moving average of
  the fraction of sampled codes that pass all of its tests) and an attempt count.
* Sampling prefers tasks that are *learnable*: solve rate strictly between 0 and 1. The weight is
  ``p * (1 - p)`` (the variance of a Bernoulli pass, i.e. how much a GRPO group can learn), with
  an optimistic prior for tasks not yet tried and a small floor so nothing starves.
* Offline filtering (DeepCoder): tasks observed always solved or never solved over at least
  ``min_attempts`` samples are retired from sampling (kept in the state for inspection).
* Proposer tasks that passed validation enter the same pool, up to ``max_proposed`` (the oldest
  proposed task is evicted first), and are drawn by the same learnability weights; seed tasks are
  never evicted.
* ``seed_tasks`` > 0 cuts the dataset to its first N tasks (the data-poor run: the rest of the
  curriculum must come from proposals).

All state is plain data (``state_dict`` / ``load_state_dict``) so checkpoints capture it exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from matrix.tasks import Task


@dataclass
class CurriculumConfig:
    ema: float = 0.5  # weight of the newest observation in the solve-rate estimate
    prior_weight: float = 0.25  # sampling weight of a task never tried (max of p*(1-p))
    floor: float = 0.02  # minimum weight of an active task
    filter_solved: bool = True  # retire always-solved / never-solved tasks
    min_attempts: int = 16  # samples seen before a task may be retired
    max_proposed: int = 256  # capacity of the proposed-task buffer
    seed_tasks: int = 0  # > 0: keep only the first N dataset tasks (data-poor run); 0 = all

    def validate(self):
        if not 0 < self.ema <= 1:
            raise ValueError("ema: must be in (0, 1]")
        if self.floor < 0 or self.prior_weight <= 0:
            raise ValueError("floor: weights must be positive")
        if self.min_attempts < 1:
            raise ValueError("min_attempts: must be >= 1")
        if self.seed_tasks < 0:
            raise ValueError("seed_tasks: must be >= 0")


@dataclass
class TaskStats:
    rate: float | None = None  # EMA solve rate; None = never tried
    attempts: int = 0
    solved: int = 0
    proposed: bool = False
    retired: bool = False
    added_at: int = 0


@dataclass
class Curriculum:
    config: CurriculumConfig
    tasks: dict[str, Task] = field(default_factory=dict)
    stats: dict[str, TaskStats] = field(default_factory=dict)
    clock: int = 0
    seeded: bool = False  # the loop's seed buffer of proposals has been drawn

    @classmethod
    def from_tasks(cls, tasks: list[Task], config: CurriculumConfig | None = None) -> Curriculum:
        cur = cls(config or CurriculumConfig())
        if cur.config.seed_tasks:
            tasks = list(tasks)[: cur.config.seed_tasks]
        for t in tasks:
            cur.add(t, proposed=False)
        return cur

    # ------------------------------------------------------------------ pool
    def add(self, task: Task, proposed: bool) -> bool:
        """Add a task; returns False when its id is already present."""
        if task.task_id in self.tasks:
            return False
        self.clock += 1
        self.tasks[task.task_id] = task
        self.stats[task.task_id] = TaskStats(proposed=proposed, added_at=self.clock)
        if proposed:
            proposed_ids = [k for k, s in self.stats.items() if s.proposed]
            while len(proposed_ids) > self.config.max_proposed:
                oldest = min(proposed_ids, key=lambda k: self.stats[k].added_at)
                del self.tasks[oldest], self.stats[oldest]
                proposed_ids.remove(oldest)
        return True

    def active_ids(self) -> list[str]:
        return [k for k, s in self.stats.items() if not s.retired]

    def weight(self, task_id: str) -> float:
        s = self.stats[task_id]
        if s.retired:
            return 0.0
        if s.rate is None:
            return self.config.prior_weight
        return max(s.rate * (1.0 - s.rate), self.config.floor)

    def sample(self, k: int, rng: np.random.Generator) -> list[Task]:
        """Draw ``k`` distinct tasks (fewer if the pool is smaller), weighted by learnability."""
        ids = self.active_ids()
        if not ids:
            raise RuntimeError("the curriculum has no active tasks left")
        w = np.array([self.weight(i) for i in ids], dtype=float)
        k = min(k, len(ids))
        picks = rng.choice(len(ids), size=k, replace=False, p=w / w.sum())
        return [self.tasks[ids[i]] for i in picks]

    # ------------------------------------------------------------------ updates
    def observe(self, task_id: str, n_samples: int, n_solved: int) -> None:
        """Record ``n_solved`` of ``n_samples`` Coder samples passing every test."""
        if task_id not in self.stats or n_samples <= 0:
            return
        s = self.stats[task_id]
        frac = n_solved / n_samples
        s.rate = frac if s.rate is None else (1 - self.config.ema) * s.rate + self.config.ema * frac
        s.attempts += n_samples
        s.solved += n_solved
        if self.config.filter_solved and s.attempts >= self.config.min_attempts:
            if s.solved == 0 or s.solved == s.attempts:
                s.retired = True
                if len(self.active_ids()) == 0:  # never retire the last task
                    s.retired = False

    def apply(self, observed: list[tuple[str, int, int]], new_tasks: list[Task]) -> None:
        """One step's changes: ``new_tasks`` join the buffer as proposed tasks first, so that
        their solver samples' observation counts, then each ``(task id, samples, solved)`` of
        ``observed`` is recorded (:meth:`observe`)."""
        for t in new_tasks:
            self.add(t, proposed=True)
        for task_id, n, solved in observed:
            self.observe(task_id, n, solved)

    def summary(self) -> dict[str, float]:
        active = self.active_ids()
        rates = [self.stats[k].rate for k in active if self.stats[k].rate is not None]
        return {
            "curriculum/active": float(len(active)),
            "curriculum/retired": float(len(self.stats) - len(active)),
            "curriculum/proposed": float(sum(s.proposed for s in self.stats.values())),
            "curriculum/proposed_active": float(sum(self.stats[k].proposed for k in active)),
            "curriculum/mean_rate": float(np.mean(rates)) if rates else float("nan"),
            "curriculum/learnable": float(sum(0 < r < 1 for r in rates)),
        }

    # ------------------------------------------------------------------ checkpoint state
    def state_dict(self) -> dict:
        return {
            "clock": self.clock,
            "seeded": self.seeded,
            "tasks": [self.tasks[k].to_json() for k in self.tasks],
            "stats": {k: vars(s).copy() for k, s in self.stats.items()},
        }

    def load_state_dict(self, state: dict) -> None:
        self.clock = state["clock"]
        self.seeded = bool(state.get("seeded", False))
        self.tasks = {t["task_id"]: Task.from_json(t) for t in state["tasks"]}
        self.stats = {k: TaskStats(**v) for k, v in state["stats"].items()}
