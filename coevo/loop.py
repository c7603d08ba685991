"""One co-evolution step: curriculum -> roles (one generation pass) -> matrix -> rewards -> GRPO+.

Data flows one way through :meth:`CoEvolution.step`:

1. draw ``tasks_per_step`` tasks from the curriculum (learnable tasks preferred);
2. **generation pass 1** (one batched call mixing roles): ``n_codes`` Coder samples and
   ``n_tests`` Tester samples per task, and ``n_proposals`` Proposer samples (one prompt, one
   GRPO group, shown ``proposer_refs`` reference tasks drawn from the curriculum: seed tasks and
   accepted proposals, as Absolute Zero does);
3. **matrix**: per task, every parsed program against [ground-truth tests | generated tests]
   (plus the reference solution as a last row: metrics, and with ``anchor_reference`` one more
   known-correct program for the Tester reward); proposals pass the
   world's admission check (the tiny world derives their description) and are validated by
   execution (:mod:`coevo.selfplay`); each rejection has a reason (``reject/<reason>`` metrics);
4. **generation pass 2**: the first turn of ``n_fixes`` repair episodes (:mod:`coevo.repair`) for
   each of up to ``fix_codes`` failing programs per task (feedback: the first failing public
   ground-truth test), and ``n_solves`` Coder samples per valid proposed task (their solve rate is
   the Proposer's learnability signal);
5. **matrix** again for repairs and solver samples; then **repair turns** 2..``fix_turns``: the
   episodes whose attempt still fails a public test get the new feedback and try again (one
   generation and one matrix call per turn);
6. **rewards** (:mod:`matrix.rewards`, assembled into rollouts by the pure functions of
   :mod:`coevo.rollouts`; per task :func:`coevo.task_rewards.task_rewards`): Coder all-pass (or
   fraction) on ground truth; Tester reward precision (CURE) per test plus a correctness term,
   summed over a sample's tests, each rejected candidate (unparseable, duplicate) scoring the minimum
   (:func:`matrix.rewards.tester_suite_reward`); with ``anchor_reference`` the task's reference
   solution joins the correct programs;
   Fixer: RLEF's episode reward (``fixer_reward="episode"``: +1 when the final program passes every
   ground-truth test, else -1, less 0.2 per turn without a valid program; every turn of the episode
   is trained with the episode's advantage, the feedback being prompt text never enters the loss) or
   the single-turn pass-fraction gain plus full-pass bonus (``"gain"``); Proposer learnability
   ``1 - r`` for a solve rate ``0 < r < 1`` (else 0) plus ``proposer_valid_bonus`` less R-Zero's
   repetition penalty, -0.25 degenerate (runs but teaches nothing new) / -0.5 a copy of a known
   task / -0.5 broken / -1 malformed
   (:func:`matrix.rewards.proposer_batch_rewards`). In label-free mode (``rewards.label_free`` or a
   task without ground-truth tests) the Coder and Tester rewards come from
   :func:`matrix.rewards.bidirectional_scores` alone;
7. **update**: one GRPO+ update over all roles' rollouts (``update="joint"``) or one per role
   (``update="per_role"``); only roles listed in ``roles`` are trained (Coder samples are always
   drawn: Tester rewards need them);
8. valid proposals join the curriculum's buffer (with their solver samples as first observation)
   and are drawn like any dataset task, by learnability; the curriculum records each task's
   solve rate.

Before the first step, ``seed_proposals`` Proposer samples (not trained on) fill the buffer with
valid tasks (Absolute Zero's seed buffer).

Groups: ``coder/<task>``, ``tester/<task>``, ``fixer/<task>/<code index>``,
``proposer/batch`` (the step's proposals), ``coder/<proposed task>``; a group is always G samples of one prompt (for the
Fixer: G episodes from the same start, each turn a rollout tagged with its episode).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

import numpy as np

from coevo.repair import attempt_jobs, observe_attempts, public_feedback, start_episodes, turn_requests
from coevo.rollouts import Scored, fixer_rollouts, parse_samples, proposer_rollouts, score_task, solved, solver_jobs
from matrix import rewards as R
from matrix.tasks import Task

ALL_ROLES = ("coder", "tester", "fixer", "proposer")
FIXER_REWARDS = ("episode", "gain")
COPY_GRADES = ("copy", "malformed")  # loop.proposer_copy_grade


@dataclass
class LoopConfig:
    steps: int = 80  # training steps (one batch of tasks, all roles, one update each)
    tasks_per_step: int = 8  # tasks the curriculum draws per step
    # roles trained: coder, tester, fixer, proposer (any subset with coder)
    roles: list[str] = field(default_factory=lambda: list(ALL_ROLES))
    update: str = "joint"  # joint | per_role
    n_codes: int = 8  # Coder samples per task (one GRPO group)
    n_tests: int = 4  # Tester samples per task, each a suite of tests (one GRPO group)
    n_fixes: int = 4  # repair episodes per failing program (one GRPO group)
    fix_codes: int = 1  # failing programs per task handed to the Fixer
    # the Fixer's reward: "episode" (RLEF: up to fix_turns attempts with execution feedback, one
    # trajectory reward: +1 solved / -1 not, less fix_invalid_penalty per turn without a valid
    # program) | "gain" (one attempt; pass-fraction gain + full-pass bonus)
    fixer_reward: str = "episode"  # default episode: trains every turn the held-out eval plays (gain: the first)
    fix_turns: int = 2  # attempts per repair episode (fixer_reward "episode"; "gain" makes one)
    fix_public_tests: int = 0  # the first N ground-truth tests give feedback (public); 0 = all
    fix_invalid_penalty: float = 0.2  # per turn whose completion holds no valid program
    n_proposals: int = 8  # Proposer samples per step (one prompt, one GRPO group)
    n_solves: int = 4  # solver samples per valid proposal: its solve rate is the learnability signal
    proposer_refs: int = 2  # reference tasks in the Proposer prompt (seed tasks and accepted proposals)
    # the chance that each reference is drawn from the accepted proposals (while there are any)
    # rather than from the whole pool: their variants are longer, seldom duplicates (README,
    # self-play); 0 draws from the whole pool as before
    proposer_refs_proposed: float = 0.0
    proposer_format: str = "program"  # program (solution + inputs; description derived) | task (+ description)
    repetition_penalty: float = 0.5  # R-Zero: a valid proposal repeated k times in its batch loses 0.5 k/(n-1)
    proposer_valid_bonus: float = 0.25  # added to every valid proposal's learnability (a new task that works)
    # the grade of a copy (a duplicate of a known task, a repeat within the batch): "copy" (-0.5, as
    # a broken task) or "malformed" (-1, as garbage: a known program gains nothing in the group)
    proposer_copy_grade: str = "copy"
    seed_proposals: int = 0  # Proposer samples drawn before step 1 to seed the buffer (not trained on)
    temperature: float = 1.0  # sampling temperature of the rollouts (train.temperature follows it)
    # the Proposer's own sampling temperature (null: loop.temperature); the trainer scores each
    # sample at the temperature it was drawn at
    proposer_temperature: float | None = None
    top_p: float = 1.0  # nucleus sampling of the rollouts (1.0 = off)
    max_new_tokens: int = 160  # completion length cap; a longer sample is truncated (see train.mask_truncated)
    coder_reward: str = "binary"  # binary | fraction
    # the task's reference solution counts as one more known-correct program in the Tester reward,
    # so tests are judged (and wrong ones penalised) even when no sampled program is correct
    anchor_reference: bool = True
    # a Tester sample's reward (matrix.rewards.tester_suite_reward): per test CURE precision
    # + accuracy_weight for a right test (with credit "discriminating": only one that rejects some
    # wrong program) / - accuracy_weight for a wrong one; rejected candidates score the minimum
    tester_accuracy_weight: float = 0.5
    tester_credit: str = "correct"  # correct | discriminating
    tester_aggregate: str = "sum"  # sum | mean
    # > 0: the Tester prompt asks for exactly this many tests; extra ones are rejected and missing
    # ones count as rejected too (a suite cannot shrink to one safe test); 0 = the model chooses
    tests_per_sample: int = 0
    # Coder and Tester rewards from the matrix alone (bidirectional scores), ignoring ground truth
    label_free: bool = False
    save_every: int = 10  # checkpoint every N steps (atomic; a killed run resumes from the last)
    eval_every: int = 40  # held-out evaluation every N steps (and at the start and the end)
    keep_checkpoints: int = 2  # checkpoints kept on disk (older ones deleted)
    seed: int = 0  # sampling and curriculum seed

    @property
    def fixer_turns(self) -> int:
        """Repair turns the loop plays (and trains) per episode: ``fix_turns`` for RLEF episodes,
        one for the single-turn gain reward."""
        return self.fix_turns if self.fixer_reward == "episode" else 1

    def validate(self):
        bad = [r for r in self.roles if r not in ALL_ROLES]
        if bad or not self.roles:
            raise ValueError(f"roles: unknown or empty {bad or self.roles}; choose from {list(ALL_ROLES)}")
        if self.update not in ("joint", "per_role"):
            raise ValueError("update: must be 'joint' or 'per_role'")
        if self.tester_aggregate not in R.TESTER_AGGREGATES:
            raise ValueError(f"tester_aggregate: must be one of {list(R.TESTER_AGGREGATES)}")
        if self.tester_credit not in R.TESTER_CREDITS:
            raise ValueError(f"tester_credit: must be one of {list(R.TESTER_CREDITS)}")
        if self.tester_accuracy_weight < 0:
            raise ValueError("tester_accuracy_weight: must be >= 0")
        if self.coder_reward not in R.CODER_MODES:
            raise ValueError(f"coder_reward: must be one of {list(R.CODER_MODES)}")
        if self.tests_per_sample < 0:
            raise ValueError("tests_per_sample: must be >= 0")
        if self.fixer_reward not in FIXER_REWARDS:
            raise ValueError(f"fixer_reward: must be one of {list(FIXER_REWARDS)}")
        if self.fix_turns < 1:
            raise ValueError("fix_turns: must be >= 1")
        if self.fix_public_tests < 0 or self.fix_invalid_penalty < 0:
            raise ValueError("fix_public_tests: must be >= 0 (fix_invalid_penalty >= 0)")
        if self.proposer_format not in ("program", "task"):
            raise ValueError("proposer_format: must be 'program' or 'task'")
        if self.proposer_copy_grade not in COPY_GRADES:
            raise ValueError(f"proposer_copy_grade: must be one of {list(COPY_GRADES)}")
        if not 0 <= self.proposer_refs_proposed <= 1:
            raise ValueError("proposer_refs_proposed: must be in [0, 1]")
        if self.proposer_temperature is not None and not self.proposer_temperature > 0:
            raise ValueError("proposer_temperature: must be > 0 (or null: loop.temperature)")
        for name in ("proposer_refs", "seed_proposals", "n_proposals", "n_solves"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be >= 0")
        for name in ("repetition_penalty", "proposer_valid_bonus"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must be >= 0")
        for name in ("steps", "tasks_per_step", "n_codes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: must be >= 1")
        if self.save_every < 1 or self.eval_every < 0:
            raise ValueError("save_every: must be >= 1 (eval_every >= 0)")


class CoEvolution:
    """Holds the pieces of a run and performs one step at a time."""

    def __init__(self, cfg: LoopConfig, engine, tokenizer, trainer, executor, curriculum, examples: list[Task],
                 proposal_check=None):
        self.cfg = cfg
        # the sampler: generate(requests, config) -> samples (roles.generation.GenerationEngine,
        # roles.vllm_engine.VLLMEngine); its config is sampling_config(cfg) with a per-step seed
        self.engine = engine
        self.tokenizer = tokenizer
        self.trainer = trainer
        self.executor = executor
        self.curriculum = curriculum
        self.examples = examples  # reference tasks for the Proposer when the curriculum has none
        # optional world-specific admission test for proposals: task -> (ok, reason code of
        # coevo.selfplay.REJECT_REASONS); it may fill in the task's description. The tiny world's
        # keeps held-out compositions out of the buffer and refuses behavioural duplicates; its
        # remember(task) learns each known task
        self.proposal_check = proposal_check
        self.known_fingerprints: set[str] = set()
        self._known_ids: set[str] = set()
        self._learn_curriculum()

    def _learn_curriculum(self) -> None:
        """Remember every curriculum task not yet known (at start, and after a resumed run restored
        the curriculum with its accepted proposals), so that no copy of one is accepted again."""
        for t in list(self.curriculum.tasks.values()):
            if t.task_id not in self._known_ids:
                self._remember(t)

    def _remember(self, task: Task) -> None:
        from coevo.selfplay import task_fingerprints

        self._known_ids.add(task.task_id)
        self.known_fingerprints |= task_fingerprints(task)
        remember = getattr(self.proposal_check, "remember", None)
        if remember is not None:
            remember(task)

    # ------------------------------------------------------------------ the step
    def step(self, step: int) -> dict:
        from training import distributed as D

        cfg = self.cfg
        observed: list[tuple[str, int, int]] = []  # (task id, Coder samples, solved) for the curriculum
        rng = np.random.default_rng([cfg.seed, step])  # identical on every rank
        self._learn_curriculum()
        if cfg.seed_proposals and "proposer" in cfg.roles and not self.curriculum.seeded:
            metrics_seed = self.seed_buffer(cfg.seed_proposals, step)
        else:
            metrics_seed = {}
        tasks = self.curriculum.sample(cfg.tasks_per_step, rng)
        drawn_proposed = sum(self.curriculum.stats[t.task_id].proposed for t in tasks)
        rank, world = D.rank(), D.world_size()
        tasks = tasks[rank::world]  # data parallel: each rank takes its share of the step's tasks
        gen_cfg = sampling_config(cfg, seed=int(np.random.default_rng([cfg.seed, step, rank]).integers(2**31)))
        metrics: dict[str, float] = {**metrics_seed, "curriculum/drawn_proposed": float(drawn_proposed)}
        t0 = time.perf_counter()
        with self._generation():
            samples = self._generate_by_role(self._first_requests(tasks, rng), gen_cfg)
        t_gen = time.perf_counter() - t0
        by = _group_by_task(samples)

        # ---- matrix 1: codes x [gt | generated] (+ reference row)
        t1 = time.perf_counter()
        jobs, layouts = [], []
        for t in tasks:
            lay = parse_samples(t, by.get((t.task_id, "coder"), []), by.get((t.task_id, "tester"), []),
                                cfg.tests_per_sample)
            jobs.append((t, lay.codes + t.solutions[:1], list(t.tests) + lay.gen_tests))
            layouts.append(lay)
        results = self.executor.run_matrices(jobs)
        proposals = self.validate_proposals(by.get(("*", "proposer"), []))
        t_exec = time.perf_counter() - t1

        rollouts: list[Scored] = []
        episodes: list = []  # repair episodes (coevo.repair) starting from failing programs
        turns = cfg.fixer_turns
        for t, lay, res in zip(tasks, layouts, results):
            passed = np.asarray(res.passed, dtype=bool)
            score = score_task(t, lay, passed, cfg)
            rollouts += score.rollouts
            if score.observation is not None:
                observed.append(score.observation)
                _acc(metrics, "train/code_acc", score.code_acc)
            for acc in score.test_accs:
                _acc(metrics, "train/test_acc", acc)
            for i in score.broken:  # feedback: the first failing public ground-truth test
                before = float(passed[i, :len(t.tests)].mean())
                episodes += start_episodes(t, lay.codes[i], public_feedback(t, res, i, cfg.fix_public_tests),
                                           before, cfg.n_fixes, max_turns=turns,
                                           public=cfg.fix_public_tests, group=f"fixer/{t.task_id}/{i}")

        # ---- generation pass 2: the Fixer's first turn + solvers on proposed tasks
        t2 = time.perf_counter()
        fix_reqs = turn_requests(episodes, self.tokenizer)
        solve_reqs = [r for _, r in proposals["solve_requests"]]
        samples2 = []
        if _any_rank(bool(fix_reqs or solve_reqs)):  # entering _generation is collective under ZeRO-3
            with self._generation():
                samples2 = self.engine.generate(fix_reqs + solve_reqs, config=gen_cfg) if fix_reqs or solve_reqs else []
        fix_samples, solve_samples = samples2[:len(fix_reqs)], samples2[len(fix_reqs):]
        t_gen += time.perf_counter() - t2
        # ---- matrix 2: repairs and solver samples against their tasks' tests
        t3 = time.perf_counter()
        solve_jobs = solver_jobs(proposals, solve_samples)
        jobs2 = attempt_jobs(episodes, fix_samples) + solve_jobs
        results2 = self.executor.run_matrices(jobs2) if jobs2 else []
        observe_attempts(episodes, fix_samples, results2[:len(episodes)])
        t_exec += time.perf_counter() - t3
        # ---- repair turns 2..fix_turns: episodes whose program still fails a public test try again
        # (as many turns on every rank: entering _generation is collective under ZeRO-3)
        while _any_rank(bool(active := [e for e in episodes if not e.done])):
            t2 = time.perf_counter()
            with self._generation():
                turn = self.engine.generate(turn_requests(active, self.tokenizer), config=gen_cfg) if active else []
            t3 = time.perf_counter()
            if active:
                observe_attempts(active, turn, self.executor.run_matrices(attempt_jobs(active, turn)))
            t_gen, t_exec = t_gen + (t3 - t2), t_exec + (time.perf_counter() - t3)
        fixer, fixer_metrics = fixer_rollouts(episodes, cfg)
        rollouts += fixer
        metrics.update(fixer_metrics)
        prop = proposer_rollouts(proposals, solve_jobs, solve_samples, results2[len(episodes):], cfg)
        rollouts += prop.rollouts
        metrics.update(prop.metrics)
        observed += prop.observations

        # ---- update
        t4 = time.perf_counter()
        train_metrics = self._update(rollouts)
        t_train = time.perf_counter() - t4
        self._sync_curriculum(observed, prop.new_tasks)
        metrics.update(train_metrics)
        for role in ALL_ROLES:
            rs = [r.reward for r in rollouts if r.sample.role == role and np.isfinite(r.reward)]
            if rs:
                metrics[f"reward/{role}"] = float(np.mean(rs))
        metrics.update(self.curriculum.summary())
        metrics.update({"time/generate_s": t_gen, "time/execute_s": t_exec, "time/train_s": t_train,
                        "samples": float(len(samples) + len(samples2))})
        return {k: v for k, v in metrics.items() if not k.endswith("#n")}

    def _generation(self):
        ctx = getattr(self.trainer, "generation_context", None)
        return ctx() if ctx is not None else contextlib.nullcontext()

    def _sync_curriculum(self, observed: list[tuple[str, int, int]], new_tasks: list[Task]) -> None:
        """Apply a step's solve-rate observations and new tasks (:meth:`Curriculum.apply`),
        gathered from every rank so that all ranks keep the same curriculum."""
        from training import distributed as D

        if D.world_size() > 1:
            gathered = D.all_gather_object((observed, [t.to_json() for t in new_tasks]))
            observed = [o for obs, _ in gathered for o in obs]
            new_tasks = [Task.from_json(t) for _, ts in gathered for t in ts]
        self.curriculum.apply(observed, new_tasks)

    # ------------------------------------------------------------------ requests
    def _role_temperature(self, role: str) -> float | None:
        """A role's own sampling temperature where it differs from loop.temperature, else None."""
        t = self.cfg.proposer_temperature if role == "proposer" else None
        return t if t is not None and t != self.cfg.temperature else None

    def _generate_by_role(self, reqs: list, gen_cfg) -> list:
        """``engine.generate`` of ``reqs``; the Proposer's at its own temperature (a second call)."""
        import dataclasses

        own = [r for r in reqs if self._role_temperature(r.role) is not None]
        if not own:
            return self.engine.generate(reqs, config=gen_cfg)
        rest = [r for r in reqs if self._role_temperature(r.role) is None]
        out = self.engine.generate(rest, config=gen_cfg) if rest else []
        for role in dict.fromkeys(r.role for r in own):
            cfg = dataclasses.replace(gen_cfg, temperature=self._role_temperature(role))
            out += self.engine.generate([r for r in own if r.role == role], config=cfg)
        return out

    def _first_requests(self, tasks: list[Task], rng) -> list:
        from roles.generation import GenRequest
        from roles.prompts import build_prompt

        cfg, tok = self.cfg, self.tokenizer
        reqs = []
        for t in tasks:
            reqs.append(GenRequest("coder", t.task_id, build_prompt("coder", t, tok), n=cfg.n_codes))
            if "tester" in cfg.roles and cfg.n_tests:
                prompt = build_prompt("tester", t, tok, n_tests=cfg.tests_per_sample or None)
                reqs.append(GenRequest("tester", t.task_id, prompt, n=cfg.n_tests))
        if "proposer" in cfg.roles and cfg.n_proposals:
            req = self.proposer_request(rng, cfg.n_proposals)
            if req is not None:
                reqs.append(req)
        return reqs

    def proposer_request(self, rng, n: int):
        """One Proposer prompt showing ``proposer_refs`` reference tasks drawn from the curriculum's
        pool (seed tasks and accepted proposals), ``n`` samples."""
        from roles.generation import GenRequest
        from roles.prompts import build_prompt

        pool = [t for t in self.curriculum.tasks.values() if t.solutions] or [t for t in self.examples if t.solutions]
        if not pool:
            return None
        stats = self.curriculum.stats
        flags = [bool(stats[t.task_id].proposed) if t.task_id in stats else False for t in pool]
        refs = draw_references(pool, flags, self.cfg.proposer_refs, self.cfg.proposer_refs_proposed, rng)
        kind = refs[0].kind if refs else "function"
        prompt = build_prompt("proposer", None, self.tokenizer, references=refs, kind=kind,
                              describe=self.cfg.proposer_format == "task")
        return GenRequest("proposer", "*", prompt, n=n, meta={"kind": kind})

    # ------------------------------------------------------------------ proposals
    def validate_proposals(self, proposer_samples) -> dict:
        """Parse, admit (world check) and validate (sandbox) the step's proposals.

        Returns ``samples``, ``reasons`` ("ok" or a code of :data:`coevo.selfplay.REJECT_REASONS`
        per sample), ``grades`` (for the graded penalty), ``keys`` (structure fingerprints, for the
        repetition penalty), ``tasks`` (index -> accepted task) and ``solve_requests``."""
        from coevo.selfplay import GRADE, structure_fingerprint, validate_proposals
        from roles.generation import GenRequest
        from roles.parsing import parse_task
        from roles.prompts import build_prompt

        n = len(proposer_samples)
        info = {"samples": proposer_samples, "reasons": ["malformed"] * n, "keys": [None] * n, "tasks": {},
                "solve_requests": []}
        parsed, idx = [], []
        for i, s in enumerate(proposer_samples):
            pt = parse_task(s.text, kind=(getattr(s, "meta", None) or {}).get("kind"))
            if not pt.ok or pt.task is None:
                continue
            info["keys"][i] = structure_fingerprint(pt.task.solutions[0])
            if self.proposal_check is not None:
                ok, why = self.proposal_check(pt.task)
                if not ok:
                    info["reasons"][i] = why if why in GRADE else "not_world"
                    continue
            pt.task.meta.setdefault("inputs", pt.inputs)
            parsed.append(pt.task)
            idx.append(i)
        if parsed:
            verdicts = validate_proposals(parsed, self.executor, self.known_fingerprints)
            for i, v in zip(idx, verdicts):
                info["reasons"][i] = v.reason
                if v.valid:
                    info["tasks"][i] = v.task
                    self._remember(v.task)
                    req = GenRequest("coder", v.task.task_id, build_prompt("coder", v.task, self.tokenizer),
                                     n=self.cfg.n_solves, meta={"proposal": i})
                    info["solve_requests"].append((i, req))
        info["grades"] = ["valid" if r == "ok" else GRADE[r] for r in info["reasons"]]
        if self.cfg.proposer_copy_grade != "copy":
            info["grades"] = [self.cfg.proposer_copy_grade if g == "copy" and r in ("duplicate", "repeat") else g
                              for g, r in zip(info["grades"], info["reasons"])]
        return info

    def seed_buffer(self, n: int, step: int) -> dict:
        """Absolute Zero's seed buffer: ``n`` Proposer samples before RL, validated and solved
        (``n_solves`` samples each); valid ones join the curriculum. Nothing is trained. Marks the
        curriculum seeded (a checkpointed flag), so a resumed run does not seed again."""
        from training import distributed as D

        rng = np.random.default_rng([self.cfg.seed, step, 7919])
        req = self.proposer_request(rng, n) if D.is_main() or D.world_size() == 1 else None
        added: list[Task] = []
        observed: list[tuple[str, int, int]] = []
        reasons: list[str] = []
        if req is not None:
            gen_cfg = sampling_config(self.cfg, seed=int(rng.integers(2**31)))
            with self._generation():
                samples = self._generate_by_role([req], gen_cfg)
            info = self.validate_proposals(samples)
            reasons = info["reasons"]
            if info["solve_requests"]:
                with self._generation():
                    solves = self.engine.generate([r for _, r in info["solve_requests"]], config=gen_cfg)
                jobs = solver_jobs(info, solves)
                for (task, codes, _), res in zip(jobs, self.executor.run_matrices(jobs)):
                    added.append(task)
                    observed.append((task.task_id, len(codes), int(solved(codes, res).sum())))
        self._sync_curriculum(observed, added)  # the seeded tasks can be drawn from this step on
        self.curriculum.seeded = True
        return {"seed/proposals": float(len(reasons)), "seed/accepted": float(len(added))}

    # ------------------------------------------------------------------ update
    def _update(self, sampled: list[Scored]) -> dict:
        from training.rollout import Rollout

        trainable = [x for x in sampled if x.sample.role in self.cfg.roles]
        rollouts = [Rollout(prompt_ids=x.sample.prompt_ids, completion_ids=x.sample.completion_ids,
                            logprobs=x.sample.logprobs, reward=x.reward, group=x.group, role=x.sample.role,
                            truncated=x.sample.truncated, episode=x.episode,
                            temperature=self._role_temperature(x.sample.role)) for x in trainable]
        if not rollouts:
            return {}
        local = {"local": True} if _distributed() else {}
        if self.cfg.update == "joint":
            return self.trainer.step(rollouts, **local)
        merged: dict[str, float] = {}
        for role in self.cfg.roles:
            part = [r for r in rollouts if r.role == role]
            if part or local:  # under data parallelism every rank makes the same calls
                merged.update({f"{role}/{k}": v for k, v in self.trainer.step(part, **local).items()})
        return merged


