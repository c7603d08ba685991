import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coevo.curriculum import Curriculum, CurriculumConfig
from matrix.tasks import Task, Test


def make_tasks(n):
    return [Task(f"t{i}", f"prompt {i}", tests=[Test.assertion("assert True")]) for i in range(n)]


def test_prefers_learnable_tasks():
    cur = Curriculum.from_tasks(make_tasks(3), CurriculumConfig(filter_solved=False, floor=0.01))
    cur.observe("t0", 8, 0)   # never solved
    cur.observe("t1", 8, 4)   # half solved: most learnable
    cur.observe("t2", 8, 8)   # always solved
    rng = np.random.default_rng(0)
    counts = {"t0": 0, "t1": 0, "t2": 0}
    for _ in range(300):
        counts[cur.sample(1, rng)[0].task_id] += 1
    assert counts["t1"] > 200 and counts["t0"] < 30 and counts["t2"] < 30


def test_offline_filter_retires_extremes_only_after_min_attempts():
    cur = Curriculum.from_tasks(make_tasks(3), CurriculumConfig(min_attempts=8))
    cur.observe("t0", 4, 0)
    assert not cur.stats["t0"].retired
    cur.observe("t0", 4, 0)
    assert cur.stats["t0"].retired
    cur.observe("t1", 4, 4)
    cur.observe("t1", 4, 3)
    assert not cur.stats["t1"].retired
    assert [t.task_id for t in cur.sample(5, np.random.default_rng(1))] != []
    assert "t0" not in cur.active_ids()


def test_last_task_never_retired():
    cur = Curriculum.from_tasks(make_tasks(1), CurriculumConfig(min_attempts=1))
    cur.observe("t0", 4, 4)
    assert cur.active_ids() == ["t0"]


def test_proposed_buffer_evicts_oldest_and_keeps_seed_tasks():
    cur = Curriculum.from_tasks(make_tasks(2), CurriculumConfig(max_proposed=2))
    for i in range(4):
        assert cur.add(Task(f"p{i}", "x"), proposed=True)
    assert not cur.add(Task("p3", "x"), proposed=True)
    assert sorted(cur.tasks) == ["p2", "p3", "t0", "t1"]


def test_seed_tasks_cut_the_dataset_and_proposals_are_drawn_alike():
    cur = Curriculum.from_tasks(make_tasks(10), CurriculumConfig(seed_tasks=2, filter_solved=False, floor=0.01))
    assert sorted(cur.tasks) == ["t0", "t1"]
    cur.observe("t0", 4, 4)
    cur.observe("t1", 4, 4)
    cur.add(Task("p0", "proposed"), proposed=True)
    cur.observe("p0", 4, 2)  # a learnable proposal outweighs solved seed tasks, by the same rule
    assert cur.weight("p0") == 0.25 and cur.weight("t0") == 0.01
    drawn = [cur.sample(1, np.random.default_rng(i))[0].task_id for i in range(100)]
    assert drawn.count("p0") > 80
    assert cur.summary()["curriculum/proposed"] == 1 and cur.summary()["curriculum/proposed_active"] == 1


def test_state_roundtrip_is_json_and_exact():
    cur = Curriculum.from_tasks(make_tasks(4))
    cur.seeded = True
    cur.observe("t2", 4, 1)
    cur.add(Task("p0", "proposed", solutions=["def f(): return 1"]), proposed=True)
    state = json.loads(json.dumps(cur.state_dict()))
    other = Curriculum(CurriculumConfig())
    other.load_state_dict(state)
    assert other.state_dict() == cur.state_dict() and other.seeded
    a = [t.task_id for t in cur.sample(3, np.random.default_rng(5))]
    b = [t.task_id for t in other.sample(3, np.random.default_rng(5))]
    assert a == b


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 16), st.integers(0, 16)), min_size=1, max_size=20))
def test_rates_stay_in_unit_interval_and_sampling_is_distinct(obs):
    cur = Curriculum.from_tasks(make_tasks(5), CurriculumConfig(min_attempts=4))
    for i, (n, c) in enumerate(obs):
        cur.observe(f"t{i % 5}", n, min(c, n))
    for s in cur.stats.values():
        assert s.rate is None or 0.0 <= s.rate <= 1.0
    picks = [t.task_id for t in cur.sample(5, np.random.default_rng(0))]
    assert len(picks) == len(set(picks)) >= 1
    assert all(not cur.stats[p].retired for p in picks)
