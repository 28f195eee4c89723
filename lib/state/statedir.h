/*
 * statedir.h - StateDir is the agent's own, checked before it is used.
 *
 * Whoever can write StateDir, or a file in it, can make the agent believe
 * what they like: a pre-made agent.db (or its -wal) is read and written as
 * the agent's state, a link where the spool is sends the agent's renames
 * elsewhere, local-image/ is the program every local instance runs as
 * root. So before the agent (or burstctl) uses it: StateDir, the
 * directories above it, and each file and directory the agent keeps in it
 * are owned by root or by the user checking (the agent's, burstctl's), and
 * no one else may write them; where a file or directory is expected, a
 * symbolic link is refused. A directory above StateDir others may write is
 * allowed only when sticky (/tmp, /var/tmp): then they cannot rename what
 * is not theirs.
 */
#ifndef BURST_STATEDIR_H
#define BURST_STATEDIR_H

#include <sys/types.h>
#include "burst_err.h"

/* what statedir_check looks at */
#define STATEDIR_AGENT 1u   /* all the agent keeps (spool/, nodes/ and each node's
			     * directory, local-image/, the policy files, the
			     * batch journals); else what a reader relies on:
			     * the directories and the database files */

/* spool/'s owner is not checked (SlurmUser not known yet) */
#define STATEDIR_ANY_OWNER ((uid_t)-1)

/*
 * Check StateDir dir for a process of uid (root, uid 0, is always trusted
 * too). spool_uid: who else may own spool/ (SlurmUser, which writes it), or
 * STATEDIR_ANY_OWNER. Things that do not exist yet are fine (the agent
 * makes them). 0, or -1 with err: the path, what it is (type, owner, mode),
 * why that matters and the command that fixes it.
 */
int statedir_check(const char *dir, uid_t uid, uid_t spool_uid, unsigned flags, burst_err_t *err);

/* The spool directory alone, its owner root, uid or spool_uid (once
 * SlurmUser is known). 0, or -1 with err as above. */
int statedir_check_spool(const char *spool, uid_t uid, uid_t spool_uid, burst_err_t *err);

#endif
