#!/usr/bin/env bash
# test_standby_stop.sh - test_standby.sh with the active agent frozen
# (SIGSTOP) instead of killed: its lease runs out, the standby takes over,
# and the frozen agent, let go on, steps down without doing anything.
# burst-matrix: host-only (as test_standby.sh)
STANDBY_MODE=stop exec bash "$(dirname "$0")/test_standby.sh" "$@"
