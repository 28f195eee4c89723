#!/bin/bash
# tests/packaging/guide-systemctl.sh - a stand-in for systemctl in the root
# of tests/packaging/test_guide.sh, where no systemd runs. It does what
# systemd would do with the installed unit files, so that the guide's
# `systemctl enable --now UNIT...` runs as written and starts the daemons the
# way their packages say: [Service] User=, Group=, Environment=,
# EnvironmentFile=, RuntimeDirectory=, ExecStartPre=, ExecStart= and Type=
# (forking: wait for it; anything else: in the background). Output goes to
# /var/log/guide-test/UNIT.log, the main pid to /run/guide-test/UNIT.pid.
#
#   systemctl daemon-reload | enable [--now] UNIT... | start|stop|restart UNIT... | is-active UNIT
#
# stop signals the main pid alone (SIGTERM, SIGKILL after 90 s, as systemd's
# TimeoutStopSec), which is what KillMode=process, burst-agent's, does; the
# other units here are stopped only by the end of the test's root.
# no set -u: systemd expands an unset variable to nothing
log=/var/log/guide-test run=/run/guide-test
mkdir -p "$log" "$run"

die() { echo "systemctl (test stand-in): $*" >&2; exit 1; }

unit_file() {
	local u=${1%.service} d
	for d in /etc/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
		[ -f "$d/$u.service" ] && { echo "$d/$u.service"; return 0; }
	done
	return 1
}

# KEY of [Service], every value in order (one a line)
service_values() {   # FILE KEY
	awk -v k="$2" '
		/^\[/ { svc = ($0 == "[Service]"); next }
		svc && index($0, k "=") == 1 { print substr($0, length(k) + 2) }' "$1"
}

start_unit() {
	local u=${1%.service} f type user group cmd pre v
	f=$(unit_file "$u") || die "unit $u.service not found"
	[ -f "$run/$u.pid" ] && runs "$(cat "$run/$u.pid")" && return 0
	type=$(service_values "$f" Type | tail -1)
	user=$(service_values "$f" User | tail -1)
	group=$(service_values "$f" Group | tail -1)
	(
		set -a
		while read -r v; do
			[ -n "$v" ] && eval "export $v"
		done < <(service_values "$f" Environment)
		while read -r v; do
			case "$v" in
			-*) v=${v#-}; [ -r "$v" ] || continue ;;
			esac
			. "$v" || exit 1
		done < <(service_values "$f" EnvironmentFile)
		set +a
		for v in $(service_values "$f" RuntimeDirectory); do
			install -d -m 0755 -o "${user:-root}" -g "${group:-$(id -gn "${user:-root}")}" "/run/$v"
		done
		as=()
		[ -n "$user" ] && as=(setpriv --reuid="$user" --regid="${group:-$(id -gn "$user")}" --init-groups)
		while read -r pre; do
			pre=${pre#[-@+!]}
			eval "set -- $pre"
			"${as[@]}" "$@" >>"$log/$u.log" 2>&1 || exit 1
		done < <(service_values "$f" ExecStartPre)
		cmd=$(service_values "$f" ExecStart | tail -1)
		cmd=${cmd#[-@+!]}
		eval "set -- $cmd"
		echo "systemctl (test stand-in): starting $u: ${as[*]} $*" >>"$log/$u.log"
		if [ "$type" = forking ]; then
			"${as[@]}" "$@" </dev/null >>"$log/$u.log" 2>&1 || exit 1
			pf=$(service_values "$f" PIDFile | tail -1)
			[ -n "$pf" ] && for i in $(seq 50); do [ -s "$pf" ] && break; sleep 0.1; done
			[ -n "$pf" ] && [ -s "$pf" ] && cp "$pf" "$run/$u.pid"
		else
			setsid "${as[@]}" "$@" </dev/null >>"$log/$u.log" 2>&1 &
			echo $! >"$run/$u.pid"
		fi
	) || die "$u did not start (see $log/$u.log)"
}

# whether pid runs (the root's first process, a sleep, reaps no one: an
# exited daemon stays a zombie, which kill -0 would take for alive)
runs() {
	[ -r "/proc/$1/stat" ] && [ "$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat")" != Z ]
}

stop_unit() {
	local u=${1%.service} pid i
	unit_file "$u" >/dev/null || die "unit $u.service not found"
	[ -f "$run/$u.pid" ] || return 0
	pid=$(cat "$run/$u.pid")
	if kill -TERM "$pid" 2>/dev/null; then
		for ((i = 0; i < 900; i++)); do
			runs "$pid" || break
			sleep 0.1
		done
		runs "$pid" && kill -KILL "$pid"
	fi
	echo "systemctl (test stand-in): stopped $u (pid $pid)" >>"$log/$u.log"
	rm -f "$run/$u.pid"
}

[ $# -gt 0 ] || die "usage: daemon-reload | enable [--now] UNIT... | start|stop|restart UNIT... | is-active UNIT"
case "$1" in
daemon-reload) exit 0 ;;
enable)
	shift
	now=0
	[ "${1:-}" = --now ] && { now=1; shift; }
	for u in "$@"; do
		unit_file "$u" >/dev/null || die "unit $u.service not found"
		[ $now -eq 1 ] && start_unit "$u"
	done
	exit 0
	;;
start)
	shift
	for u in "$@"; do start_unit "$u"; done
	;;
stop)
	shift
	for u in "$@"; do stop_unit "$u"; done
	;;
restart)
	shift
	for u in "$@"; do stop_unit "$u" && start_unit "$u"; done
	;;
is-active)
	u=${2%.service}
	[ -f "$run/$u.pid" ] && runs "$(cat "$run/$u.pid")"
	;;
*) die "$1: not supported by the test's stand-in" ;;
esac
