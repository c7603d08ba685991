"""The configuration reference is read from the schema: the comment beside each field."""

from __future__ import annotations

from dataclasses import dataclass, field

from coevo.cli import main
from coevo.config_reference import FieldDoc, field_comments, format_markdown, format_text, reference


@dataclass
class _Inner:
    depth: int = 2  # how deep


@dataclass
class _Example:
    plain: int = 1  # on the line
    # above the field,
    # two lines
    above: str = "x"  # and on it
    # -- a group header documents nothing
    bare: float = 0.5
    nested: _Inner = field(default_factory=_Inner)
    items: list[str] = field(default_factory=list)  # a | pipe


def test_comments_beside_and_above_each_field():
    assert field_comments(_Example) == {"plain": "on the line", "above": "above the field, two lines and on it",
                                        "bare": "", "nested": "", "items": "a | pipe"}


def test_reference_walks_nested_dataclasses_with_their_values():
    rows = reference(_Example(plain=7))
    assert [r.key for r in rows] == ["plain", "above", "bare", "nested.depth", "items"]
    assert rows[0] == FieldDoc("plain", "int", 7, "on the line")
    assert rows[3].doc == "how deep"
    text = format_text(rows)
    assert "  plain = 7  (int)\n      on the line\n" in text and "  items = []  (list[str])" in text
    md = format_markdown(rows)
    assert "| `items` | `[]` | a \\| pipe |" in md  # a pipe in a comment does not break the table


def test_the_run_schema_has_its_sections_and_shows_effective_defaults():
    rows = {r.key: r for r in reference()}
    assert rows["train.lr"].default == 1e-4  # the tiny world's value, not GRPOConfig's own 1e-6
    assert rows["rollout.vllm.sleep_level"].doc.startswith("between rollouts")
    assert rows["train.eps_low"].doc and "preset" not in rows["train.beta"].doc  # group headers skipped


def test_coevo_config_prints_sections_fields_and_config_values(capsys):
    assert main(["config", "train.lr", "rollout.backend"]) == 0
    out = capsys.readouterr().out
    assert "train.lr = 0.0001" in out and "rollout.backend = hf" in out and "loop." not in out
    assert main(["config", "--config", "smoke", "loop.steps", "loop.n_codes=3", "loop.n_codes"]) == 0
    out = capsys.readouterr().out
    assert "loop.n_codes = 3" in out
    assert main(["config", "no_such.key"]) == 2
    assert "no_such.key" in capsys.readouterr().err


def test_every_field_is_documented_and_the_readme_table_is_the_schema():
    from pathlib import Path

    rows = reference()
    assert [r.key for r in rows if not r.doc] == []  # a new field needs its comment
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- config-reference")
    body = readme[readme.index("\n", start) + 1: readme.index("<!-- /config-reference -->")]
    assert body == format_markdown(rows), "README's table is stale: paste `coevo config --markdown`"
