# SPDX-License-Identifier: BSD-3-Clause
"""The `mpiscope` entry point: one parser, a subcommand per command group (cli/*.py)."""

import argparse
import errno
import importlib
import os
import re
import sys

from mpiscope.cli.commands import COMMANDS
from mpiscope.common.errors import BuildFailed, LaunchFailed, UsageError


class _Version(argparse.Action):
    """--version: the package version and the data formats it reads, looked
    up only when asked for (the raw reader imports numpy)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kw):
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            default=argparse.SUPPRESS,
            help="print the version of mpiscope and of the formats it reads, and exit",
        )

    def __call__(self, parser, namespace, values, option_string=None):
        import mpiscope
        from mpiscope.store.layout import SCHEMA_VERSION
        from mpiscope.store.rawfile import SUPPORTED_VERSIONS

        raw = ", ".join(map(str, SUPPORTED_VERSIONS))
        sys.stdout.write(
            f"mpiscope {mpiscope.__version__} (raw files: schema {raw}; run context: schema {SCHEMA_VERSION})\n"
        )
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: exit 2 with a hint
        self.print_usage(sys.stderr)
        sys.stderr.write(f"mpiscope: error: {_plain(message)} (see --help)\n")
        sys.exit(2)

    def _get_formatter(self):
        return self.formatter_class(prog=self.prog, width=_help_width())


def _help_width():
    """The width argparse's help formatter takes by default (the terminal's
    columns as shutil.get_terminal_size finds them, less 2), without importing
    shutil, which imports bz2, lzma and zlib at every start."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns - 2


def _plain(message):
    """argparse's 'argument -n/--np: must be at least 1' as '-n/--np must be
    at least 1', and 'argument --bench: '' lists…' as '--bench '' lists…';
    other messages as they are."""
    m = re.fullmatch(r"argument (\S+): ((?:must |').*)", message, re.S)
    return f"{m.group(1)} {m.group(2)}" if m else message


def _named_path(e: OSError, args) -> bool:
    """Whether the file system refused a path the user named on the command line."""
    named = set()
    for value in vars(args).values() if args is not None else ():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, (str, os.PathLike)) and str(v):
                named.add(os.path.abspath(v))
    failed = {os.path.abspath(f) for f in (e.filename, e.filename2) if isinstance(f, (str, os.PathLike))}
    return bool(named & failed) or e.errno == errno.ENAMETOOLONG


class _Listed:
    """A command in the listing: its name and help only. The listing is built
    when no command is named, so none of its entries is ever parsed with;
    building a whole parser for each would cost more than the rest of
    `mpiscope --help`."""

    def __init__(self, **kw):
        pass


def build_parser(command=None):
    """The parser. None: every command, whole. A known command name: only that
    command, from its module (cli/<module>.py, add_<name>_command). Anything
    else (no command, or an unknown one): every command as a name with its
    help, for the listing."""
    parser = _Parser(prog="mpiscope", description="Measure, explain and improve MPI communication performance.")
    parser.add_argument("--version", action=_Version)
    listing = command is not None and command not in COMMANDS
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Listed if listing else _Parser)
    sub.required = True
    if command in COMMANDS:
        names = [command]
    elif command is None:
        names = list(COMMANDS)
    else:  # the listing: names and help, no command module imported
        names = []
        for name, cmd in COMMANDS.items():
            sub.add_parser(name, help=cmd.help)
    for name in names:
        module = importlib.import_module(f"mpiscope.cli.{COMMANDS[name].module}")
        getattr(module, f"add_{name}_command")(sub)
    return parser


def _command_of(argv):
    """The command named on the command line (the first word not an option), or None."""
    return next((a for a in argv if not a.startswith("-")), None)


# Options whose value may itself start with '-' (a launcher's options): argparse
# would read `--launcher-args --oversubscribe` as two options.
DASH_VALUES = ("--launcher-args",)


def _glue_dash_values(argv):
    """`--launcher-args -x` as `--launcher-args=-x`."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in DASH_VALUES and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out


def main(argv=None):
    """Entry point; returns the exit code."""
    argv = _glue_dash_values(sys.argv[1:] if argv is None else list(argv))
    command = _command_of(argv)
    parser = build_parser(command if command in COMMANDS else "")
    args = None
    try:
        if command in COMMANDS:  # defaults from MPISCOPE_OUT and the config files
            from mpiscope.cli import config_defaults

            config_defaults.apply(parser, command, argv)
        args = parser.parse_args(argv)
        return args.func(args)
    except UsageError as e:
        sys.stderr.write(f"mpiscope: error: {e}\n")
        return 2
    except (BuildFailed, LaunchFailed) as e:
        sys.stderr.write(f"mpiscope: error: {e}\n")
        return 1
    except BrokenPipeError:  # the reader went away (`mpiscope show | head`): nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except OSError as e:
        if e.errno is None:
            raise
        # The file system refused: the path and the cause in words (oserrors.py), no
        # traceback. Files are written under temporary names, so none is left half-written.
        from mpiscope.common.oserrors import describe

        where = f"{e.filename}: " if e.filename else ""
        sys.stderr.write(f"mpiscope: error: {where}{describe(e)}\n")
        # A path the user named is bad input; a full disk is a failure whatever the path.
        full = e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EIO)
        return 2 if _named_path(e, args) and not full else 1
    except KeyboardInterrupt:  # Ctrl-C (a run stores itself first: measure/runner.py)
        sys.stderr.write("mpiscope: interrupted\n")
        return 130
