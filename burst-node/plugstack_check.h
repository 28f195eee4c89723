/*
 * plugstack_check.h - does this node load the admission plugin?
 *
 * spank_burst_admission.so is loaded only on burst nodes: plugstack.conf
 * includes the files of a node-local directory (the admin guide's
 * /etc/slurm-burst/plugstack.d, by a glob) where only burst node images
 * have a file with "required .../spank_burst_admission.so conf=...". A burst node
 * must have it, as a required plugin (Slurm ignores the failure of an
 * optional one): burst-node join checks, and the agent refuses a node that
 * does not.
 */
#ifndef BURST_PLUGSTACK_CHECK_H
#define BURST_PLUGSTACK_CHECK_H

#include <stddef.h>

#define ADMISSION_PLUGIN "spank_burst_admission.so"

/*
 * slurm_conf: slurm.conf's path (its PlugStackConfig= and PluginDir= are
 * honoured; plugstack.conf is otherwise beside it). plugin_dirs: where a
 * relative plugin name is looked for when slurm.conf has no PluginDir=
 * (colon-separated). Returns NULL when plugstack.conf loads the admission
 * plugin from a file that exists, else a message in why (what is wrong,
 * which file, what to do).
 */
const char *plugstack_admission_problem(const char *slurm_conf, const char *plugin_dirs,
					char *why, size_t len);

#endif
