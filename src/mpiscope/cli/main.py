"""The `mpiscope` entry point: one parser, a subcommand per command group (cli/*.py)."""

import argparse
import sys

from mpiscope.common.errors import UsageError

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own errors: exit 2 with a hint
        self.print_usage(sys.stderr)
        sys.stderr.write(f"mpiscope: error: {message} (see --help)\n")
        sys.exit(2)


def build_parser():
    from mpiscope.cli.analysis import add_analysis_commands
    from mpiscope.cli.run import add_run_command
    from mpiscope.cli.loggp import add_loggp_commands
    from mpiscope.cli.views import add_view_commands
    from mpiscope.cli.cluster import add_cluster_commands
    from mpiscope.cli.model import add_model_commands
    from mpiscope.cli.timechart import add_timechart_command
    from mpiscope.cli.report import add_report_command

    parser = _Parser(prog="mpiscope", description="Measure, explain and improve MPI communication "
                                                   "performance.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    add_run_command(sub)
    add_view_commands(sub)
    add_analysis_commands(sub)
    add_loggp_commands(sub)
    add_report_command(sub)
    add_cluster_commands(sub)
    add_model_commands(sub)
    add_timechart_command(sub)
    return parser


def main(argv=None):
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as e:
        sys.stderr.write(f"mpiscope: error: {e}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
