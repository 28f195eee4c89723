/*
 * burst_powersave.c - burst-resume, burst-suspend and burst-resume-fail:
 * Slurm's ResumeProgram, SuspendProgram and ResumeFailProgram.
 *
 * slurmctld runs them with a host list argument, SLURM_CONF (and for resume
 * SLURM_RESUME_FILE) in an otherwise empty environment, file descriptors
 * 0-2 closed and most signals blocked, and waits on their output pipe. So
 * each one: reopens 0-2 on /dev/null, reads its input, writes the request
 * durably into the agent's spool (lib/state/spool.h), pokes the agent's socket if
 * the agent is up, and exits: nothing blocks slurmctld, nothing is lost
 * when the agent is down. Nothing is left running: since 23.02 slurmscriptd
 * kills the program's process group once it exits.
 *
 * Messages go to stderr, which slurmctld logs (since 23.02 only with
 * DebugFlags=Script), and to syslog (daemon facility); the warnings of a
 * request that is spooled also travel in it ("diagnostics"), and the agent
 * logs them when it takes the request.
 *
 * Built three times with BURST_ROLE = "resume", "suspend", "resume-fail".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "config.h"
#include "hostlist.h"
#include "proc.h"
#include "resume_file.h"
#include "spool.h"
#include "strutil.h"
#include "wire.h"

#ifndef BURST_ROLE
#error "BURST_ROLE must be defined"
#endif

#define PROG "burst-" BURST_ROLE
#define MAX_RESUME_FILE (16 << 20)

/* the request; its diagnostics go to the agent's log (keep_diag false:
 * nothing spooled, nothing more to add) */
static struct wire_spool req = { .count = -1 };
static bool keep_diag = true;

/*
 * A message: to stderr (Slurm's script log), syslog and, for a warning of a
 * request that is spooled, the agent's log. fmt has no PROG prefix and no
 * newline.
 */
static void __attribute__((format(printf, 2, 3))) diag(int prio, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, PROG ": %s\n", msg);
	syslog(prio, "%s", msg);
	if (keep_diag)
		wire_spool_add_diagnostic(&req, msg);
}

/*
 * The jobs of SLURM_RESUME_FILE, normalized (lib/state/resume_file.h: 22.05's
 * format and that of 23.02 on): [{"job_id":N,"nodes":"..."}]. It is a
 * memfd that vanishes when we exit: read it first. An unusable file gives
 * no jobs, with a warning (the nodes are still resumed).
 */
static json_object *read_resume_file(void)
{
	const char *path = getenv("SLURM_RESUME_FILE");
	json_object *jobs;
	burst_err_t err;
	char *buf;
	size_t n = 0;
	ssize_t r;
	int fd;

	if (!path || !*path)
		return json_object_new_array();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		diag(LOG_WARNING, "warning: cannot read SLURM_RESUME_FILE %s: %s (the nodes are resumed without job details)",
		     path, strerror(errno));
		return json_object_new_array();
	}
	buf = xmalloc(MAX_RESUME_FILE + 1);
	while (n < MAX_RESUME_FILE && (r = read(fd, buf + n, MAX_RESUME_FILE - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	jobs = resume_file_jobs(buf, &err);
	if (!jobs) {
		diag(LOG_WARNING, "warning: SLURM_RESUME_FILE %s: %s (the nodes are resumed without job details)",
		     path, err.msg);
		jobs = json_object_new_array();
	}
	free(buf);
	return jobs;
}

int main(int argc, char **argv)
{
	const char *conf_path;
	struct burst_config *cfg;
	struct hostlist hl = { NULL, 0, 0 };
	burst_err_t err;
	json_object *rf = NULL;
	char spooldir[4096], name[256], *text;
	const char *state_dir, *sock_path;
	struct timespec ts;
	int rc = 1;

	proc_reopen_stdio();
	proc_reset_signals();
	openlog(PROG, LOG_PID, LOG_DAEMON);
	if (argc != 2 || !argv[1][0]) {
		fprintf(stderr, "usage: " PROG " HOSTLIST (run by slurmctld as %s)\n",
			!strcmp(BURST_ROLE, "resume") ? "ResumeProgram" :
			!strcmp(BURST_ROLE, "suspend") ? "SuspendProgram" : "ResumeFailProgram");
		return 2;
	}
	if (hostlist_expand(argv[1], &hl, 1 << 20, &err) < 0) {
		diag(LOG_ERR, "bad host list '%s' from slurmctld: %s", argv[1], err.msg);
		wire_spool_free(&req);
		return 2;
	}
	if (!strcmp(BURST_ROLE, "resume"))
		rf = read_resume_file();

	conf_path = config_default_path(NULL);
	cfg = config_load(conf_path, &err);
	if (cfg) {
		state_dir = cfg->state_dir;
		sock_path = cfg->socket_path;
	} else {
		/* never lose the request: spool where the agent also looks */
		diag(LOG_ERR, "error: %s; spooling %s for %s in %s anyway; fix %s (burstctl check-config)",
		     err.msg, BURST_ROLE, argv[1], BURST_DEFAULT_STATE_DIR, conf_path);
		state_dir = BURST_DEFAULT_STATE_DIR;
		sock_path = BURST_DEFAULT_STATE_DIR "/agent.sock";
	}
	snprintf(spooldir, sizeof(spooldir), "%s/spool", state_dir);

	clock_gettime(CLOCK_REALTIME, &ts);
	req.op = (enum wire_spool_op)wire_spool_op_from_name(BURST_ROLE);
	req.nodes = xstrdup(argv[1]);
	req.count = (long)hl.n;
	req.time = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	req.pid = (long)getpid();
	if (getenv("SLURM_JOB_ID"))
		req.slurm_job_id = (uint32_t)strtoul(getenv("SLURM_JOB_ID"), NULL, 10);
	wire_spool_add_jobs_json(&req, rf);
	text = wire_spool_encode(&req);

	if (spool_write(spooldir, BURST_ROLE, text, name, sizeof(name), &err) < 0) {
		keep_diag = false;   /* nothing spooled: syslog and Slurm's log only */
		diag(LOG_ERR, "error: %s: the %s request for %s is NOT recorded; Slurm will mark the nodes down after its timeout",
		     err.msg, BURST_ROLE, argv[1]);
		goto out;
	}
	spool_poke(sock_path);
	rc = 0;
out:
	free(text);
	wire_spool_free(&req);
	json_object_put(rf);
	hostlist_free(&hl);
	config_free(cfg);
	return rc;
}
