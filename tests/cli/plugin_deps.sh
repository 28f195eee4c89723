#!/usr/bin/env bash
# tests/cli/plugin_deps.sh - the SPANK plugin stays lean (TAP, no Slurm): it
# loads into every sbatch, salloc, srun, slurmd and slurmstepd, so it links
# libc only (none of curl, libxml2, SQLite, OpenSSL or what they bring; not
# even libm, whose mapping and version checks every command would pay),
# holds none of the agent's code (EC2, state, attestations, provenance), and
# exports only what Slurm looks up. The contract plugin holds nothing of
# libburst at all: its decision is the module beside it,
# cloud_contract_decide.so, loaded only with --cloud-contract, which is as
# lean and exports its one entry point.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
# BURST_SPANK_SO / BURST_SPANK_ADMISSION_SO: the two plugins (default: the
# build tree's); the decision module is the one beside BURST_SPANK_SO
so_contract=${BURST_SPANK_SO:-$build/plugins/spank/.libs/spank_cloud_contract.so}
so_decide=$(dirname "$so_contract")/cloud_contract_decide.so
so_admission=${BURST_SPANK_ADMISSION_SO:-$build/plugins/spank/.libs/spank_burst_admission.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"

check_plugin() {   # SO KIND (contract|admission|decide)
	local so=$1 kind=$2
	echo "# == $so"
	[ -f "$so" ] || bail "no plugin at $so (build it first, or set BURST_SPANK_SO / BURST_SPANK_ADMISSION_SO)"

	readelf -d "$so" >"$tmp/dyn" 2>&1
	ok $? "readelf -d $so"
	sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' "$tmp/dyn" | sort >"$tmp/needed"
	grep -v -x -e 'libc\.so\.[0-9]*' "$tmp/needed" >"$tmp/extra"
	[ ! -s "$tmp/extra" ]
	ok $? "it needs only libc (extra: $(tr '\n' ' ' <"$tmp/extra"))" "$tmp/needed"

	# what would load with it, transitively
	ldd "$so" >"$tmp/ldd" 2>&1
	ok $? "ldd $so" "$tmp/ldd"
	for lib in libcurl libxml2 libsqlite3 libssl libcrypto libjson-c libgnutls libkrb5 libldap; do
		! grep -q "^[[:space:]]*$lib[.-]" "$tmp/ldd"
		ok $? "ldd shows no $lib" "$tmp/ldd"
	done

	# none of the agent's code inside (the symbol table, hidden ones too; a
	# packaged, stripped plugin has none: BURST_SPANK_STRIPPED=1 leaves these
	# to the build tree's run)
	if [ -z "${BURST_SPANK_STRIPPED:-}" ]; then
	nm "$so" >"$tmp/syms" 2>&1
	ok $? "nm $so" "$tmp/syms"
	grep -E ' (ec2_|sigv4_|aws_creds_|state_|spool_|attest_|provenance_|acceptance_|policy_check|catalog_refresh_|proc_)' \
		"$tmp/syms" >"$tmp/agent"
	[ ! -s "$tmp/agent" ]
	ok $? "no EC2, state, spool, attestation, provenance or acceptance code in it" "$tmp/agent"
	# what it must still have: the submit-time decision and the burst.conf reader
	if [ "$kind" = decide ]; then
		grep -q ' burst_decide_dir$' "$tmp/syms" && grep -q ' config_load$' "$tmp/syms"
		ok $? "it holds burst_decide_dir and config_load" "$tmp/syms"
	elif [ "$kind" = contract ]; then
		! grep -E ' (burst_|config_|catalog_|contract_parse|conf_)' "$tmp/syms" >"$tmp/core"
		ok $? "it holds nothing of libburst (no decision, burst.conf or catalog code)" "$tmp/core"
	else
		grep -q ' config_load$' "$tmp/syms" && ! grep -q ' burst_decide' "$tmp/syms"
		ok $? "it holds config_load, not the submit-time decision" "$tmp/syms"
	fi
	fi

	# exported: Slurm's entry points (the hooks, a plugin's init and fini),
	# nothing of ours that could clash with Slurm's
	nm -D --defined-only "$so" | awk '{print $3}' | sort >"$tmp/exports"
	if [ "$kind" = decide ]; then
		[ "$(cat "$tmp/exports")" = cloud_contract_decide_v1 ]
		ok $? "it exports cloud_contract_decide_v1 only" "$tmp/exports"
		return
	fi
	grep -v -x -e 'slurm_spank_[a-z_]*' -e 'plugin_name' -e 'plugin_type' -e 'plugin_version' \
		-e 'spank_plugin_version' -e init -e fini "$tmp/exports" >"$tmp/extra_exports"
	[ ! -s "$tmp/extra_exports" ]
	ok $? "it exports only slurm_spank_*, init, fini and the plugin's identity" "$tmp/extra_exports"
	# a job prolog costs every job on every node that loads it a slurmstepd:
	# only the admission plugin, loaded on burst nodes only, has one
	if [ "$kind" = contract ]; then
		grep -q -x slurm_spank_init "$tmp/exports" && ! grep -q -x slurm_spank_job_prolog "$tmp/exports"
		ok $? "it exports slurm_spank_init and no slurm_spank_job_prolog" "$tmp/exports"
		# every other symbol Slurm looks up when it loads a plugin is there:
		# each missing one costs every sbatch/srun a failed dlsym
		missing=
		for s in init fini slurm_spank_init slurm_spank_init_post_opt slurm_spank_local_user_init \
			slurm_spank_user_init slurm_spank_task_init_privileged slurm_spank_task_init \
			slurm_spank_task_post_fork slurm_spank_task_exit slurm_spank_slurmd_exit slurm_spank_exit; do
			grep -q -x "$s" "$tmp/exports" || missing="$missing $s"
		done
		[ -z "$missing" ]
		ok $? "it has every hook Slurm looks up but the job prolog and epilog (missing:$missing)"
	else
		grep -q -x slurm_spank_job_prolog "$tmp/exports" && ! grep -q -x slurm_spank_init "$tmp/exports"
		ok $? "it exports slurm_spank_job_prolog (and no option: no slurm_spank_init)" "$tmp/exports"
	fi

}
check_plugin "$so_contract" contract
check_plugin "$so_decide" decide
check_plugin "$so_admission" admission

done_testing