def draw_references(pool: list, proposed: list[bool], k: int, share: float, rng) -> list:
    """``k`` distinct references from ``pool`` (fewer if it is smaller). ``share`` 0: uniformly
    from the whole pool (one ``rng.choice``, the draw the loop always made). Otherwise each of
    the ``k`` comes from the items flagged ``proposed`` with probability ``share`` (a binomial
    count), the rest from the others; a side with too few items is filled from the other side."""
    k = min(k, len(pool))
    if k <= 0:
        return []
    if share <= 0:
        return [pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False)]
    props = [i for i, p in enumerate(proposed) if p]
    others = [i for i, p in enumerate(proposed) if not p]
    n_prop = int(rng.binomial(k, share))
    n_prop = max(min(n_prop, len(props)), k - len(others))
    picks = [props[int(i)] for i in rng.choice(len(props), size=n_prop, replace=False)] if n_prop else []
    if k - n_prop:
        picks += [others[int(i)] for i in rng.choice(len(others), size=k - n_prop, replace=False)]
    return [pool[i] for i in picks]


def sampling_config(cfg: LoopConfig, seed: int | None = None):
    """The rollouts' sampling settings (a :class:`roles.generation.GenerationConfig`; the engine's
    own is this with the run's seed, each step's draws a seed of its own)."""
    from roles.generation import GenerationConfig

    return GenerationConfig(temperature=cfg.temperature, top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens,
                            seed=cfg.seed if seed is None else seed)


def _distributed() -> bool:
    from training import distributed as D

    return D.world_size() > 1


def _group_by_task(samples) -> dict[tuple[str, str], list]:
    out: dict[tuple[str, str], list] = {}
    for s in samples:
        out.setdefault((s.task_id, s.role), []).append(s)
    return out


def _any_rank(flag: bool) -> bool:
    """Whether ``flag`` holds on any rank (itself when not distributed)."""
    from training import distributed as D

    return any(D.all_gather_object(bool(flag))) if D.world_size() > 1 else bool(flag)


def _acc(metrics: dict, key: str, value: float) -> None:
    """Accumulate a running mean under ``key`` (count kept in ``key + '#n'``, removed later)."""
    n = metrics.get(key + "#n", 0.0)
    metrics[key] = (metrics.get(key, 0.0) * n + value) / (n + 1)
    metrics[key + "#n"] = n + 1
