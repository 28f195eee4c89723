#!/usr/bin/env bash
# tests/cli/budget_accounts.sh - burstctl check-config holds a budget by
# account (Budget= ... Account=) to Slurm's association enforcement, read
# from slurm.conf as slurmctld reads it (TAP): without
# AccountingStorageEnforce=associations (or a word implying it) and
# slurmdbd, a user escapes the budget with sbatch --account=other, so the
# budget is refused with its file:line, slurm.conf's setting and the way
# out; BudgetAccountTrust=unenforced accepts the risk with a loud warning;
# no slurmdbd at all is refused either way. slurm.conf's Include lines,
# last-value-wins, comments and continuation lines are followed; a budget
# without Account= never needs slurm.conf.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
B="$build/burstctl/burstctl"
export BURST_CATALOG_DIR="$src/share/catalog"
unset BURST_CONF
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"
TAP_DIAG="$tmp/out $tmp/err"

mkdir "$tmp/etc"
conf="$tmp/etc/burst.conf"
# conf LINE...: the example burst.conf and these lines
mkconf() { { cat "$src/etc/burst.conf.example"; printf '%s\n' "$@"; } >"$conf"; }
# sc LINE...: the slurm.conf slurmctld would read
sc() { printf '%s\n' "ClusterName=c1" "SlurmctldHost=head" "$@" "NodeName=n1" "PartitionName=p Nodes=n1" >"$tmp/etc/slurm.conf"; }
check() { SLURM_CONF="$tmp/etc/slurm.conf" "$B" check-config "$conf" >"$tmp/out" 2>"$tmp/err"; }
DBD=AccountingStorageType=accounting_storage/slurmdbd

mkconf "Budget=teama Amount=100 Period=month Account=teama"
line=$(wc -l <"$conf")
sc "$DBD"
check; rc=$?
[ $rc = 2 ] && grep -q "^$conf:$line: Budget teama: Account=teama counts the jobs of a Slurm account, which the user chooses (sbatch --account): $tmp/etc/slurm.conf has AccountingStorageEnforce=none, AccountingStorageType=accounting_storage/slurmdbd, so slurmctld does not hold a job's account to its user's associations and a user escapes the budget by naming another account. Set AccountingStorageEnforce=associations (or limits, qos, safe; slurmctld restarted), or accept the risk with BudgetAccountTrust=unenforced" "$tmp/err" &&
	grep -q "1 problem" "$tmp/err"
ok $? "a budget by account without association enforcement is refused (exit $rc), with file:line, slurm.conf's setting and the way out"

for e in associations limits qos safe wckeys all 'nojobs,associations' '"associations,limits"'; do
	sc "$DBD" "AccountingStorageEnforce=$e"
	check
	ok $? "AccountingStorageEnforce=$e holds accounts to associations: accepted"
done
! grep -qi warning "$tmp/err"; ok $? "... without a warning"

sc "$DBD" "AccountingStorageEnforce=nojobs"
check; [ $? = 2 ] && grep -q "has AccountingStorageEnforce=nojobs" "$tmp/err"
ok $? "AccountingStorageEnforce=nojobs enforces no association: refused"
sc "$DBD" "AccountingStorageEnforce=associations,assocs"
check; [ $? = 2 ] && grep -q "has AccountingStorageEnforce=associations,assocs" "$tmp/err"
ok $? "a word slurmctld refuses (then it enforces nothing): refused"
sc "AccountingStorageType=accounting_storage/none" "AccountingStorageEnforce=associations"
check; [ $? = 2 ] && grep -q "Budget teama: Account=teama counts the jobs of a Slurm account, and $tmp/etc/slurm.conf has AccountingStorageEnforce=associations, AccountingStorageType=accounting_storage/none: without slurmdbd an account is whatever the user types" "$tmp/err"
ok $? "enforcement without slurmdbd is none (slurmctld turns it off): refused, saying so"

# slurm.conf as slurmctld reads it
sc "$DBD" "AccountingStorageEnforce=associations" "AccountingStorageEnforce=nojobs"
check; [ $? = 2 ]; ok $? "the last AccountingStorageEnforce= wins"
sc "$DBD" "AccountingStorageEnforce=nojobs # associations"
check; [ $? = 2 ]; ok $? "a comment is no value"
sc "$DBD" "SlurmctldPort=6817 \\" "  AccountingStorageEnforce=associations"
check; ok $? "a continued line's keys are read"
sc "$DBD" "NodeName=x AccountingStorageEnforce=associations"
check; [ $? = 2 ]; ok $? "a NodeName line's words are the node's"
mkdir "$tmp/etc/conf.d"
echo "AccountingStorageEnforce=limits" >"$tmp/etc/conf.d/accounting.conf"
sc "$DBD" "include conf.d/accounting.conf"
check; ok $? "an Include (relative to slurm.conf) is read" "$tmp/out" "$tmp/err"
echo "AccountingStorageEnforce=qos" >"$tmp/etc/c1.conf"
sc "$DBD" "Include %c.conf"
check; ok $? "... its %c is the ClusterName"
sc "$DBD" "Include conf.d/missing.conf"
check; [ $? = 2 ] && grep -q "whether Slurm enforces associations is unknown: cannot read $tmp/etc/conf.d/missing.conf: No such file or directory" "$tmp/err"
ok $? "an Include that cannot be read: unknown, refused, naming the file"
rm "$tmp/etc/slurm.conf"
check; [ $? = 2 ] && grep -q "unknown: cannot read $tmp/etc/slurm.conf" "$tmp/err"
ok $? "no slurm.conf: refused, naming it"
sc "$DBD" "AccountingStorageEnforce=associations"
(unset SLURM_CONF; "$B" check-config "$conf" >"$tmp/out" 2>"$tmp/err")
ok $? "without SLURM_CONF, the slurm.conf beside burst.conf is read"

# the risk accepted
mkconf "Budget=teama Amount=100 Period=month Account=teama" "BudgetAccountTrust=unenforced"
sc "$DBD"
check; rc=$?
[ $rc = 0 ] && grep -q "^burstctl: warning: $conf:$line: Budget teama: Account=teama: WARNING: Slurm does not enforce associations ($tmp/etc/slurm.conf has AccountingStorageEnforce=none, AccountingStorageType=accounting_storage/slurmdbd): a job's account is what its user typed. BudgetAccountTrust=unenforced accepts that: the agent checks each job's account against slurmdbd's associations before it launches for it" "$tmp/err"
ok $? "BudgetAccountTrust=unenforced accepts it (exit $rc), with a loud warning"
sc "AccountingStorageType=accounting_storage/none"
check; [ $? = 2 ] && grep -q "without slurmdbd an account is whatever the user types" "$tmp/err"
ok $? "... but not without slurmdbd: there is no association to check an account against"
mkconf "Budget=teama Amount=100 Period=month Account=teama" "BudgetAccountTrust=maybe"
check; [ $? = 2 ] && grep -q "BudgetAccountTrust is enforced (the default: Account= budgets need Slurm's AccountingStorageEnforce=associations) or unenforced (the risk accepted), not 'maybe'" "$tmp/err"
ok $? "BudgetAccountTrust=maybe is an error"

# no budget by account: slurm.conf does not matter
mkconf "Budget=gpu Amount=100 Period=month NodeSet=gpu4"
rm "$tmp/etc/slurm.conf"
check; ok $? "a budget by node set needs no slurm.conf"
done_testing
