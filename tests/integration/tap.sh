# tests/integration/tap.sh - TAP helpers for the shell tests.
tap_n=0
tap_failed=0
ok() {   # ok STATUS NAME [DIAG-FILE...]  (default files: $TAP_DIAG)
	local st=$1 name=$2 f label
	shift 2
	[ $# -eq 0 ] && [ -n "${TAP_DIAG:-}" ] && set -- $TAP_DIAG
	tap_n=$((tap_n + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $tap_n - $name"
	else
		echo "not ok $tap_n - $name"
		tap_failed=$((tap_failed + 1))
		for f in "$@"; do
			# named from the lab's top (burst/nodes/N/node.log), else by basename
			label=${f#"${LAB:-/nonexistent}/"}
			[ "$label" = "$f" ] && label=$(basename "$f")
			# each line ends in a newline, the file's last too (else the
			# next "not ok" would be on this comment's line, lost)
			[ -s "$f" ] && awk -v l="$label" '{ print "# " l ": " $0 }' "$f" | tail -15
		done
	fi
}
bail() { echo "Bail out! $*"; exit 1; }
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
