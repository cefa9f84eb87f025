"""The git subcommands a read-only command may run without asking, with their flags.

Only under the sandbox (`strict=False` on every one): a repository someone else prepared can make
"read-only" git run its own programs (`core.fsmonitor` on `git status`, textconv and external diff
drivers on `git diff`/`log -p`, `core.pager`, hooks on an index write). The worker also tells a
sandboxed git to start no fsmonitor and find no hooks (`openmono_worker.sandbox._env`).

Global options allowed before the subcommand: `--no-pager`, `-P`, `--no-optional-locks`, `-C DIR`.
A subcommand's own `check` refuses the forms that write (`git branch NAME`, `git tag NAME`,
`git config KEY VALUE`, `git stash push`, `git remote add`).
"""

from __future__ import annotations

from typing import Any

from openmono.permissions._programs import Check, P, Program, _set


def G(*args: str, **kw: Any) -> Program:
    """A git subcommand: never without the sandbox (see the module docstring)."""
    return P(*args, strict=False, **kw)


GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "--no-optional-locks"})
GLOBAL_VALUE_FLAGS = frozenset({"-C"})

_DIFF_LONG = (
    "stat numstat shortstat name-only name-status cached staged no-color ignore-space-change "
    "ignore-all-space ignore-blank-lines ignore-space-at-eol minimal patience histogram "
    "exit-quiet quiet exit-code check summary full-index binary no-prefix raw patch no-patch "
    "no-renames ignore-submodules merge-base patch-with-stat compact-summary text "
    "no-ext-diff no-textconv function-context"
)
_DIFF_VALUE = "diff-filter unified inter-hunk-context stat-width src-prefix dst-prefix"
_DIFF_OPTIONAL = "color word-diff color-words abbrev relative find-renames find-copies dirstat"
_LOG_LONG = (
    "oneline graph all reverse follow first-parent merges no-merges abbrev-commit left-right "
    "cherry-pick boundary simplify-by-decoration full-history topo-order date-order source "
    "no-decorate log-size walk-reflogs use-mailmap regexp-ignore-case all-match invert-grep "
    "extended-regexp fixed-strings basic-regexp perl-regexp"
)
_LOG_VALUE = (
    "format max-count skip since until after before author committer grep date min-parents "
    "max-parents exclude glob"
)
_LOG_OPTIONAL = "decorate pretty branches tags remotes no-walk notes"


def _listing_only(what: str, listing: frozenset[str]) -> Check:
    def check(ops: list[str], flags: set[str]) -> str | None:
        if ops and not flags & listing:
            return f"git {what} with a name makes one"
        return None

    return check


def _first_operand(what: str, allowed: frozenset[str], bare: bool = True) -> Check:
    def check(ops: list[str], flags: set[str]) -> str | None:
        if not ops:
            return None if bare else f"git {what} needs one of {sorted(allowed)}"
        if ops[0] not in allowed:
            return f"git {what} {ops[0]} is not a listing"
        return None

    return check


def _config_check(ops: list[str], flags: set[str]) -> str | None:
    reads = {"--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch"}
    return None if flags & reads else "git config without --get/--list writes"


SUBCOMMANDS: dict[str, Program] = {
    "status": G(
        "sbvz",
        "",
        "short branch long verbose no-renames renames ahead-behind "
        "no-ahead-behind show-stash null no-column",
        "",
        "porcelain untracked-files ignored ignore-submodules find-renames column",
        short_optional="u",
    ),
    "diff": G("pusRawzbW", "U", _DIFF_LONG, _DIFF_VALUE, _DIFF_OPTIONAL, short_optional="MCB"),
    "log": G(
        "psinzwRW",
        "nUSGL",
        f"{_DIFF_LONG} {_LOG_LONG}",
        f"{_DIFF_VALUE} {_LOG_VALUE}",
        f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}",
        short_optional="MC",
        numeric=True,
    ),
    "show": G(
        "psnzwW",
        "USG",
        f"{_DIFF_LONG} {_LOG_LONG}",
        f"{_DIFF_VALUE} {_LOG_VALUE}",
        f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}",
        short_optional="MC",
    ),
    "blame": G(
        "bclfnsepwt",
        "L",
        "root show-stats porcelain line-porcelain incremental show-name show-number show-email",
        "date contents ignore-rev",
        "abbrev",
        short_optional="MC",
    ),
    "ls-files": G(
        "cdmoiszukftv",
        "xX",
        "cached deleted modified others ignored stage "
        "unmerged killed directory no-empty-directory exclude-standard full-name "
        "error-unmatch eol deduplicate recurse-submodules",
        "exclude exclude-from exclude-per-directory format",
        "abbrev",
    ),
    "ls-tree": G(
        "drtlz",
        "",
        "name-only name-status full-name full-tree object-only long",
        "format",
        "abbrev",
    ),
    "rev-parse": G(
        "q",
        "",
        "verify quiet show-toplevel git-dir absolute-git-dir "
        "is-inside-work-tree is-inside-git-dir is-bare-repository show-prefix "
        "show-cdup symbolic symbolic-full-name all git-common-dir "
        "show-superproject-working-tree local-env-vars",
        "path-format since until default",
        "abbrev-ref short branches tags remotes",
    ),
    "branch": G(
        "arlv",
        "",
        "all remotes list verbose show-current no-color no-column ignore-case omit-empty",
        "sort format points-at",
        "merged no-merged contains no-contains color column abbrev",
        check=_listing_only("branch", _set("-l --list")),
    ),
    "tag": G(
        "l",
        "",
        "list ignore-case omit-empty no-column",
        "sort format points-at",
        "contains no-contains merged no-merged column color",
        short_optional="n",
        check=_listing_only("tag", _set("-l --list")),
    ),
    "describe": G(
        "",
        "",
        "tags all long always contains exact-match first-parent debug",
        "match exclude candidates",
        "abbrev dirty broken",
    ),
    "shortlog": G("snec", "", "summary numbered email committer", "group format", operands="names"),
    "grep": G(
        "nivlLchHIoqzEFGPpW",
        "eABCm",
        "cached untracked no-index recurse-submodules line-number ignore-case word-regexp "
        "invert-match files-with-matches files-without-match count full-name heading break "
        "name-only all-match and or not no-color show-function function-context column "
        "extended-regexp fixed-strings basic-regexp perl-regexp text",
        "max-depth threads max-count after-context before-context context",
        "color",
        operands="pattern",
        pattern_flags=_set("-e"),
    ),
    "remote": G("v", "", "verbose", check=_first_operand("remote", _set("get-url"))),
    "rev-list": G(
        "n",
        "",
        "count all reverse first-parent merges no-merges objects left-right oneline",
        "max-count since until after before",
    ),
    "cat-file": G("tspe", operands="names"),
    "merge-base": G("a", "", "is-ancestor all octopus independent fork-point"),
    "config": G(
        "lz",
        "",
        "get get-all get-regexp list get-urlmatch show-origin show-scope "
        "local global system worktree name-only null includes no-includes",
        "type default file blob",
        check=_config_check,
        operands="text",
    ),
    "stash": G(
        "p",
        "",
        "patch stat name-only name-status include-untracked only-untracked",
        check=_first_operand("stash", _set("list show"), bare=False),
    ),
    "reflog": G(
        "n",
        "",
        "oneline all date-order",
        "date format",
        "abbrev decorate",
        numeric=True,
        check=_first_operand("reflog", _set("show")),
    ),
}
