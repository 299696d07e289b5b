// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xrmpi: the MPI job the xroce tests and benchmarks run, the same binary
 * over any transport Open MPI offers (xroce through mtl ofi, or the TCP
 * BTL for comparison).
 *
 *   xrmpi [--ops allreduce,alltoall,bcast,pingpong] [--sizes 64k,1M,...]
 *         [--iters N] [--warmup N] [--min-time S]
 *
 * Every operation's result is checked on every rank, every iteration: the
 * data of iteration k depends on k, the sender and the element, so a stale
 * or misplaced block is caught (the check is outside the timed region).  A
 * wrong element aborts the job (exit status 3 through MPI_Abort).
 *
 *   allreduce  sum of uint32 vectors; size = bytes per rank
 *   alltoall   size = bytes each rank sends in all (size / N per peer)
 *   bcast      root moves around the ranks; size = bytes broadcast
 *   pingpong   rank 0 and rank 1 (on different leaves of the emulator)
 *
 * Rank 0 prints one JSON line per operation and size: time per operation
 * (the slowest rank's, mean of the iterations, and the fastest iteration),
 * algorithm bandwidth size/time and bus bandwidth as NCCL's tests define
 * it: allreduce size/time * 2(N-1)/N, alltoall size/time * (N-1)/N,
 * bcast size/time; pingpong: one-way latency and size/latency.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 16

struct opts {
	char ops[128];
	size_t sizes[MAX_SIZES];
	int nsizes;
	int iters, warmup;
	double min_time;
};

static int rank, nranks;

static void fail(const char *op, size_t bytes, int iter, size_t at, uint32_t got,
		 uint32_t want)
{
	fprintf(stderr, "xrmpi: rank %d: %s of %zu bytes, iteration %d: element "
		"%zu is %#x, expected %#x\n", rank, op, bytes, iter, at, got, want);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Element k of what rank r contributes in iteration it. */
static uint32_t pat(int r, size_t k, int it)
{
	return (uint32_t)(r + 1) * (uint32_t)(k % 251 + 1) + (uint32_t)it * 7919u;
}

static uint32_t pat2(int from, int to, size_t k, int it)
{
	return (uint32_t)from * 2654435761u ^ (uint32_t)to * 40503u ^
	       (uint32_t)k * 97u ^ (uint32_t)it;
}

/* ---- operations: fill (untimed), run (timed), check (untimed) ----------- */
struct bufs {
	uint32_t *a, *b;
	size_t n;                  /* elements of the operation */
};

static void allreduce_fill(struct bufs *x, int it)
{
	size_t k;

	for (k = 0; k < x->n; k++)
		x->a[k] = pat(rank, k, it);
	memset(x->b, 0, x->n * 4);
}

static void allreduce_run(struct bufs *x, int it)
{
	(void)it;
	MPI_Allreduce(x->a, x->b, (int)x->n, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
}

static void allreduce_check(struct bufs *x, int it)
{
	uint32_t ranks_sum = (uint32_t)(nranks * (nranks + 1) / 2);
	size_t k;

	for (k = 0; k < x->n; k++) {
		uint32_t want = ranks_sum * (uint32_t)(k % 251 + 1) +
				(uint32_t)nranks * (uint32_t)it * 7919u;

		if (x->b[k] != want)
			fail("allreduce", x->n * 4, it, k, x->b[k], want);
	}
}

static void alltoall_fill(struct bufs *x, int it)
{
	size_t blk = x->n / (size_t)nranks, k;
	int to;

	for (to = 0; to < nranks; to++)
		for (k = 0; k < blk; k++)
			x->a[(size_t)to * blk + k] = pat2(rank, to, k, it);
	memset(x->b, 0, x->n * 4);
}

static void alltoall_run(struct bufs *x, int it)
{
	int blk = (int)(x->n / (size_t)nranks);

	(void)it;
	MPI_Alltoall(x->a, blk, MPI_UINT32_T, x->b, blk, MPI_UINT32_T, MPI_COMM_WORLD);
}

static void alltoall_check(struct bufs *x, int it)
{
	size_t blk = x->n / (size_t)nranks, k;
	int from;

	for (from = 0; from < nranks; from++)
		for (k = 0; k < blk; k++) {
			uint32_t got = x->b[(size_t)from * blk + k];
			uint32_t want = pat2(from, rank, k, it);

			if (got != want)
				fail("alltoall", x->n * 4, it, (size_t)from * blk + k,
				     got, want);
		}
}

static void bcast_fill(struct bufs *x, int it)
{
	int root = it % nranks;
	size_t k;

	for (k = 0; k < x->n; k++)
		x->a[k] = rank == root ? pat(root, k, it) : 0;
}

static void bcast_run(struct bufs *x, int it)
{
	MPI_Bcast(x->a, (int)x->n, MPI_UINT32_T, it % nranks, MPI_COMM_WORLD);
}

static void bcast_check(struct bufs *x, int it)
{
	size_t k;

	for (k = 0; k < x->n; k++)
		if (x->a[k] != pat(it % nranks, k, it))
			fail("bcast", x->n * 4, it, k, x->a[k], pat(it % nranks, k, it));
}

/* Rank 0 sends, rank 1 returns what it got; both check. */
static void pingpong_fill(struct bufs *x, int it)
{
	size_t k;

	for (k = 0; k < x->n; k++)
		x->a[k] = rank == 0 ? pat(0, k, it) : 0;
}

static void pingpong_run(struct bufs *x, int it)
{
	if (rank == 0) {
		MPI_Send(x->a, (int)x->n, MPI_UINT32_T, 1, it, MPI_COMM_WORLD);
		MPI_Recv(x->b, (int)x->n, MPI_UINT32_T, 1, it, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else if (rank == 1) {
		MPI_Recv(x->a, (int)x->n, MPI_UINT32_T, 0, it, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(x->a, (int)x->n, MPI_UINT32_T, 0, it, MPI_COMM_WORLD);
	}
}

static void pingpong_check(struct bufs *x, int it)
{
	const uint32_t *got = rank == 0 ? x->b : x->a;
	size_t k;

	if (rank > 1)
		return;
	for (k = 0; k < x->n; k++)
		if (got[k] != pat(0, k, it))
			fail("pingpong", x->n * 4, it, k, got[k], pat(0, k, it));
}

struct op {
	const char *name;
	void (*fill)(struct bufs *, int);
	void (*run)(struct bufs *, int);
	void (*check)(struct bufs *, int);
};

static const struct op ops[] = {
	{ "allreduce", allreduce_fill, allreduce_run, allreduce_check },
	{ "alltoall", alltoall_fill, alltoall_run, alltoall_check },
	{ "bcast", bcast_fill, bcast_run, bcast_check },
	{ "pingpong", pingpong_fill, pingpong_run, pingpong_check },
};

static void report(const struct op *op, size_t bytes, int iters, double mean,
		   double best)
{
	double algbw = (double)bytes * 8 / mean / 1e9, busbw = algbw;

	if (!strcmp(op->name, "allreduce"))
		busbw = algbw * 2 * (nranks - 1) / nranks;
	else if (!strcmp(op->name, "alltoall"))
		busbw = algbw * (nranks - 1) / nranks;
	else if (!strcmp(op->name, "pingpong")) {
		mean /= 2; /* one way */
		best /= 2;
		algbw = busbw = (double)bytes * 8 / mean / 1e9;
	}
	printf("{\"op\":\"%s\",\"ranks\":%d,\"bytes\":%zu,\"iters\":%d,"
	       "\"time_us\":%.1f,\"min_us\":%.1f,\"algbw_gbps\":%.4f,"
	       "\"busbw_gbps\":%.4f}\n", op->name, nranks, bytes, iters,
	       mean * 1e6, best * 1e6, algbw, busbw);
	fflush(stdout);
}

/* One operation at one size: warm-up, then timed iterations (at least
 * o->iters, and at least o->min_time seconds), each started together
 * (barrier) and timed by its slowest rank. */
static void measure(const struct op *op, const struct opts *o, struct bufs *x,
		    size_t bytes)
{
	double sum = 0, best = 1e30;
	int it, done = 0;

	x->n = bytes / 4;
	if (!strcmp(op->name, "alltoall"))
		x->n -= x->n % (size_t)nranks;
	for (it = 0; it < o->warmup + o->iters || (sum < o->min_time && done < 100000);
	     it++) {
		double t0, t, tmax;

		op->fill(x, it);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		op->run(x, it);
		t = MPI_Wtime() - t0;
		MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		op->check(x, it);
		if (it < o->warmup)
			continue;
		sum += tmax;
		done++;
		if (tmax < best)
			best = tmax;
	}
	if (rank == 0)
		report(op, x->n * 4, done, sum / done, best);
}

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*end == 'k' || *end == 'K')
		v *= 1024;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024;
	else if (*end == 'g' || *end == 'G')
		v *= 1024.0 * 1024 * 1024;
	return (size_t)v & ~(size_t)3;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	snprintf(o->ops, sizeof(o->ops), "allreduce,alltoall,bcast,pingpong");
	o->iters = 5;
	o->warmup = 1;
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			return -1;
		if (!strcmp(argv[i], "--ops")) {
			snprintf(o->ops, sizeof(o->ops), "%s", v);
		} else if (!strcmp(argv[i], "--sizes")) {
			char buf[512], *tok, *save = NULL;

			snprintf(buf, sizeof(buf), "%s", v);
			o->nsizes = 0;
			for (tok = strtok_r(buf, ",", &save); tok && o->nsizes < MAX_SIZES;
			     tok = strtok_r(NULL, ",", &save))
				o->sizes[o->nsizes++] = parse_size(tok);
		} else if (!strcmp(argv[i], "--iters")) {
			o->iters = atoi(v);
		} else if (!strcmp(argv[i], "--warmup")) {
			o->warmup = atoi(v);
		} else if (!strcmp(argv[i], "--min-time")) {
			o->min_time = atof(v);
		} else {
			return -1;
		}
		i++;
	}
	if (!o->nsizes) {
		o->sizes[0] = 1u << 20;
		o->nsizes = 1;
	}
	return o->iters < 1 || o->warmup < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct bufs x = { 0 };
	struct opts o;
	size_t max = 0;
	unsigned int i;
	int k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (parse(argc, argv, &o) || nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: xrmpi [--ops allreduce,alltoall,bcast,"
				"pingpong] [--sizes 64k,1M] [--iters N] [--warmup N] "
				"[--min-time S]   (2 ranks or more)\n");
		MPI_Finalize();
		return 2;
	}
	for (k = 0; k < o.nsizes; k++)
		if (o.sizes[k] > max)
			max = o.sizes[k];
	x.a = malloc(max + 4 * (size_t)nranks);
	x.b = malloc(max + 4 * (size_t)nranks);
	if (!x.a || !x.b) {
		fprintf(stderr, "xrmpi: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strstr(o.ops, ops[i].name))
			continue;
		for (k = 0; k < o.nsizes; k++)
			measure(&ops[i], &o, &x, o.sizes[k]);
	}
	free(x.a);
	free(x.b);
	MPI_Finalize();
	return 0;
}
