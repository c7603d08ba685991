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
6. **rewards** (:mod:`matrix.rewards`, assembled per task by the pure
   :func:`coevo.task_rewards.task_rewards`): Coder all-pass (or fraction) on ground truth; Tester
   reward precision (CURE) per test plus a correctness term, summed over a sample's tests, each
   rejected candidate (unparseable, duplicate) scoring the minimum
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
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from coevo.repair import attempt_jobs, observe_attempts, turn_requests
from coevo.task_rewards import task_rewards
from matrix import rewards as R
from matrix.tasks import Task

ALL_ROLES = ("coder", "tester", "fixer", "proposer")
FIXER_REWARDS = ("episode", "gain")


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
    fixer_reward: str = "gain"  # default gain: episodes measured level on held-out fix_acc at 1.6x the step cost
    fix_turns: int = 2  # attempts per repair episode (fixer_reward "episode"; "gain" makes one)
    fix_public_tests: int = 0  # the first N ground-truth tests give feedback (public); 0 = all
    fix_invalid_penalty: float = 0.2  # per turn whose completion holds no valid program
    n_proposals: int = 8  # Proposer samples per step (one prompt, one GRPO group)
    n_solves: int = 4  # solver samples per valid proposal: its solve rate is the learnability signal
    proposer_refs: int = 3  # reference tasks in the Proposer prompt (seed tasks and accepted proposals)
    proposer_format: str = "program"  # program (solution + inputs; description derived) | task (+ description)
    repetition_penalty: float = 0.5  # R-Zero: a valid proposal repeated k times in its batch loses 0.5 k/(n-1)
    proposer_valid_bonus: float = 0.25  # added to every valid proposal's learnability (a new task that works)
    seed_proposals: int = 0  # Proposer samples drawn before step 1 to seed the buffer (not trained on)
    temperature: float = 1.0  # sampling temperature of the rollouts (train.temperature follows it)
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


@dataclass
class _Sampled:
    """One role sample with the data the update needs."""
    sample: object  # roles.generation.Sample
    group: str
    reward: float = float("nan")
    episode: str | None = None  # the turns of one repair episode share a key


