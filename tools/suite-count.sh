# tools/suite-count.sh - check.sh's counting of test results (sourced, bash).
#
# check.sh sources it; tests/cli/test_suite_count.sh sources it too and runs
# it on crafted logs. The state: the counters passed, failed, skipped,
# xfailed and xpassed, and the lists failures, skips and notrun. A failure is
# counted for every test point that failed, and for every result that
# cannot be read as a pass:
#   - a make step that exited non-zero with no failure in its log;
#   - a test-suite.log that is missing or has no counts (the step ran no
#     test, e.g. a unit test that does not compile under the sanitizers);
#   - automake's XPASS (a test expected to fail passed: the expectation is
#     out of date) and ERROR;
#   - a TAP script with no plan "1..N", with more than one, or with a plan
#     other than its count of "ok"/"not ok" lines, one that bailed out, or
#     one that exited non-zero with no point failed.
# Skipped points (automake's SKIP, TAP's "# SKIP") are counted and named;
# expected failures (XFAIL, "not ok ... # TODO") are counted. What did not
# run at all (the second Slurm release, host-only files) is named by
# suite_notrun, just above the last line. The last line is always
# "N passed, N failed" (CI reads it).

suite_reset() {
	passed=0 failed=0 skipped=0 xfailed=0 xpassed=0
	failures=() skips=() notrun=()
}
suite_reset

# suite_fail N WHAT: N more failures; WHAT is named in the summary
suite_fail() {
	failed=$((failed + $1))
	failures+=("$2")
}

# suite_notrun WHAT: something that did not run, named above the last line
suite_notrun() {
	notrun+=("$1")
}

# count_suite LOG NAME STATUS: an automake test-suite.log, and the exit
# status of the make that wrote it
count_suite() {
	local log=$1 name=$2 rc=${3:-0} p f e s x xp line
	if [ ! -f "$log" ]; then
		echo "$name: no $log: make exited $rc and ran no test"
		suite_fail 1 "$name: its test-suite.log is missing (make exited $rc; it ran no test)"
		return
	fi
	p=$(sed -n 's/^# PASS: *//p' "$log" | head -1)
	f=$(sed -n 's/^# FAIL: *//p' "$log" | head -1)
	e=$(sed -n 's/^# ERROR: *//p' "$log" | head -1)
	s=$(sed -n 's/^# SKIP: *//p' "$log" | head -1)
	x=$(sed -n 's/^# XFAIL: *//p' "$log" | head -1)
	xp=$(sed -n 's/^# XPASS: *//p' "$log" | head -1)
	case "$p$f$e$s$x$xp" in
	*[!0-9]*|'')
		echo "$name: $log has no counts (# PASS:, # FAIL:, ...)"
		suite_fail 1 "$name: $log has no counts (make exited $rc): see it"
		return
		;;
	esac
	passed=$((passed + p))
	failed=$((failed + f + e + xp))
	skipped=$((skipped + s)) xfailed=$((xfailed + x)) xpassed=$((xpassed + xp))
	if [ "$((f + e + xp))" -gt 0 ]; then
		failures+=("$name: $f failed, $e errors, $xp unexpected passes (XPASS): see $log")
		grep -E '^(FAIL|ERROR|XPASS):' "$log" | head -20
	elif [ "$rc" -ne 0 ]; then
		suite_fail 1 "$name: make exited $rc though $log shows no failure: see the make output"
	fi
	if [ "$s" -gt 0 ]; then
		while IFS= read -r line; do
			echo "$line"
			skips+=("$name: $line")
		done < <(grep -E '^SKIP:' "$log")
	fi
}

