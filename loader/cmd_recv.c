// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce recv: the receiving end of `xroce send` (loader/xfer_proto.h).  As
 * an example of the library: set up the objects (loader/xfer_conn.c),
 * offer a buffer in the ACCEPT private data, then only wait for receive
 * completions: data lands in the buffer with no call of ours, and each
 * WRITE_WITH_IMM says a chunk is complete.  Checks every chunk, answers
 * with credits and finally the verdict.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "xfer_conn.h"
#include "xfer_data.h"
#include "xfer_opts.h"
#include "xfer_proto.h"

#define CMD "recv"

struct recv_opts {
	struct xf_common co;
	const char *out;         /* -o FILE, or NULL */
	uint64_t buflen;
	uint32_t idle_ms;
	int accept_ms;           /* -1: wait for ever */
};

/* One transfer being received. */
struct receiver {
	struct xf_ctx x;
	struct xf_hello hel;     /* what the sender announced */
	uint64_t half;           /* bytes in each half of x.buf */
	uint64_t got;            /* bytes checked so far */
	uint32_t next_chunk;
	int fd;                  /* the output file, or -1 */
	const char *out;
	struct xr_hash hs;       /* of the bytes received */
	bool ok;                 /* the trailer matched */
	double t0, t1;           /* first message, verdict */
};

static void usage(FILE *f)
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
"%s", xf_common_help);
}

/* Apply option c of recv's own: XR_CONTINUE, or an exit status. */
static int parse_opt(int c, const char *arg, struct recv_opts *o)
{
	uint32_t v;

	switch (c) {
	case 'b':
		if (xf_parse_size(arg, &o->buflen) || o->buflen < 8192)
			return xr_usage_err(CMD, "bad buffer size '%s'", arg);
		return XR_CONTINUE;
	case 'o':
		o->out = arg;
		return XR_CONTINUE;
	case 'I':
		if (xr_parse_u32(arg, 1, 3600000, &o->idle_ms))
			return xr_usage_err(CMD, "bad idle time '%s'", arg);
		return XR_CONTINUE;
	case 'A':
		if (xr_parse_u32(arg, 1, 3600000, &v))
			return xr_usage_err(CMD, "bad timeout '%s'", arg);
		o->accept_ms = (int)v;
		return XR_CONTINUE;
	}
	return xf_parse_common(CMD, c, arg, &o->co);
}

