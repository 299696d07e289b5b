// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce send: move N bytes (a reproducible pattern) or a file to a
 * listening `xroce recv` with RDMA WRITEs, and report goodput, packets,
 * retransmissions and duration.  As an example of the library: set up the
 * objects (loader/xfer_conn.c), connect with our credit buffer in the
 * CONNECT private data and learn the receiver's buffer from the ACCEPT's,
 * then post WRITEs into it chunk by chunk as the receiver's credits come
 * back (loader/xfer_proto.h), reaping completions as we go.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "xfer_conn.h"
#include "xfer_data.h"
#include "xfer_opts.h"
#include "xfer_proto.h"

#define CMD "send"
/* Our two halves are sized before the receiver says how large its are:
 * allocate for the largest we take. */
#define SEND_HALF_MAX (64ull << 20)
/* After the halves: one page of credits (the receiver writes only
 * immediates there), then our copy of the trailer. */
#define SEND_BUF (2 * SEND_HALF_MAX + 2 * 4096)
/* wr_ids: 0 and 1 are WRITEs from that half; the trailer is 2. */
#define WR_TRAILER 2

struct send_opts {
	struct xf_common co;
	const char *host;
	const char *file;        /* -f FILE, or NULL for -n */
	uint64_t total;          /* -n BYTES */
	uint64_t wrmax;          /* largest single WRITE */
	uint64_t seed;
	uint64_t pause_at;       /* --pause-at BYTES; UINT64_MAX: none */
	uint32_t pause_ms;       /* --pause-ms */
};

/* One transfer being sent. */
struct sender {
	struct xf_ctx x;
	const struct send_opts *o;
	int fd;                  /* the input file, or -1 */
	uint64_t total;          /* bytes to send */
	uint8_t *credit_buf;     /* in x.buf, after the two halves */
	struct xf_welcome wel;   /* the receiver's buffer */
	uint64_t half;
	uint64_t off;            /* bytes posted so far */
	uint32_t k;              /* next chunk */
	uint32_t credits;        /* bit h: the receiver's half h is free */
	uint32_t inflight[2];    /* WRITEs from our half h not yet complete */
	struct xr_hash hs;       /* of the bytes sent */
	bool done_posted, done_completed;
	int result;              /* the receiver's verdict: -1 none yet, 1 ok */
	double waiting_since;    /* idle with nothing outstanding since */
	double pause_until;      /* --pause-at: idle until then (0: not yet) */
	bool pausing;
	uint32_t give_up_ms;
	double t0, t1;
};

static void usage(FILE *f)
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
"      --pause-at BYTES  once BYTES went out and were acknowledged, post\n"
"                      nothing for --pause-ms (the connection stays up, idle)\n"
"      --pause-ms MS   length of that pause (default 5000)\n"
"%s", xf_common_help);
}

/* Apply option c of send's own: XR_CONTINUE, or an exit status. */
static int parse_opt(int c, const char *arg, struct send_opts *o,
		     bool *have_n)
{
	switch (c) {
	case 'n':
		if (xf_parse_size(arg, &o->total))
			return xr_usage_err(CMD, "bad size '%s'", arg);
		*have_n = true;
		return XR_CONTINUE;
	case 'f':
		o->file = arg;
		return XR_CONTINUE;
	case 'w':
		if (xf_parse_size(arg, &o->wrmax) || !o->wrmax || o->wrmax > (1u << 30))
			return xr_usage_err(CMD, "bad WRITE size '%s'", arg);
		return XR_CONTINUE;
	case 'S':
		if (xf_parse_size(arg, &o->seed))
			return xr_usage_err(CMD, "bad seed '%s'", arg);
		return XR_CONTINUE;
	case 'A':
		if (xf_parse_size(arg, &o->pause_at))
			return xr_usage_err(CMD, "bad size '%s'", arg);
		return XR_CONTINUE;
	case 'M':
		if (xr_parse_u32(arg, 0, 3600000, &o->pause_ms))
			return xr_usage_err(CMD, "bad pause '%s'", arg);
		return XR_CONTINUE;
	}
	return xf_parse_common(CMD, c, arg, &o->co);
}

