#!/bin/sh
# As the official image: `redis-server ARGS` without a config file runs with protected mode off.
set -e
if [ "${1#-}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" = redis-server ]; then
  shift
  exec redis-server "$@" --protected-mode no
fi
exec "$@"
