/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xroce perf: bandwidth and latency of RDMA WRITEs, in the spirit of
 * perftest's ib_write_bw / ib_write_lat.
 *
 *   xroce perf server -i IF [--port P]
 *   xroce perf client -i IF HOST [--mode bw|lat] [-s SIZES] [-d SECS] ...
 *
 * bw   the client keeps --depth WRITEs of each size in flight for the
 *      duration on every connection; reported: goodput, packet rate,
 *      retransmissions, CPU seconds per GB (this process).
 * lat  ping-pong: the client writes SIZE bytes with WRITE_WITH_IMM, the
 *      server writes the same back on its completion; reported: round trip
 *      min / median / p99 / p99.9 (and one way = half).
 * The client tells the server what to do through the connection's private
 * data; the server serves any number of clients until killed (or --once).
 *
 * This header is what the parts share: loader/cmd_perf.c (options),
 * perf_env.c (library objects), perf_server.c, perf_client.c, perf_bw.c
 * and perf_lat.c.
 */
#ifndef XR_LOADER_PERF_H
#define XR_LOADER_PERF_H

#include "endpoint.h"
#include <stdbool.h>
#include <stdint.h>

#include "xroce/xroce.h"

#define PF_MAGIC 0x58525046u /* "XRPF" */
#define PF_BUF (64u << 20)
#define PF_MAX_CONNS 64
#define PF_MAX_SIZES 16
/* Immediate of the client's last WRITE_WITH_IMM, and of the server's echo. */
#define PF_IMM_DONE 0xffffffffu
/* WRITE_WITH_IMM (echo, done) consumes a posted receive: keep some. */
#define PF_RECVS 64

enum { PF_BW = 1, PF_LAT = 2 };

struct pf_hello {            /* client -> server, CONNECT private data */
	uint32_t magic, mode;
	uint64_t addr;       /* client's buffer (lat: the server echoes here) */
	uint32_t rkey, flags; /* PF_HELLO_* */
};

/* lat: the client sleeps on its CQ between round trips (xroce_wait_cq), and
 * asks the server to do the same, instead of both ends busy-polling. */
#define PF_HELLO_WAIT 1u
/* lat --breakdown: trace (xroce_trace_enable) and, when the client sends
 * WRITE_WITH_IMM(PF_IMM_TRACE), answer with the records taken so far,
 * written with the same immediate at PF_TRACE_OFF of the echo area. */
#define PF_HELLO_TRACE 2u
#define PF_IMM_TRACE 0xfffffffeu
#define PF_TRACE_OFF (1u << 20)
#define PF_TRACE_MAX ((PF_BUF / 2 - PF_TRACE_OFF) / sizeof(struct xroce_trace_rec))

struct pf_welcome {          /* server -> client, ACCEPT private data */
	uint32_t magic, rsvd;
	uint64_t addr;
	uint32_t rkey, rsvd2;
	uint64_t len;
};

struct pf_opts {
	struct xr_ep_opts ep;  /* -i -p -P --key --from -j -v */
	uint32_t conns, depth, iters, mtu;
	uint32_t max_inflight; /* QP attribute, 0 = the library's default */
	uint64_t sizes[PF_MAX_SIZES];
	int nsizes;
	double secs;
	uint32_t interval_ms;  /* bw: goodput per interval, 0 = off */
	uint32_t warmup_ms;    /* lat: untimed round trips first, per size */
	int mode, once, no_redundant, wait;
	int breakdown;          /* lat: per-stage breakdown (perf_breakdown.c) */
	enum xroce_tx_engine engine;
};

/* The library objects of one end: one CQ for everything, one registered
 * buffer of PF_BUF bytes, the connections. */
struct pf_env {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *cq;
	struct xroce_mr *mr;
	uint8_t *buf;
	struct xroce_qp *qp[PF_MAX_CONNS];
	uint32_t nqp;
};

/* Device (control port `port`, 0: any), PD, CQ, the buffer; 0 or an exit
 * status after a one-line message. */
int pf_open(const struct pf_opts *o, uint16_t port, struct pf_env *e);
/* A QP on e's CQ with PF_RECVS receives posted; 0 or an exit status. */
int pf_qp(const struct pf_opts *o, struct pf_env *e, struct xroce_qp **qp);
/* This process's CPU time in seconds. */
double pf_cpu(void);

/* The two roles; each returns the exit status. */
int pf_server(const struct pf_opts *o);
int pf_client(const struct pf_opts *o, const char *host);

/* One size of a run over the client's connections e->qp[], whose servers
 * welcomed them with w[]; first: print the table's header.  0, or an exit
 * status after a one-line message. */
int pf_run_bw(const struct pf_opts *o, struct pf_env *e,
	      const struct pf_welcome *w, uint64_t size, bool first);
int pf_run_lat(const struct pf_opts *o, struct pf_env *e,
	       const struct pf_welcome *w, uint64_t size, bool first);
/* After a traced lat run of size bytes: fetch the server's records, merge
 * them with ours and print the breakdown; 0 or an exit status. */
int pf_breakdown(const struct pf_opts *o, struct pf_env *e,
		 const struct pf_welcome *w, uint64_t size);

#endif /* XR_LOADER_PERF_H */
