/*
 * resume_file.h - Slurm's SLURM_RESUME_FILE (the jobs a resume is for), in
 * the format of each release, and the normalized form the power-save
 * program puts into its spool request for the agent.
 *
 * Slurm 22.05 (src/slurmctld/power_save.c) writes
 *   {"jobs":[{"job_id":N,"nodes":"HOSTLIST"}],"all_nodes":"HOSTLIST"}
 * and 23.02 through 25.05
 *   {"jobs":[{"extra":S,"job_id":N,"features":S,"nodes_alloc":S,
 *     "nodes_resume":S,"oversubscribe":S,"partition":S,"reservation":S}],
 *    "all_nodes_resume":"HOSTLIST"}
 * where a string Slurm does not have is null, nodes_resume is the job's
 * nodes resumed this time (empty when ResumeRate held them all back) and
 * several jobs may name the same node (shared nodes).
 */
#ifndef BURST_RESUME_FILE_H
#define BURST_RESUME_FILE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "burst_err.h"

/*
 * The jobs of a resume file's text, normalized: a new array of
 * {"job_id":N,"nodes":"HOSTLIST"} (nodes: 22.05's "nodes", later releases'
 * "nodes_resume"), leaving out entries without a positive job id or with
 * no nodes. NULL with err when text is not a JSON object or its "jobs" is
 * there but not an array.
 */
json_object *resume_file_jobs(const char *text, burst_err_t *err);

/* The first job of normalized jobs (as above) whose nodes include node;
 * 0 if none (a node resumed for no job, or jobs not an array). One call
 * expands every job's host list: for many nodes, use resume_jobs_index. */
uint32_t resume_job_of(json_object *jobs, const char *node);

/*
 * The same answer for every node at once: the jobs of a request (wire.h's
 * struct wire_job, n of them) expanded once into a table node -> first job
 * (a resume of n nodes for m jobs costs their host lists' length, not n
 * times it). resume_jobs_index never fails; free it with resume_jobs_free.
 */
struct wire_job;
struct resume_jobs;
struct resume_jobs *resume_jobs_index(const struct wire_job *jobs, size_t n);
/* The same, the host lists of all jobs together expanding to at most
 * max_names names (resume_jobs_index: 1 << 20): a job whose list would
 * pass that, and every one after it that would, is left out (its nodes
 * have no job), so that a list of many huge jobs costs no more than one. */
struct resume_jobs *resume_jobs_index_max(const struct wire_job *jobs, size_t n, size_t max_names);
uint32_t resume_jobs_of(const struct resume_jobs *ix, const char *node);
void resume_jobs_free(struct resume_jobs *ix);

#endif
