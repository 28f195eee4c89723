/*
 * spool.h - the durable hand-off between the power-save programs and the
 * burst agent. A request is a JSON file written atomically (temporary file,
 * fsync, rename, fsync of the directory) into StateDir/spool, named so that
 * names sort in arrival order. The agent records each in its database and
 * only then removes it: a request survives a crash or absence of either side.
 */
#ifndef BURST_SPOOL_H
#define BURST_SPOOL_H

#include <stddef.h>
#include <sys/types.h>
#include "burst_err.h"
#include "hostlist.h"

/*
 * Write text as a new request of kind ("resume", "suspend", "resume-fail")
 * into dir, creating dir (mode 0700) if needed. On success the new file's
 * name (without the directory) is copied into name (namelen bytes) if name
 * is not NULL. Returns 0, or -1 with err naming the file and the error.
 */
int spool_write(const char *dir, const char *kind, const char *text,
		char *name, size_t namelen, burst_err_t *err);

/*
 * The request files in dir in arrival order: a NULL-terminated array of
 * names (not paths) that the caller frees with spool_list_free. A missing
 * directory is an empty list. Returns NULL with err on another error.
 */
char **spool_list(const char *dir, burst_err_t *err);
void spool_list_free(char **names);

#define SPOOL_MAX_REQUEST (4 << 20)   /* bytes of one request file */
#define SPOOL_MAX_NODES (1 << 20)     /* nodes one request may name */

/*
 * The text of request name in dir (NUL-terminated, caller frees; its length
 * in *len if len is not NULL), read only if it is a regular file owned by
 * root or by owner and of at most max bytes: it is opened with O_NOFOLLOW
 * and O_NONBLOCK, so a symbolic link (to /dev/zero, say) or a FIFO is
 * refused at once rather than read without end or waited on. Returns NULL
 * with err saying which file and why.
 */
char *spool_read(const char *dir, const char *name, uid_t owner, size_t max, size_t *len,
		 burst_err_t *err);

/* A request's text is made and read by lib/core/wire.h (wire_spool_encode,
 * wire_spool_decode): this module only moves it. */

/* Tell a running agent (its control socket sock_path) to look at its
 * spool now: at most 200 ms; harmless if it is down. */
void spool_poke(const char *sock_path);

#endif
