#!/usr/bin/env bash
# What would be committed: the staged diff (or, with all=true / nothing staged, the tracked changes).
set -u
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git repository"; exit 1; }
echo "## git status"
git status --short --branch
if [ "${PLAYBOOK_ALL:-false}" = "true" ] || git diff --cached --quiet; then
  echo "## changes to tracked files (not all staged yet)"
  git diff HEAD --stat 2>/dev/null || git diff --stat
  git diff HEAD 2>/dev/null | head -c 30000 || git diff | head -c 30000
else
  echo "## staged changes"
  git diff --cached --stat
  git diff --cached | head -c 30000
fi