class CoEvolution:
    """Holds the pieces of a run and performs one step at a time."""

    def __init__(self, cfg: LoopConfig, model, tokenizer, trainer, executor, curriculum, examples: list[Task],
                 proposal_check=None):
        from roles.generation import GenerationConfig, GenerationEngine

        self.cfg = cfg
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
        self.engine = GenerationEngine(model, tokenizer, GenerationConfig(
            temperature=cfg.temperature, top_p=cfg.top_p, max_new_tokens=cfg.max_new_tokens, seed=cfg.seed))
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
        from roles.generation import GenerationConfig
        from training import distributed as D

        cfg = self.cfg
        self._observed, self._new_tasks = [], []
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
        gen_cfg = GenerationConfig(temperature=cfg.temperature, top_p=cfg.top_p,
                                   max_new_tokens=cfg.max_new_tokens,
                                   seed=int(np.random.default_rng([cfg.seed, step, rank]).integers(2**31)))
        metrics: dict[str, float] = {**metrics_seed, "curriculum/drawn_proposed": float(drawn_proposed)}
        t0 = time.perf_counter()
        with self._generation():
            samples = self.engine.generate(self._first_requests(tasks, rng), config=gen_cfg)
        t_gen = time.perf_counter() - t0
        by = _group_by_task(samples)

        # ---- matrix 1: codes x [gt | generated] (+ reference row)
        t1 = time.perf_counter()
        jobs, layouts = [], []
        for t in tasks:
            lay = self._layout(t, by.get((t.task_id, "coder"), []), by.get((t.task_id, "tester"), []))
            jobs.append((t, lay["codes"] + t.solutions[:1], list(t.tests) + lay["gen_tests"]))
            layouts.append(lay)
        results = self.executor.run_matrices(jobs)
        proposals = self._validate_proposals(by.get(("*", "proposer"), []))
        t_exec = time.perf_counter() - t1

        rollouts: list[_Sampled] = []
        episodes: list = []  # repair episodes (coevo.repair) starting from failing programs
        for t, lay, res in zip(tasks, layouts, results):
            rollouts += self._score_task(t, lay, np.asarray(res.passed, dtype=bool), res, episodes, metrics)

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
        solve_jobs = self._solver_jobs(proposals, solve_samples)
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
        rollouts += self._fixer_rollouts(episodes, metrics)
        rollouts += self._score_proposals(proposals, solve_jobs, solve_samples, results2[len(episodes):], metrics)

        # ---- update
        t4 = time.perf_counter()
        train_metrics = self._update(rollouts)
        t_train = time.perf_counter() - t4
        self._sync_curriculum()
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

    def _sync_curriculum(self) -> None:
        """Apply this step's solve-rate observations and new tasks, gathered from every rank so
        that all ranks keep the same curriculum."""
        from training import distributed as D

        observed, new_tasks = self._observed, [t.to_json() for t in self._new_tasks]
        if D.world_size() > 1:
            gathered = D.all_gather_object((observed, new_tasks))
            observed = [o for obs, _ in gathered for o in obs]
            new_tasks = [t for _, ts in gathered for t in ts]
        for t in new_tasks:  # first, so that the solver samples' observation below counts
            self.curriculum.add(Task.from_json(t), proposed=True)
        for task_id, n, solved in observed:
            self.curriculum.observe(task_id, n, solved)

    # ------------------------------------------------------------------ requests
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
            req = self._proposer_request(rng, cfg.n_proposals)
            if req is not None:
                reqs.append(req)
        return reqs

    def _proposer_request(self, rng, n: int):
        """One Proposer prompt showing ``proposer_refs`` reference tasks drawn from the curriculum's
        pool (seed tasks and accepted proposals), ``n`` samples."""
        from roles.generation import GenRequest
        from roles.prompts import build_prompt

        pool = [t for t in self.curriculum.tasks.values() if t.solutions] or [t for t in self.examples if t.solutions]
        if not pool:
            return None
        k = min(self.cfg.proposer_refs, len(pool))
        refs = [pool[int(i)] for i in rng.choice(len(pool), size=k, replace=False)] if k else []
        kind = refs[0].kind if refs else "function"
        prompt = build_prompt("proposer", None, self.tokenizer, references=refs, kind=kind,
                              describe=self.cfg.proposer_format == "task")
        return GenRequest("proposer", "*", prompt, n=n, meta={"kind": kind})

    # ------------------------------------------------------------------ scoring
    def _layout(self, task: Task, coder, tester) -> dict:
        from roles.parsing import parse_code, parse_tests

        codes = []
        for s in coder:
            pc = parse_code(s.text, task.entry_point)
            codes.append(pc.code if pc.ok and pc.code else "")
        want = self.cfg.tests_per_sample
        parsed = [parse_tests(s.text, task, max_tests=want or None) for s in tester]
        suites = [p.tests for p in parsed]
        return {"coder": coder, "tester": tester, "codes": codes, "suites": suites,
                "rejected": [p.rejected(want) for p in parsed],
                "gen_tests": [x for suite in suites for x in suite]}

    def _score_task(self, task: Task, lay: dict, passed: np.ndarray, res, episodes: list,
                    metrics) -> list[_Sampled]:
        """The task's rollouts with their rewards (:func:`coevo.task_rewards.task_rewards`), its
        metrics, and the Fixer episodes its failing programs start."""
        from coevo.repair import public_columns, public_feedback, start_episodes

        cfg = self.cfg
        n, g = len(lay["codes"]), len(task.tests)
        parsed = [bool(c) for c in lay["codes"]]
        scores = task_rewards(passed, parsed, [len(s) for s in lay["suites"]], lay["rejected"], g,
                              bool(task.solutions), label_free=cfg.label_free, coder_reward=cfg.coder_reward,
                              anchor_reference=cfg.anchor_reference,
                              tester_accuracy_weight=cfg.tester_accuracy_weight,
                              tester_credit=cfg.tester_credit, tester_aggregate=cfg.tester_aggregate)
        out = [_Sampled(s, f"coder/{task.task_id}", float(r)) for s, r in zip(lay["coder"], scores.coder)]
        if g:
            self._observed.append((task.task_id, n, int(scores.correct.sum())))
            _acc(metrics, "train/code_acc", float(scores.correct.mean()))
        for s, r, acc in zip(lay["tester"], scores.tester, scores.test_acc):
            if acc is not None:
                _acc(metrics, "train/test_acc", acc)
            out.append(_Sampled(s, f"tester/{task.task_id}", r))
        gt = passed[:n, :g]
        # programs failing a public test start the Fixer's episodes (feedback: the first failing
        # public ground-truth test); n_fixes episodes from one start make one GRPO group
        if "fixer" in cfg.roles and cfg.n_fixes and g:
            cols = public_columns(task, cfg.fix_public_tests)
            broken = [i for i in range(n) if parsed[i] and not gt[i, cols].all()][: cfg.fix_codes]
            turns = cfg.fix_turns if cfg.fixer_reward == "episode" else 1
            for i in broken:
                episodes += start_episodes(task, lay["codes"][i], public_feedback(task, res, i, cfg.fix_public_tests),
                                           float(gt[i].mean()), cfg.n_fixes, max_turns=turns,
                                           public=cfg.fix_public_tests, group=f"fixer/{task.task_id}/{i}")
        return out

    def _validate_proposals(self, proposer_samples) -> dict:
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
        return info

    def seed_buffer(self, n: int, step: int) -> dict:
        """Absolute Zero's seed buffer: ``n`` Proposer samples before RL, validated and solved
        (``n_solves`` samples each); valid ones join the curriculum. Nothing is trained. Marks the
        curriculum seeded (a checkpointed flag), so a resumed run does not seed again."""
        from roles.parsing import parse_code
        from training import distributed as D

        rng = np.random.default_rng([self.cfg.seed, step, 7919])
        req = self._proposer_request(rng, n) if D.is_main() or D.world_size() == 1 else None
        added: list[Task] = []
        reasons: list[str] = []
        if req is not None:
            gen_cfg = dataclasses.replace(self.engine.config, seed=int(rng.integers(2**31)))
            with self._generation():
                samples = self.engine.generate([req], config=gen_cfg)
            info = self._validate_proposals(samples)
            reasons = info["reasons"]
            if info["solve_requests"]:
                with self._generation():
                    solves = self.engine.generate([r for _, r in info["solve_requests"]], config=gen_cfg)
                jobs, pos = [], 0
                for i, r in info["solve_requests"]:
                    chunk = solves[pos:pos + r.n]
                    pos += r.n
                    task = info["tasks"][i]
                    jobs.append((task, [parse_code(x.text, task.entry_point).code or "" for x in chunk],
                                 list(task.tests)))
                for (task, codes, _), res in zip(jobs, self.executor.run_matrices(jobs)):
                    ok = np.asarray(res.passed, dtype=bool).all(axis=1) & np.array([bool(c) for c in codes])
                    added.append(task)
                    self._observed.append((task.task_id, len(codes), int(ok.sum())))
        self._new_tasks += added
        self._sync_curriculum()  # the seeded tasks can be drawn from this step on
        self._observed, self._new_tasks = [], []
        self.curriculum.seeded = True
        return {"seed/proposals": float(len(reasons)), "seed/accepted": float(len(added))}

    def _solver_jobs(self, proposals, solve_samples) -> list:
        """Matrix jobs: each valid proposal's solver samples against its tests."""
        from roles.parsing import parse_code

        jobs, pos = [], 0
        for i, req in proposals["solve_requests"]:
            task = proposals["tasks"][i]
            chunk = solve_samples[pos:pos + req.n]
            pos += req.n
            jobs.append((task, [parse_code(s.text, task.entry_point).code or "" for s in chunk], list(task.tests)))
        return jobs

    def _fixer_rollouts(self, episodes, metrics) -> list[_Sampled]:
        """The Fixer's rollouts: every turn of every episode, with the episode's reward (RLEF), or
        the single attempt with its gain reward (``fixer_reward="gain"``)."""
        cfg = self.cfg
        if not episodes:
            return []
        out: list[_Sampled] = []
        if cfg.fixer_reward == "episode":
            rewards = R.repair_episode_rewards([e.solved for e in episodes], [e.invalid_turns for e in episodes],
                                               invalid_penalty=cfg.fix_invalid_penalty)
            for e, r in zip(episodes, rewards):
                out += [_Sampled(a.sample, e.group, float(r), episode=e.key) for a in e.attempts]
        else:
            for e in episodes:
                a = e.attempts[0]
                r = R.fixer_rewards([e.before], [a.pass_frac], [a.solved])[0]
                out.append(_Sampled(a.sample, e.group, float(r)))
        metrics["train/fix_acc"] = float(np.mean([e.solved for e in episodes]))
        metrics["fixer/solved_first_turn"] = float(np.mean([e.attempts[0].solved for e in episodes]))
        metrics["fixer/turns"] = float(np.mean([len(e.attempts) for e in episodes]))
        metrics["fixer/invalid_turn_frac"] = float(np.mean([not a.valid for e in episodes for a in e.attempts]))
        metrics["fixer/episodes"] = float(len(episodes))
        return out

    def _score_proposals(self, proposals, solve_jobs, solve_samples, results, metrics) -> list[_Sampled]:
        """Solver samples train the Coder; their solve rates give the Proposer's rewards (graded,
        with the repetition penalty); valid proposals join the curriculum."""
        cfg = self.cfg
        out: list[_Sampled] = []
        solve_rate: dict[int, float] = {}
        pos = 0
        for (i, req), (task, codes, _), res in zip(proposals["solve_requests"], solve_jobs, results):
            chunk = solve_samples[pos:pos + req.n]
            pos += req.n
            p = np.asarray(res.passed, dtype=bool)
            ok = p.all(axis=1) & np.array([bool(c) for c in codes])
            solve_rate[i] = float(ok.mean())
            if "coder" in cfg.roles:
                out += [_Sampled(s, f"coder/{task.task_id}", float(x)) for s, x in zip(chunk, ok.astype(float))]
            self._observed.append((task.task_id, len(codes), int(ok.sum())))
        samples = proposals["samples"]
        if samples:
            rates = [solve_rate.get(i, float("nan")) for i in range(len(samples))]
            rewards = R.proposer_batch_rewards(rates, proposals["grades"], proposals["keys"],
                                               repetition_weight=cfg.repetition_penalty,
                                               valid_bonus=cfg.proposer_valid_bonus)
            out += [_Sampled(s, "proposer/batch", float(r)) for s, r in zip(samples, rewards)]
            self._new_tasks += [proposals["tasks"][i] for i in sorted(proposals["tasks"])]
            metrics.update(proposal_metrics(proposals["reasons"], [rates[i] for i in sorted(proposals["tasks"])]))
        return out

    # ------------------------------------------------------------------ update
    def _update(self, sampled: list[_Sampled]) -> dict:
        from training.rollout import Rollout

        trainable = [x for x in sampled if x.sample.role in self.cfg.roles]
        rollouts = [Rollout(prompt_ids=x.sample.prompt_ids, completion_ids=x.sample.completion_ids,
                            logprobs=x.sample.logprobs, reward=x.reward, group=x.group, role=x.sample.role,
                            truncated=x.sample.truncated, episode=x.episode) for x in trainable]
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


def proposal_metrics(reasons: list[str], solve_rates: list[float]) -> dict[str, float]:
    """One step's proposal figures: ``reject/<reason>`` (share of the step's proposals, every
    reason of :data:`coevo.selfplay.REJECT_REASONS` present, zeros included, so that the shares
    stack to ``1 - proposer/valid_frac``), the valid share and count, and the accepted tasks' mean
    solve rate and share with a solve rate strictly between 0 and 1."""
    from coevo.selfplay import REJECT_REASONS

    n = max(len(reasons), 1)
    out = {f"reject/{r}": reasons.count(r) / n for r in REJECT_REASONS}
    out["proposer/valid_frac"] = reasons.count("ok") / n
    out["proposer/proposals"] = float(len(reasons))
    out["proposer/accepted"] = float(reasons.count("ok"))
    rates = [r for r in solve_rates if np.isfinite(r)]
    if rates:
        out["proposer/solve_rate"] = float(np.mean(rates))
        out["proposer/learnable_frac"] = float(np.mean([0 < r < 1 for r in rates]))
    return out


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
