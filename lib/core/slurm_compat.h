/*
 * slurm_compat.h - every difference between the Slurm releases slurm-burst
 * builds against (22.05 through 25.05), in one place.
 *
 * Code that talks to Slurm includes this header instead of testing
 * SLURM_VERSION_NUMBER itself. configure refuses a Slurm older than 22.05;
 * doc/admin-guide.md ("Slurm releases") has the table of what differs.
 *
 * A program or plugin linked against libslurm works only with the Slurm
 * major release whose headers it was built against: libslurm's SONAME
 * changes with each release and the SPANK loader refuses a plugin built
 * for another one.
 */
#ifndef BURST_SLURM_COMPAT_H
#define BURST_SLURM_COMPAT_H

#include <errno.h>
#include <slurm/slurm_version.h>

/* true when building against Slurm MAJOR.MINOR or later */
#define BURST_SLURM_AT_LEAST(major, minor) \
	(SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0))

#if !BURST_SLURM_AT_LEAST(22, 5)
#error "slurm-burst needs Slurm 22.05 or later (slurm/slurm_version.h is older)"
#endif

/* "22.05.8": the Slurm release these headers are from (set by configure) */
#ifndef BURST_SLURM_VERSION
#define BURST_SLURM_VERSION "unknown"
#endif

/*
 * slurm_conf_t.accounting_storage_enforce's bit for "associations"
 * (ACCOUNTING_ENFORCE_ASSOCS, bit 0, in src/common/read_config.h of 22.05
 * and 24.11; not in the public headers): set when slurmctld holds a job's
 * account to its user's associations. The other bits in order: limits,
 * wckeys, qos, safe, nojobs, nosteps.
 */
#define BURST_ENFORCE_ASSOCS 0x0001u

/*
 * The error of the last failed libslurm call. slurm_get_errno() is gone in
 * 24.11; it only ever returned errno, which every release sets.
 */
#define burst_slurm_errno() (errno)

/*
 * slurm.conf keys that changed meaning (see burstctl slurm-conf):
 * - SlurmctldParameters=cloud_reg_addrs and CommunicationParameters=
 *   NoAddrCache are defunct since 23.11 (slurmctld logs an error); before,
 *   they make slurmctld take a cloud node's address from its registration.
 * - PrivateData=cloud: cloud nodes are shown by default since 23.02; before,
 *   powered-down cloud nodes are hidden from sinfo without it.
 */
#define BURST_SLURM_HAS_CLOUD_REG_ADDRS (!BURST_SLURM_AT_LEAST(23, 11))
#define BURST_SLURM_NEEDS_PRIVATEDATA_CLOUD (!BURST_SLURM_AT_LEAST(23, 2))

/*
 * Power saving: since 23.02 ResumeProgram and SuspendProgram run under
 * slurmscriptd with only SLURM_CONF and SLURM_RESUME_FILE in their
 * environment, and the resume file is {"all_nodes_resume", "jobs":
 * [{"job_id", "nodes_resume", "extra", "features", ...}]}; 22.05 writes
 * {"all_nodes", "jobs": [{"job_id", "nodes"}]}.
 */
#define BURST_SLURM_SCRIPTD_POWER_SAVE BURST_SLURM_AT_LEAST(23, 2)

/*
 * The registration stall of 22.05 (fixed in 23.11.1): `slurmd -b` reports
 * its uptime in whole seconds that tick at the host's boot-time phase, and
 * slurmctld ignores the registration of a POWERING_UP node whose
 * boot_time = now - uptime falls before the whole second in which the
 * power-save scan asked for the node (node_mgr.c waiting_for_node_boot).
 * slurmd got a success reply, so it never registers again: the node waits
 * for ResumeTimeout. A slurmd started in a later whole second than the
 * resume request cannot stall, nor can one that registers before its boot
 * clock ticks (its uptime is then 0), so on these releases the agent tells
 * a node both: the first second its slurmd may start in, and the safe
 * window of its boot clock's second (lib/admit/slurmd_start.h).
 */
#define BURST_SLURMD_SAME_SECOND_STALL (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(23, 11, 1))

/*
 * What `slurmd -b` reports as its boot time (slurmctld: now - up_time):
 * before 23.11.1 whole sysinfo() uptime seconds counted from its start,
 * which tick at the host's boot-clock phase (get_mach_stat.c get_up_time);
 * from 23.11.1 on, its start's wall-clock second (time(NULL)). A node
 * launched at allocation starts slurmd early enough in a second of that
 * clock that its registration is handled before the clock's next tick
 * (doc/compat.md, "Launch at allocation").
 */
#define BURST_SLURMD_BOOT_CLOCK_UPTIME BURST_SLURMD_SAME_SECOND_STALL

#endif
