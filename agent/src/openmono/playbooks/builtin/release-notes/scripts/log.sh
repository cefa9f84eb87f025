#!/usr/bin/env bash
# The commits of the release: after PLAYBOOK_SINCE, else after the last tag, else the last 100.
set -u
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git repository"; exit 1; }
since="${PLAYBOOK_SINCE:-}"
if [ -z "$since" ]; then
  since="$(git describe --tags --abbrev=0 2>/dev/null || true)"
fi
if [ -n "$since" ]; then
  echo "## commits after $since"
  git log --no-merges --pretty='%h %s (%an, %ad)' --date=short "$since"..HEAD
else
  echo "## the last 100 commits (no tag found)"
  git log --no-merges --pretty='%h %s (%an, %ad)' --date=short -n 100
fi
