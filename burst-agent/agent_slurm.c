/*
 * burst-agent: the Slurm adapter. What the agent tells slurmctld (node
 * addresses and states, jobs let go on) and what it reads there (its
 * settings, registrations, jobs held by the prolog, jobs on a node).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>

#include "agent_int.h"
#include "hostlist.h"
#include "proc.h"
#include "slurm_compat.h"
#include "strutil.h"

#define REGISTER_TIMEOUT_S 5      /* admitted to registered in Slurm (it takes ~0.1 s) */

/*
 * What the agent takes from Slurm's configuration: SlurmUser (who, besides
 * root, may use the control socket and writes the spool) and, unless
 * burst.conf gives MungeSocket=, the munged of AuthInfo=socket=PATH. -1 if
 * slurmctld could not be asked (then only root is let in).
 */
int slurm_settings(void)
{
	slurm_conf_t *sc = NULL;

	A.slurm_uid = 0;
	if (A.cfg->munge_socket)
		snprintf(A.munge_socket, sizeof(A.munge_socket), "%s", A.cfg->munge_socket);
	if (slurm_load_ctl_conf((time_t)0, &sc) != SLURM_SUCCESS) {
		ERR("cannot read Slurm's configuration (%s): only root may use the control socket",
		    slurm_strerror(burst_slurm_errno()));
		return -1;
	}
	{
		const char *so = sc->authinfo ? strstr(sc->authinfo, "socket=") : NULL;
		/* the same munged as Slurm's: AuthInfo=socket=PATH */
		if (so && !A.munge_socket[0])
			snprintf(A.munge_socket, sizeof(A.munge_socket), "%.*s", (int)strcspn(so + 7, ","), so + 7);
	}
	A.slurm_uid = sc->slurm_user_id;
	slurm_free_ctl_conf(sc);
	return 0;
}

/* Let a job Slurm requeued start at once: clear the BeginTime it was given. */
bool slurm_job_begin_now(uint32_t job)
{
	job_desc_msg_t upd;

	slurm_init_job_desc_msg(&upd);
	upd.job_id = job;
	upd.begin_time = time(NULL);
	return slurm_update_job(&upd) == SLURM_SUCCESS;
}

/* Tell Slurm: the node's address, or DOWN with a reason, or power it down. */
void slurm_node(const char *name, const char *addr, uint32_t state, const char *reason)
{
	update_node_msg_t m;

	lease_check();
	slurm_init_update_node_msg(&m);
	m.node_names = (char *)name;
	if (addr) {
		m.node_addr = (char *)addr;
		m.node_hostname = (char *)name;
	}
	if (state != NO_VAL)
		m.node_state = state;
	if (reason) {
		m.reason = (char *)reason;
		m.reason_uid = 0;
	}
	if (slurm_update_node(&m) != SLURM_SUCCESS)
		ERR("%s: slurm_update_node: %s", name, slurm_strerror(burst_slurm_errno()));
}

/*
 * An admitted node whose slurmd has not registered with slurmctld within
 * RegisterTimeout is launched again, as a new instance, while Slurm still
 * waits for it (its ResumeTimeout is longer): rarely, a slurmd started
 * right after its node was resumed is never taken in by slurmctld 22.05,
 * and the job would wait for ResumeTimeout and then be requeued. A node
 * whose slurmd never comes up is launched again a few times, each after a
 * longer wait, and then goes DOWN (slurmd_failed, agent_boot.c).
 */
