#!/usr/bin/env bash
# tests/cli/test_catalog_sources.sh - the shipped catalog (share/catalog) is
# exactly what tools/build-catalog.py makes from the source data the project
# carries (share/catalog-src), and each source file is accounted for (TAP).
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"

data="$src/share/catalog-src"
[ -d "$data" ] || bail "$data is missing: the source data must be part of the tree (and of make dist)"
command -v "$PY" >/dev/null || bail "no $PY: apt-get install python3"

"$PY" "$src/tools/build-catalog.py" --check --data "$data" --out "$src/share/catalog" \
	>"$tmp/check.out" 2>&1
ok $? "share/catalog is what build-catalog.py makes from share/catalog-src" "$tmp/check.out"

# The check must notice a changed source: raise one price in a copy.
cp -a "$data" "$tmp/data"
chmod -R u+w "$tmp/data"
sed -i '0,/^m5\.large,/s/^m5\.large,.*/m5.large,9.999/' \
	"$tmp/data/prices/aws_us-east-1_linux_ondemand.karpenter.csv"
grep -q '^m5\.large,9\.999$' "$tmp/data/prices/aws_us-east-1_linux_ondemand.karpenter.csv" ||
	bail "could not change the m5.large price in the copy"
"$PY" "$src/tools/build-catalog.py" --check --data "$tmp/data" --out "$src/share/catalog" \
	>"$tmp/changed.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q 'aws-prices.csv differs' "$tmp/changed.out"
ok $? "a changed source price makes --check fail, naming aws-prices.csv (rc $rc)" "$tmp/changed.out"

# Azure: a size the SKU API says has GPUs but no series names must fail the
# build (its model and memory would be unknown), naming the size.
rm -rf "$tmp/data"
cp -a "$data" "$tmp/data"
chmod -R u+w "$tmp/data"
sed -i 's/^\(Standard_D2s_v5,[^,]*,2,8192,\)0,/\11,/' "$tmp/data/catalog/azure/vm_sizes.k8s-autoscaler.csv"
grep -q '^Standard_D2s_v5,[^,]*,2,8192,1,' "$tmp/data/catalog/azure/vm_sizes.k8s-autoscaler.csv" ||
	bail "could not give Standard_D2s_v5 a GPU in the copy"
"$PY" "$src/tools/build-catalog.py" --data "$tmp/data" --out "$tmp/gpuout" >"$tmp/gpu.out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && grep -q 'in no GPU series: Standard_D2s_v5' "$tmp/gpu.out"
ok $? "an azure size with GPUs in no GPU series fails the build, naming it (rc $rc)" "$tmp/gpu.out"

# Every file under share/catalog-src is named in its SOURCES.md.
missing=
while IFS= read -r f; do
	rel=${f#"$data"/}
	[ "$rel" = SOURCES.md ] && continue
	grep -qF "\`$rel\`" "$data/SOURCES.md" || missing="$missing $rel"
done < <(find "$data" -type f | sort)
echo "not in SOURCES.md:$missing" >"$tmp/missing"
[ -z "$missing" ]
ok $? "every file in share/catalog-src is named in its SOURCES.md" "$tmp/missing"

# Nothing in the tree reads data from outside it.
"$PY" "$src/tools/build-catalog.py" --data "$tmp/nowhere" --out "$tmp/out" >"$tmp/nodata.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "no source data in $tmp/nowhere" "$tmp/nodata.out"
ok $? "a missing --data directory is a clear error (rc $rc)" "$tmp/nodata.out"

done_testing
