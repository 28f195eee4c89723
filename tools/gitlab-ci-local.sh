#!/usr/bin/env bash
# tools/gitlab-ci-local.sh - gitlab-ci-local, the GitLab CI executor that
# tests/integration/test_gitlab_ci_local.sh runs the node-acceptance template
# with, installed from the npm registry at the version and with the exact
# dependency tree of tools/gitlab-ci-local/package-lock.json (npm ci checks
# every package's integrity hash).
#
#   tools/gitlab-ci-local.sh [DIR]        # or, sourced: burst_gitlab_ci_local [DIR]
#
# prints the path of the gitlab-ci-local program in DIR (default
# $BURST_NPM_DIR, else /var/cache/slurm-burst/npm), installing it there
# first when it is missing or not the pinned one. What it needs from Debian
# is installed when missing (root only): nodejs and npm (Debian 12's node 18
# runs this version; later ones need node 22), git (the executor reads the
# project's commit) and rsync (its shell executor copies the build with it).
# Returns 1 after saying what to do when it cannot.

BURST_GCL_VERSION=4.64.0

burst_gitlab_ci_local() {
	local dir=${1:-${BURST_NPM_DIR:-/var/cache/slurm-burst/npm}} here lock sum bin v missing=() p
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/gitlab-ci-local
	lock="$here/package-lock.json"
	bin="$dir/node_modules/.bin/gitlab-ci-local"
	[ -r "$lock" ] && [ -r "$here/package.json" ] ||
		{ echo "tools/gitlab-ci-local.sh: $here/package.json or package-lock.json is missing" >&2; return 1; }
	sum=$(sha256sum "$lock" | cut -d' ' -f1)
	if [ -x "$bin" ] && [ "$(cat "$dir/.lock-sha256" 2>/dev/null)" = "$sum" ] &&
		v=$("$bin" --version 2>/dev/null) && [ "$v" = "$BURST_GCL_VERSION" ]; then
		echo "$bin"
		return 0
	fi
	# node and npm from Debian (a node from elsewhere, with its own npm, is used as it is)
	command -v node >/dev/null || missing+=(nodejs)
	command -v npm >/dev/null || missing+=(npm)
	for p in git rsync; do
		command -v "$p" >/dev/null || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "tools/gitlab-ci-local.sh: missing ${missing[*]}: run as root, or apt-get install ${missing[*]}" >&2
			return 1
		fi
		echo "tools/gitlab-ci-local.sh: installing Debian packages: ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
			{ echo "tools/gitlab-ci-local.sh: apt-get install ${missing[*]} failed" >&2; return 1; }
	fi
	v=$(node -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null)
	[ -n "$v" ] && [ "$v" -ge 18 ] ||
		{ echo "tools/gitlab-ci-local.sh: gitlab-ci-local $BURST_GCL_VERSION needs node 18 or later, $(command -v node) is ${v:-unusable}" >&2; return 1; }
	mkdir -p "$dir" && cp "$here/package.json" "$lock" "$dir/" ||
		{ echo "tools/gitlab-ci-local.sh: cannot write to $dir (run as root, or give another directory)" >&2; return 1; }
	rm -f "$dir/.lock-sha256"
	echo "tools/gitlab-ci-local.sh: installing gitlab-ci-local $BURST_GCL_VERSION into $dir (npm ci)" >&2
	if ! (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --cache "$dir/.npm-cache" \
		--loglevel=error >"$dir/npm-ci.log" 2>&1); then
		echo "tools/gitlab-ci-local.sh: npm ci failed in $dir; its output:" >&2
		tail -20 "$dir/npm-ci.log" >&2
		return 1
	fi
	v=$("$bin" --version 2>&1)
	[ "$v" = "$BURST_GCL_VERSION" ] ||
		{ echo "tools/gitlab-ci-local.sh: $bin --version says '$v', not $BURST_GCL_VERSION" >&2; return 1; }
	echo "$sum" >"$dir/.lock-sha256"
	echo "$bin"
}

# run, not sourced: print the path
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	burst_gitlab_ci_local "$@"
fi
