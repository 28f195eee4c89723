/*
 * node_health.h - the `burst-node health` verb (Slurm's HealthCheckProgram).
 */
#ifndef BURST_NODE_HEALTH_H
#define BURST_NODE_HEALTH_H

/* argv[0] is "health". Returns the exit status: 0 healthy (or no admitted
 * record: not a burst node), 1 unhealthy (drained, or would be with
 * --dry-run), 2 usage error, 3 error (unreadable record, Slurm unreachable). */
int node_health(int argc, char **argv);

#endif
