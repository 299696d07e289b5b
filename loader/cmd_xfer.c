// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce send / xroce recv: move N bytes (a reproducible pattern) or a file
 * to a listening peer with RDMA WRITEs, verify it end to end, and report
 * goodput, packets, retransmissions and duration.
 *
 * Protocol, all on one xroce connection:
 *   CONNECT private data  {total length, seed, file?, sender's credit MR}
 *   ACCEPT private data   {receiver's buffer: address, rkey, half size}
 *   The receiver's buffer has two halves and a trailer.  Chunk k (one
 *   half's worth) is written into half k%2 as WRITEs, the last one
 *   WRITE_WITH_IMM(CHUNK|k): its completion at the receiver means the whole
 *   chunk has landed (xroce delivers receive completions in message order).
 *   The receiver checks it and returns the half with a zero-length
 *   WRITE_WITH_IMM(CREDIT|k) into the sender's credit MR.  At the end the
 *   sender writes {length, hash} to the trailer with WRITE_WITH_IMM(DONE);
 *   the receiver answers RESULT|ok.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "xfer_data.h"
#include "xroce/xroce.h"

#define XF_MAGIC 0x58525846u /* "XRXF" */
#define XF_CHUNK (1u << 28)
#define XF_CREDIT (2u << 28)
#define XF_DONE (3u << 28)
#define XF_RESULT (4u << 28)
#define XF_TYPE(imm) ((imm) & 0xf0000000u)
#define XF_ARG(imm) ((imm) & 0x0fffffffu)
#define XF_TRAILER 64

struct xf_hello {            /* sender -> receiver, CONNECT private data */
	uint32_t magic;
	uint32_t flags;          /* XF_F_FILE */
	uint64_t total;
	uint64_t seed;
	uint64_t credit_addr;
	uint32_t credit_rkey;
	uint32_t rsvd;
};
#define XF_F_FILE 1

struct xf_welcome {          /* receiver -> sender, ACCEPT private data */
	uint32_t magic;
	uint32_t rkey;
	uint64_t addr;
	uint64_t half;
};

struct xf_trailer {
	uint64_t total;
	uint64_t hash;
};

struct xf_common {
	const char *ifnames[XROCE_MAX_PLANES];
	int nplanes;
	uint32_t npaths;
	uint16_t port;
	uint64_t mem;
	int json;
	int verbose;
	uint32_t timeout_ms;
};

struct xf_ctx {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *scq, *rcq;
	struct xroce_qp *qp;
	struct xroce_mr *mr;
	uint8_t *buf;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end || v > 1e15)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

static void xf_close(struct xf_ctx *x)
{
	if (x->qp)
		xroce_destroy_qp(x->qp);
	if (x->mr)
		xroce_dereg_mr(x->mr);
	if (x->scq)
		xroce_destroy_cq(x->scq);
	if (x->rcq)
		xroce_destroy_cq(x->rcq);
	if (x->pd)
		xroce_dealloc_pd(x->pd);
	if (x->dev)
		xroce_close_device(x->dev);
	memset(x, 0, sizeof(*x));
}

/* Receives for the peer's WRITE_WITH_IMMs (they carry no data into them,
 * so zero-length): one per message expected, kept topped up. */
#define XF_RECVS 64

static int post_recvs(struct xf_ctx *x, int n)
{
	struct xroce_recv_wr r, *bad;
	int i, rc;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < n; i++) {
		rc = xroce_post_recv(x->qp, &r, &bad);
		if (rc)
			return rc;
	}
	return 0;
}

/* Device, PD, CQs, QP and one buffer of buflen bytes. */
static int xf_open(const char *cmd, const struct xf_common *c, uint16_t ctrl_port,
		   uint64_t buflen, int access, struct xf_ctx *x)
{
	struct xroce_device_attr da;
	struct xroce_qp_init_attr qa;
	int i, rc;

	memset(&da, 0, sizeof(da));
	for (i = 0; i < c->nplanes; i++)
		da.ifnames[i] = c->ifnames[i];
	da.nplanes = c->nplanes;
	da.mem_size = buflen + (1u << 20);
	if (c->mem > da.mem_size)
		da.mem_size = c->mem;
	da.ctrl_port = ctrl_port;
	da.log_level = c->verbose ? XROCE_LOG_DEBUG : XROCE_LOG_WARN;
	rc = xroce_open_device(&da, &x->dev);
	if (rc)
		return xr_err(cmd, rc, "cannot open the device");
	if ((rc = xroce_alloc_pd(x->dev, &x->pd)) ||
	    (rc = xroce_create_cq(x->dev, 4096, &x->scq)) ||
	    (rc = xroce_create_cq(x->dev, 4096, &x->rcq)))
		return xr_err(cmd, rc, "cannot set up");
	x->buf = xroce_mem_alloc(x->dev, buflen, 4096);
	if (!x->buf)
		return xr_err(cmd, -ENOMEM, "cannot allocate %" PRIu64 " bytes", buflen);
	rc = xroce_reg_mr(x->pd, x->buf, buflen, access, &x->mr);
	if (rc)
		return xr_err(cmd, rc, "cannot register memory");
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = x->scq;
	qa.recv_cq = x->rcq;
	qa.max_send_wr = 1024;
	qa.npaths = c->npaths;
	qa.timeout_ms = c->timeout_ms;
	rc = xroce_create_qp(x->pd, &qa, &x->qp);
	if (rc)
		return xr_err(cmd, rc, "cannot create a queue pair");
	rc = post_recvs(x, XF_RECVS);
	if (rc)
		return xr_err(cmd, rc, "cannot post receives");
	return XR_EXIT_OK;
}

/* Post a WRITE (or WRITE_WITH_IMM when with_imm) of len bytes from laddr. */
static int post_write(struct xf_ctx *x, uint64_t wr_id, void *laddr, uint32_t len,
		      uint64_t raddr, uint32_t rkey, bool with_imm, uint32_t imm)
{
	struct xroce_sge sge = { (uint64_t)(uintptr_t)laddr, len, x->mr->lkey };
	struct xroce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = with_imm ? XROCE_WR_RDMA_WRITE_WITH_IMM : XROCE_WR_RDMA_WRITE;
	wr.send_flags = XROCE_SEND_SIGNALED;
	wr.imm_data = imm;
	wr.rdma.remote_addr = raddr;
	wr.rdma.rkey = rkey;
	return xroce_post_send(x->qp, &wr, &bad);
}

static const char common_help[] =
"  -i, --iface IF      interface carrying xroce (repeat for planes)\n"
"  -p, --port N        control port (default 4794)\n"
"  -P, --paths N       paths of the connection (default 8)\n"
"      --mem BYTES     device memory (default: what the buffers need)\n"
"  -t, --timeout MS    peer silence before failing (default 2000)\n"
"  -j, --json          one JSON object with the results\n"
"  -v, --verbose       library debug messages\n"
"  -h, --help          this help\n"
"Sizes take k, M, G suffixes (powers of 1024).\n";

/* Parse the options shared by send and recv; returns -1 to go on, or an
 * exit status. */
static int parse_common(const char *cmd, int c, const char *arg,
			struct xf_common *o)
{
	uint32_t v;
	uint64_t s;

	switch (c) {
	case 'i':
		if (o->nplanes == XROCE_MAX_PLANES)
			return xr_usage_err(cmd, "at most %d interfaces", XROCE_MAX_PLANES);
		o->ifnames[o->nplanes++] = arg;
		return -1;
	case 'p':
		if (xr_parse_u32(arg, 1, 65535, &v))
			return xr_usage_err(cmd, "bad port '%s'", arg);
		o->port = (uint16_t)v;
		return -1;
	case 'P':
		if (xr_parse_u32(arg, 1, XROCE_MAX_PATHS, &v))
			return xr_usage_err(cmd, "paths must be 1..%d", XROCE_MAX_PATHS);
		o->npaths = v;
		return -1;
	case 'M':
		if (parse_size(arg, &s))
			return xr_usage_err(cmd, "bad size '%s'", arg);
		o->mem = s;
		return -1;
	case 't':
		if (xr_parse_u32(arg, 1, 3600000, &v))
			return xr_usage_err(cmd, "bad timeout '%s'", arg);
		o->timeout_ms = v;
		return -1;
	case 'j':
		o->json = 1;
		return -1;
	case 'v':
		o->verbose = 1;
		return -1;
	}
	return 0;
}

#define COMMON_OPTS \
	{ "iface", required_argument, NULL, 'i' }, \
	{ "port", required_argument, NULL, 'p' }, \
	{ "paths", required_argument, NULL, 'P' }, \
	{ "mem", required_argument, NULL, 'M' }, \
	{ "timeout", required_argument, NULL, 't' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "verbose", no_argument, NULL, 'v' }, \
	{ "help", no_argument, NULL, 'h' }
#define COMMON_SHORT "i:p:P:t:jvh"

/* Wait for one completion on cq; 0 and *wc, or an exit status. */
static int wait_one(const char *cmd, struct xroce_cq *cq, struct xroce_wc *wc,
		    int timeout_ms, const char *what)
{
	int n = xroce_wait_cq(cq, 1, wc, timeout_ms);

	if (n < 0)
		return xr_err(cmd, n, "waiting for %s", what);
	if (n == 0)
		return xr_err(cmd, -ETIMEDOUT, "no %s within %d ms", what, timeout_ms);
	if (wc->status != XROCE_WC_SUCCESS)
		return xr_err(cmd, 0, "%s failed: %s", what,
			      xroce_wc_status_str(wc->status));
	return 0;
}

/* ---- recv -------------------------------------------------------------- */
static void recv_usage(FILE *f)
{
	fprintf(f,
"usage: xroce recv -i IF [options]\n"
"\n"
"Wait for one `xroce send`, receive its data into registered memory with\n"
"RDMA WRITE semantics, verify it, and print what happened.\n"
"\n"
"  -b, --buf BYTES     receive buffer, two halves (default 16M)\n"
"  -o, --output FILE   write what is received to FILE (a file transfer)\n"
"      --idle MS       give up if the sender is silent this long (5000)\n"
"      --accept-timeout MS  give up if nobody connects (default: wait)\n"
"%s", common_help);
}

int cmd_recv(int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_OPTS,
		{ "buf", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "idle", required_argument, NULL, 'I' },
		{ "accept-timeout", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct xf_common co = { .port = 4794 };
	const char *out = NULL;
	uint64_t buflen = 16u << 20, half, got = 0;
	uint32_t idle = 5000, v;
	int accept_ms = -1, c, rc, fd = -1, ok = 0;
	struct xf_ctx x = { 0 };
	struct xf_welcome wel;
	struct xf_hello hel;
	struct xr_hash hs;
	struct xroce_qp_stats qs;
	double t0 = 0, t1;
	uint32_t next_chunk = 0;

	while ((c = getopt_long(argc, argv, ":" COMMON_SHORT "b:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			recv_usage(stdout);
			return XR_EXIT_OK;
		case 'b':
			if (parse_size(optarg, &buflen) || buflen < 8192)
				return xr_usage_err("recv", "bad buffer size '%s'", optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'I':
			if (xr_parse_u32(optarg, 1, 3600000, &idle))
				return xr_usage_err("recv", "bad idle time '%s'", optarg);
			break;
		case 'A':
			if (xr_parse_u32(optarg, 1, 3600000, &v))
				return xr_usage_err("recv", "bad timeout '%s'", optarg);
			accept_ms = (int)v;
			break;
		default:
			rc = parse_common("recv", c, optarg, &co);
			if (rc == -1)
				break;
			return rc > 0 ? rc : xr_opt_err("recv", c, argv);
		}
	}
	if (!co.nplanes)
		return xr_usage_err("recv", "which interface? (-i IF)");
	if (optind != argc)
		return xr_usage_err("recv", "unexpected argument '%s'", argv[optind]);
	half = (buflen / 2) & ~4095ull;
	rc = xf_open("recv", &co, co.port, 2 * half + XF_TRAILER,
		     XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_WRITE, &x);
	if (rc)
		goto done;
	wel.magic = XF_MAGIC;
	wel.rkey = x.mr->rkey;
	wel.addr = (uint64_t)(uintptr_t)x.buf;
	wel.half = half;
	xroce_set_private_data(x.qp, &wel, sizeof(wel));
	if (!co.json)
		printf("xroce recv: waiting on %s port %u\n", co.ifnames[0], co.port);
	fflush(stdout);
	rc = xroce_accept(x.qp, accept_ms);
	if (rc) {
		rc = xr_err("recv", rc, "no connection");
		goto done;
	}
	if (xroce_get_private_data(x.qp, &hel, sizeof(hel)) != sizeof(hel) ||
	    hel.magic != XF_MAGIC) {
		rc = xr_err("recv", -EPROTO, "the peer is not `xroce send`");
		goto done;
	}
	if (out) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			rc = xr_err("recv", -errno, "cannot create %s", out);
			goto done;
		}
	}
	xr_hash_init(&hs);
	for (;;) {
		struct xroce_wc wc;
		uint32_t k;
		uint8_t *src;
		uint64_t off, len;

		rc = wait_one("recv", x.rcq, &wc, (int)idle, "data from the sender");
		if (rc)
			goto done;
		post_recvs(&x, 1);
		if (!t0)
			t0 = now_s();
		if (XF_TYPE(wc.imm_data) == XF_DONE) {
			struct xf_trailer tr;

			memcpy(&tr, x.buf + 2 * half, sizeof(tr));
			ok = tr.total == hel.total && got == hel.total &&
			     tr.hash == xr_hash_final(&hs);
			t1 = now_s();
			rc = post_write(&x, 1, NULL, 0, hel.credit_addr, hel.credit_rkey,
					true, XF_RESULT | (uint32_t)ok);
			if (!rc)
				rc = wait_one("recv", x.scq, &wc, 5000, "the result's delivery");
			if (rc)
				goto done;
			/* Let the sender close first, so our CLOSE never races the
			 * last acknowledgements of its work. */
			for (int i = 0; i < 200 && xroce_qp_state(x.qp) == XROCE_QPS_RTS; i++)
				xroce_wait_cq(x.rcq, 1, &wc, 10);
			break;
		}
		if (XF_TYPE(wc.imm_data) != XF_CHUNK) {
			rc = xr_err("recv", -EPROTO, "unexpected message %#x", wc.imm_data);
			goto done;
		}
		k = XF_ARG(wc.imm_data);
		if (k != (next_chunk & 0x0fffffffu)) {
			rc = xr_err("recv", -EPROTO, "chunk %u arrived, expected %u", k,
				    next_chunk);
			goto done;
		}
		off = (uint64_t)next_chunk * half;
		len = hel.total - off < half ? hel.total - off : half;
		src = x.buf + (next_chunk % 2) * half;
		if (!(hel.flags & XF_F_FILE)) {
			long long bad = xr_pattern_check(src, off, len, hel.seed);

			if (bad >= 0) {
				rc = xr_err("recv", -EIO, "data corrupted at byte %" PRIu64,
					    off + (uint64_t)bad);
				goto done;
			}
		}
		xr_hash_update(&hs, src, len);
		if (fd >= 0 && write(fd, src, len) != (ssize_t)len) {
			rc = xr_err("recv", -errno, "writing %s", out);
			goto done;
		}
		got += len;
		next_chunk++;
		rc = post_write(&x, 0, NULL, 0, hel.credit_addr, hel.credit_rkey, true,
				XF_CREDIT | k);
		if (rc) {
			rc = xr_err("recv", rc, "cannot return a credit");
			goto done;
		}
		/* Reap credit completions as they come. */
		while (xroce_poll_cq(x.scq, 1, &wc) > 0)
			if (wc.status != XROCE_WC_SUCCESS) {
				rc = xr_err("recv", 0, "credit failed: %s",
					    xroce_wc_status_str(wc.status));
				goto done;
			}
	}
	xroce_qp_stats(x.qp, &qs);
	if (co.json)
		printf("{\"role\":\"recv\",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,"
		       "\"goodput_gbps\":%.3f,\"verified\":%s}\n", got, t1 - t0,
		       got * 8 / (t1 - t0) / 1e9, ok ? "true" : "false");
	else
		printf("xroce recv: %" PRIu64 " bytes in %.3f s = %.3f Gbit/s, "
		       "integrity %s\n", got, t1 - t0, got * 8 / (t1 - t0) / 1e9,
		       ok ? "verified" : "FAILED");
	rc = ok ? XR_EXIT_OK : xr_err("recv", -EIO, "integrity check failed");
done:
	if (fd >= 0)
		close(fd);
	xf_close(&x);
	return rc;
}

/* ---- send -------------------------------------------------------------- */
static void send_usage(FILE *f)
{
	fprintf(f,
"usage: xroce send -i IF HOST [options] (-n BYTES | -f FILE)\n"
"\n"
"Connect to `xroce recv` at HOST (numeric IPv4/IPv6), move the data with\n"
"RDMA WRITEs, and print goodput, packets, retransmissions and duration.\n"
"\n"
"  -n, --bytes BYTES   send BYTES of a reproducible pattern\n"
"  -f, --file FILE     send FILE\n"
"  -w, --wr BYTES      largest single WRITE (default 1M)\n"
"      --seed N        pattern seed (default 1)\n"
"%s", common_help);
}

int cmd_send(int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_OPTS,
		{ "bytes", required_argument, NULL, 'n' },
		{ "file", required_argument, NULL, 'f' },
		{ "wr", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct xf_common co = { .port = 4794 };
	uint64_t total = 0, wrmax = 1u << 20, seed = 1, half, off = 0;
	const char *file = NULL, *host = NULL;
	struct xf_ctx x = { 0 };
	struct xf_hello hel;
	struct xf_welcome wel;
	struct xroce_qp_stats qs;
	struct xr_hash hs;
	uint32_t k = 0, credits = 3; /* bit per free half */
	uint32_t inflight[2] = { 0, 0 };
	uint8_t *credit_buf, *src;
	int c, rc, fd = -1, result = -1;
	bool have_n = false, done_posted = false, done_completed = false;
	double t0, t1, waiting_since = 0;
	uint32_t give_up_ms;

	while ((c = getopt_long(argc, argv, ":" COMMON_SHORT "n:f:w:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			send_usage(stdout);
			return XR_EXIT_OK;
		case 'n':
			if (parse_size(optarg, &total))
				return xr_usage_err("send", "bad size '%s'", optarg);
			have_n = true;
			break;
		case 'f':
			file = optarg;
			break;
		case 'w':
			if (parse_size(optarg, &wrmax) || !wrmax || wrmax > (1u << 30))
				return xr_usage_err("send", "bad WRITE size '%s'", optarg);
			break;
		case 'S':
			if (parse_size(optarg, &seed))
				return xr_usage_err("send", "bad seed '%s'", optarg);
			break;
		default:
			rc = parse_common("send", c, optarg, &co);
			if (rc == -1)
				break;
			return rc > 0 ? rc : xr_opt_err("send", c, argv);
		}
	}
	if (!co.nplanes)
		return xr_usage_err("send", "which interface? (-i IF)");
	if (optind + 1 != argc)
		return xr_usage_err("send", "which host? (one numeric address)");
	host = argv[optind];
	if (!!file == have_n)
		return xr_usage_err("send", "give either -n BYTES or -f FILE");
	if (file) {
		off_t sz;

		fd = open(file, O_RDONLY);
		if (fd < 0)
			return xr_err("send", -errno, "cannot open %s", file);
		sz = lseek(fd, 0, SEEK_END);
		if (sz < 0 || lseek(fd, 0, SEEK_SET) < 0) {
			close(fd);
			return xr_err("send", -errno, "cannot size %s", file);
		}
		total = (uint64_t)sz;
	}
	rc = XR_EXIT_FAIL;
	/* The local buffer: two halves like the receiver's (sized once its
	 * welcome arrives, so allocate generously), a trailer, credits. */
	if (xf_open("send", &co, 0, 2 * (64ull << 20) + 2 * 4096,
		    XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_WRITE, &x))
		goto done;
	credit_buf = x.buf + 2 * (64ull << 20);
	memset(&hel, 0, sizeof(hel));
	hel.magic = XF_MAGIC;
	hel.flags = file ? XF_F_FILE : 0;
	hel.total = total;
	hel.seed = seed;
	hel.credit_addr = (uint64_t)(uintptr_t)credit_buf;
	hel.credit_rkey = x.mr->rkey;
	xroce_set_private_data(x.qp, &hel, sizeof(hel));
	rc = xroce_connect(x.qp, host, co.port, 5000);
	if (rc) {
		rc = xr_err("send", rc, "cannot connect to %s port %u", host, co.port);
		goto done;
	}
	if (xroce_get_private_data(x.qp, &wel, sizeof(wel)) != sizeof(wel) ||
	    wel.magic != XF_MAGIC || !wel.half) {
		rc = xr_err("send", -EPROTO, "the peer is not `xroce recv`");
		goto done;
	}
	half = wel.half < (64ull << 20) ? wel.half : (64ull << 20);
	half = half < wel.half ? half : wel.half;
	if (half != wel.half) {
		rc = xr_err("send", -EINVAL, "receiver buffer halves of %" PRIu64
			    " bytes are above this sender's 64 MiB", wel.half);
		goto done;
	}
	xr_hash_init(&hs);
	/* The QP's own peer timeout (the library's 2 s unless -t). */
	give_up_ms = co.timeout_ms ? co.timeout_ms : 2000;
	t0 = now_s();
	for (;;) {
		struct xroce_wc wc[16];
		int n, i;

		if (result >= 0 && done_completed && !inflight[0] && !inflight[1])
			break;
		/* Start the next chunk when its half is free at both ends. */
		if (off < total && (credits & (1u << (k % 2))) && !inflight[k % 2]) {
			uint64_t len = total - off < half ? total - off : half, p;
			bool filled = false;

			src = x.buf + (k % 2) * half;
			/* Fill (or read) and post one WRITE's worth at a time:
			 * the first WRITEs are on the wire while the rest is
			 * produced, and every post lets the library run (ACKs,
			 * retransmissions), as a real application's compute
			 * loop should. */
			for (p = 0; p < len;) {
				uint32_t l = (uint32_t)(len - p < wrmax ? len - p : wrmax);
				bool last = p + l == len;

				if (!filled) {
					if (file) {
						if (read(fd, src + p, l) != (ssize_t)l) {
							rc = xr_err("send", -EIO, "reading %s", file);
							goto done;
						}
					} else {
						xr_pattern_fill(src + p, off + p, l, seed);
					}
					xr_hash_update(&hs, src + p, l);
					filled = true;
				}
				rc = post_write(&x, k % 2, src + p, l,
						wel.addr + (k % 2) * half + p, wel.rkey,
						last, XF_CHUNK | (k & 0x0fffffffu));
				if (rc == -ENOMEM) { /* send queue full: drain a bit */
					n = xroce_wait_cq(x.scq, 16, wc, 1000);
					for (i = 0; i < n; i++) {
						if (wc[i].status != XROCE_WC_SUCCESS) {
							rc = xr_err("send", 0, "a WRITE failed: %s",
								    xroce_wc_status_str(wc[i].status));
							goto done;
						}
						if (wc[i].wr_id < 2)
							inflight[wc[i].wr_id]--;
					}
					continue;
				}
				if (rc) {
					rc = xr_err("send", rc, "cannot post a WRITE");
					goto done;
				}
				inflight[k % 2]++;
				p += l;
				filled = false;
			}
			credits &= ~(1u << (k % 2));
			off += len;
			k++;
			continue;
		}
		if (off == total && !done_posted) {
			struct xf_trailer tr = { total, xr_hash_final(&hs) };

			memcpy(credit_buf + 4096, &tr, sizeof(tr));
			rc = post_write(&x, 2, credit_buf + 4096, sizeof(tr),
					wel.addr + 2 * half, wel.rkey, true, XF_DONE);
			if (rc) {
				rc = xr_err("send", rc, "cannot post the trailer");
				goto done;
			}
			done_posted = true;
		}
		n = xroce_wait_cq(x.scq, 16, wc, 10);
		if (n < 0) {
			rc = xr_err("send", n, "polling");
			goto done;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != XROCE_WC_SUCCESS) {
				rc = xr_err("send", 0, "a WRITE failed: %s",
					    xroce_wc_status_str(wc[i].status));
				goto done;
			}
			if (wc[i].wr_id < 2)
				inflight[wc[i].wr_id]--;
			else
				done_completed = true;
		}
		n = xroce_poll_cq(x.rcq, 16, wc);
		if (n > 0)
			post_recvs(&x, n);
		for (i = 0; i < n; i++) {
			if (XF_TYPE(wc[i].imm_data) == XF_CREDIT)
				credits |= 1u << (XF_ARG(wc[i].imm_data) % 2);
			else if (XF_TYPE(wc[i].imm_data) == XF_RESULT)
				result = (int)XF_ARG(wc[i].imm_data);
		}
		if (result < 0 && xroce_qp_state(x.qp) != XROCE_QPS_RTS) {
			rc = xr_err("send", -ECONNRESET, "the connection failed");
			goto done;
		}
		/* Everything we sent is acknowledged and we wait for the
		 * receiver's credit or verdict: with no work outstanding the
		 * library cannot see the receiver die (like an RC QP), so this
		 * protocol gives up on its own after the same timeout. */
		if (n > 0 || inflight[0] || inflight[1] ||
		    (done_posted && !done_completed)) {
			waiting_since = 0;
		} else if (!waiting_since) {
			waiting_since = now_s();
		} else if ((now_s() - waiting_since) * 1000 > give_up_ms) {
			rc = xr_err("send", -ETIMEDOUT, "nothing from the receiver within "
				    "%u ms while waiting for its %s", give_up_ms,
				    off < total ? "credit" : "verdict");
			goto done;
		}
	}
	t1 = now_s();
	xroce_qp_stats(x.qp, &qs);
	if (co.json) {
		struct xroce_path_stats ps[XROCE_MAX_PATHS];
		int np = xroce_path_stats(x.qp, ps, XROCE_MAX_PATHS), j;

		printf("{\"role\":\"send\",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,"
		       "\"goodput_gbps\":%.3f,\"tx_pkts\":%" PRIu64 ",\"retx_pkts\":%"
		       PRIu64 ",\"dup_pkts\":%" PRIu64 ",\"fast_retx\":%" PRIu64
		       ",\"timeout_retx\":%" PRIu64
		       ",\"paths\":%u,\"tx_engine\":\"%s\",\"verified\":%s,\"path\":[",
		       total, t1 - t0, total * 8 / (t1 - t0) / 1e9, qs.tx_pkts,
		       qs.retx_pkts, qs.dup_pkts, qs.fast_retx, qs.timeout_retx,
		       qs.npaths, xr_engine_name(x.dev),
		       result == 1 ? "true" : "false");
		for (j = 0; j < np; j++)
			printf("%s{\"path\":%u,\"plane\":%u,\"sport\":%u,\"state\":%d,"
			       "\"tx_pkts\":%" PRIu64 ",\"retx_pkts\":%" PRIu64 ","
			       "\"lost_pkts\":%" PRIu64 ",\"acked_pkts\":%" PRIu64 ","
			       "\"ecn_marked\":%" PRIu64 ",\"timeouts\":%" PRIu64 "}",
			       j ? "," : "", ps[j].path, ps[j].plane, ps[j].sport,
			       ps[j].state, ps[j].tx_pkts, ps[j].retx_pkts,
			       ps[j].lost_pkts, ps[j].acked_pkts, ps[j].ecn_marked,
			       ps[j].timeouts);
		printf("]}\n");
	} else
		printf("xroce send: %" PRIu64 " bytes in %.3f s = %.3f Gbit/s; %"
		       PRIu64 " packets, %" PRIu64 " retransmitted (%.2f%%: %" PRIu64
		       " by SACK, %" PRIu64 " by timeout) over %u paths; receiver "
		       "integrity %s\n", total, t1 - t0, total * 8 / (t1 - t0) / 1e9,
		       qs.tx_pkts, qs.retx_pkts,
		       qs.tx_pkts ? 100.0 * (double)qs.retx_pkts / (double)qs.tx_pkts : 0.0,
		       qs.fast_retx, qs.timeout_retx, qs.npaths,
		       result == 1 ? "verified" : "FAILED");
	rc = result == 1 ? XR_EXIT_OK : xr_err("send", -EIO, "the receiver "
					       "reports corrupted data");
done:
	if (fd >= 0)
		close(fd);
	xf_close(&x);
	return rc;
}