static int parse(int argc, char **argv, struct recv_opts *o)
{
	static const struct option opts[] = {
		XF_COMMON_OPTS,
		{ "buf", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "idle", required_argument, NULL, 'I' },
		{ "accept-timeout", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->co.ep.port = XF_DEFAULT_PORT;
	o->buflen = 16u << 20;
	o->idle_ms = 5000;
	o->accept_ms = -1;
	while ((c = getopt_long(argc, argv, ":" XF_COMMON_SHORT "b:o:", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return XR_EXIT_OK;
		}
		rc = parse_opt(c, optarg, o);
		if (rc == XR_NOT_MINE)
			return xr_opt_err(CMD, c, argv);
		if (rc != XR_CONTINUE)
			return rc;
	}
	if (!o->co.ep.nplanes)
		return xr_usage_err(CMD, "which interface? (-i IF)");
	if (optind != argc)
		return xr_usage_err(CMD, "unexpected argument '%s'", argv[optind]);
	return XR_CONTINUE;
}

/* Offer our buffer, accept one sender and check it is `xroce send`. */
static int accept_sender(struct receiver *r, const struct recv_opts *o)
{
	struct xf_welcome wel;
	int rc;

	wel.magic = XF_MAGIC;
	wel.rkey = r->x.mr->rkey;
	wel.addr = (uint64_t)(uintptr_t)r->x.buf;
	wel.half = r->half;
	xroce_set_private_data(r->x.qp, &wel, sizeof(wel));
	if (!o->co.ep.json)
		printf("xroce recv: waiting on %s port %u\n", o->co.ep.ifnames[0],
		       o->co.ep.port);
	fflush(stdout);
	rc = xroce_accept(r->x.qp, o->accept_ms);
	if (rc)
		return xr_err(CMD, rc, "no connection");
	if (xroce_get_private_data(r->x.qp, &r->hel, sizeof(r->hel)) != sizeof(r->hel) ||
	    r->hel.magic != XF_MAGIC)
		return xr_err(CMD, -EPROTO, "the peer is not `xroce send`");
	if (o->out) {
		r->fd = open(o->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (r->fd < 0)
			return xr_err(CMD, -errno, "cannot create %s", o->out);
	}
	return XR_EXIT_OK;
}

/* A zero-length WRITE_WITH_IMM(imm) into the sender's credit MR. */
static int answer(struct receiver *r, uint64_t wr_id, uint32_t imm)
{
	return xr_post_write(r->x.qp, r->x.mr->lkey, wr_id, NULL, 0, r->hel.credit_addr,
			     r->hel.credit_rkey, true, imm);
}

/* Check the chunk that landed in src (len bytes at stream offset off),
 * hash it and write it out. */
static int take_chunk(struct receiver *r, const uint8_t *src, uint64_t off,
		      uint64_t len)
{
	if (!(r->hel.flags & XF_F_FILE)) {
		long long bad = xr_pattern_check(src, off, len, r->hel.seed);

		if (bad >= 0)
			return xr_err(CMD, -EIO, "data corrupted at byte %" PRIu64,
				      off + (uint64_t)bad);
	}
	xr_hash_update(&r->hs, src, len);
	if (r->fd >= 0 && write(r->fd, src, len) != (ssize_t)len)
		return xr_err(CMD, -errno, "writing %s", r->out);
	r->got += len;
	return XR_EXIT_OK;
}

/* WRITE_WITH_IMM(CHUNK|k) arrived: chunk k is whole in half k%2.  Take it
 * and hand the half back with a credit. */
static int on_chunk(struct receiver *r, uint32_t k)
{
	struct xroce_wc wc;
	uint64_t off, len;
	int rc;

	if (k != (r->next_chunk & 0x0fffffffu))
		return xr_err(CMD, -EPROTO, "chunk %u arrived, expected %u", k,
			      r->next_chunk);
	off = (uint64_t)r->next_chunk * r->half;
	len = r->hel.total - off < r->half ? r->hel.total - off : r->half;
	rc = take_chunk(r, r->x.buf + (r->next_chunk % 2) * r->half, off, len);
	if (rc)
		return rc;
	r->next_chunk++;
	rc = answer(r, 0, XF_CREDIT | k);
	if (rc)
		return xr_err(CMD, rc, "cannot return a credit");
	/* Reap credit completions as they come. */
	while (xroce_poll_cq(r->x.scq, 1, &wc) > 0)
		if (wc.status != XROCE_WC_SUCCESS)
			return xr_err(CMD, 0, "credit failed: %s",
				      xroce_wc_status_str(wc.status));
	return XR_EXIT_OK;
}

/* WRITE_WITH_IMM(DONE) arrived: compare the trailer with what we saw and
 * send the verdict. */
static int on_done(struct receiver *r)
{
	struct xf_trailer tr;
	struct xroce_wc wc;
	int rc, i;

	memcpy(&tr, r->x.buf + 2 * r->half, sizeof(tr));
	r->ok = tr.total == r->hel.total && r->got == r->hel.total &&
		tr.hash == xr_hash_final(&r->hs);
	r->t1 = xr_mono_s();
	rc = answer(r, 1, XF_RESULT | (uint32_t)r->ok);
	if (!rc)
		rc = xf_wait_one(CMD, r->x.scq, &wc, 5000, "the result's delivery");
	if (rc)
		return rc;
	/* Let the sender close first, so our CLOSE never races the last
	 * acknowledgements of its work. */
	for (i = 0; i < 200 && xroce_qp_state(r->x.qp) == XROCE_QPS_RTS; i++)
		xroce_wait_cq(r->x.rcq, 1, &wc, 10);
	return XR_EXIT_OK;
}

/* Wait for the sender's messages until its DONE has been answered. */
static int receive_all(struct receiver *r, uint32_t idle_ms)
{
	struct xroce_wc wc;
	int rc;

	xr_hash_init(&r->hs);
	for (;;) {
		rc = xf_wait_one(CMD, r->x.rcq, &wc, (int)idle_ms,
				 "data from the sender");
		if (rc)
			return rc;
		xr_post_empty_recvs(r->x.qp, 1);
		if (!r->t0)
			r->t0 = xr_mono_s();
		if (XF_TYPE(wc.imm_data) == XF_DONE)
			return on_done(r);
		if (XF_TYPE(wc.imm_data) != XF_CHUNK)
			return xr_err(CMD, -EPROTO, "unexpected message %#x",
				      wc.imm_data);
		rc = on_chunk(r, XF_ARG(wc.imm_data));
		if (rc)
			return rc;
	}
}

static int report(const struct receiver *r, int json)
{
	double secs = r->t1 - r->t0;

	if (json)
		printf("{\"role\":\"recv\",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,"
		       "\"goodput_gbps\":%.3f,\"verified\":%s}\n", r->got, secs,
		       r->got * 8 / secs / 1e9, r->ok ? "true" : "false");
	else
		printf("xroce recv: %" PRIu64 " bytes in %.3f s = %.3f Gbit/s, "
		       "integrity %s\n", r->got, secs, r->got * 8 / secs / 1e9,
		       r->ok ? "verified" : "FAILED");
	return r->ok ? XR_EXIT_OK : xr_err(CMD, -EIO, "integrity check failed");
}

int cmd_recv(int argc, char **argv)
{
	struct receiver r = { .fd = -1 };
	struct recv_opts o;
	int rc;

	rc = parse(argc, argv, &o);
	if (rc != XR_CONTINUE)
		return rc;
	r.out = o.out;
	r.half = (o.buflen / 2) & ~4095ull;
	/* Device, PD, CQs, two halves and the trailer registered for the
	 * sender's WRITEs, a QP with receives posted for its immediates. */
	rc = xf_open(CMD, &o.co, o.co.ep.port, 2 * r.half + XF_TRAILER,
		     XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_WRITE, &r.x);
	/* Accept, offering the buffer in our private data. */
	if (!rc)
		rc = accept_sender(&r, &o);
	/* Wait for completions: each chunk checked and handed back with a
	 * credit, then the verdict. */
	if (!rc)
		rc = receive_all(&r, o.idle_ms);
	if (!rc)
		rc = report(&r, o.co.ep.json);
	if (r.fd >= 0)
		close(r.fd);
	xf_close(&r.x);
	return rc;
}