static int parse(int argc, char **argv, struct send_opts *o)
{
	static const struct option opts[] = {
		XF_COMMON_OPTS,
		{ "bytes", required_argument, NULL, 'n' },
		{ "file", required_argument, NULL, 'f' },
		{ "wr", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 'S' },
		{ "pause-at", required_argument, NULL, 'A' },
		{ "pause-ms", required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_n = false;
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->co.ep.port = XF_DEFAULT_PORT;
	o->wrmax = 1u << 20;
	o->seed = 1;
	o->pause_at = UINT64_MAX;
	o->pause_ms = 5000;
	while ((c = getopt_long(argc, argv, ":" XF_COMMON_SHORT "n:f:w:", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return XR_EXIT_OK;
		}
		rc = parse_opt(c, optarg, o, &have_n);
		if (rc == XR_NOT_MINE)
			return xr_opt_err(CMD, c, argv);
		if (rc != XR_CONTINUE)
			return rc;
	}
	if (!o->co.ep.nplanes)
		return xr_usage_err(CMD, "which interface? (-i IF)");
	if (optind + 1 != argc)
		return xr_usage_err(CMD, "which host? (one numeric address)");
	o->host = argv[optind];
	if (!!o->file == have_n)
		return xr_usage_err(CMD, "give either -n BYTES or -f FILE");
	return XR_CONTINUE;
}

/* Open -f FILE and learn its size; with -n there is nothing to open. */
static int open_source(struct sender *s)
{
	off_t sz;

	s->total = s->o->total;
	if (!s->o->file)
		return XR_EXIT_OK;
	s->fd = open(s->o->file, O_RDONLY);
	if (s->fd < 0)
		return xr_err(CMD, -errno, "cannot open %s", s->o->file);
	sz = lseek(s->fd, 0, SEEK_END);
	if (sz < 0 || lseek(s->fd, 0, SEEK_SET) < 0)
		return xr_err(CMD, -errno, "cannot size %s", s->o->file);
	s->total = (uint64_t)sz;
	return XR_EXIT_OK;
}

/* Connect with our hello (what we send, where credits go) and take the
 * receiver's welcome (where the data goes). */
static int connect_receiver(struct sender *s)
{
	const struct send_opts *o = s->o;
	struct xf_hello hel;
	int rc;

	memset(&hel, 0, sizeof(hel));
	hel.magic = XF_MAGIC;
	hel.flags = o->file ? XF_F_FILE : 0;
	hel.total = s->total;
	hel.seed = o->seed;
	hel.credit_addr = (uint64_t)(uintptr_t)s->credit_buf;
	hel.credit_rkey = s->x.mr->rkey;
	xroce_set_private_data(s->x.qp, &hel, sizeof(hel));
	rc = xroce_connect(s->x.qp, o->host, o->co.ep.port, 5000);
	if (rc)
		return xr_err(CMD, rc, "cannot connect to %s port %u", o->host,
			      o->co.ep.port);
	if (xroce_get_private_data(s->x.qp, &s->wel, sizeof(s->wel)) != sizeof(s->wel) ||
	    s->wel.magic != XF_MAGIC || !s->wel.half)
		return xr_err(CMD, -EPROTO, "the peer is not `xroce recv`");
	if (s->wel.half > SEND_HALF_MAX)
		return xr_err(CMD, -EINVAL, "receiver buffer halves of %" PRIu64
			      " bytes are above this sender's 64 MiB", s->wel.half);
	s->half = s->wel.half;
	return XR_EXIT_OK;
}

/* Count send completions: 0, or an exit status for a failed one. */
static int on_send_wcs(struct sender *s, const struct xroce_wc *wc, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (wc[i].status != XROCE_WC_SUCCESS)
			return xr_err(CMD, 0, "a WRITE failed: %s",
				      xroce_wc_status_str(wc[i].status));
		if (wc[i].wr_id < WR_TRAILER)
			s->inflight[wc[i].wr_id]--;
		else
			s->done_completed = true;
	}
	return 0;
}

/* Produce l bytes at stream offset off into dst: read the file, or fill
 * in the pattern; hash them. */
static int produce(struct sender *s, uint8_t *dst, uint64_t off, uint32_t l)
{
	if (s->fd >= 0) {
		if (read(s->fd, dst, l) != (ssize_t)l)
			return xr_err(CMD, -EIO, "reading %s", s->o->file);
	} else {
		xr_pattern_fill(dst, off, l, s->o->seed);
	}
	xr_hash_update(&s->hs, dst, l);
	return 0;
}

/* Chunk k into our half k%2 and out to the receiver's, one WRITE's worth
 * at a time: the first WRITEs are on the wire while the rest is produced,
 * and every post lets the library run (ACKs, retransmissions), as a real
 * application's compute loop should.  The last WRITE carries CHUNK|k. */
static int send_chunk(struct sender *s)
{
	uint32_t h = s->k % 2;
	uint64_t len = s->total - s->off < s->half ? s->total - s->off : s->half, p;
	uint8_t *src = s->x.buf + h * s->half;
	struct xroce_wc wc[16];
	bool filled = false;
	int rc, n;

	for (p = 0; p < len;) {
		uint32_t l = (uint32_t)(len - p < s->o->wrmax ? len - p : s->o->wrmax);

		if (!filled && (rc = produce(s, src + p, s->off + p, l)))
			return rc;
		filled = true;
		rc = xr_post_write(s->x.qp, s->x.mr->lkey, h, src + p, l,
				   s->wel.addr + h * s->half + p, s->wel.rkey,
				   p + l == len, XF_CHUNK | (s->k & 0x0fffffffu));
		if (rc == -ENOMEM) { /* send queue full: drain a bit */
			n = xroce_wait_cq(s->x.scq, 16, wc, 1000);
			if (n > 0 && (rc = on_send_wcs(s, wc, n)))
				return rc;
			continue;
		}
		if (rc)
			return xr_err(CMD, rc, "cannot post a WRITE");
		s->inflight[h]++;
		p += l;
		filled = false;
	}
	s->credits &= ~(1u << h);
	s->off += len;
	s->k++;
	return 0;
}

/* Everything is posted: {length, hash} into the receiver's trailer with
 * WRITE_WITH_IMM(DONE). */
static int send_trailer(struct sender *s)
{
	struct xf_trailer tr = { s->total, xr_hash_final(&s->hs) };
	uint8_t *mine = s->credit_buf + 4096;
	int rc;

	memcpy(mine, &tr, sizeof(tr));
	rc = xr_post_write(s->x.qp, s->x.mr->lkey, WR_TRAILER, mine, sizeof(tr),
			   s->wel.addr + 2 * s->half, s->wel.rkey, true, XF_DONE);
	if (rc)
		return xr_err(CMD, rc, "cannot post the trailer");
	s->done_posted = true;
	return 0;
}

/* The receiver's credits and verdict; the number of its messages. */
static int take_credits(struct sender *s)
{
	struct xroce_wc wc[16];
	int n = xroce_poll_cq(s->x.rcq, 16, wc), i;

	if (n > 0)
		xr_post_empty_recvs(s->x.qp, n);
	for (i = 0; i < n; i++) {
		if (XF_TYPE(wc[i].imm_data) == XF_CREDIT)
			s->credits |= 1u << (XF_ARG(wc[i].imm_data) % 2);
		else if (XF_TYPE(wc[i].imm_data) == XF_RESULT)
			s->result = (int)XF_ARG(wc[i].imm_data);
	}
	return n;
}

/* Everything we sent is acknowledged and we wait for the receiver's
 * credit or verdict: with no work outstanding the library cannot see the
 * receiver die (like an RC QP), so this protocol gives up on its own after
 * the same timeout.  heard: the receiver's messages just taken. */
static int watch_receiver(struct sender *s, int heard)
{
	if (heard > 0 || s->inflight[0] || s->inflight[1] || s->pausing ||
	    (s->done_posted && !s->done_completed)) {
		s->waiting_since = 0;
	} else if (!s->waiting_since) {
		s->waiting_since = xr_mono_s();
	} else if ((xr_mono_s() - s->waiting_since) * 1000 > s->give_up_ms) {
		return xr_err(CMD, -ETIMEDOUT, "nothing from the receiver within "
			      "%u ms while waiting for its %s", s->give_up_ms,
			      s->off < s->total ? "credit" : "verdict");
	}
	return 0;
}

/* Reap send completions for up to 10 ms, then the receiver's messages. */
static int reap(struct sender *s)
{
	struct xroce_wc wc[16];
	int n = xroce_wait_cq(s->x.scq, 16, wc, 10), rc;

	if (n < 0)
		return xr_err(CMD, n, "polling");
	rc = on_send_wcs(s, wc, n);
	if (rc)
		return rc;
	n = take_credits(s);
	if (s->result < 0 && xroce_qp_state(s->x.qp) != XROCE_QPS_RTS)
		return xr_err(CMD, -ECONNRESET, "the connection failed");
	return watch_receiver(s, n);
}

/* --pause-at: past it, post nothing more, and once everything sent so far
 * is acknowledged (the WRITEs completed) stay idle for pause_ms, e.g. while
 * a test changes the MTU.  True while pausing. */
static bool pause_now(struct sender *s)
{
	if (s->off < s->o->pause_at || s->off >= s->total)
		return false;
	if (!s->pause_until && !s->inflight[0] && !s->inflight[1]) {
		s->pause_until = xr_mono_s() + s->o->pause_ms / 1e3;
		fprintf(stderr, "xroce send: %" PRIu64 " bytes acknowledged, "
			"idle for %u ms\n", s->off, s->o->pause_ms);
	}
	return !s->pause_until || xr_mono_s() < s->pause_until;
}

/* Send every chunk as its half is free at both ends, then the trailer,
 * until the verdict is in and every WRITE is complete. */
static int send_all(struct sender *s)
{
	int rc;

	xr_hash_init(&s->hs);
	s->credits = 3;
	s->result = -1;
	/* The QP's own peer timeout (the library's 2 s unless -t). */
	s->give_up_ms = s->o->co.timeout_ms ? s->o->co.timeout_ms : 2000;
	s->t0 = xr_mono_s();
	while (s->result < 0 || !s->done_completed || s->inflight[0] ||
	       s->inflight[1]) {
		s->pausing = pause_now(s);
		if (!s->pausing && s->off < s->total && (s->credits & (1u << (s->k % 2))) &&
		    !s->inflight[s->k % 2]) {
			rc = send_chunk(s);
		} else {
			rc = 0;
			if (s->off == s->total && !s->done_posted)
				rc = send_trailer(s);
			if (!rc)
				rc = reap(s);
		}
		if (rc)
			return rc;
	}
	s->t1 = xr_mono_s();
	return 0;
}

static void report_json(const struct sender *s, const struct xroce_qp_stats *qs)
{
	struct xroce_path_stats ps[XROCE_MAX_PATHS];
	int np = xroce_path_stats(s->x.qp, ps, XROCE_MAX_PATHS), j;
	double secs = s->t1 - s->t0;

	printf("{\"role\":\"send\",\"bytes\":%" PRIu64 ",\"seconds\":%.6f,"
	       "\"goodput_gbps\":%.3f,\"tx_pkts\":%" PRIu64 ",\"retx_pkts\":%"
	       PRIu64 ",\"dup_pkts\":%" PRIu64 ",\"fast_retx\":%" PRIu64
	       ",\"timeout_retx\":%" PRIu64
	       ",\"paths\":%u,\"tx_engine\":\"%s\",\"verified\":%s,\"path\":[",
	       s->total, secs, s->total * 8 / secs / 1e9, qs->tx_pkts,
	       qs->retx_pkts, qs->dup_pkts, qs->fast_retx, qs->timeout_retx,
	       qs->npaths, xr_engine_name(s->x.dev),
	       s->result == 1 ? "true" : "false");
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
}

static int report(const struct sender *s)
{
	struct xroce_qp_stats qs;
	double secs = s->t1 - s->t0;

	xroce_qp_stats(s->x.qp, &qs);
	if (s->o->co.ep.json)
		report_json(s, &qs);
	else
		printf("xroce send: %" PRIu64 " bytes in %.3f s = %.3f Gbit/s; %"
		       PRIu64 " packets, %" PRIu64 " retransmitted (%.2f%%: %" PRIu64
		       " by SACK, %" PRIu64 " by timeout) over %u paths; receiver "
		       "integrity %s\n", s->total, secs, s->total * 8 / secs / 1e9,
		       qs.tx_pkts, qs.retx_pkts,
		       qs.tx_pkts ? 100.0 * (double)qs.retx_pkts / (double)qs.tx_pkts : 0.0,
		       qs.fast_retx, qs.timeout_retx, qs.npaths,
		       s->result == 1 ? "verified" : "FAILED");
	return s->result == 1 ? XR_EXIT_OK :
		xr_err(CMD, -EIO, "the receiver reports corrupted data");
}

int cmd_send(int argc, char **argv)
{
	struct sender s = { .fd = -1 };
	struct send_opts o;
	int rc;

	rc = parse(argc, argv, &o);
	if (rc != XR_CONTINUE)
		return rc;
	s.o = &o;
	rc = open_source(&s);
	/* Device, PD, CQs, our halves and credit page registered (the
	 * receiver writes credits into it), a QP with receives posted. */
	if (!rc)
		rc = xf_open(CMD, &o.co, 0, SEND_BUF,
			     XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_WRITE, &s.x);
	/* Connect: where credits go in our private data, where the data
	 * goes in the receiver's. */
	if (!rc) {
		s.credit_buf = s.x.buf + 2 * SEND_HALF_MAX;
		rc = connect_receiver(&s);
	}
	/* Post WRITEs chunk by chunk as credits come back, reaping their
	 * completions, until the receiver's verdict. */
	if (!rc)
		rc = send_all(&s);
	if (!rc)
		rc = report(&s);
	if (s.fd >= 0)
		close(s.fd);
	xf_close(&s.x);
	return rc;
}
