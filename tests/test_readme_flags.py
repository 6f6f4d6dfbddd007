"""README.md documents every command and every flag, checked against the
parsers both ways.

A command's flags are the rows of a `| flag | meaning |` table under a
heading that names the command in backticks (`mpiscope run`, `mpiscope runs
rm`; `mpiscope` alone for the top-level options). A row's first cell names
its flags in backticks: `-n/--np N`, `--reps-min N`, `--reps-max N`.
"""

import argparse
import re
from pathlib import Path

from mpiscope.cli.main import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"
HELP = {"-h", "--help"}
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_CODE = re.compile(r"`([^`]+)`")
_FLAG = re.compile(r"--?[A-Za-z][\w-]*")


def command_tree(parser, path=()):
    """{path: parser} of every command; () is `mpiscope` itself."""
    tree = {path: parser}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                tree.update(command_tree(sub, path + (name,)))
    return tree


def parser_flags(parser):
    """{option string: its help as --help prints it} of a parser, --help left out."""
    formatter = parser._get_formatter()

    def text(action):
        try:
            return formatter._expand_help(action) if action.help else ""
        except (KeyError, TypeError, ValueError):
            return action.help
    return {o: text(a) for a in parser._actions for o in a.option_strings if o not in HELP}


def name(path):
    return "`" + " ".join(("mpiscope",) + path) + "`"


def heading_commands(heading, tree):
    """The command paths a heading names in backticks, and the words after
    `mpiscope` that name no command."""
    paths, unknown = [], []
    for span in _CODE.findall(heading):
        words = span.split()
        if words[0] != "mpiscope":
            continue
        path = ()
        for w in words[1:]:
            if path + (w,) not in tree:
                if re.fullmatch(r"[a-z][a-z-]*", w):  # not RUN, [RUN…] or an option
                    unknown.append(f"{' '.join(words[:len(path) + 2])}")
                    path = None
                break
            path += (w,)
        if path is not None:
            paths.append(path)
    return paths, unknown


def cells(line):
    """A table row's cells; `\\|` inside a cell is not a separator."""
    return re.split(r"(?<!\\)\|", line.strip().strip("|"))


def row_flags(cell):
    """The flags a row's first cell names: the first word of each code span,
    split at '/' (`-n/--np N` -> -n, --np)."""
    flags = []
    for span in _CODE.findall(cell):
        words = span.split()
        flags += [w for w in (words[0].split("/") if words else []) if _FLAG.fullmatch(w)]
    return flags


def flag_tables(text, tree):
    """Every flag table: {"line", "heading", "paths", "unknown", "flags": {flag: line}}."""
    tables, heading, paths, unknown = [], "(none)", [], []
    table, in_code = None, False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_code, table = not in_code, None
            continue
        if in_code:
            continue
        m = _HEADING.match(line)
        if m:
            heading = m.group(2)
            paths, unknown = heading_commands(heading, tree)
            table = None
            continue
        if not line.startswith("|"):
            table = None
            continue
        row = cells(line)
        if table is None:  # a table's header row
            is_flags = row[0].strip().lower() == "flag"
            table = {"line": n, "heading": heading, "paths": paths, "unknown": unknown,
                     "flags": {}, "is_flags": is_flags}
            if is_flags:
                tables.append(table)
            continue
        if table["is_flags"] and not set(row[0]) <= set("-: "):
            for flag in row_flags(row[0]):
                table["flags"][flag] = n
    return tables


