# tools/moto.sh - find or provide a Python with moto (the EC2 peer of the
# AWS tests) and boto3. Sourced by check.sh and bench scripts; the tests
# find the interpreter through BURST_MOTO_PYTHON (tests/integration/ec2_peers.sh).
#
# burst_moto_python DIR: print the path of a python3 that imports moto's
# server, flask_cors and boto3, trying in order:
#   1. $BURST_MOTO_PYTHON, the python3 first on PATH, /usr/bin/python3;
#   2. one made before in DIR;
#   3. Debian's python3-moto: installed with apt where the system's sources
#      have it (Debian 13 and later); on Debian 12, which lacks it, the
#      python3-moto of Debian 13 (pure Python) is fetched with apt into DIR
#      (a private apt state: the system's sources are not changed), its
#      dependencies installed from Debian 12, and DIR/bin/python3 runs
#      /usr/bin/python3 with it on PYTHONPATH;
#   4. a virtual environment in DIR with pip's 'moto[server]' and boto3,
#      where a package index is reachable.
# Installing needs root. Returns 1 after printing one line that says what to
# install when none of these works (the reasons are in DIR/moto-setup.log).

BURST_MOTO_DEBIAN_SUITE=${BURST_MOTO_DEBIAN_SUITE:-trixie}
BURST_MOTO_DEBIAN_MIRROR=${BURST_MOTO_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# the system's python3, which Debian's moto runs on (a test names another)
BURST_MOTO_SYSTEM_PYTHON=${BURST_MOTO_SYSTEM_PYTHON:-/usr/bin/python3}

burst_moto_ok() {   # burst_moto_ok PYTHON: does it have what the tests need?
	[ -n "$1" ] && "$1" -c 'import moto, moto.server, flask_cors, boto3' >/dev/null 2>&1
}

# Quote for a POSIX shell script.
burst_moto_shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# Debian's python3-moto, from the system's own sources (Debian 13 and later).
burst_moto_from_apt() {
	local cand
	cand=$(apt-cache policy python3-moto 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	[ -n "$cand" ] && [ "$cand" != "(none)" ] || { echo "apt: no python3-moto in this system's sources"; return 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		python3-moto python3-boto3 python3-flask-cors || return 1
	burst_moto_ok "$BURST_MOTO_SYSTEM_PYTHON" && echo "$BURST_MOTO_SYSTEM_PYTHON"
}

# Debian 13's python3-moto unpacked into DIR, for Debian 12's python3.
burst_moto_from_debian_suite() {
	local dir=$1 apt deb deps py=$BURST_MOTO_SYSTEM_PYTHON a
	[ -x "$py" ] || { echo "no $py"; return 1; }
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "no apt-get/dpkg-deb"; return 1; }
	[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] || { echo "no debian-archive-keyring"; return 1; }
	apt="$dir/apt"
	rm -rf "$apt" "$dir/root" "$dir/bin"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/apt.conf.d" \
		"$apt/etc/preferences.d" "$apt/deb" || return 1
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $BURST_MOTO_DEBIAN_MIRROR $BURST_MOTO_DEBIAN_SUITE main" \
		>"$apt/etc/sources.list"
	a=(-o "Dir::Etc=$apt/etc" -o "Dir::Etc::sourcelist=$apt/etc/sources.list" -o "Dir::Etc::sourceparts=-"
	   -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "Dir::State::status=/dev/null"
	   -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
	apt-get "${a[@]}" update -qq || { echo "apt: cannot read $BURST_MOTO_DEBIAN_SUITE from $BURST_MOTO_DEBIAN_MIRROR"; return 1; }
	(cd "$apt/deb" && apt-get "${a[@]}" download python3-moto) || return 1
	deb=$(ls "$apt/deb"/python3-moto_*_all.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { echo "apt: python3-moto of $BURST_MOTO_DEBIAN_SUITE not downloaded"; return 1; }
	# its dependencies, from this system's own sources (all pure Python or
	# already in Debian 12 at versions moto accepts), plus moto[server]'s
	deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/[(|].*//; s/:any//; s/ //g' | grep -v '^python3$' | grep .)
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$deps python3-flask-cors || return 1
	dpkg-deb -x "$deb" "$dir/root" || return 1
	mkdir -p "$dir/bin" || return 1
	{
		echo '#!/bin/sh'
		echo "# $BURST_MOTO_DEBIAN_SUITE's python3-moto ($(basename "$deb")) for this system's python3 (tools/moto.sh)"
		echo "PYTHONPATH=$(burst_moto_shq "$dir/root/usr/lib/python3/dist-packages")\${PYTHONPATH:+:\$PYTHONPATH}"
		echo 'export PYTHONPATH'
		echo "exec $py \"\$@\""
	} >"$dir/bin/python3" && chmod +x "$dir/bin/python3" || return 1
	burst_moto_ok "$dir/bin/python3" && echo "$dir/bin/python3"
}

# A virtual environment with pip's moto.
burst_moto_from_pip() {
	local dir=$1 py=$BURST_MOTO_SYSTEM_PYTHON
	[ -x "$py" ] || py=$(command -v python3) || { echo "no python3"; return 1; }
	rm -rf "$dir/venv"
	"$py" -m venv "$dir/venv" || { echo "no venv module for $py (python3-venv)"; return 1; }
	timeout 300 "$dir/venv/bin/pip" install -q --retries 1 --timeout 20 'moto[server]' boto3 || return 1
	burst_moto_ok "$dir/venv/bin/python3" && echo "$dir/venv/bin/python3"
}

# burst_moto_find [DIR]: print the first python3 that has moto among
# $BURST_MOTO_PYTHON, the python3 first on PATH, /usr/bin/python3 and the ones
# burst_moto_python DIR makes; installs nothing. Returns 1 when none has it.
burst_moto_find() {
	local py
	for py in "${BURST_MOTO_PYTHON:-}" "$(command -v python3)" "$BURST_MOTO_SYSTEM_PYTHON" \
		${1:+"$1/bin/python3" "$1/venv/bin/python3"}; do
		if burst_moto_ok "$py"; then
			echo "$py"
			return 0
		fi
	done
	return 1
}

burst_moto_python() {
	local dir=$1 log got how
	burst_moto_find "$dir" && return 0
	mkdir -p "$dir" || return 1
	log="$dir/moto-setup.log"
	: >"$log"
	echo "moto: no python3 with moto and boto3; providing one (log: $log)" >&2
	for how in apt debian_suite pip; do
		case $how in apt|debian_suite) [ "$(id -u)" -eq 0 ] || continue ;; esac
		echo "== $how" >>"$log"
		got=$("burst_moto_from_$how" "$dir" 2>>"$log" | tee -a "$log" | tail -1)
		if burst_moto_ok "$got"; then
			echo "moto: using $got" >&2
			echo "$got"
			return 0
		fi
	done
	if [ ! -x "$BURST_MOTO_SYSTEM_PYTHON" ] && ! command -v python3 >/dev/null; then
		# (as root, apt brings python3 with python3-moto: a user without it)
		echo "moto: this machine has no python3, which moto_server runs on: as root, apt-get install python3 (or run this as root: it installs python3-moto from Debian), or set BURST_MOTO_PYTHON to a python3 that has moto and boto3 (see $log)" >&2
		return 1
	fi
	echo "moto: neither apt nor pip could provide it (see $log): install python3-moto python3-boto3 python3-flask-cors (Debian 13), or pip install 'moto[server]' boto3, or set BURST_MOTO_PYTHON to a python3 that has them" >&2
	return 1
}
