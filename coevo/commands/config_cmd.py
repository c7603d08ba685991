"""`coevo config`: the run configuration's reference, read from the schema (every field with its
default and the comment beside it in the dataclass), or a config file's values."""

HELP = "print the configuration reference (every field, its default and meaning)"
DESCRIPTION = """Print the run configuration's reference: every field of every section with its value
and meaning, read from the schema itself (coevo/settings.py and the dataclasses it holds).

  coevo config                         # the defaults (the CPU tiny world)
  coevo config loop train.lr           # only these sections or fields
  coevo config --config smoke          # the values a config file (path or shipped name) sets
  coevo config --config FILE key=value # ... with overrides, as `coevo train` would read them
  coevo config --markdown              # the README's table

Override a field with `coevo train ... section.field=value`."""


def add_arguments(parser) -> None:
    from coevo.cli import add_output_options

    parser.add_argument("keys", nargs="*", metavar="KEY",
                        help="sections or dotted fields to show (default: all); with --config, "
                             "KEY=VALUE items are overrides")
    parser.add_argument("--config", default=None, metavar="FILE",
                        help="show the values of this config file (a path or a shipped name)")
    parser.add_argument("--markdown", action="store_true", help="a Markdown table instead of text")
    add_output_options(parser, progress=False)


def run(args) -> int:
    import sys

    from coevo.config_reference import format_markdown, format_text, reference
    from matrix.errors import InputError

    overrides = [k for k in args.keys if "=" in k]
    keys = [k for k in args.keys if "=" not in k]
    config = None
    if args.config is not None or overrides:
        from coevo.run_driver import load_run_config

        config = load_run_config(args.config, overrides, check=False)
    rows = reference(config)
    if keys:
        known = {r.key for r in rows} | {p for r in rows for p in _prefixes(r.key)}
        for k in keys:
            if k not in known:
                import difflib

                near = difflib.get_close_matches(k, sorted(known), n=1, cutoff=0.6)
                hint = f"did you mean '{near[0]}'?" if near else "see `coevo config`"
                raise InputError(f"no such section or field; {hint}", field=k)
        rows = [r for r in rows if any(r.key == k or r.key.startswith(k + ".") for k in keys)]
    sys.stdout.write(format_markdown(rows) if args.markdown else format_text(rows))
    return 0


def _prefixes(key: str):
    parts = key.split(".")
    for i in range(1, len(parts)):
        yield ".".join(parts[:i])
