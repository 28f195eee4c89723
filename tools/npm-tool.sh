#!/usr/bin/env bash
# tools/npm-tool.sh - the tests' own npm packages, one directory each under
# tools/npm/NAME (a package.json and its package-lock.json: the pinned
# versions and the exact dependency tree, every package's integrity hash
# checked by npm ci). Never shipped: the tests use them to check the tests'
# fakes against a cloud's own client (tools/npm/gce-client: Google's
# Compute Engine client, for tests/integration/test_gce_fake.sh). Another
# one is another directory under tools/npm.
#
#   tools/npm-tool.sh NAME [DIR]        # or, sourced: burst_npm_tool NAME [DIR]
#
# prints the node_modules directory of NAME in DIR (default $BURST_NPM_DIR,
# else /var/cache/slurm-burst/npm) as DIR/NAME/node_modules, installing it
# there first when it is missing or not what the lock file pins (its
# SHA-256 is kept beside it). Node and npm come from Debian (installed when
# missing, as root); each package of the lock needs node 18 or later
# (Debian 12's). Returns 1 after saying what to do when it cannot (the
# registry out of reach: the message says so; the tests that need NAME
# then fail, saying why).

burst_npm_tool() {
	local name=${1:-} dir=${2:-${BURST_NPM_DIR:-/var/cache/slurm-burst/npm}} here lock sum dest v missing=() p
	[ -n "$name" ] || { echo "tools/npm-tool.sh: which tool? (a directory of tools/npm)" >&2; return 1; }
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/npm/$name
	lock="$here/package-lock.json"
	dest="$dir/$name"
	[ -r "$lock" ] && [ -r "$here/package.json" ] ||
		{ echo "tools/npm-tool.sh: $here/package.json or package-lock.json is missing" >&2; return 1; }
	sum=$(sha256sum "$lock" | cut -d' ' -f1)
	if [ -d "$dest/node_modules" ] && [ "$(cat "$dest/.lock-sha256" 2>/dev/null)" = "$sum" ]; then
		echo "$dest/node_modules"
		return 0
	fi
	command -v node >/dev/null || missing+=(nodejs)
	command -v npm >/dev/null || missing+=(npm)
	if [ ${#missing[@]} -gt 0 ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "tools/npm-tool.sh: missing ${missing[*]}: run as root, or apt-get install ${missing[*]}" >&2
			return 1
		fi
		echo "tools/npm-tool.sh: installing Debian packages: ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
			{ echo "tools/npm-tool.sh: apt-get install ${missing[*]} failed" >&2; return 1; }
	fi
	v=$(node -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null)
	[ -n "$v" ] && [ "$v" -ge 18 ] ||
		{ echo "tools/npm-tool.sh: $name needs node 18 or later, $(command -v node) is ${v:-unusable}" >&2; return 1; }
	mkdir -p "$dest" && cp "$here/package.json" "$lock" "$dest/" ||
		{ echo "tools/npm-tool.sh: cannot write to $dest (run as root, or give another directory)" >&2; return 1; }
	rm -f "$dest/.lock-sha256"
	echo "tools/npm-tool.sh: installing $name into $dest (npm ci)" >&2
	if ! (cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts --cache "$dir/.npm-cache" \
		--loglevel=error >"$dest/npm-ci.log" 2>&1); then
		echo "tools/npm-tool.sh: npm ci failed in $dest (is the npm registry reachable from here?); its output:" >&2
		tail -20 "$dest/npm-ci.log" >&2
		return 1
	fi
	# every direct dependency is there at its pinned version
	p=$(cd "$dest" && node -e '
		const pk = require("./package.json"); let bad = [];
		for (const [n, want] of Object.entries(pk.dependencies || {})) {
			let got; try { got = require("./node_modules/" + n + "/package.json").version; } catch (e) { got = "missing"; }
			if (got !== want) bad.push(n + " " + got + " (pinned " + want + ")");
		}
		process.stdout.write(bad.join(", "));' 2>&1)
	[ -z "$p" ] || { echo "tools/npm-tool.sh: $dest after npm ci: $p" >&2; return 1; }
	echo "$sum" >"$dest/.lock-sha256"
	echo "$dest/node_modules"
}

# run, not sourced: print the path
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	burst_npm_tool "$@"
fi
