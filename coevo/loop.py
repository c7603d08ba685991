"""One co-evolution step: curriculum -> roles (one generation pass) -> matrix -> rewards -> GRPO+.

Data flows one way through :meth:`CoEvolution.step`:

1. draw ``tasks_per_step`` tasks from the curriculum (learnable tasks preferred);
2. **generation pass 1** (one batched call mixing roles): ``n_codes`` Coder samples and
   ``n_tests`` Tester samples per task, and ``n_proposals`` Proposer samples (one prompt, one
   GRPO group, shown ``proposer_refs`` reference tasks drawn from the curriculum: seed tasks and
   accepted proposals, as Absolute Zero does);
3. **matrix**: per task, every parsed program against [ground-truth tests | generated tests]
   (plus the reference solution as a last row, used only for metrics); proposals pass the
   world's admission check (the tiny world derives their description) and are validated by
   execution (:mod:`coevo.selfplay`); each rejection has a reason (``reject/<reason>`` metrics);
4. **generation pass 2**: ``n_fixes`` Fixer samples for up to ``fix_codes`` failing programs per
   task (feedback: the first failing ground-truth test), and ``n_solves`` Coder samples per valid
   proposed task (their solve rate is the Proposer's learnability signal);
5. **matrix** again for repairs and solver samples;
6. **rewards** (:mod:`matrix.rewards`): Coder all-pass (or fraction) on ground truth; Tester
   reward precision (CURE) per test plus a correctness term, summed over a sample's tests, each
   rejected candidate (unparseable, duplicate) scoring the minimum
   (:func:`matrix.rewards.tester_suite_reward`); with ``anchor_reference`` the task's reference
   solution joins the correct programs;
   Fixer pass-fraction gain plus full-pass bonus; Proposer learnability ``1 - r`` for a solve rate
   ``0 < r < 1`` (else 0) plus ``proposer_valid_bonus`` less R-Zero's repetition penalty, -0.25
   degenerate (runs but teaches nothing new) / -0.5 a copy of a known task / -0.5 broken / -1
   malformed
   (:func:`matrix.rewards.proposer_batch_rewards`). In label-free mode (``rewards.label_free`` or a task without ground-truth tests) the
   Coder and Tester rewards come from :func:`matrix.rewards.bidirectional_scores` alone;
7. **update**: one GRPO+ update over all roles' rollouts (``update="joint"``) or one per role
   (``update="per_role"``); only roles listed in ``roles`` are trained (Coder samples are always
   drawn: Tester rewards need them);
8. valid proposals join the curriculum's buffer (with their solver samples as first observation)
   and are drawn like any dataset task, by learnability; the curriculum records each task's
   solve rate.

Before the first step, ``seed_proposals`` Proposer samples (not trained on) fill the buffer with
valid tasks (Absolute Zero's seed buffer).

Groups: ``coder/<task>``, ``tester/<task>``, ``fixer/<task>/<code index>``,
``proposer/<step>``, ``coder/<proposed task>``; a group is always G samples of one prompt.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from matrix import rewards as R
from matrix.tasks import Task

ALL_ROLES = ("coder", "tester", "fixer", "proposer")


@dataclass
class LoopConfig:
    steps: int = 80
    tasks_per_step: int = 8
    roles: list[str] = field(default_factory=lambda: list(ALL_ROLES))
    update: str = "joint"  # joint | per_role
    n_codes: int = 8
    n_tests: int = 4
    n_fixes: int = 4
    fix_codes: int = 1  # failing programs per task handed to the Fixer
    n_proposals: int = 8  # Proposer samples per step (one prompt, one GRPO group)
    n_solves: int = 4  # solver samples per valid proposal: its solve rate is the learnability signal
    proposer_refs: int = 3  # reference tasks in the Proposer prompt (seed tasks and accepted proposals)
    proposer_format: str = "program"  # program (solution + inputs; description derived) | task (+ description)
    repetition_penalty: float = 0.5  # R-Zero: a valid proposal repeated k times in its batch loses 0.5 k/(n-1)
    proposer_valid_bonus: float = 0.25  # added to every valid proposal's learnability (a new task that works)
    seed_proposals: int = 0  # Proposer samples drawn before step 1 to seed the buffer (not trained on)
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 160
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
    label_free: bool = False
    save_every: int = 10
    eval_every: int = 40
    keep_checkpoints: int = 2
    seed: int = 0

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
        second: list = []  # (kind, payload) for generation pass 2
        for t, lay, res in zip(tasks, layouts, results):
            rollouts += self._score_task(t, lay, np.asarray(res.passed, dtype=bool), res, second, metrics)

        # ---- generation pass 2: fixer + solvers on proposed tasks
        t2 = time.perf_counter()
        reqs = [r for _, r in second] + [r for _, r in proposals["solve_requests"]]
        samples2 = []
        if reqs:
            with self._generation():
                samples2 = self.engine.generate(reqs, config=gen_cfg)
        t_gen += time.perf_counter() - t2
        t3 = time.perf_counter()
        rollouts += self._score_second(second, proposals, samples2, metrics)
        t_exec += time.perf_counter() - t3

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

    def _score_task(self, task: Task, lay: dict, passed: np.ndarray, res, second: list, metrics) -> list[_Sampled]:
        from coevo.evaluate import cells
        from matrix.metrics import unit_test_accuracy
        from roles.feedback import summarize_feedback
        from roles.generation import GenRequest
        from roles.prompts import build_prompt

        cfg = self.cfg
        n, g = len(lay["codes"]), len(task.tests)
        gt, gen = passed[:n, :g], passed[:n, g:]
        label_free = cfg.label_free or g == 0
        parsed = np.array([bool(c) for c in lay["codes"]])
        ref_row = passed[n, g:] if (task.solutions and passed.shape[0] > n) else None  # metrics-only row
        test_ok = None  # per generated test: passed by every known-correct program
        if label_free:
            code_s, test_s = R.bidirectional_scores(gen)
            coder_r = R.coder_rewards_labelfree(gen, test_s) if gen.shape[1] else np.full(n, np.nan)
            correct = code_s >= 0.5
            test_r = 2.0 * test_s - 1.0
        else:
            coder_r = R.coder_rewards(gt, cfg.coder_reward)
            correct = R.code_correct(gt)
            gen_a, correct_a = gen, correct
            if cfg.anchor_reference and ref_row is not None:
                gen_a, correct_a = np.vstack([gen, ref_row]), np.append(correct, True)
            test_r = R.tester_rewards(gen_a, correct_a)
            if correct_a.any():
                test_ok = R.test_correct(gen_a, correct_a)
        coder_r = np.where(parsed, coder_r, 0.0 if not label_free else np.nan)
        out = [_Sampled(s, f"coder/{task.task_id}", float(r)) for s, r in zip(lay["coder"], coder_r)]
        if g:
            self._observed.append((task.task_id, n, int(correct.sum())))
            _acc(metrics, "train/code_acc", float(correct.mean()))
        # tester samples (matrix.rewards.tester_suite_reward); judged only where the task's tests
        # can be judged at all
        start = 0
        judged = label_free or test_ok is not None
        weight = 0.0 if label_free else cfg.tester_accuracy_weight
        for s, suite, rejected in zip(lay["tester"], lay["suites"], lay["rejected"]):
            k = len(suite)
            chunk = test_r[start:start + k]
            ok = test_ok[start:start + k] if test_ok is not None else None
            r = (R.tester_suite_reward(chunk, ok, rejected, accuracy_weight=weight, credit=cfg.tester_credit,
                                       aggregate=cfg.tester_aggregate) if judged else float("nan"))
            if ref_row is not None and k + rejected:
                _acc(metrics, "train/test_acc", unit_test_accuracy(ref_row[start:start + k], rejected))
            out.append(_Sampled(s, f"tester/{task.task_id}", r))
            start += k
        # failing programs go to the Fixer (feedback from the first failing ground-truth test)
        if "fixer" in cfg.roles and cfg.n_fixes and g:
            broken = [i for i in range(n) if parsed[i] and not correct[i]][: cfg.fix_codes]
            for i in broken:
                fb = summarize_feedback(task.tests, cells(res, i, range(g)))
                prompt = build_prompt("fixer", task, self.tokenizer, code=lay["codes"][i], feedback=fb)
                req = GenRequest("fixer", task.task_id, prompt, n=cfg.n_fixes,
                                 meta={"group": f"fixer/{task.task_id}/{i}", "before": float(gt[i].mean())})
                second.append((task, req))
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

    def _score_second(self, second, proposals, samples2, metrics) -> list[_Sampled]:
        from roles.parsing import parse_code

        cfg = self.cfg
        out: list[_Sampled] = []
        n_fix_samples = sum(req.n for _, req in second)
        fix_samples, solve_samples = samples2[:n_fix_samples], samples2[n_fix_samples:]
        jobs, owners = [], []
        pos = 0
        for task, req in second:
            chunk = fix_samples[pos:pos + req.n]
            pos += req.n
            codes = [parse_code(s.text, task.entry_point).code or "" for s in chunk]
            jobs.append((task, codes, list(task.tests)))
            owners.append(("fixer", task, req, chunk, codes))
        pos = 0
        for i, req in proposals["solve_requests"]:
            task = proposals["tasks"][i]
            chunk = solve_samples[pos:pos + req.n]
            pos += req.n
            codes = [parse_code(s.text, task.entry_point).code or "" for s in chunk]
            jobs.append((task, codes, list(task.tests)))
            owners.append(("solver", task, req, chunk, codes))
        results = self.executor.run_matrices(jobs) if jobs else []
        solve_rate: dict[int, float] = {}
        for (kind, task, req, chunk, codes), res in zip(owners, results):
            p = np.asarray(res.passed, dtype=bool)
            ok = p.all(axis=1) & np.array([bool(c) for c in codes])
            if kind == "fixer":
                after = np.where([bool(c) for c in codes], p.mean(axis=1), 0.0)
                r = R.fixer_rewards(np.full(len(codes), req.meta["before"]), after, ok)
                out += [_Sampled(s, req.meta["group"], float(x)) for s, x in zip(chunk, r)]
                _acc(metrics, "train/fix_acc", float(ok.mean()))
            else:
                solve_rate[req.meta["proposal"]] = float(ok.mean())
                if "coder" in cfg.roles:
                    out += [_Sampled(s, f"coder/{task.task_id}", float(x)) for s, x in zip(chunk, ok.astype(float))]
                self._observed.append((task.task_id, len(codes), int(ok.sum())))
        # proposer rewards (graded, with the repetition penalty), and valid proposals join the curriculum
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
                            truncated=x.sample.truncated) for x in trainable]
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


def _acc(metrics: dict, key: str, value: float) -> None:
    """Accumulate a running mean under ``key`` (count kept in ``key + '#n'``, removed later)."""
    n = metrics.get(key + "#n", 0.0)
    metrics[key] = (metrics.get(key, 0.0) * n + value) / (n + 1)
    metrics[key + "#n"] = n + 1
