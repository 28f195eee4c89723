#!/usr/bin/env bash
# test_standby_crash.sh - test_standby.sh with the active agent dying at
# its first launch's answer, before recording it: the standby, which read
# the aws batch journal at its own start, must read it again when it takes
# the lease and adopt that batch's instances.
# burst-matrix: host-only (as test_standby.sh)
STANDBY_MODE=crash exec bash "$(dirname "$0")/test_standby.sh" "$@"
