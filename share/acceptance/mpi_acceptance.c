/*
 * mpi_acceptance.c - the MPI part of the slurm-burst acceptance suite, run
 * across new nodes by "burstctl accept" through srun --mpi=pmix.
 *
 *   mpi_acceptance ranks      one line per rank, in rank order (rank 0 prints
 *                             them): "rank R of N on HOST"
 *   mpi_acceptance pingpong   ranks 0 and 1 exchange messages: the half
 *                             round-trip time of 8-byte messages and the
 *                             bandwidth of 1 MiB messages, printed by rank 0
 *                             as "latency_us=L bandwidth_mbs=B" (MB = 10^6 B);
 *                             the payloads are checked on arrival
 *   mpi_acceptance allreduce  MPI_Allreduce of known values (a scalar and a
 *                             vector) checked on every rank: "allreduce ok"
 *
 * Exit 0 when the check passed, 1 when it failed, 2 on usage errors.
 * Build: mpicc -O2 -o mpi_acceptance mpi_acceptance.c
 *
 * Open MPI 5 (5.0.7 under srun --mpi=pmix, Slurm 24.11, PMIx 5) has killed
 * ranks inside MPI_Init, one in five runs of test_mpi_accept under load: a
 * segfault in mca_pml_ob1_recv_frag_callback_match, from opal_progress while
 * ompi_mpi_init waits for its modex fence. MPI_COMM_WORLD exists then
 * (ompi_comm_init_mpi3) but ob1 does not know it yet (add_comm comes after
 * that fence), and a message for it that arrives meanwhile is taken for one
 * of a known communicator. With pmix_base_async_modex the fence runs in the
 * background and ompi_mpi_init adds MPI_COMM_WORLD to the PML before it
 * waits: an early message then finds it, or (before ompi_comm_init_mpi3)
 * waits in ob1's list for communicators not yet made. Set here unless the
 * environment chooses (OMPI_MCA_pmix_base_async_modex); other MPIs ignore it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_MAX 256
#define LAT_BYTES 8
#define LAT_WARMUP 100
#define LAT_ITERS 2000
#define BW_BYTES (1024 * 1024)
#define BW_WARMUP 4
#define BW_ITERS 40
#define VEC_LEN 4096

static int rank, size;

static int do_ranks(void)
{
	char host[HOST_MAX], *all = NULL;
	int i;

	memset(host, 0, sizeof(host));
	if (gethostname(host, sizeof(host) - 1) != 0)
		strcpy(host, "unknown");
	if (rank == 0) {
		all = calloc((size_t)size, HOST_MAX);
		if (!all) {
			fprintf(stderr, "mpi_acceptance: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	MPI_Gather(host, HOST_MAX, MPI_CHAR, all, HOST_MAX, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		for (i = 0; i < size; i++)
			printf("rank %d of %d on %s\n", i, size, all + (size_t)i * HOST_MAX);
		free(all);
	}
	return 0;
}

static void fill(unsigned char *buf, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)((i * 131u + seed) & 0xff);
}

static int check(const unsigned char *buf, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf[i] != (unsigned char)((i * 131u + seed) & 0xff))
			return -1;
	return 0;
}

/* iters round trips of n bytes between ranks 0 and 1; seconds per trip */
static double round_trips(unsigned char *sbuf, unsigned char *rbuf, size_t n, int warmup,
			  int iters, int *bad)
{
	int peer = rank == 0 ? 1 : 0, i;
	double t0 = 0;

	for (i = 0; i < warmup + iters; i++) {
		unsigned seed = (unsigned)i;
		if (i == warmup)
			t0 = MPI_Wtime();
		if (rank == 0) {
			fill(sbuf, n, seed);
			MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
			MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (check(rbuf, n, seed + 1) != 0)
				(*bad)++;
		} else {
			MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (check(rbuf, n, seed) != 0)
				(*bad)++;
			fill(sbuf, n, seed + 1);
			MPI_Send(sbuf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) / iters;
}

static int do_pingpong(void)
{
	unsigned char *sbuf, *rbuf;
	char host[HOST_MAX] = "", peer_host[HOST_MAX] = "";
	double lat = 0, trip = 0;
	int bad = 0, all_bad = 0;

	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_acceptance pingpong: needs 2 ranks, has %d\n", size);
		return 1;
	}
	gethostname(host, sizeof(host) - 1);
	if (rank == 1)
		MPI_Send(host, HOST_MAX, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	else if (rank == 0)
		MPI_Recv(peer_host, HOST_MAX, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	sbuf = malloc(BW_BYTES);
	rbuf = malloc(BW_BYTES);
	if (!sbuf || !rbuf) {
		fprintf(stderr, "mpi_acceptance: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank < 2) {
		lat = round_trips(sbuf, rbuf, LAT_BYTES, LAT_WARMUP, LAT_ITERS, &bad) / 2;
		trip = round_trips(sbuf, rbuf, BW_BYTES, BW_WARMUP, BW_ITERS, &bad);
	}
	MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("pingpong between rank 0 on %s and rank 1 on %s\n", host, peer_host);
		if (all_bad)
			printf("pingpong FAILED: %d messages arrived corrupted\n", all_bad);
		else
			/* a round trip moves the message twice */
			printf("latency_us=%.3f bandwidth_mbs=%.1f\n", lat * 1e6,
			       2.0 * BW_BYTES / trip / 1e6);
	}
	free(sbuf);
	free(rbuf);
	return all_bad ? 1 : 0;
}

static int do_allreduce(void)
{
	long long mine = rank + 1, sum = 0, want = (long long)size * (size + 1) / 2;
	long long *vin = malloc(VEC_LEN * sizeof(*vin)), *vout = malloc(VEC_LEN * sizeof(*vout));
	int i, bad = 0, all_bad = 0;

	if (!vin || !vout) {
		fprintf(stderr, "mpi_acceptance: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (i = 0; i < VEC_LEN; i++)
		vin[i] = (long long)i * (rank + 1) - rank;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(vin, vout, VEC_LEN, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (sum != want)
		bad++;
	/* sum over r of (i*(r+1) - r) = i*N(N+1)/2 - N(N-1)/2 */
	for (i = 0; i < VEC_LEN; i++)
		if (vout[i] != (long long)i * want - (long long)size * (size - 1) / 2)
			bad++;
	MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		if (all_bad)
			printf("allreduce FAILED: %d wrong sums (scalar %lld, expected %lld) over %d ranks\n",
			       all_bad, sum, want, size);
		else
			printf("allreduce ok: %d ranks, sum %lld, %d-element vector checked\n", size, sum,
			       VEC_LEN);
	}
	free(vin);
	free(vout);
	return all_bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc != 2 || (strcmp(argv[1], "ranks") && strcmp(argv[1], "pingpong") &&
			  strcmp(argv[1], "allreduce"))) {
		fprintf(stderr, "usage: mpi_acceptance ranks|pingpong|allreduce\n");
		return 2;
	}
	/* before MPI_Init: Open MPI reads its MCA parameters there (above) */
	setenv("OMPI_MCA_pmix_base_async_modex", "1", 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(argv[1], "ranks"))
		rc = do_ranks();
	else if (!strcmp(argv[1], "pingpong"))
		rc = do_pingpong();
	else
		rc = do_allreduce();
	fflush(stdout);
	MPI_Finalize();
	return rc;
}
