"""The command lines of the grading package's tools: argparse, with each tool's own grammar kept,
the way grading/options.py reads grade.sh's. A tool first marks its arguments (marked(): MARK
before each value and each operand, so that argparse takes it as one whatever it looks like, "-x"
and "--" included, and never as an option; option names and the command word stay as they are),
then its Parser reads them. A Parser has no help of its own (each tool prints its docstring for -h
and --help), takes no abbreviation of an option and no --option=value, and never exits: a command
line it refuses raises Refused, which the tool says in its own words, with its own exit code.

Standard library only, and it imports nothing of grading/ (the student pack ships it with the
tools that use it)."""
from __future__ import annotations

import argparse
from typing import Any, Callable, NoReturn, Sequence

MARK = ":"


class Refused(Exception):
    """A command line the tool refuses (the message is argparse's reason)."""


class Unknown(Refused):
    """An argument the tool's grammar takes for an option it does not have (ARG: as given)."""

    def __init__(self, arg: str) -> None:
        super().__init__("unknown option %r" % arg)
        self.arg = arg


class Help(Exception):
    """-h or --help, where the tool's grammar reads it: the tool prints its help."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, without help, abbreviations or exits (see the module's docstring)."""

    def __init__(self, prog: str | None = None, **kw: Any) -> None:
        kw.setdefault("add_help", False)
        super().__init__(prog=prog, allow_abbrev=False, **kw)

    def error(self, message: str) -> NoReturn:
        raise Refused(message)


def value(text: str) -> str:
    """The type= of every value and operand: the argument as given (marked() put MARK before it).
    (argparse passes a default that is a string through it too: give such defaults as None.)"""
    if not text.startswith(MARK):
        raise argparse.ArgumentTypeError("not an argument of this command line: %r" % text)
    return text[len(MARK):]


def marked(args: Sequence[str], commands: Sequence[str] = (), flags: Sequence[str] = (),
           valued: Sequence[str] = (), helps: Sequence[str] = (),
           unknown: Callable[[str], bool] = lambda a: False) -> list[str]:
    """ARGS for a Parser, read in order: the first argument stays when it is one of COMMANDS; each
    of FLAGS stays; each of VALUED stays, and the argument after it is its value, whatever it looks
    like; one of HELPS raises Help; any other argument is an operand, unless UNKNOWN says it is an
    option the tool does not have (so is one of VALUED with nothing after it): then it raises
    Unknown. Values and operands get MARK before them."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if (i == 0 and a in commands) or a in flags:
            out.append(a)
        elif a in valued and i + 1 < len(args):
            out += [a, MARK + args[i + 1]]
            i += 1
        elif a in helps:
            raise Help()
        elif a in valued or unknown(a):
            raise Unknown(a)
        else:
            out.append(MARK + a)
        i += 1
    return out
