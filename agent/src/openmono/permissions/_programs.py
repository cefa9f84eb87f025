"""The programs a read-only command may run without asking, each with the flags it may take.

An allow-list, never a deny-list: a flag not listed here (or an abbreviation of one, which GNU
getopt and git would accept) makes the command ask. The sandbox is the real protection; this list
keeps the questions few and stops the obvious (`sort -o`, `git grep -O`, `date -s`).

A `Program` says, per flag style:
- `short`: single-letter flags without a value (combinable: `-la`);
- `short_value`: letters that take a value, attached (`-n5`, `-o/x`) or as the next word;
- `short_optional`: letters whose value can only be attached (`date -Iseconds`, `git status -uno`);
- `long` / `long_value` / `long_optional`: `--flag`, `--flag=V` or `--flag V`, `--flag[=V]`;
- `operands`: what the other words are: `paths` (files read), `names` (paths only named, listed or
  measured: metadata, never contents), `text` (not paths at all), `pattern` (a pattern, then paths,
  unless a flag in `pattern_flags` gave the pattern), or `none`.
And what matters where no sandbox runs (`strict`): may the program run then at all, which flags
take a path (`path_values`), which flags follow symlinks out of the tree (`follows`), and whether
it reads whole trees' contents (`recursive`: always, or with one of `recursive_flags`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Operands = Literal["paths", "names", "text", "pattern", "none"]
# A last look at the operands and the flags given; a reason to ask, or None.
Check = Callable[[list[str], set[str]], str | None]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


@dataclass(frozen=True)
class Program:
    short: str = ""
    short_value: str = ""
    short_optional: str = ""
    long: frozenset[str] = frozenset()
    long_value: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    operands: Operands = "paths"
    max_operands: int | None = None
    numeric: bool = False  # `head -5`, `git log -3`
    pattern_flags: frozenset[str] = frozenset()
    path_values: frozenset[str] = frozenset()
    follows: frozenset[str] = frozenset()
    recursive: bool = False
    recursive_flags: frozenset[str] = frozenset()
    strict: bool = True
    # Every word is an operand, flags included (echo, true): nothing it takes can do harm.
    lenient: bool = False
    check: Check | None = field(default=None, compare=False)


def P(
    short: str = "",
    short_value: str = "",
    long: str = "",
    long_value: str = "",
    long_optional: str = "",
    **kw: Any,
) -> Program:
    return Program(
        short=short,
        short_value=short_value,
        long=_set(long),
        long_value=_set(long_value),
        long_optional=_set(long_optional),
        **kw,
    )


def _date_operands(ops: list[str], flags: set[str]) -> str | None:
    bad = [o for o in ops if not o.startswith("+")]
    return f"date {bad[0]} sets the clock" if bad else None


def _no_operands(what: str) -> Check:
    def check(ops: list[str], flags: set[str]) -> str | None:
        return f"{what} with an operand changes it" if ops else None

    return check


_GREP = P(
    "EFGPivwxcLloqsbHhnTZzarRUI",
    "efmABCdD",
    "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
    "invert-match word-regexp line-regexp count files-without-match files-with-matches "
    "only-matching quiet silent no-messages byte-offset with-filename no-filename line-number "
    "initial-tab null null-data text recursive dereference-recursive line-buffered binary",
    "regexp file max-count after-context before-context context label include exclude "
    "exclude-from exclude-dir binary-files devices directories",
    "color colour",
    operands="pattern",
    pattern_flags=_set("-e -f --regexp --file"),
    path_values=_set("-f --file --exclude-from"),
    follows=_set("-R --dereference-recursive"),
    recursive_flags=_set("-r -R --recursive --dereference-recursive --directories"),
)
_SUMS = P("btcwz", "", "binary text check warn strict quiet status zero tag ignore-missing")

PROGRAMS: dict[str, Program] = {
    "ls": P(
        "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
        "ITw",
        "all almost-all author escape ignore-backups directory file-type full-time "
        "group-directories-first human-readable si dereference-command-line "
        "dereference-command-line-symlink-to-dir inode dereference numeric-uid-gid literal "
        "hide-control-chars show-control-chars quote-name recursive reverse size context zero",
        "block-size format hide ignore quoting-style sort time time-style tabsize width "
        "indicator-style",
        "color hyperlink classify",
        operands="names",
    ),
    "cat": P(
        "AbeEnstTuv",
        "",
        "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting",
    ),
    "head": P("qvz", "nc", "quiet silent verbose zero-terminated", "lines bytes", numeric=True),
    "tail": P("qvz", "nc", "quiet silent verbose zero-terminated", "lines bytes", numeric=True),
    "wc": P(
        "clmwL",
        "",
        "bytes chars lines words max-line-length",
        "files0-from total",
        path_values=_set("--files0-from"),
    ),
    "nl": P(
        "p",
        "bdfhilnsvw",
        "no-renumber",
        "body-numbering section-delimiter footer-numbering "
        "header-numbering line-increment join-blank-lines number-format number-separator "
        "starting-line-number number-width",
    ),
    "tac": P("br", "s", "before regex", "separator"),
    "sort": P(
        "bdfgiMhnRrVcCmsuz",
        "ktS",
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort reverse "
        "version-sort merge stable unique zero-terminated",
        "key field-separator buffer-size parallel sort",
        "check",
    ),
    "uniq": P(
        "cdDiuz",
        "fsw",
        "count repeated ignore-case unique zero-terminated",
        "skip-fields skip-chars check-chars",
        "all-repeated group",
        max_operands=1,  # a second operand is the file uniq writes
    ),
    "cut": P(
        "nsz",
        "bcfd",
        "complement only-delimited zero-terminated",
        "bytes characters fields delimiter output-delimiter",
    ),
    "column": P("tnxJ", "soc", "table json", "separator output-separator columns"),
    "diff": P(
        "qsyiEZbwBTtaupNrdc",
        "UCxXWIFDS",
        "brief report-identical-files side-by-side ignore-case ignore-tab-expansion "
        "ignore-trailing-space ignore-space-change ignore-all-space ignore-blank-lines text "
        "show-c-function new-file unidirectional-new-file recursive minimal strip-trailing-cr "
        "suppress-common-lines left-column expand-tabs initial-tab no-dereference normal",
        "exclude exclude-from ignore-matching-lines label width tabsize from-file to-file "
        "starting-file show-function-line",
        "unified context color",
        path_values=_set("-X --exclude-from --from-file --to-file"),
        recursive_flags=_set("-r --recursive"),
    ),
    "file": P(
        "bLhikNnrE0",
        "Fe",
        "brief mime mime-type mime-encoding dereference no-dereference keep-going no-pad raw "
        "extension apple print0",
        "separator exclude exclude-quiet",
    ),
    "stat": P(
        "LftZ", "c", "dereference file-system terse", "format printf cached", operands="names"
    ),
    "du": P(
        "achsbklmxLPS0",
        "dBt",
        "all apparent-size bytes total dereference-args human-readable si summarize "
        "one-file-system count-links separate-dirs null dereference no-dereference inodes",
        "max-depth exclude threshold block-size time-style exclude-from",
        "time",
        operands="names",
    ),
    "df": P(
        "ahHiklPTv",
        "tBx",
        "all human-readable si inodes local portability print-type total no-sync sync",
        "type exclude-type block-size",
        "output",
        operands="names",
    ),
    "tree": P(
        "adfxpsugDFvtrcUinCQAJXlh",
        "LIP",
        "noreport dirsfirst gitignore prune matchdirs ignore-case du si",
        "charset filelimit sort timefmt",
        operands="names",
        follows=_set("-l"),
    ),
    "find": P(operands="names"),  # its expression is read by `_readonly.check_find`
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": P(
        "iSsvwxcloqnNHIpuUaFLb0P",
        "ABCefgtTmMdrEj",
        "ignore-case smart-case case-sensitive invert-match word-regexp line-regexp count "
        "count-matches files-with-matches files-without-match only-matching quiet line-number "
        "no-line-number with-filename no-filename heading no-heading hidden no-ignore "
        "no-ignore-vcs no-ignore-dot no-ignore-parent no-ignore-global follow fixed-strings "
        "multiline multiline-dotall text json vimgrep column trim files type-list null pcre2 "
        "byte-offset sort-files stats no-messages passthru unrestricted one-file-system "
        "no-config line-buffered block-buffered crlf null-data no-unicode",
        "after-context before-context context regexp file glob iglob type type-not max-count "
        "max-columns max-depth replace encoding threads sort sortr color colors max-filesize "
        "type-add ignore-file path-separator context-separator field-match-separator engine",
        operands="pattern",
        pattern_flags=_set("-e -f --regexp --file --files --type-list"),
        path_values=_set("-f --file --ignore-file"),
        follows=_set("-L --follow"),
        recursive=True,
    ),
    "jq": P(
        "rjacnsSeCMR",
        "f",
        "raw-output join-output ascii-output compact-output null-input slurp sort-keys "
        "exit-status color-output monochrome-output raw-input tab seq stream",
        "indent from-file",
        operands="pattern",
        pattern_flags=_set("-f --from-file"),
        path_values=_set("-f --from-file"),
        strict=False,  # `env` and `$ENV` print the environment, which no sandbox filters
    ),
    "echo": P(operands="text", lenient=True),
    "printf": P("", "v", operands="text"),
    "pwd": P("LP", operands="none"),
    "basename": P("az", "s", "multiple zero", "suffix", operands="text"),
    "dirname": P("z", "", "zero", operands="text"),
    "realpath": P(
        "emsqzLP",
        "",
        "canonicalize-existing canonicalize-missing no-symlinks strip quiet zero logical physical",
        "relative-to relative-base",
        operands="names",
    ),
    "readlink": P(
        "femnqsvz",
        "",
        "canonicalize canonicalize-existing canonicalize-missing "
        "no-newline quiet silent verbose zero",
        operands="names",
    ),
    "which": P("a", operands="text"),
    "type": P("atpPf", operands="text"),
    "true": P(operands="text", lenient=True),
    "false": P(operands="text", lenient=True),
    "whoami": P(operands="none"),
    "id": P("ugGnrz", "", "user group groups name real zero", operands="text", max_operands=1),
    "uname": P(
        "asnrvmpio",
        "",
        "all kernel-name nodename kernel-release kernel-version machine "
        "processor hardware-platform operating-system",
        operands="none",
    ),
    "hostname": P(
        "sfidIaA",
        "",
        "short fqdn long domain ip-address all-ip-addresses alias all-fqdns",
        operands="text",
        check=_no_operands("hostname"),
    ),
    "date": P(
        "uR",
        "dr",
        "utc universal rfc-email",
        "date reference rfc-3339",
        "iso-8601",
        short_optional="I",
        operands="text",
        path_values=_set("-r --reference"),
        check=_date_operands,
    ),
    "md5sum": _SUMS,
    "sha1sum": _SUMS,
    "sha256sum": _SUMS,
    "sha512sum": _SUMS,
}
