"""Sampling says where it is where no progress bar is drawn (stderr a log file, nohup, CI):
`coevo solve` / `eval` / `gen-tests --model` printed nothing between "sampling ..." and the stats
line, for minutes."""

import pytest
from tinymodel import tiny_model_path

from roles.generation import GenerationConfig, GenerationEngine, GenRequest, SamplingStatus
from roles.model_io import load_model


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_status_lines_are_paced_by_the_clock_and_carry_rate_and_eta():
    clock, said = Clock(), []
    st = SamplingStatus(100, said.append, every_s=30.0, clock=clock)
    clock.t = 5.0
    st.update(10)  # the first group carries the start-up: its rate is not the rate
    assert said == []
    clock.t = 25.0
    st.update(20)
    assert said == []  # under 30 s since the start: nothing yet
    clock.t = 45.0
    st.update(20)  # 40 samples in 40 s after the first group: 1/s, 50 left
    assert said == ["sampling: 50/100 samples (1 samples/s, ETA 50s)"]
    clock.t = 50.0
    st.update(10)
    assert len(said) == 1  # at most one line every 30 s
    clock.t = 80.0
    st.update(40)  # done: no line for the end (the stats line follows)
    assert len(said) == 1


def test_work_shorter_than_the_interval_says_nothing():
    clock, said = Clock(), []
    st = SamplingStatus(10, said.append, clock=clock)
    for i in range(10):
        clock.t = i
        st.update(1)
    assert said == []


@pytest.fixture(scope="module")
def model_tok():
    return load_model(tiny_model_path(), device="cpu")


def test_the_engine_says_where_it_is_through_say(model_tok):
    model, tok = model_tok
    engine = GenerationEngine(model, tok, GenerationConfig(max_new_tokens=4, batch_size=2, seed=0))
    said = []
    engine.say = said.append
    engine.status_every_s = 0.0  # every group
    reqs = [GenRequest("coder", f"t{i}", f"def f{i}(x):", 2) for i in range(4)]
    samples = engine.generate(reqs)
    assert len(samples) == 8
    assert said and all(line.startswith("sampling: ") and "/8 samples" in line for line in said), said
    said.clear()
    engine.generate(reqs, progress=True)  # a bar is drawn: no lines beside it
    assert said == []


def test_the_commands_give_their_generator_a_say_unless_quiet(capsys):
    import argparse

    from coevo.commands.solve_cmd import _with_status_lines

    class Gen:
        say = None

    g = _with_status_lines(Gen(), argparse.Namespace(command="eval", quiet=False))
    g.say("sampling: 1/2 samples (1 samples/s, ETA 1s)")
    assert capsys.readouterr().err == "coevo eval: sampling: 1/2 samples (1 samples/s, ETA 1s)\n"
    assert _with_status_lines(Gen(), argparse.Namespace(command="eval", quiet=True)).say is None