# count_tap LOG NAME STATUS [NOTE]: one TAP script's output and its exit
# status; prints "NAME: N ok, N not ok[, N skipped]NOTE"
count_tap() {
	local log=$1 name=$2 rc=${3:-0} note=${4:-} c p f s x xp plan nplan bail why=() whys w line
	if [ ! -f "$log" ]; then
		echo "$name: no output ($log is missing)"
		suite_fail 1 "$name: its output $log is missing"
		return
	fi
	# pass fail skip xfail xpass plan plans bailed
	c=$(awk '
		/^(not )?ok( |$)/ {
			notok = /^not /
			if (/#[ \t]*[Ss][Kk][Ii][Pp]/) s++
			else if (/#[ \t]*[Tt][Oo][Dd][Oo]/) { if (notok) x++; else xp++ }
			else if (notok) f++
			else p++
			next
		}
		/^1\.\.[0-9]+/ { n++; plan = $0; sub(/^1\.\./, "", plan); sub(/[^0-9].*/, "", plan) }
		/^Bail out!/ { b = 1 }
		END { printf "%d %d %d %d %d %s %d %d\n", p, f, s, x, xp, (n ? plan : "-"), n, b }' "$log")
	read -r p f s x xp plan nplan bail <<<"$c"
	passed=$((passed + p))
	failed=$((failed + f + xp))
	skipped=$((skipped + s)) xfailed=$((xfailed + x)) xpassed=$((xpassed + xp))
	if [ "$nplan" -eq 0 ]; then
		why+=("no plan (1..N): it stopped before its end")
	elif [ "$nplan" -gt 1 ]; then
		why+=("$nplan plans")
	elif [ "$plan" -ne "$((p + f + s + x + xp))" ]; then
		why+=("its plan is 1..$plan but it ran $((p + f + s + x + xp)) points")
	fi
	[ "$bail" -eq 1 ] && why+=("it bailed out")
	[ "$rc" -ne 0 ] && [ "$((f + xp))" -eq 0 ] && [ ${#why[@]} -eq 0 ] && why+=("it exited $rc with no point failed")
	[ "$xp" -gt 0 ] && echo "$name: $xp unexpected passes (ok ... # TODO)"
	echo "$name: $p ok, $f not ok$([ "$s" -gt 0 ] && echo ", $s skipped")${note}"
	for w in "${why[@]}"; do
		echo "$name: $w"
		failed=$((failed + 1))
	done
	if [ "$((f + xp))" -gt 0 ] || [ ${#why[@]} -gt 0 ]; then
		whys=
		for w in "${why[@]}"; do whys="$whys; $w"; done
		failures+=("$name: $f not ok, $xp unexpected passes$whys: see $log")
		grep -E '^(not ok|Bail out)|^ok .*# *[Tt][Oo][Dd][Oo]' "$log" | head -10
		# and what the first failing points said (their "#" lines)
		awk '/^(not ok|Bail out)/ { on = 1; n++ } /^ok / { on = 0 } on && /^#/ && k < 60 { print "  " $0; k++ }
		     n > 3 { exit }' "$log"
	fi
	if [ "$s" -gt 0 ]; then
		while IFS= read -r line; do
			echo "$line"
			skips+=("$name: $line")
		done < <(grep -E '^ok .*#[[:space:]]*[Ss][Kk][Ii][Pp]' "$log")
	fi
}

# side_counts FILE: write this process's counts for side_add (the side
# work runs in a background subshell): "PASSED FAILED SKIPPED XFAILED
# XPASSED", then "failed: ...", "skipped: ..." and "not run: ..." lines
side_counts() {
	local l
	{
		echo "$passed $failed $skipped $xfailed $xpassed"
		for l in "${failures[@]}"; do echo "failed: $l"; done
		for l in "${skips[@]}"; do echo "skipped: $l"; done
		for l in "${notrun[@]}"; do echo "not run: $l"; done
	} >"$1"
}

# side_add FILE WHAT: add a side_counts file's figures to this run's; a
# missing or unreadable file is a failure (WHAT did not finish; see LOG)
side_add() {
	local file=$1 what=$2 log=${3:-the side work\'s log} p= f= s= x= xp= line
	[ -r "$file" ] && read -r p f s x xp <"$file"
	if [ -z "$xp" ] || [[ "$p$f$s$x$xp" == *[!0-9]* ]]; then
		suite_fail 1 "the side work ($what) did not finish: see $log"
		return
	fi
	passed=$((passed + p)) failed=$((failed + f))
	skipped=$((skipped + s)) xfailed=$((xfailed + x)) xpassed=$((xpassed + xp))
	while IFS= read -r line; do
		case "$line" in
		"failed: "*) failures+=("${line#failed: }") ;;
		"skipped: "*) skips+=("${line#skipped: }") ;;
		"not run: "*) notrun+=("${line#not run: }") ;;
		esac
	done < <(tail -n +2 "$file")
}

# suite_summary [LINE...]: the failures, the skipped points, the LINEs
# (check.sh's one per Slurm release), what did not run, and last
# "N passed, N failed"; status 0 only when nothing failed
suite_summary() {
	local l
	echo
	for l in "${failures[@]}"; do echo "failed: $l"; done
	for l in "${skips[@]}"; do echo "skipped: $l"; done
	for l in "$@"; do echo "$l"; done
	echo "$skipped skipped, $xfailed expected failures (XFAIL), $xpassed unexpected passes (XPASS, counted as failed)"
	for l in "${notrun[@]}"; do echo "not run: $l"; done
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