void registration_check(void)
{
	static double last;
	burst_err_t err;
	char **names;
	size_t i;

	if (now() - last < 2.0)
		return;
	last = now();
	names = state_nodes_in(A.db, NS_ADMITTED, &err);
	for (i = 0; names && names[i]; i++) {
		struct bnode *ni = node_find(names[i]);
		node_info_msg_t *m = NULL;
		struct node_rec r;
		uint32_t st;

		memset(&r, 0, sizeof(r));
		if (!ni || ni->registered || state_node_get(A.db, names[i], &r, &err) != 1 ||
		    now() - r.since < REGISTER_TIMEOUT_S ||
		    slurm_load_node_single(&m, (char *)names[i], SHOW_ALL) != SLURM_SUCCESS || !m->record_count) {
			slurm_free_node_info_msg(m);
			state_node_clear(&r);
			continue;
		}
		st = m->node_array[0].node_state;
		if (!(st & (NODE_STATE_POWERING_UP | NODE_STATE_NO_RESPOND | NODE_STATE_POWERED_DOWN))) {
			ni->registered = true;
			if (r.failures) {
				r.failures = 0;
				transition(names[i], NS_ADMITTED, &r, NS_ADMITTED, "slurmd registered");
			}
		} else if (st & NODE_STATE_POWERING_UP) {
			char why[300];
			snprintf(why, sizeof(why), "slurmd of %s did not register within %d s",
				 r.instance ? r.instance : "?", REGISTER_TIMEOUT_S);
			slurmd_failed(names[i], &r, why);
		}
		slurm_free_node_info_msg(m);
		state_node_clear(&r);
	}
	state_names_free(names);
}

/*
 * Jobs that the SPANK job prolog held because their node was not admitted
 * (admin comment "burst: refused on NODE: why"): not the user's fault, so
 * they are released, and the node goes through the failure path.
 */
void release_refused_jobs(void)
{
	static time_t last_update;
	static double last_check;
	job_info_msg_t *msg = NULL;
	uint32_t i;

	if (now() - last_check < 1.0)
		return;
	last_check = now();
	if (slurm_load_jobs(last_update, &msg, SHOW_ALL) != SLURM_SUCCESS)
		return;   /* SLURM_NO_CHANGE_IN_DATA, or slurmctld away: next time */
	last_update = msg->last_update;
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		const char *c = j->admin_comment, *p = "burst: refused on ";
		char node[256], idbuf[32], out[256], errbuf[512];
		struct node_rec r;
		burst_err_t err;
		job_desc_msg_t upd;
		size_t l;

		if (c && !strncmp(c, "burst: job refused on ", 22) && (j->job_state & JOB_STATE_BASE) == JOB_PENDING &&
		    j->priority == 0) {
			/* the job's own doing (its contract does not allow the node's
			 * node set): it stays held; the node, drained by Slurm for the
			 * failed prolog, is healthy and goes back to work */
			char note[1200];
			l = strcspn(c + 22, ":");
			snprintf(node, sizeof(node), "%.*s", (int)l, c + 22);
			INFO("job %u refused by %s for itself (%s): left held; %s is resumed, not failed", j->job_id, node, c, node);
			snprintf(note, sizeof(note), "burst: held: %.1100s", c + 7);
			slurm_init_job_desc_msg(&upd);
			upd.job_id = j->job_id;
			upd.admin_comment = note;
			if (slurm_update_job(&upd) != SLURM_SUCCESS)
				ERR("job %u: cannot update its admin comment: %s", j->job_id, slurm_strerror(burst_slurm_errno()));
			if (node_find(node))
				slurm_node(node, NULL, NODE_RESUME, NULL);
			continue;
		}
		if (!c || strncmp(c, p, strlen(p)) || (j->job_state & JOB_STATE_BASE) != JOB_PENDING ||
		    j->priority != 0)
			continue;
		l = strcspn(c + strlen(p), ":");
		snprintf(node, sizeof(node), "%.*s", (int)l, c + strlen(p));
		snprintf(idbuf, sizeof(idbuf), "%u", j->job_id);
		INFO("job %u was held because %s refused it (%s): releasing it", j->job_id, node, c);
		slurm_init_job_desc_msg(&upd);
		upd.job_id = j->job_id;
		upd.admin_comment = (char *)"burst: released after a refusal on a node that was not admitted";
		if (slurm_update_job(&upd) != SLURM_SUCCESS)
			ERR("job %u: cannot update its admin comment: %s", j->job_id, slurm_strerror(burst_slurm_errno()));
		{
			char *argv[] = { (char *)"/usr/bin/scontrol", (char *)"release", idbuf, NULL };
			if (proc_run(argv, out, sizeof(out), errbuf, sizeof(errbuf)) != 0)
				ERR("job %u: scontrol release failed: %s", j->job_id, errbuf);
		}
		memset(&r, 0, sizeof(r));
		if (node_find(node) && state_node_get(A.db, node, &r, &err) == 1 &&
		    r.state != NS_POWERED_DOWN && r.state != NS_TERMINATING) {
			char why[700];
			snprintf(why, sizeof(why), "job prolog refused job %u: %.600s", j->job_id, c);
			fail_node(node, r.state, &r, NS_TERMINATING, why);
		}
		state_node_clear(&r);
	}
	slurm_free_job_info_msg(msg);
}

