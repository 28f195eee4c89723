/*
 * syncdir.h - a directory synced after a file was made or renamed in it, so
 * that the new name survives a crash (fsync of the file alone does not
 * write its directory entry).
 */
#ifndef BURST_SYNCDIR_H
#define BURST_SYNCDIR_H

/* fsync of the directory dir: 0, or -1 with errno. */
int sync_dir(const char *dir);

/* fsync of the directory that holds path ("." for a bare name, "/" for a
 * name in /): 0, or -1 with errno. */
int sync_parent_dir(const char *path);

#endif
