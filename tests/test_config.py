from dataclasses import dataclass, field
from typing import Literal

import pytest

from coevo.yaml_config import load_config, parse_overrides
from matrix.errors import InputError


@dataclass
class Inner:
    lr: float = 1e-6
    steps: int = 10
    mode: Literal["a", "b"] = "a"
    roles: list[str] = field(default_factory=lambda: ["coder"])

    def validate(self):
        if self.steps <= 0:
            raise ValueError("steps: must be positive")


@dataclass
class Outer:
    name: str = "x"
    path: str | None = None
    train: Inner = field(default_factory=Inner)


def write(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    return p


def test_defaults_and_file_and_overrides(tmp_path):
    p = write(tmp_path, "name: run\ntrain:\n  lr: 0.001\n  mode: b\n")
    cfg = load_config(Outer, p, ["train.steps=5", "train.roles=[coder, tester]", "path=/tmp/m"])
    assert cfg.name == "run" and cfg.path == "/tmp/m"
    assert cfg.train.lr == pytest.approx(1e-3) and cfg.train.steps == 5 and cfg.train.mode == "b"
    assert cfg.train.roles == ["coder", "tester"]
    assert load_config(Outer) == Outer()


def test_int_promoted_to_float_but_not_bool(tmp_path):
    assert load_config(Outer, None, ["train.lr=1"]).train.lr == 1.0
    with pytest.raises(InputError, match="must be a number"):
        load_config(Outer, None, ["train.lr=true"])


def test_unknown_key_suggests_nearest_with_line(tmp_path):
    p = write(tmp_path, "name: run\ntrain:\n  lr: 0.1\n  stpes: 3\n")
    with pytest.raises(InputError) as exc:
        load_config(Outer, p)
    msg = str(exc.value)
    assert msg.startswith(f"{p}:4: field 'train.stpes'") and "did you mean 'steps'" in msg


def test_wrong_type_and_literal_and_validate(tmp_path):
    with pytest.raises(InputError, match=r"c.yaml:2: field 'train.steps': must be an integer"):
        load_config(Outer, write(tmp_path, "train:\n  steps: many\n"))
    with pytest.raises(InputError, match=r"must be one of \['a', 'b'\]"):
        load_config(Outer, None, ["train.mode=c"])
    with pytest.raises(InputError, match=r"c.yaml:2: field 'train.steps': must be positive"):
        load_config(Outer, write(tmp_path, "train:\n  steps: 0\n"))


def test_override_errors_name_overrides(tmp_path):
    with pytest.raises(InputError, match=r"^<overrides>: field 'train.nope': unknown key"):
        load_config(Outer, write(tmp_path, "name: a\n"), ["train.nope=1"])
    with pytest.raises(InputError, match="key.sub=value"):
        parse_overrides(["justakey"])


def test_malformed_yaml(tmp_path):
    with pytest.raises(InputError, match=r"c.yaml:2: malformed YAML"):
        load_config(Outer, write(tmp_path, "name: a\ntrain: x: y\n"))


def test_exponent_without_dot_is_a_float():
    assert load_config(Outer, None, ["train.lr=1e-5"]).train.lr == 1e-5
    with pytest.raises(InputError, match="must be a number"):
        load_config(Outer, None, ["train.lr=fast"])


def test_partial_section_keeps_the_parents_defaults(tmp_path):
    """A section set in part (file or override) starts from the parent's default for it, not from
    the section class's own defaults: CoevoConfig's train is GRPOConfig(lr=1e-4, ...) while
    GRPOConfig() has lr=1e-6 (a silent 100x change once cost an experiment)."""
    from coevo.settings import CoevoConfig

    base = CoevoConfig().train
    assert base.lr == 1e-4
    cfg = load_config(CoevoConfig, overrides=["train.role_weights={coder: 2.0}"])
    assert cfg.train.lr == base.lr and cfg.train.micro_batch_size == base.micro_batch_size
    assert cfg.train.role_weights == {"coder": 2.0}
    p = tmp_path / "c.yaml"
    p.write_text("train:\n  updates_per_batch: 3\n")
    cfg = load_config(CoevoConfig, p)
    assert (cfg.train.lr, cfg.train.updates_per_batch) == (base.lr, 3)
    p.write_text("train:\n")  # an empty section is the default too
    assert load_config(CoevoConfig, p).train.lr == base.lr
    assert load_config(CoevoConfig, overrides=["train.lr=3e-4"]).train.lr == 3e-4


@dataclass
class _Leaf:
    x: int = 1
    y: int = 2


@dataclass
class _Mid:
    leaf: _Leaf = field(default_factory=_Leaf)
    z: int = 0


@dataclass
class _Outer:
    mid: _Mid = field(default_factory=lambda: _Mid(leaf=_Leaf(x=5), z=7))


def test_partial_nested_section_keeps_the_outer_defaults(tmp_path):
    """Two levels down: ``mid.leaf`` given in part starts from _Outer's default for it
    (x=5), not from _Mid's field default (x=1)."""
    cfg = load_config(_Outer, overrides=["mid.leaf.y=3"])
    assert (cfg.mid.leaf.x, cfg.mid.leaf.y, cfg.mid.z) == (5, 3, 7)
    p = tmp_path / "n.yaml"
    p.write_text("mid:\n  leaf:\n    y: 4\n")
    cfg = load_config(_Outer, p)
    assert (cfg.mid.leaf.x, cfg.mid.leaf.y, cfg.mid.z) == (5, 4, 7)


@dataclass
class Weighted:
    weights: dict[str, float] = field(default_factory=lambda: {"coder": 2.0, "tester": 0.5})


@dataclass
class HasWeighted:
    train: Weighted = field(default_factory=Weighted)


def test_an_override_of_one_key_keeps_the_rest_of_the_mapping(tmp_path):
    # `train.weights.tester=1` once replaced the whole mapping: the coder's 2.0 fell to the
    # documented "missing = 1" without a word
    cfg = load_config(HasWeighted, None, ["train.weights.tester=1"])
    assert cfg.train.weights == {"coder": 2.0, "tester": 1.0}
    cfg = load_config(HasWeighted, None, ["train.weights.fixer=0.5"])
    assert cfg.train.weights == {"coder": 2.0, "tester": 0.5, "fixer": 0.5}
    # the whole mapping given: it replaces, from an override or from a file
    assert load_config(HasWeighted, None, ["train.weights={fixer: 1.5}"]).train.weights == {"fixer": 1.5}
    p = write(tmp_path, "train:\n  weights: {fixer: 1.5}\n")
    assert load_config(HasWeighted, p).train.weights == {"fixer": 1.5}
    # a key overridden on top of the file's mapping: the file's mapping, that key changed
    assert load_config(HasWeighted, p, ["train.weights.coder=3"]).train.weights == {"fixer": 1.5, "coder": 3.0}


def test_hostile_config_files_and_overrides_are_short_one_line_errors(tmp_path):
    # red-team pass 10: invalid UTF-8, deep nesting and an int past the digit limit were
    # tracebacks; a 430-byte alias bomb printed whole made a 312 MB error message
    p = tmp_path / "c.yaml"
    p.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_config(Outer, p)
    p.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(InputError, match="nested too deeply|must be a string"):
        load_config(Outer, p)
    with pytest.raises(InputError):
        load_config(Outer, None, ["name=" + "[" * 5000 + "]" * 5000])
    p.write_text("name: " + "9" * 5000 + "\n")
    with pytest.raises(InputError, match="malformed YAML|must be a string, got <int>"):
        load_config(Outer, p)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p_] * 10)}]\n" for p_, c in zip("abcdefg", "bcdefgh")) + "name: *h\n"
    p.write_text(bomb)
    with pytest.raises(InputError) as err:
        load_config(Outer, p)
    assert len(str(err.value)) < 400 and "\n" not in str(err.value)