/* The running jobs on node (ids into *ids, a new array the caller frees); their count. */
size_t jobs_on(const char *node, uint32_t **ids)
{
	job_info_msg_t *msg = NULL;
	size_t n = 0;
	uint32_t i;

	*ids = NULL;
	if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		ERR("%s: cannot read Slurm's jobs: %s", node, slurm_strerror(burst_slurm_errno()));
		return 0;
	}
	for (i = 0; i < msg->record_count; i++) {
		slurm_job_info_t *j = &msg->job_array[i];
		struct hostlist hl = { NULL, 0, 0 };
		burst_err_t err;
		uint32_t st = j->job_state & JOB_STATE_BASE;

		if ((st != JOB_RUNNING && st != JOB_SUSPENDED) || !j->nodes ||
		    hostlist_expand(j->nodes, &hl, 1 << 20, &err) < 0)
			continue;
		if (hostlist_find(&hl, node) >= 0) {
			*ids = xrealloc(*ids, (n + 1) * sizeof(**ids));
			(*ids)[n++] = j->job_id;
		}
		hostlist_free(&hl);
	}
	slurm_free_job_info_msg(msg);
	return n;
}

/*
 * The contract job was submitted with. job_submit.lua records it in the
 * job's admin comment ("burst: contract=" and the contract's name, or its
 * expression for an inline one), which only Slurm's administrators and
 * job_submit.lua can set: a job's owner cannot change it (unlike the job's
 * comment or --extra). Read by job id on every Slurm release: 22.05's
 * resume file has nothing else, and later ones' "extra" is the user's.
 * Returns a new string, or NULL with why saying why not (slurmctld does not
 * answer, no such job, not a contract job).
 */
char *slurm_job_contract(uint32_t job, char *why, size_t len)
{
	static const char tag[] = "burst: contract=";
	job_info_msg_t *msg = NULL;
	const char *c;
	char *out = NULL;

	if (slurm_load_job(&msg, job, SHOW_ALL) != SLURM_SUCCESS) {
		snprintf(why, len, "cannot read the job from slurmctld: %s", slurm_strerror(burst_slurm_errno()));
		return NULL;
	}
	if (!msg->record_count) {
		snprintf(why, len, "slurmctld has no such job");
		slurm_free_job_info_msg(msg);
		return NULL;
	}
	c = msg->job_array[0].admin_comment;
	if (c && !strncmp(c, tag, sizeof(tag) - 1) && c[sizeof(tag) - 1])
		out = xstrdup(c + sizeof(tag) - 1);
	else {
		char *e = str_escape_ctl(c ? c : "none: not submitted with --cloud-contract");
		snprintf(why, len, "no contract in its admin comment (%s%.200s%s)", c ? "\"" : "", e, c ? "\"" : "");
		free(e);
	}
	slurm_free_job_info_msg(msg);
	return out;
}
