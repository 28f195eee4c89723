# bench/bench_build.sh - sourced by the benches: bench_build DIR NAME sets
# build to DIR when given (or $BURST_TOP_BUILDDIR), else builds an
# optimised tree under _build/NAME first (the dependencies installed as
# check.sh installs them). Exits on a failure.
bench_build() {
	build=${1:-${BURST_TOP_BUILDDIR:-}}
	if [ -z "$build" ]; then
		. "$src/tools/deps.sh"
		burst_install_deps $BURST_BUILD_DEPS $BURST_LAB_DEPS
		build="$src/_build/$2"
		if [ ! -f "$build/Makefile" ]; then
			(cd "$src" && [ -x configure ] || autoreconf -fi) >/dev/null 2>&1
			mkdir -p "$build"
			(cd "$build" && "$src/configure" CFLAGS="-O2 -g" >/dev/null) || { echo "configure failed" >&2; exit 1; }
		fi
		make -C "$build" -s -j"$(nproc)" >/dev/null || { echo "the build failed" >&2; exit 1; }
	fi
	build=$(cd "$build" && pwd)
	[ -x "$build/burst-agent/burst-agent" ] || { echo "no $build/burst-agent/burst-agent: build first" >&2; exit 1; }
}