def readme_problems(text, tree):
    """Every difference between the README and the parsers, one line each."""
    problems = []
    documented = {path: {} for path in tree}
    table_lines = {path: [] for path in tree}
    for t in flag_tables(text, tree):
        where = f"README.md:{t['line']} (flag table under '## {t['heading']}')"
        for u in t["unknown"]:
            problems.append(f"{where}: the heading names `{u}`, which is not a command")
        if not t["paths"]:
            problems.append(f"{where}: the heading names no command; put `mpiscope COMMAND` in it")
        for path in t["paths"]:
            table_lines[path].append(t["line"])
            have = parser_flags(tree[path])
            for flag, line in t["flags"].items():
                documented[path][flag] = line
                if flag not in have:
                    problems.append(f"README.md:{line}: documents {flag} for {name(path)}, which "
                                    f"has no such flag (its flags: {', '.join(sorted(have))})")
    for path, parser in tree.items():
        missing = {f: h for f, h in parser_flags(parser).items() if f not in documented[path]}
        where = (f"add a row to its flag table at README.md:{table_lines[path][0]}"
                 if table_lines[path] else
                 f"README.md has no flag table under a heading naming {name(path)}: add one")
        for flag, help_text in missing.items():
            problems.append(f"{name(path)} has {flag} ({help_text or 'no help'}) but no README "
                            f"row; {where}")
        if path and not re.search(r"(?<![\w-])" + re.escape(" ".join(("mpiscope",) + path))
                                  + r"(?![\w-])", text):
            problems.append(f"{name(path)} is not mentioned in README.md")
    return problems


def test_readme_documents_every_command_and_flag():
    problems = readme_problems(README.read_text(), command_tree(build_parser()))
    assert not problems, "README.md and the command line disagree:\n  " + "\n  ".join(problems)


# The checker itself, on a small parser and README: it must catch each kind of mistake.

def _toy():
    p = argparse.ArgumentParser(prog="mpiscope")
    p.add_argument("--version", action="store_true")
    sub = p.add_subparsers()
    run = sub.add_parser("run")
    run.add_argument("-n", "--np")
    run.add_argument("--sizes")
    runs = sub.add_parser("runs")
    runs.add_argument("--out")
    rm = runs.add_subparsers().add_parser("rm")
    rm.add_argument("--out")
    return command_tree(p)


_TOY_README = """\
## `mpiscope`

| flag | meaning |
|---|---|
| `--version` | version |

## `mpiscope run`

```sh
# not a heading: a comment in a code block
mpiscope run -n 2
```

| flag | meaning |
|---|---|
| `-n/--np N`, `--sizes LIST` | ranks; sizes |

| benchmark | not a flag table |
|---|---|
| `--not-a-flag` | ignored |

### `mpiscope runs`, `mpiscope runs rm RUN…`

| flag | meaning |
|---|---|
| `--out DIR` | output root (`a\\|b`) |
"""


def test_checker_accepts_a_complete_readme():
    assert readme_problems(_TOY_README, _toy()) == []


def test_checker_names_the_missing_and_the_unknown_flag():
    text = _TOY_README.replace("`-n/--np N`, ", "").replace("| `--version` |", "| `--verbose` |")
    problems = readme_problems(text, _toy())
    assert any("`mpiscope run` has -n" in p and "flag table at README.md:14" in p
               for p in problems), problems
    assert any("`mpiscope run` has --np" in p for p in problems), problems
    assert any("documents --verbose for `mpiscope`" in p for p in problems), problems
    assert any("`mpiscope` has --version" in p for p in problems), problems
    assert len(problems) == 4, problems


def test_checker_wants_a_heading_naming_a_known_command():
    text = _TOY_README.replace("## `mpiscope run`", "## Running").replace(
        "### `mpiscope runs`, ", "### `mpiscope rns`, ")
    problems = readme_problems(text, _toy())
    assert any("names no command" in p for p in problems), problems
    assert any("`mpiscope rns`, which is not a command" in p for p in problems), problems
    assert any("`mpiscope runs` has --out" in p and "no flag table" in p for p in problems), problems


def test_checker_wants_every_command_mentioned():
    text = _TOY_README.replace("### `mpiscope runs`, `mpiscope runs rm RUN…`", "### `mpiscope runs`")
    problems = readme_problems(text, _toy())
    assert any("`mpiscope runs rm` is not mentioned" in p for p in problems), problems
    assert any("`mpiscope runs rm` has --out" in p for p in problems), problems