def test_a_key_given_twice_is_an_error_naming_both_lines(tmp_path):
    # red-team pass 10: PyYAML keeps the last of two `lr:` lines without a word
    p = write(tmp_path, "train:\n  lr: 0.1\n  steps: 3\n  lr: 0.2\n")
    with pytest.raises(InputError, match=r"c.yaml:4: malformed YAML \(the key 'lr' is given twice \(first on line 2"):
        load_config(Outer, p)
    assert load_config(Outer, write(tmp_path, "train:\n  lr: 0.1\nname: lr\n")).train.lr == pytest.approx(0.1)


def test_a_key_given_twice_on_the_command_line_is_refused_not_silently_last_wins():
    # `coevo train loop.steps=3 ... loop.steps=50` (a script appending its own value) ran 50 steps
    # with nothing said; the YAML loader already refuses a key given twice in a file
    with pytest.raises(InputError, match=r"loop\.steps is given twice \(first as 'loop\.steps=3'\)"):
        parse_overrides(["loop.steps=3", "train.lr=1e-5", "loop.steps=50"])
    with pytest.raises(InputError, match=r"loop\.steps is given twice"):
        parse_overrides(["loop.steps=3", " loop.steps =3"])
    with pytest.raises(InputError, match="conflicts with another override"):
        parse_overrides(["loop.steps=3", "loop.steps.x=1"])
    with pytest.raises(InputError, match="conflicts with another override"):
        parse_overrides(["loop.steps.x=1", "loop.steps=3"])
    with pytest.raises(InputError, match="conflicts with another override"):  # a mapping, then one of its keys
        parse_overrides(["train.role_weights={fixer: 1.5}", "train.role_weights.fixer=2"])
    # a mapping and another of its keys: both taken (nothing given twice)
    assert parse_overrides(["train.role_weights={fixer: 1.5}", "train.role_weights.tester=2"]) == \
        {"train": {"role_weights": {"fixer": 1.5, "tester": 2}}}
    assert parse_overrides(["loop.steps=3", "loop.n_codes=4"]) == {"loop": {"steps": 3, "n_codes": 4}}


def test_a_key_given_twice_is_one_line_from_the_cli(tmp_path, capsys):
    from coevo.cli import main

    assert main(["config", "loop.steps=3", "loop.steps=50"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "loop.steps is given twice" in err[0], err


def test_the_demo_takes_loop_roles_as_an_override_once(tmp_path, capsys):
    from coevo.cli import main

    # the demo adds loop.roles from --roles: a user's own loop.roles= is not "given twice"
    assert main(["demo", "--out", str(tmp_path / "d"), "loop.roles=[coder]", "loop.steps=0"]) == 2
    err = capsys.readouterr().err
    assert "given twice" not in err and "loop.steps" in err, err
    assert main(["demo", "--out", str(tmp_path / "d"), "--roles", "coder", "loop.roles=[coder]"]) == 2
    assert "give the roles once" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
