#!/bin/sh
# As the official image: `redis-server ARGS` without a config file runs with protected mode off,
# the option put right after `redis-server`, so a trailing `-` (config from stdin, how compose
# gives it REDIS_PASSWORD) stays the last argument, where Redis looks for it.
set -e
if [ "${1#-}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$1" = redis-server ]; then
  shift
  exec redis-server --protected-mode no "$@"
fi
exec "$@"
