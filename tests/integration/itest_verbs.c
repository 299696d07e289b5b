// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * itest_verbs: the two-sided verbs, READ, streams and every completion
 * status, end to end between two processes.
 *
 *   itest_verbs server IF          accept on control port 4797
 *   itest_verbs client IF HOST     connect and run the script below
 *   (XR_VERBS_PHASES=AB on both sides: only those phases)
 *
 * Both sides run the same script; the server mirrors the client's.  A
 * control connection (SENDs of small inline messages) keeps them in step:
 * after each phase the server reports its own verdict, so either side
 * fails the run.  Phases that break their connection use a QP of their
 * own; buffer addresses and rkeys travel as private data.
 *
 *  M  API misuse: NULL pointers to every public function taking pointers,
 *     bad sizes and flags, post_send on an unconnected QP -> negative errno
 *     (and a log message where the library has a device to log through).
 *  A  SEND/RECV: 300 SENDs of mixed sizes (0 B .. 200 KB) on stream 0, with
 *     SEND_WITH_IMM, 3- and 16-entry scatter-gather lists and inline SENDs
 *     from a reused stack buffer; each lands in its own receive (n-th SEND
 *     -> n-th receive, in any arrival order).  Every completion (order,
 *     wr_id, byte_len, imm, opcode) and every byte is checked, and the
 *     bytes after each message in its receive buffer must be untouched.
 *  B  READ of 0 B .. 1 MiB at various offsets of a REMOTE_READ region into
 *     a LOCAL_WRITE-only buffer, on two streams; the server keeps polling.
 *     Then a SEND each way on one of those streams: READ requests and
 *     answers hold their place in a stream's order, they must not stall
 *     what follows them.  Then 12 READs of 2 MiB (posted at once) on a QP
 *     whose peer timeout is 50 ms: answers still arriving keep the peer
 *     alive; the server's QP (timeout 50 ms too) idles 100 ms before the
 *     first READ arrives.
 *  C  Streams, in C_ROUNDS rounds: one 8 MiB SEND on stream 1, then 50
 *     small SENDs on stream 2; completions in order per stream, and under
 *     loss some of stream 2's before stream 1's on each side (a round whose
 *     stream-1 tail lost nothing cannot show it, hence rounds).  In round 0,
 *     WRITE_WITH_IMM on stream 3 between SENDs consumes the stream's next
 *     receive (its buffer untouched, the data at raddr).
 *  D  Receiver not ready, then success: the receive is posted ~20 ms after
 *     the SEND arrived; meanwhile another stream completes.
 *  E  Receiver not ready exhausted (rnr_retry 2, 100 us): the SEND fails
 *     with RNR_RETRY_EXC_ERR, everything else outstanding (a READ earlier
 *     in the send queue on another stream, WRITEs and a SEND behind it) is
 *     flushed, the flushed READ's buffer stays untouched when the answer
 *     comes later, the QP is in ERR and refuses new work.
 *  F  Remote errors: WRITE with a wrong rkey, WRITE to a region without
 *     REMOTE_WRITE, READ of a region without REMOTE_READ, WRITE out of
 *     bounds -> REM_ACCESS_ERR; SEND larger than its receive ->
 *     REM_INV_REQ_ERR.  The target memory stays untouched.
 *  G  Flush on destroy: large WRITEs and a READ destroyed at once get one
 *     completion each (SUCCESS or WR_FLUSH_ERR); the server's posted
 *     receives complete as WR_FLUSH_ERR when it destroys its QP.  Destroyed
 *     with more outstanding than its CQs hold: what does not fit is
 *     dropped, but nothing stays behind (LeakSanitizer; the script checks
 *     the XDP maps for posted receives and READ windows left over).
 *  I  Deregistered as soon as the reader is done (what ofi_rxm's
 *     rendezvous does): I_ROUNDS times the server registers a fresh
 *     malloc'd buffer (REMOTE_READ), the client READs it whole and says
 *     so, and the server deregisters and frees it at once.  Under loss the
 *     server's answer may still wait for the ACK of its last packets when
 *     the buffer goes (deregistration fences it: counted in the server's
 *     fenced_answers); that must not break the connection: both QPs stay
 *     in RTS, every READ succeeds with the right bytes, and a last READ of
 *     the R region after the rounds succeeds too.
 *  H  Local errors: post_send checks every work request synchronously
 *     (bad lkey, memory outside the region, READ into a region without
 *     LOCAL_WRITE, too many SGEs, inline too large, bad stream ...) and
 *     returns a negative errno with *bad_wr set and nothing queued, so
 *     XROCE_WC_LOC_PROT_ERR never appears as a completion.  Receive limits
 *     (XROCE_MAX_RECV_PER_STREAM) and their flush on destroy.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xroce/xroce.h"

#define PORT 4797
#define MEM_SIZE (80u << 20)
#define MIB (1u << 20)

/* ---- memory layout ------------------------------------------------------ */
/* Client: S = sources (LOCAL_WRITE), L = READ landing (LOCAL_WRITE only),
 * N = a region without LOCAL_WRITE (REMOTE_READ only). */
#define S_LEN (18 * MIB)
#define S_A_OFF 0u
#define S_BIG_OFF (8 * MIB)             /* 8 MiB pattern: C, E, G */
#define S_MISC_OFF (17 * MIB)
#define L_LEN (6 * MIB)
#define L_MISC_OFF (5 * MIB)
#define N_LEN (64u << 10)
/* Server: RB = receive buffers (LOCAL_WRITE), W = LOCAL+REMOTE_WRITE (no
 * REMOTE_READ), R = REMOTE_READ only, filled with rpat(). */
#define RB_LEN (18 * MIB)
#define RB_A_OFF 0u
#define RB_C_OFF (8 * MIB)
#define RB_C2_OFF (RB_C_OFF + 8 * MIB + 4096)
#define RB_D_OFF (17 * MIB)
#define RB_F_OFF (RB_D_OFF + (64u << 10))
#define RB_G_OFF (RB_D_OFF + (128u << 10))
#define W_LEN (16 * MIB)
#define W_C_OFF 0u
#define W_E_OFF (1 * MIB)
#define W_G_OFF (1 * MIB)
#define W_E2_OFF (10 * MIB)
#define W_H_OFF (14 * MIB)
#define W_F_OFF (15 * MIB)
#define R_LEN (2 * MIB)
#define CB_SLOTS 32                     /* control receives posted */
#define CB_SLOT 64

#define BIG (8 * MIB)
#define GUARD 64
#define UNTOUCHED 0xee

/* What the server tells the client in its ACCEPT. */
struct info {
	uint64_t w_addr;
	uint32_t w_rkey, w_len;
	uint64_t r_addr;
	uint32_t r_rkey, r_len;
};

/* Control messages (inline SENDs on the control QP). */
enum { CT_DONE = 1, CT_RESULT = 2, CT_READY = 3 };
struct ctlmsg {
	uint32_t tag;
	uint32_t phase;
	int32_t ok;
	uint32_t v1, v2, v3;
};

struct env {
	bool server;
	const char *host;
	int ts;                            /* timeouts scale (XR_TIME_SCALE) */
	struct xroce_device *dev;
	struct xroce_pd *pd;
	uint8_t *s, *l, *n, *rb, *w, *r, *cb;
	struct xroce_mr *mr_s, *mr_l, *mr_n, *mr_rb, *mr_w, *mr_r, *mr_cb;
	struct xroce_qp *ctl;
	struct xroce_cq *ctl_scq, *ctl_rcq;
	struct info peer;                  /* client: the server's regions */
	struct info mine;                  /* server: what it advertises */
};

/* A QP of a phase with its own CQs. */
struct pqp {
	struct xroce_qp *qp;
	struct xroce_cq *scq, *rcq;
};

/* ---- reporting ---------------------------------------------------------- */
static const char *role = "?";
static char phase = 'M';
static unsigned long nlog_err;         /* error messages the library logged */
static bool quiet;                     /* misuse checks: do not print them */

static void lib_log(void *arg, enum xroce_log_level lvl, const char *fmt,
		    va_list ap)
{
	if (lvl == XROCE_LOG_ERROR)
		nlog_err++;
	if (quiet || lvl > XROCE_LOG_WARN)
		return;
	fprintf(stderr, "itest_verbs %s [%c] lib: ", role, phase);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void failf(int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "itest_verbs %s: phase %c: FAIL (line %d): ", role, phase,
		line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define EXPECT(cond, ...)                                                     \
	do {                                                                  \
		if (!(cond)) {                                                \
			failf(__LINE__, __VA_ARGS__);                         \
			return -1;                                            \
		}                                                             \
	} while (0)

#define TRY(call)                                                             \
	do {                                                                  \
		int rc_ = (call);                                             \
		EXPECT(rc_ >= 0, "%s: %s", #call, strerror(-rc_));            \
	} while (0)

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static const char *st(enum xroce_wc_status s)
{
	return xroce_wc_status_str(s);
}

/* ---- patterns ----------------------------------------------------------- */
/* Byte j of the message with this seed: a hash, so a payload placed at the
 * wrong offset (by any multiple of anything) does not match by accident. */
static uint8_t pat(uint32_t seed, uint32_t j)
{
	uint32_t x = seed * 0x9e3779b1u + j * 0x85ebca77u;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint8_t)x;
}

static void fill(uint8_t *p, uint32_t seed, uint32_t from, uint32_t len)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		p[j] = pat(seed, from + j);
}

/* Index of the first byte of p[0..len) that is not pat(seed, from + j). */
static long check_pat(const uint8_t *p, uint32_t seed, uint32_t from, uint32_t len)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		if (p[j] != pat(seed, from + j))
			return j;
	return -1;
}

static long check_byte(const uint8_t *p, uint8_t v, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (p[j] != v)
			return (long)j;
	return -1;
}

/* The server's READ region holds rpat(offset). */
static uint8_t rpat(uint32_t off)
{
	return pat(0x5eadu, off);
}

/* ---- completions ---------------------------------------------------------- */
/* One completion within timeout_ms: 1, 0 on timeout, or a negative errno. */
static int wait_wc(struct env *e, struct xroce_cq *cq, struct xroce_wc *wc,
		   int timeout_ms)
{
	return xroce_wait_cq(cq, 1, wc, timeout_ms * e->ts);
}

/* Nothing (more) arrives within ms. */
static int expect_quiet(struct env *e, struct xroce_cq *cq, int ms, const char *what)
{
	struct xroce_wc wc;
	int n = xroce_wait_cq(cq, 1, &wc, ms);

	EXPECT(n == 0, "%s: unexpected completion (wr_id %#llx, %s, opcode %d)",
	       what, (unsigned long long)wc.wr_id, st(wc.status), wc.opcode);
	return 0;
}

/* Diagnostics after a failure: what the sender saw. */
static void print_stats(const struct xroce_qp *qp)
{
	struct xroce_qp_stats qs;
	struct xroce_path_stats ps[XROCE_MAX_PATHS];
	int n, i;

	if (xroce_qp_stats(qp, &qs))
		return;
	fprintf(stderr, "itest_verbs %s [%c]: qp %u: %llu packets, %llu retransmitted "
		"(%llu SACK, %llu timer), %llu completed\n", role, phase,
		xroce_qp_num(qp), (unsigned long long)qs.tx_pkts,
		(unsigned long long)qs.retx_pkts, (unsigned long long)qs.fast_retx,
		(unsigned long long)qs.timeout_retx, (unsigned long long)qs.wr_completed);
	n = xroce_path_stats(qp, ps, XROCE_MAX_PATHS);
	for (i = 0; i < n; i++)
		fprintf(stderr, "  path %d: state %d tx %llu retx %llu lost %llu timeouts "
			"%llu srtt %u us\n", i, ps[i].state,
			(unsigned long long)ps[i].tx_pkts,
			(unsigned long long)ps[i].retx_pkts,
			(unsigned long long)ps[i].lost_pkts,
			(unsigned long long)ps[i].timeouts, ps[i].rtt_srtt_ns / 1000);
}

/* ---- control channel ------------------------------------------------------ */
static int ctl_post(struct env *e, uint32_t slot)
{
	struct xroce_sge g = { (uint64_t)(uintptr_t)(e->cb + slot * CB_SLOT), CB_SLOT,
			       e->mr_cb->lkey };
	struct xroce_recv_wr r = { .wr_id = slot, .sg_list = &g, .num_sge = 1 }, *bad;

	TRY(xroce_post_recv(e->ctl, &r, &bad));
	return 0;
}

static int ctl_send(struct env *e, uint32_t tag, int ok, uint32_t v1, uint32_t v2,
		    uint32_t v3)
{
	struct ctlmsg m = { tag, (uint32_t)phase, ok, v1, v2, v3 };
	struct xroce_sge g = { (uint64_t)(uintptr_t)&m, sizeof(m), 0 };
	struct xroce_send_wr wr = { .wr_id = 0xc7, .sg_list = &g, .num_sge = 1,
				    .opcode = XROCE_WR_SEND,
				    .send_flags = XROCE_SEND_INLINE |
						  XROCE_SEND_SIGNALED }, *bad;
	struct xroce_wc wc;

	TRY(xroce_post_send(e->ctl, &wr, &bad));
	/* Delivered before anything else: the library only retransmits while
	 * called, and the next step may block in connect/accept. */
	EXPECT(wait_wc(e, e->ctl_scq, &wc, 30000) == 1, "control message %u not "
	       "acknowledged", tag);
	EXPECT(wc.wr_id == 0xc7 && wc.status == XROCE_WC_SUCCESS, "control send: "
	       "%s", st(wc.status));
	return 0;
}

/* The next control message, which must be tag for the current phase. */
static int ctl_recv(struct env *e, uint32_t tag, struct ctlmsg *m, int timeout_ms)
{
	struct xroce_wc wc;
	int n = wait_wc(e, e->ctl_rcq, &wc, timeout_ms);

	EXPECT(n == 1, "no control message from the peer within %d ms", timeout_ms);
	EXPECT(wc.status == XROCE_WC_SUCCESS && wc.byte_len == sizeof(*m) &&
	       wc.wr_id < CB_SLOTS, "control receive: %s, %u bytes", st(wc.status),
	       wc.byte_len);
	memcpy(m, e->cb + wc.wr_id * CB_SLOT, sizeof(*m));
	if (ctl_post(e, (uint32_t)wc.wr_id))
		return -1;
	EXPECT(m->tag == tag && m->phase == (uint32_t)phase,
	       "control message %u for phase %c, expected %u for %c", m->tag,
	       (char)m->phase, tag, phase);
	return 0;
}

/* Client: the server's verdict on the phase. */
static int ctl_result(struct env *e, struct ctlmsg *m)
{
	if (ctl_recv(e, CT_RESULT, m, 60000))
		return -1;
	EXPECT(m->ok, "the server reported a failure (see its output)");
	return 0;
}

/* ---- phase QPs ------------------------------------------------------------ */
static int pqp_create(struct env *e, struct pqp *p, struct xroce_qp_init_attr a,
		      int cqe)
{
	memset(p, 0, sizeof(*p));
	TRY(xroce_create_cq(e->dev, cqe, &p->scq));
	TRY(xroce_create_cq(e->dev, cqe, &p->rcq));
	a.send_cq = p->scq;
	a.recv_cq = p->rcq;
	TRY(xroce_create_qp(e->pd, &a, &p->qp));
	if (e->server)
		TRY(xroce_set_private_data(p->qp, &e->mine, sizeof(e->mine)));
	return 0;
}

/* Client: connect (and learn the server's regions); server: accept. */
static int pqp_connect(struct env *e, struct pqp *p)
{
	if (e->server) {
		uint64_t t0 = now_ms();
		int rc;

		/* Keep the device's other connections going meanwhile:
		 * xroce_accept does not run the progress engine. */
		while ((rc = xroce_accept(p->qp, 0)) == -ETIMEDOUT &&
		       now_ms() - t0 < 30000u * (unsigned int)e->ts) {
			struct pollfd pfd = { xroce_device_fd(e->dev), POLLIN, 0 };

			TRY(xroce_progress(e->dev));
			poll(&pfd, 1, 1);
		}
		TRY(rc);
	} else {
		struct info in;

		TRY(xroce_connect(p->qp, e->host, PORT, 30000 * e->ts));
		EXPECT(xroce_get_private_data(p->qp, &in, sizeof(in)) == sizeof(in),
		       "no private data from the server");
		e->peer = in;
	}
	EXPECT(xroce_qp_state(p->qp) == XROCE_QPS_RTS, "QP not in RTS after set-up");
	return 0;
}

static int pqp_open(struct env *e, struct pqp *p, struct xroce_qp_init_attr a, int cqe)
{
	if (pqp_create(e, p, a, cqe))
		return -1;
	return pqp_connect(e, p);
}

static int pqp_destroy(struct pqp *p)
{
	if (p->qp)
		TRY(xroce_destroy_qp(p->qp));
	p->qp = NULL;
	if (p->scq)
		TRY(xroce_destroy_cq(p->scq));
	if (p->rcq)
		TRY(xroce_destroy_cq(p->rcq));
	p->scq = p->rcq = NULL;
	return 0;
}

static int post_recv1(struct xroce_qp *qp, uint64_t wr_id, uint16_t stream,
		      void *buf, uint32_t len, uint32_t lkey)
{
	struct xroce_sge g = { (uint64_t)(uintptr_t)buf, len, lkey };
	struct xroce_recv_wr r = { .wr_id = wr_id, .sg_list = buf ? &g : NULL,
				   .num_sge = buf ? 1 : 0, .stream = stream }, *bad;

	TRY(xroce_post_recv(qp, &r, &bad));
	EXPECT(bad == NULL, "bad_wr set on success");
	return 0;
}

/* One work request with one (or no) sge. */
static int post1(struct xroce_qp *qp, uint64_t wr_id, enum xroce_wr_opcode op,
		 uint16_t stream, void *buf, uint32_t len, uint32_t lkey,
		 uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct xroce_sge g = { (uint64_t)(uintptr_t)buf, len, lkey };
	struct xroce_send_wr wr = { .wr_id = wr_id, .sg_list = buf ? &g : NULL,
				    .num_sge = buf ? 1 : 0, .opcode = op,
				    .send_flags = XROCE_SEND_SIGNALED,
				    .imm_data = imm, .stream = stream }, *bad;

	wr.rdma.remote_addr = raddr;
	wr.rdma.rkey = rkey;
	TRY(xroce_post_send(qp, &wr, &bad));
	EXPECT(bad == NULL, "bad_wr set on success");
	return 0;
}

/* =========================================================================
 * M: API misuse
 * ========================================================================= */
/* call must fail with a negative errno; if logged, with a message too. */
#define MISUSE(call, logged)                                                  \
	do {                                                                  \
		unsigned long n0_ = nlog_err;                                 \
		int rc_;                                                      \
		quiet = true;                                                 \
		rc_ = (call);                                                 \
		quiet = false;                                                \
		EXPECT(rc_ < 0, "%s returned %d, expected a negative errno",  \
		       #call, rc_);                                           \
		EXPECT(!(logged) || nlog_err > n0_, "%s: no message logged",  \
		       #call);                                                \
		nmisuse++;                                                    \
	} while (0)

static int phase_m(struct env *e)
{
	struct xroce_device_attr da = { .nplanes = 1, .log_fn = lib_log };
	struct xroce_qp_init_attr qa = { 0 };
	struct xroce_device *dev = NULL;
	struct xroce_pd *pd = NULL;
	struct xroce_mr *mr = NULL;
	struct xroce_cq *cq = NULL;
	struct xroce_qp *qp = NULL;
	struct xroce_wc wc;
	struct xroce_qp_stats qs;
	struct xroce_path_stats ps[2];
	struct xroce_send_wr swr = { .opcode = XROCE_WR_RDMA_WRITE }, *sbad;
	struct xroce_recv_wr rwr = { 0 }, *rbad;
	uint8_t stackbuf[64], priv[8] = { 0 };
	void *p;
	int nmisuse = 0;

	phase = 'M';
	/* device */
	MISUSE(xroce_open_device(NULL, &dev), false);
	MISUSE(xroce_open_device(&da, NULL), true);
	da.nplanes = 0;
	MISUSE(xroce_open_device(&da, &dev), false);
	EXPECT(dev == NULL, "open_device set *out on failure");
	MISUSE(xroce_close_device(NULL), false);
	MISUSE(xroce_progress(NULL), false);
	MISUSE(xroce_device_fd(NULL), false);
	EXPECT(xroce_device_ctrl_port(NULL) == 0, "ctrl_port(NULL)");
	EXPECT(xroce_mem_alloc(NULL, 4096, 0) == NULL, "mem_alloc(NULL)");
	quiet = true;
	p = xroce_mem_alloc(e->dev, (size_t)1 << 40, 0);
	quiet = false;
	EXPECT(p == NULL, "mem_alloc of 1 TiB succeeded");
	MISUSE(xroce_mem_free(NULL, e->s), false);
	MISUSE(xroce_mem_free(e->dev, NULL), false);
	MISUSE(xroce_mem_free(e->dev, stackbuf), true);
	MISUSE(xroce_mem_free(e->dev, e->s + 4096), true); /* not an allocation */
	/* protection domains and regions */
	MISUSE(xroce_alloc_pd(NULL, &pd), false);
	MISUSE(xroce_alloc_pd(e->dev, NULL), false);
	MISUSE(xroce_dealloc_pd(NULL), false);
	MISUSE(xroce_dealloc_pd(e->pd), true);            /* regions registered */
	MISUSE(xroce_reg_mr(NULL, e->s, 4096, XROCE_ACCESS_LOCAL_WRITE, &mr), false);
	MISUSE(xroce_reg_mr(e->pd, e->s, 4096, XROCE_ACCESS_LOCAL_WRITE, NULL), false);
	MISUSE(xroce_reg_mr(e->pd, NULL, 4096, XROCE_ACCESS_LOCAL_WRITE, &mr), true);
	MISUSE(xroce_reg_mr(e->pd, stackbuf, sizeof(stackbuf),
			    XROCE_ACCESS_LOCAL_WRITE, &mr), true);
	MISUSE(xroce_reg_mr(e->pd, e->s, 0, XROCE_ACCESS_LOCAL_WRITE, &mr), true);
	MISUSE(xroce_reg_mr(e->pd, e->s, MEM_SIZE * 2u, XROCE_ACCESS_LOCAL_WRITE, &mr),
	       true);
	MISUSE(xroce_reg_mr(e->pd, e->s, 4096, 0x80, &mr), true);
	MISUSE(xroce_reg_mr(e->pd, e->s, 4096, XROCE_ACCESS_REMOTE_WRITE, &mr), true);
	EXPECT(mr == NULL, "reg_mr set *out on failure");
	MISUSE(xroce_dereg_mr(NULL), false);
	/* completion queues */
	MISUSE(xroce_create_cq(NULL, 16, &cq), false);
	MISUSE(xroce_create_cq(e->dev, 16, NULL), false);
	MISUSE(xroce_create_cq(e->dev, 0, &cq), true);
	MISUSE(xroce_create_cq(e->dev, -5, &cq), true);
	MISUSE(xroce_destroy_cq(NULL), false);
	MISUSE(xroce_poll_cq(NULL, 1, &wc), false);
	MISUSE(xroce_poll_cq(e->ctl_rcq, 1, NULL), false);
	MISUSE(xroce_poll_cq(e->ctl_rcq, -1, &wc), false);
	MISUSE(xroce_wait_cq(NULL, 1, &wc, 0), false);
	MISUSE(xroce_wait_cq(e->ctl_rcq, 1, NULL, 0), false);
	MISUSE(xroce_wait_cq(e->ctl_rcq, 0, &wc, 0), false);
	MISUSE(xroce_destroy_cq(e->ctl_rcq), true);      /* a QP uses it */
	/* queue pairs */
	TRY(xroce_create_cq(e->dev, 512, &cq));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	MISUSE(xroce_create_qp(NULL, &qa, &qp), false);
	MISUSE(xroce_create_qp(e->pd, NULL, &qp), false);
	MISUSE(xroce_create_qp(e->pd, &qa, NULL), false);
	qa.send_cq = NULL;
	MISUSE(xroce_create_qp(e->pd, &qa, &qp), true);
	qa.send_cq = cq;
	qa.npaths = XROCE_MAX_PATHS + 1;
	MISUSE(xroce_create_qp(e->pd, &qa, &qp), true);
	qa.npaths = 0;
	qa.flags = 0x100;
	MISUSE(xroce_create_qp(e->pd, &qa, &qp), true);
	qa.flags = 0;
	qa.max_inflight = 1;
	MISUSE(xroce_create_qp(e->pd, &qa, &qp), true);
	qa.max_inflight = 0;
	qa.mtu = 100;
	MISUSE(xroce_create_qp(e->pd, &qa, &qp), true);
	qa.mtu = 0;
	EXPECT(qp == NULL, "create_qp set *out on failure");
	TRY(xroce_create_qp(e->pd, &qa, &qp));
	MISUSE(xroce_destroy_qp(NULL), false);
	EXPECT(xroce_qp_num(NULL) == 0, "qp_num(NULL)");
	EXPECT(xroce_qp_state(NULL) == XROCE_QPS_ERR, "qp_state(NULL)");
	EXPECT(xroce_qp_state(qp) == XROCE_QPS_INIT, "new QP not in INIT");
	MISUSE(xroce_connect(NULL, "10.0.0.1", PORT, 10), false);
	MISUSE(xroce_connect(qp, NULL, PORT, 10), false);
	MISUSE(xroce_connect(qp, "not-an-address", PORT, 10), true);
	MISUSE(xroce_connect(qp, "127.0.0.1", 0, 10), true);
	MISUSE(xroce_accept(NULL, 0), false);
	MISUSE(xroce_set_private_data(NULL, priv, sizeof(priv)), false);
	MISUSE(xroce_set_private_data(qp, NULL, 4), false);
	MISUSE(xroce_set_private_data(qp, stackbuf, XROCE_PRIVATE_DATA_MAX + 1), true);
	MISUSE(xroce_get_private_data(NULL, priv, sizeof(priv)), false);
	MISUSE(xroce_get_private_data(qp, NULL, 4), false);
	MISUSE(xroce_get_private_data(qp, priv, sizeof(priv)), false); /* not connected */
	MISUSE(xroce_qp_stats(NULL, &qs), false);
	MISUSE(xroce_qp_stats(qp, NULL), false);
	MISUSE(xroce_path_stats(NULL, ps, 2), false);
	MISUSE(xroce_path_stats(qp, NULL, 2), false);
	MISUSE(xroce_path_stats(qp, ps, -1), false);
	/* work requests */
	MISUSE(xroce_post_send(NULL, &swr, &sbad), false);
	MISUSE(xroce_post_send(qp, NULL, &sbad), false);
	MISUSE(xroce_post_send(qp, &swr, &sbad), true);  /* not connected */
	EXPECT(sbad == &swr, "post_send on an unconnected QP: bad_wr not set");
	MISUSE(xroce_post_recv(NULL, &rwr, &rbad), false);
	MISUSE(xroce_post_recv(qp, NULL, &rbad), false);
	/* The ctl QP is connected: connecting or accepting it again fails. */
	MISUSE(xroce_connect(e->ctl, "127.0.0.1", PORT, 10), true);
	MISUSE(xroce_accept(e->ctl, 0), true);
	MISUSE(xroce_set_private_data(e->ctl, priv, sizeof(priv)), true);
	EXPECT(xroce_wc_status_str((enum xroce_wc_status)1234) != NULL,
	       "status_str of an unknown status");
	TRY(xroce_destroy_qp(qp));
	TRY(xroce_destroy_cq(cq));
	EXPECT(expect_quiet(e, e->ctl_rcq, 1, "misuse") == 0, "stray completion");
	printf("%s M: %d misuses refused with a negative errno, no crash\n", role,
	       nmisuse);
	return 0;
}

/* =========================================================================
 * A: SEND/RECV, out-of-order arrival across paths
 * ========================================================================= */
#define NA 300u
#define A_RQ XROCE_MAX_RECV_PER_STREAM   /* receives posted ahead */

static const uint32_t a_sizes[] = { 0, 1, 1408, 1409, 20000, 200000, 100,
				    4096, 2816, 2817, 65536, 7, 1407, 12345 };
#define NASIZES (sizeof(a_sizes) / sizeof(a_sizes[0]))

enum a_kind { AK_SEND, AK_IMM, AK_SGE3, AK_SGE16, AK_INLINE, AK_INLINE_IMM };

struct adesc {
	enum a_kind kind;
	uint32_t size, imm;
	int nsge;
	uint32_t sge_len[XROCE_MAX_SGE];
};

/* Message i of phase A, the same on both sides. */
static void a_desc(uint32_t i, struct adesc *d)
{
	int k;

	memset(d, 0, sizeof(*d));
	d->kind = AK_SEND;
	d->size = a_sizes[i % NASIZES];
	d->nsge = d->size || i % 2 ? 1 : 0;   /* 0 B: with and without an sge */
	d->sge_len[0] = d->size;
	if (i % 10 == 3) {
		d->kind = AK_IMM;
		d->imm = 0xa5000000u | (i * 7919u);
	} else if (i % 25 == 7) {
		d->kind = AK_SGE3;
		d->nsge = 3;
		d->sge_len[0] = 1 + i % 200;
		d->sge_len[1] = 3000;
		d->sge_len[2] = 1409;
	} else if (i % 50 == 0 && i) {
		d->kind = AK_SGE16;
		d->nsge = XROCE_MAX_SGE;
		for (k = 0; k < XROCE_MAX_SGE; k++)
			d->sge_len[k] = k == 5 ? 0 : 97 + 13 * (uint32_t)k;
	} else if (i % 20 == 11) {
		d->kind = i % 40 == 31 ? AK_INLINE_IMM : AK_INLINE;
		d->imm = 0x1a000000u | i;
		d->size = (i * 37) % (XROCE_MAX_INLINE + 1);
		d->nsge = d->size > 128 ? 2 : 1;
		d->sge_len[0] = d->nsge == 2 ? d->size / 2 : d->size;
		d->sge_len[1] = d->size - d->sge_len[0];
	}
	if (d->kind == AK_SGE3 || d->kind == AK_SGE16)
		for (d->size = 0, k = 0; k < d->nsge; k++)
			d->size += d->sge_len[k];
}

static bool a_has_imm(const struct adesc *d)
{
	return d->kind == AK_IMM || d->kind == AK_INLINE_IMM;
}

/* Server: receive buffer of message i: longer than the message. */
static uint32_t a_rlen(uint32_t i, const struct adesc *d)
{
	return d->size + 16 + (i % 4) * 40;
}

static int client_a(struct env *e)
{
	struct xroce_qp_init_attr qa = { .max_send_wr = 512,
					 /* receives are reposted as they are
					  * consumed: room for the server to keep
					  * up, not a test of RNR (see D, E) */
					 .rnr_retry = 10, .rnr_timer_us = 500 };
	struct xroce_send_wr wrs[8], *bad;
	struct xroce_sge sges[8][XROCE_MAX_SGE];
	uint8_t stackbuf[8][XROCE_MAX_INLINE];
	struct xroce_qp_stats qs;
	struct ctlmsg m;
	struct pqp p;
	uint64_t off = S_A_OFF, t0;
	uint32_t i, done = 0;

	phase = 'A';
	if (pqp_open(e, &p, qa, 1024))
		return -1;
	t0 = now_ms();
	for (i = 0; i < NA;) {
		uint32_t n = 1 + i % 7, k;

		if (n > NA - i)
			n = NA - i;
		memset(wrs, 0, sizeof(wrs));
		for (k = 0; k < n; k++) {
			struct xroce_send_wr *w = &wrs[k];
			struct adesc d;
			uint32_t cum = 0;
			int g;

			a_desc(i + k, &d);
			w->wr_id = 0xa0000 + i + k;
			w->opcode = a_has_imm(&d) ? XROCE_WR_SEND_WITH_IMM : XROCE_WR_SEND;
			w->imm_data = d.imm;
			w->send_flags = XROCE_SEND_SIGNALED;
			w->sg_list = d.nsge ? sges[k] : NULL;
			w->num_sge = d.nsge;
			w->next = k + 1 < n ? &wrs[k + 1] : NULL;
			if (d.kind == AK_INLINE || d.kind == AK_INLINE_IMM) {
				/* From an unregistered stack buffer. */
				w->send_flags |= XROCE_SEND_INLINE;
				fill(stackbuf[k], 0xa0000 + i + k, 0, d.size);
				for (g = 0; g < d.nsge; g++) {
					sges[k][g].addr = (uint64_t)(uintptr_t)(stackbuf[k] + cum);
					sges[k][g].length = d.sge_len[g];
					sges[k][g].lkey = 0;
					cum += d.sge_len[g];
				}
				continue;
			}
			for (g = 0; g < d.nsge; g++) {
				EXPECT(off + d.sge_len[g] + GUARD <= S_BIG_OFF,
				       "phase A sources do not fit");
				fill(e->s + off, 0xa0000 + i + k, cum, d.sge_len[g]);
				sges[k][g].addr = (uint64_t)(uintptr_t)(e->s + off);
				sges[k][g].length = d.sge_len[g];
				sges[k][g].lkey = e->mr_s->lkey;
				cum += d.sge_len[g];
				off += d.sge_len[g] + GUARD;
			}
		}
		TRY(xroce_post_send(p.qp, &wrs[0], &bad));
		EXPECT(bad == NULL, "bad_wr set on success");
		/* Inline payloads were copied: the buffers may be reused now. */
		memset(stackbuf, 0x77, sizeof(stackbuf));
		i += n;
	}
	while (done < NA) {
		struct xroce_wc wc[32];
		int n = xroce_wait_cq(p.scq, 32, wc, 20000 * e->ts), k;

		EXPECT(n > 0, "%u of %u send completions", done, NA);
		for (k = 0; k < n; k++, done++) {
			struct adesc d;

			a_desc(done, &d);
			if (wc[k].status != XROCE_WC_SUCCESS)
				print_stats(p.qp);
			EXPECT(wc[k].status == XROCE_WC_SUCCESS, "send %u: %s", done,
			       st(wc[k].status));
			EXPECT(wc[k].wr_id == 0xa0000 + done, "completion %u has wr_id "
			       "%#llx (out of order)", done,
			       (unsigned long long)wc[k].wr_id);
			EXPECT(wc[k].opcode == XROCE_WC_SEND && wc[k].byte_len == d.size &&
			       wc[k].stream == 0 && wc[k].qp_num == xroce_qp_num(p.qp),
			       "send %u: opcode %d byte_len %u (want %u) stream %u",
			       done, wc[k].opcode, wc[k].byte_len, d.size, wc[k].stream);
		}
	}
	if (expect_quiet(e, p.scq, 100, "after phase A"))
		return -1;
	xroce_qp_stats(p.qp, &qs);
	if (ctl_result(e, &m))
		return -1;
	printf("%s A: %u SENDs in %llu ms, completions in order (%llu packets, %llu "
	       "retransmitted, %llu by SACK, %llu by timer)\n", role, NA,
	       (unsigned long long)(now_ms() - t0), (unsigned long long)qs.tx_pkts,
	       (unsigned long long)qs.retx_pkts, (unsigned long long)qs.fast_retx,
	       (unsigned long long)qs.timeout_retx);
	return pqp_destroy(&p);
}

static int server_a_check(struct env *e, uint32_t i, const uint64_t *roff)
{
	struct adesc d;
	uint8_t *b = e->rb + roff[i];
	long bad;

	a_desc(i, &d);
	bad = check_pat(b, 0xa0000 + i, 0, d.size);
	EXPECT(bad < 0, "message %u (%u B, kind %d): byte %ld wrong", i, d.size,
	       d.kind, bad);
	bad = check_byte(b + d.size, UNTOUCHED, a_rlen(i, &d) - d.size + GUARD);
	EXPECT(bad < 0, "message %u: byte %ld after its end (receive of %u B) was "
	       "written", i, bad, a_rlen(i, &d));
	return 0;
}

static int server_a(struct env *e, struct ctlmsg *res)
{
	static uint64_t roff[NA];
	struct xroce_qp_init_attr qa = { 0 };
	uint64_t off = RB_A_OFF;
	struct pqp p;
	uint32_t i;

	phase = 'A';
	for (i = 0; i < NA; i++) {
		struct adesc d;

		a_desc(i, &d);
		roff[i] = off;
		off += a_rlen(i, &d) + GUARD;
	}
	EXPECT(off <= RB_C_OFF, "phase A receive buffers do not fit");
	memset(e->rb + RB_A_OFF, UNTOUCHED, off - RB_A_OFF);
	if (pqp_create(e, &p, qa, 1024))
		return -1;
	for (i = 0; i < A_RQ && i < NA; i++) {
		struct adesc d;

		a_desc(i, &d);
		/* A 0-byte message also fits a receive without buffer. */
		if (post_recv1(p.qp, 0xa0000 + i, 0, d.size || i % 4 ? e->rb + roff[i] : NULL,
			       a_rlen(i, &d), e->mr_rb->lkey))
			return -1;
	}
	if (pqp_connect(e, &p))
		return -1;
	for (i = 0; i < NA; i++) {
		struct xroce_wc wc;
		struct adesc d;

		a_desc(i, &d);
		EXPECT(wait_wc(e, p.rcq, &wc, 20000) == 1, "%u of %u receive "
		       "completions", i, NA);
		EXPECT(wc.status == XROCE_WC_SUCCESS, "receive %u: %s", i, st(wc.status));
		EXPECT(wc.wr_id == 0xa0000 + i, "receive completion %u has wr_id %#llx",
		       i, (unsigned long long)wc.wr_id);
		EXPECT(wc.opcode == XROCE_WC_RECV, "receive %u: opcode %d", i, wc.opcode);
		EXPECT(wc.byte_len == d.size, "receive %u: byte_len %u, sent %u", i,
		       wc.byte_len, d.size);
		EXPECT(!!(wc.wc_flags & XROCE_WC_WITH_IMM) == a_has_imm(&d) &&
		       (!a_has_imm(&d) || wc.imm_data == d.imm),
		       "receive %u: flags %#x imm %#x, want imm %d %#x", i, wc.wc_flags,
		       wc.imm_data, a_has_imm(&d), d.imm);
		EXPECT(wc.stream == 0 && wc.qp_num == xroce_qp_num(p.qp),
		       "receive %u: stream %u qp %u", i, wc.stream, wc.qp_num);
		if (server_a_check(e, i, roff))
			return -1;
		if (i + A_RQ < NA) {
			struct adesc d2;

			a_desc(i + A_RQ, &d2);
			if (post_recv1(p.qp, 0xa0000 + i + A_RQ, 0, e->rb + roff[i + A_RQ],
				       a_rlen(i + A_RQ, &d2), e->mr_rb->lkey))
				return -1;
		}
	}
	if (expect_quiet(e, p.rcq, 100, "after phase A"))
		return -1;
	/* Again, all of it: nothing landed late in a buffer already checked. */
	for (i = 0; i < NA; i++)
		if (server_a_check(e, i, roff))
			return -1;
	printf("%s A: %u receive completions in order, every byte and the bytes "
	       "after every message checked\n", role, NA);
	res->v1 = NA;
	return pqp_destroy(&p);
}

/* =========================================================================
 * B: READ
 * ========================================================================= */
struct rd {
	uint32_t off, len;
	uint16_t stream;
};

#define NB_FIXED 9
#define NB 29u
#define B_SEND_LEN 3000u                /* the SEND each way after the READs */
#define B_LONG_READS 12u                /* READs of R_LEN on a short-timeout QP */
#define B_LONG_SLOTS 3u                 /* ... landing in turns in this many buffers */
#define B_SHORT_TIMEOUT_MS 50u

static void b_desc(uint32_t i, struct rd *r)
{
	static const struct rd fixed[NB_FIXED] = {
		{ 0, 0, 0 }, { 0, 1, 0 }, { 77, 1, 3 }, { 0, 4096, 0 },
		{ 4095, 4096, 3 }, { 123, 100000, 0 }, { 0, MIB, 0 },
		{ R_LEN - MIB, MIB, 3 }, { R_LEN - 1, 1, 0 },
	};
	static const uint32_t lens[] = { 1, 1408, 1409, 5000, 65536, 7 };

	if (i < NB_FIXED) {
		*r = fixed[i];
		return;
	}
	r->len = lens[i % 6];
	r->off = (i * 7919u * 13u) % (R_LEN - r->len);
	r->stream = i % 4 == 1 ? 3 : 0;
}

static int client_b(struct env *e)
{
	struct xroce_qp_init_attr qa = { 0 };
	uint64_t loff[NB], off = 0, t0;
	uint32_t i, got = 0, next[4] = { 0 };
	struct ctlmsg m;
	struct pqp p;

	phase = 'B';
	if (pqp_open(e, &p, qa, 256))
		return -1;
	for (i = 0; i < NB; i++) {
		struct rd r;

		b_desc(i, &r);
		loff[i] = off;
		off += r.len + GUARD;
	}
	EXPECT(off <= L_MISC_OFF, "phase B landing buffers do not fit");
	memset(e->l, UNTOUCHED, off);
	t0 = now_ms();
	for (i = 0; i < NB; i++) {
		struct rd r;

		b_desc(i, &r);
		if (post1(p.qp, 0xb0000 + i, XROCE_WR_RDMA_READ, r.stream, e->l + loff[i],
			  r.len, e->mr_l->lkey, e->peer.r_addr + r.off, e->peer.r_rkey, 0))
			return -1;
	}
	for (got = 0; got < NB; got++) {
		struct xroce_wc wc;
		struct rd r;
		uint32_t k;
		long bad;

		EXPECT(wait_wc(e, p.scq, &wc, 20000) == 1, "%u of %u READ completions",
		       got, NB);
		k = (uint32_t)(wc.wr_id - 0xb0000);
		EXPECT(k < NB, "unknown wr_id %#llx", (unsigned long long)wc.wr_id);
		b_desc(k, &r);
		EXPECT(wc.status == XROCE_WC_SUCCESS, "READ %u: %s", k, st(wc.status));
		EXPECT(wc.opcode == XROCE_WC_RDMA_READ && wc.byte_len == r.len &&
		       wc.stream == r.stream, "READ %u: opcode %d byte_len %u (want %u) "
		       "stream %u", k, wc.opcode, wc.byte_len, r.len, wc.stream);
		/* In order within the stream: the next of that stream posted. */
		while (next[r.stream] < NB) {
			struct rd q;

			b_desc(next[r.stream], &q);
			if (q.stream == r.stream)
				break;
			next[r.stream]++;
		}
		EXPECT(next[r.stream] == k, "READ %u completed before READ %u of "
		       "stream %u", k, next[r.stream], r.stream);
		next[r.stream]++;
		for (i = 0; i < r.len; i++)
			if (e->l[loff[k] + i] != rpat(r.off + i))
				break;
		EXPECT(i == r.len, "READ %u (%u B at %u): byte %u wrong", k, r.len,
		       r.off, i);
		bad = check_byte(e->l + loff[k] + r.len, UNTOUCHED, GUARD);
		EXPECT(bad < 0, "READ %u: byte %ld after its end written", k, bad);
	}
	/* A READ holds its place in its stream: after the READs, a SEND each
	 * way on stream 3 must complete (ours comes after our READ requests
	 * at the server; the server's after its READ answers here). */
	{
		uint8_t *rbuf = e->l + off, *src = e->s + S_MISC_OFF;
		struct xroce_wc wc;
		long bad;

		EXPECT(off + 2 * B_SEND_LEN <= L_MISC_OFF, "phase B buffers do not fit");
		memset(rbuf, UNTOUCHED, 2 * B_SEND_LEN);
		fill(src, 0xb1, 0, B_SEND_LEN);
		if (post_recv1(p.qp, 0xb1001, 3, rbuf, 2 * B_SEND_LEN, e->mr_l->lkey) ||
		    post1(p.qp, 0xb1000, XROCE_WR_SEND, 3, src, B_SEND_LEN,
			  e->mr_s->lkey, 0, 0, 0))
			return -1;
		EXPECT(wait_wc(e, p.scq, &wc, 20000) == 1, "no completion of the "
		       "SEND after the READs");
		EXPECT(wc.wr_id == 0xb1000 && wc.status == XROCE_WC_SUCCESS,
		       "SEND after the READs: wr_id %#llx %s",
		       (unsigned long long)wc.wr_id, st(wc.status));
		EXPECT(wait_wc(e, p.rcq, &wc, 20000) == 1, "the server's SEND after "
		       "its READ answers on stream 3 never completed here");
		EXPECT(wc.wr_id == 0xb1001 && wc.status == XROCE_WC_SUCCESS &&
		       wc.opcode == XROCE_WC_RECV && wc.byte_len == B_SEND_LEN &&
		       wc.stream == 3, "receive after the READs: wr_id %#llx %s "
		       "opcode %d byte_len %u stream %u", (unsigned long long)wc.wr_id,
		       st(wc.status), wc.opcode, wc.byte_len, wc.stream);
		bad = check_pat(rbuf, 0xb2, 0, B_SEND_LEN);
		EXPECT(bad < 0, "the server's SEND: byte %ld wrong", bad);
	}
	if (expect_quiet(e, p.scq, 100, "after phase B"))
		return -1;
	/* READs whose answers take longer than the QP's peer-silence timeout:
	 * the requests are acknowledged at once, then only the answers
	 * arrive.  Arriving answers are a live peer, not a silent one. */
	{
		struct xroce_qp_init_attr q2 = {
			.timeout_ms = B_SHORT_TIMEOUT_MS * (uint32_t)e->ts };
		uint64_t t1;
		struct pqp p2;

		if (pqp_open(e, &p2, q2, 16))
			return -1;
		memset(e->l, UNTOUCHED, B_LONG_SLOTS * R_LEN);
		/* The server's QP idles past its timeout first. */
		{
			long ms = (long)B_SHORT_TIMEOUT_MS * 2 * e->ts;
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		}
		t1 = now_ms();
		/* The READs share B_LONG_SLOTS landing buffers in turns; each is
		 * checked when it completes, before a later one lands there
		 * (completions are in order on the stream, answers too). */
		for (i = 0; i < B_LONG_READS; i++)
			if (post1(p2.qp, 0xb3000 + i, XROCE_WR_RDMA_READ, 0,
				  e->l + (i % B_LONG_SLOTS) * R_LEN, R_LEN, e->mr_l->lkey,
				  e->peer.r_addr, e->peer.r_rkey, 0))
				return -1;
		for (i = 0; i < B_LONG_READS; i++) {
			struct xroce_wc wc;
			uint32_t j;

			EXPECT(wait_wc(e, p2.scq, &wc, 20000) == 1, "long READ %u: no "
			       "completion", i);
			EXPECT(wc.wr_id == 0xb3000 + i && wc.status == XROCE_WC_SUCCESS,
			       "long READ %u: wr_id %#llx %s after %llu ms (timeout %u ms)",
			       i, (unsigned long long)wc.wr_id, st(wc.status),
			       (unsigned long long)(now_ms() - t1), B_SHORT_TIMEOUT_MS);
			for (j = 0; j < R_LEN; j++)
				if (e->l[(i % B_LONG_SLOTS) * R_LEN + j] != rpat(j))
					break;
			EXPECT(j == R_LEN, "long READ %u: byte %u wrong", i, j);
		}
		printf("%s B: %u READs of %u MiB in %llu ms on a QP whose peer "
		       "timeout is %u ms\n", role, B_LONG_READS, R_LEN / MIB,
		       (unsigned long long)(now_ms() - t1), B_SHORT_TIMEOUT_MS);
		if (pqp_destroy(&p2))
			return -1;
	}
	if (ctl_send(e, CT_DONE, 1, 0, 0, 0) || ctl_result(e, &m))
		return -1;
	printf("%s B: %u READs (0 B .. 1 MiB) in %llu ms, bytes and completions "
	       "checked; a SEND each way on a stream after its READs\n", role, NB,
	       (unsigned long long)(now_ms() - t0));
	return pqp_destroy(&p);
}

static int server_check_r(struct env *e)
{
	uint32_t i;

	for (i = 0; i < R_LEN; i++)
		EXPECT(e->r[i] == rpat(i), "READ region byte %u changed", i);
	return 0;
}

static int server_b(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	struct ctlmsg m;
	struct pqp p;

	phase = 'B';
	if (pqp_open(e, &p, qa, 256))
		return -1;
	/* The READs are answered while we wait here (waiting polls) for the
	 * client's SEND on stream 3, which it posts after its READs; then
	 * ours, after our answers on that stream. */
	{
		uint8_t *rbuf = e->rb + RB_A_OFF, *src = rbuf + 8192;
		struct xroce_wc wc;
		long bad;

		memset(rbuf, UNTOUCHED, 2 * B_SEND_LEN);
		if (post_recv1(p.qp, 0xb2001, 3, rbuf, 2 * B_SEND_LEN, e->mr_rb->lkey))
			return -1;
		EXPECT(wait_wc(e, p.rcq, &wc, 60000) == 1, "the client's SEND after "
		       "its READs on stream 3 never completed here");
		EXPECT(wc.wr_id == 0xb2001 && wc.status == XROCE_WC_SUCCESS &&
		       wc.byte_len == B_SEND_LEN && wc.stream == 3, "receive after "
		       "the READs: wr_id %#llx %s byte_len %u stream %u",
		       (unsigned long long)wc.wr_id, st(wc.status), wc.byte_len,
		       wc.stream);
		bad = check_pat(rbuf, 0xb1, 0, B_SEND_LEN);
		EXPECT(bad < 0, "the client's SEND: byte %ld wrong", bad);
		fill(src, 0xb2, 0, B_SEND_LEN);
		if (post1(p.qp, 0xb2000, XROCE_WR_SEND, 3, src, B_SEND_LEN,
			  e->mr_rb->lkey, 0, 0, 0))
			return -1;
		EXPECT(wait_wc(e, p.scq, &wc, 20000) == 1 && wc.wr_id == 0xb2000 &&
		       wc.status == XROCE_WC_SUCCESS, "our SEND after the READ "
		       "answers did not complete");
	}
	/* The client's QP for long READs (answered while we wait), with a
	 * short peer timeout too: it is idle for longer than that before the
	 * first READ arrives, and answering must not find it "silent". */
	{
		struct xroce_qp_init_attr q2 = {
			.timeout_ms = B_SHORT_TIMEOUT_MS * (uint32_t)e->ts };
		struct pqp p2;

		if (pqp_open(e, &p2, q2, 16))
			return -1;
		if (ctl_recv(e, CT_DONE, &m, 60000))
			return -1;
		if (pqp_destroy(&p2))
			return -1;
	}
	if (server_check_r(e))
		return -1;
	printf("%s B: READs answered while polling, region unchanged\n", role);
	return pqp_destroy(&p);
}

/* =========================================================================
 * C: stream independence, WRITE_WITH_IMM consuming a receive
 * ========================================================================= */
#define N2 50u
#define C_WIMM_LEN 5000u

static uint32_t c2_len(uint32_t i)
{
	return 64 + i;
}

/* Stream 3: SEND 100, WRITE_IMM 5000, SEND 200, WRITE_IMM 0. */
static const uint32_t c3_len[4] = { 100, C_WIMM_LEN, 200, 0 };
static bool c3_is_write(uint32_t k)
{
	return k == 1 || k == 3;
}

static uint32_t c3_imm(uint32_t k)
{
	return 0x33330000u + k;
}

#define C_ROUNDS 6

/* Seeds of round r's messages. */
static uint32_t c1_seed(uint32_t r)
{
	return 0xc1 + r;
}

static uint32_t c2_seed(uint32_t r, uint32_t i)
{
	return 0xc20000 + r * 0x100 + i;
}

static bool overtake_required(void)
{
	const char *v = getenv("XR_VERBS_STREAM_OVERTAKE");

	return !v || strcmp(v, "0") != 0;
}

/* Client, one round: 8 MiB on stream 1, then N2 small SENDs on stream 2
 * (and in round 0 the stream-3 mix); per-stream order checked; returns
 * how many stream-2 completions came before stream 1's in *n2_before. */
static int client_c_round(struct env *e, struct pqp *p, uint32_t r,
			  uint32_t *n2_before, uint64_t *ms)
{
	uint8_t *src2 = e->s + S_MISC_OFF;
	uint32_t i, got, n3 = r ? 0 : 4, next2 = 0, next3 = 0;
	bool big_done = false;
	char order[128];
	struct ctlmsg m;
	uint64_t t0;

	fill(e->s + S_BIG_OFF, c1_seed(r), 0, BIG);
	for (i = 0; i < N2; i++)
		fill(src2 + i * 256, c2_seed(r, i), 0, c2_len(i));
	for (i = 0; i < n3; i++)
		fill(src2 + N2 * 256 + i * 8192, 0xc3000 + i, 0, c3_len[i]);
	/* The server posts this round's receives first. */
	if (ctl_recv(e, CT_READY, &m, 60000))
		return -1;
	EXPECT(m.v1 == r, "server ready for round %u, expected %u", m.v1, r);
	t0 = now_ms();
	if (post1(p->qp, 0xc1000 + r, XROCE_WR_SEND, 1, e->s + S_BIG_OFF, BIG,
		  e->mr_s->lkey, 0, 0, 0))
		return -1;
	for (i = 0; i < N2; i++)
		if (post1(p->qp, 0xc2000 + r * N2 + i, XROCE_WR_SEND, 2, src2 + i * 256,
			  c2_len(i), e->mr_s->lkey, 0, 0, 0))
			return -1;
	for (i = 0; i < n3; i++)
		if (post1(p->qp, 0xc3000 + i, c3_is_write(i) ?
			  XROCE_WR_RDMA_WRITE_WITH_IMM : XROCE_WR_SEND, 3,
			  c3_len[i] ? src2 + N2 * 256 + i * 8192 : NULL, c3_len[i],
			  e->mr_s->lkey, e->peer.w_addr + W_C_OFF, e->peer.w_rkey,
			  c3_imm(i)))
			return -1;
	*n2_before = 0;
	for (got = 0; got < 1 + N2 + n3; got++) {
		struct xroce_wc wc;

		EXPECT(wait_wc(e, p->scq, &wc, 30000) == 1, "round %u: %u of %u send "
		       "completions", r, got, 1 + N2 + n3);
		EXPECT(wc.status == XROCE_WC_SUCCESS, "wr %#llx: %s",
		       (unsigned long long)wc.wr_id, st(wc.status));
		if (got < sizeof(order) - 1)
			order[got] = (char)('0' + wc.stream);
		if (wc.wr_id == 0xc1000 + r) {
			EXPECT(wc.stream == 1 && wc.opcode == XROCE_WC_SEND &&
			       wc.byte_len == BIG, "stream 1: stream %u opcode %d len %u",
			       wc.stream, wc.opcode, wc.byte_len);
			big_done = true;
			*ms = now_ms() - t0;
		} else if (wc.stream == 2) {
			EXPECT(wc.wr_id == 0xc2000 + r * N2 + next2, "stream 2: %#llx "
			       "before %#x", (unsigned long long)wc.wr_id,
			       0xc2000 + r * N2 + next2);
			EXPECT(wc.opcode == XROCE_WC_SEND && wc.byte_len == c2_len(next2),
			       "stream 2 message %u: opcode %d len %u", next2, wc.opcode,
			       wc.byte_len);
			next2++;
			if (!big_done)
				(*n2_before)++;
		} else {
			EXPECT(wc.stream == 3 && next3 < n3 && wc.wr_id == 0xc3000 + next3,
			       "stream %u: wr %#llx, expected stream 3's %u", wc.stream,
			       (unsigned long long)wc.wr_id, next3);
			EXPECT(wc.byte_len == c3_len[next3] &&
			       wc.opcode == (c3_is_write(next3) ? XROCE_WC_RDMA_WRITE :
					     XROCE_WC_SEND), "stream 3 message %u: opcode "
			       "%d len %u", next3, wc.opcode, wc.byte_len);
			next3++;
		}
	}
	order[got < sizeof(order) - 1 ? got : sizeof(order) - 1] = 0;
	printf("%s C: round %u: send completions by stream: %s\n", role, r, order);
	return 0;
}

static int client_c(struct env *e)
{
	struct xroce_qp_init_attr qa = { .max_send_wr = 256 };
	uint32_t r, n2[C_ROUNDS], total = 0;
	uint64_t ms[C_ROUNDS];
	struct ctlmsg m;
	struct pqp p;

	phase = 'C';
	if (pqp_open(e, &p, qa, 256))
		return -1;
	for (r = 0; r < C_ROUNDS; r++) {
		if (client_c_round(e, &p, r, &n2[r], &ms[r]))
			return -1;
		total += n2[r];
	}
	if (expect_quiet(e, p.scq, 100, "after phase C"))
		return -1;
	if (ctl_result(e, &m))
		return -1;
	printf("%s C: stream-2 send completions before stream 1's (8 MiB, done "
	       "after", role);
	for (r = 0; r < C_ROUNDS; r++)
		printf(" %llu", (unsigned long long)ms[r]);
	printf(" ms) per round:");
	for (r = 0; r < C_ROUNDS; r++)
		printf(" %u", n2[r]);
	printf(" of %u; receive completions at the server: %u in all\n", N2, m.v1);
	/* Stream 2's small messages, posted after stream 1's 8 MiB one, must
	 * not wait for it: the library cuts packets from the streams in turns,
	 * and stream 1's retransmissions do not hold stream 2 back either.
	 * (XR_VERBS_STREAM_OVERTAKE=0 turns the check off, for experiments.) */
	if (overtake_required()) {
		EXPECT(total > 0, "in %d rounds no stream-2 send completion came "
		       "before stream 1's: stream 2 waited for stream 1", C_ROUNDS);
		EXPECT(m.v1 > 0, "in %d rounds no stream-2 receive completion came "
		       "before stream 1's at the server", C_ROUNDS);
	}
	return pqp_destroy(&p);
}

/* Server, one round: post its receives, say so, check what arrives. */
static int server_c_round(struct env *e, struct pqp *p, uint32_t r, uint32_t *n2_before)
{
	uint8_t *big = e->rb + RB_C_OFF, *b2 = e->rb + RB_C2_OFF;
	uint8_t *b3 = b2 + N2 * 256, *wt = e->w + W_C_OFF;
	uint32_t i, got, n3 = r ? 0 : 4, next2 = 0, next3 = 0;
	bool big_done = false;
	char order[128];
	long bad;

	memset(big, UNTOUCHED, BIG + 4096);
	memset(b2, UNTOUCHED, N2 * 256 + 4 * 256 + GUARD);
	memset(wt, UNTOUCHED, C_WIMM_LEN + GUARD);
	if (post_recv1(p->qp, 0xc1000 + r, 1, big, BIG + 100, e->mr_rb->lkey))
		return -1;
	for (i = 0; i < N2; i++)
		if (post_recv1(p->qp, 0xc2000 + r * N2 + i, 2, b2 + i * 256, 200,
			       e->mr_rb->lkey))
			return -1;
	/* The last receive of stream 3 has no buffer (a 0-byte WRITE_IMM). */
	for (i = 0; i < n3; i++)
		if (post_recv1(p->qp, 0xc3000 + i, 3, i < 3 ? b3 + i * 256 : NULL, 200,
			       e->mr_rb->lkey))
			return -1;
	if (ctl_send(e, CT_READY, 1, r, 0, 0))
		return -1;
	*n2_before = 0;
	for (got = 0; got < 1 + N2 + n3; got++) {
		struct xroce_wc wc;

		EXPECT(wait_wc(e, p->rcq, &wc, 30000) == 1, "round %u: %u of %u receive "
		       "completions", r, got, 1 + N2 + n3);
		EXPECT(wc.status == XROCE_WC_SUCCESS, "receive %#llx: %s",
		       (unsigned long long)wc.wr_id, st(wc.status));
		if (got < sizeof(order) - 1)
			order[got] = (char)('0' + wc.stream);
		if (wc.stream == 1) {
			EXPECT(wc.wr_id == 0xc1000 + r && wc.opcode == XROCE_WC_RECV &&
			       wc.byte_len == BIG && !wc.wc_flags, "stream 1: wr %#llx "
			       "opcode %d len %u", (unsigned long long)wc.wr_id, wc.opcode,
			       wc.byte_len);
			big_done = true;
		} else if (wc.stream == 2) {
			EXPECT(wc.wr_id == 0xc2000 + r * N2 + next2 &&
			       wc.opcode == XROCE_WC_RECV && wc.byte_len == c2_len(next2),
			       "stream 2 message %u: wr %#llx opcode %d len %u", next2,
			       (unsigned long long)wc.wr_id, wc.opcode, wc.byte_len);
			bad = check_pat(b2 + next2 * 256, c2_seed(r, next2), 0,
					c2_len(next2));
			EXPECT(bad < 0, "stream 2 message %u: byte %ld wrong", next2, bad);
			bad = check_byte(b2 + next2 * 256 + c2_len(next2), UNTOUCHED,
					 256 - c2_len(next2));
			EXPECT(bad < 0, "stream 2 message %u: byte %ld after its end", next2,
			       bad);
			next2++;
			if (!big_done)
				(*n2_before)++;
		} else {
			EXPECT(wc.stream == 3 && next3 < n3 && wc.wr_id == 0xc3000 + next3,
			       "stream %u: wr %#llx, expected stream 3 receive %u",
			       wc.stream, (unsigned long long)wc.wr_id, next3);
			EXPECT(wc.byte_len == c3_len[next3], "stream 3 message %u: byte_len "
			       "%u", next3, wc.byte_len);
			if (c3_is_write(next3)) {
				EXPECT(wc.opcode == XROCE_WC_RECV_RDMA_WITH_IMM &&
				       (wc.wc_flags & XROCE_WC_WITH_IMM) &&
				       wc.imm_data == c3_imm(next3), "WRITE_IMM %u: opcode %d "
				       "flags %#x imm %#x", next3, wc.opcode, wc.wc_flags,
				       wc.imm_data);
				EXPECT(wc.remote_addr_end == e->mine.w_addr + W_C_OFF +
				       c3_len[next3], "WRITE_IMM %u: remote_addr_end %#llx",
				       next3, (unsigned long long)wc.remote_addr_end);
			} else {
				EXPECT(wc.opcode == XROCE_WC_RECV && !wc.wc_flags,
				       "SEND %u on stream 3: opcode %d flags %#x", next3,
				       wc.opcode, wc.wc_flags);
				bad = check_pat(b3 + next3 * 256, 0xc3000 + next3, 0,
						c3_len[next3]);
				EXPECT(bad < 0, "stream 3 SEND %u: byte %ld wrong", next3, bad);
			}
			next3++;
		}
	}
	order[got < sizeof(order) - 1 ? got : sizeof(order) - 1] = 0;
	bad = check_pat(big, c1_seed(r), 0, BIG);
	EXPECT(bad < 0, "8 MiB message: byte %ld wrong", bad);
	bad = check_byte(big + BIG, UNTOUCHED, 4096);
	EXPECT(bad < 0, "8 MiB message: byte %ld after its end written", bad);
	if (n3) {
		/* The WRITE_IMM's data is at its raddr; the receive it consumed
		 * kept its buffer untouched; the SENDs around it took the
		 * receives around it; nothing ran over its end. */
		bad = check_pat(wt, 0xc3001, 0, C_WIMM_LEN);
		EXPECT(bad < 0, "WRITE_IMM data: byte %ld wrong", bad);
		bad = check_byte(wt + C_WIMM_LEN, UNTOUCHED, GUARD);
		EXPECT(bad < 0, "WRITE_IMM: byte %ld after its end written", bad);
		bad = check_byte(b3 + 256, UNTOUCHED, 256);
		EXPECT(bad < 0, "the receive a WRITE_IMM consumed was written (byte "
		       "%ld)", bad);
		bad = check_byte(b3 + c3_len[0], UNTOUCHED, 256 - c3_len[0]);
		EXPECT(bad < 0, "stream 3 SEND 0: byte %ld after its end written", bad);
		bad = check_byte(b3 + 2 * 256 + c3_len[2], UNTOUCHED, 2 * 256 - c3_len[2]);
		EXPECT(bad < 0, "stream 3 SEND 2: byte %ld after its end written", bad);
	}
	printf("%s C: round %u: receive completions by stream: %s\n", role, r, order);
	return 0;
}

static int server_c(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	uint32_t r, n2, total = 0;
	struct pqp p;

	phase = 'C';
	if (pqp_open(e, &p, qa, 256))
		return -1;
	for (r = 0; r < C_ROUNDS; r++) {
		if (server_c_round(e, &p, r, &n2))
			return -1;
		total += n2;
	}
	if (expect_quiet(e, p.rcq, 100, "after phase C"))
		return -1;
	printf("%s C: per-stream order, data and WRITE_WITH_IMM receives checked; "
	       "stream-2 receives before stream 1's: %u in %d rounds\n", role, total,
	       C_ROUNDS);
	res->v1 = total;
	return pqp_destroy(&p);
}

/* =========================================================================
 * D: receiver not ready, then success
 * ========================================================================= */
#define D_LEN 3000u
#define D_DELAY_MS 20

static int client_d(struct env *e)
{
	/* 1 + 2 + ... + 64 ms of retries: the receive comes after ~20 ms. */
	struct xroce_qp_init_attr qa = { .rnr_retry = 7, .rnr_timer_us = 1000 };
	uint8_t *src = e->s + S_MISC_OFF;
	struct xroce_wc wc[2];
	struct xroce_qp_stats qs;
	uint64_t t0, t[2];
	struct ctlmsg m;
	struct pqp p;
	int k;

	phase = 'D';
	if (pqp_open(e, &p, qa, 64))
		return -1;
	fill(src, 0xd4, 0, D_LEN);
	fill(src + 8192, 0xd5, 0, 16);
	t0 = now_ms();
	if (post1(p.qp, 0xd4, XROCE_WR_SEND, 4, src, D_LEN, e->mr_s->lkey, 0, 0, 0) ||
	    post1(p.qp, 0xd5, XROCE_WR_SEND, 5, src + 8192, 16, e->mr_s->lkey, 0, 0, 0))
		return -1;
	for (k = 0; k < 2; k++) {
		EXPECT(wait_wc(e, p.scq, &wc[k], 10000) == 1, "%d of 2 completions", k);
		t[k] = now_ms() - t0;
		EXPECT(wc[k].status == XROCE_WC_SUCCESS, "wr %#llx: %s",
		       (unsigned long long)wc[k].wr_id, st(wc[k].status));
	}
	/* Stream 5 is not held up by stream 4 waiting for its receive. */
	EXPECT(wc[0].wr_id == 0xd5 && wc[1].wr_id == 0xd4, "completion order %#llx, "
	       "%#llx: stream 4's RNR held up stream 5",
	       (unsigned long long)wc[0].wr_id, (unsigned long long)wc[1].wr_id);
	EXPECT(wc[1].byte_len == D_LEN && wc[1].stream == 4, "stream 4: len %u",
	       wc[1].byte_len);
	EXPECT(t[1] >= D_DELAY_MS, "the SEND completed after %llu ms, before its "
	       "receive was posted", (unsigned long long)t[1]);
	xroce_qp_stats(p.qp, &qs);
	EXPECT(qs.retx_pkts >= 1, "no retry of the refused SEND");
	if (ctl_result(e, &m))
		return -1;
	printf("%s D: SEND refused (RNR), retried, completed after %llu ms (stream 5 "
	       "after %llu ms); %llu retransmissions\n", role,
	       (unsigned long long)t[1], (unsigned long long)t[0],
	       (unsigned long long)qs.retx_pkts);
	return pqp_destroy(&p);
}

static int server_d(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	uint8_t *b = e->rb + RB_D_OFF;
	struct xroce_wc wc;
	uint64_t t0;
	struct pqp p;
	long bad;

	phase = 'D';
	memset(b, UNTOUCHED, 16384);
	if (pqp_create(e, &p, qa, 64) ||
	    post_recv1(p.qp, 0xd5, 5, b + 8192, 64, e->mr_rb->lkey) ||
	    pqp_connect(e, &p))
		return -1;
	EXPECT(wait_wc(e, p.rcq, &wc, 10000) == 1 && wc.wr_id == 0xd5 &&
	       wc.status == XROCE_WC_SUCCESS && wc.byte_len == 16 && wc.stream == 5,
	       "stream 5's SEND did not arrive first");
	/* The SEND on stream 4 has no receive: keep polling meanwhile. */
	t0 = now_ms();
	while (now_ms() - t0 < D_DELAY_MS)
		if (expect_quiet(e, p.rcq, 2, "stream 4 before its receive"))
			return -1;
	if (post_recv1(p.qp, 0xd4, 4, b, 4096, e->mr_rb->lkey))
		return -1;
	EXPECT(wait_wc(e, p.rcq, &wc, 10000) == 1, "no stream 4 receive completion "
	       "after posting its receive");
	EXPECT(wc.wr_id == 0xd4 && wc.status == XROCE_WC_SUCCESS &&
	       wc.byte_len == D_LEN && wc.stream == 4 && wc.opcode == XROCE_WC_RECV,
	       "stream 4: wr %#llx %s len %u", (unsigned long long)wc.wr_id,
	       st(wc.status), wc.byte_len);
	bad = check_pat(b, 0xd4, 0, D_LEN);
	EXPECT(bad < 0, "stream 4 SEND: byte %ld wrong", bad);
	bad = check_byte(b + D_LEN, UNTOUCHED, 8192 - D_LEN);
	EXPECT(bad < 0, "stream 4 SEND: byte %ld after its end written", bad);
	EXPECT(check_pat(b + 8192, 0xd5, 0, 16) < 0, "stream 5 SEND data wrong");
	printf("%s D: receive posted %d ms after the SEND arrived; it landed whole\n",
	       role, D_DELAY_MS);
	return pqp_destroy(&p);
}

/* =========================================================================
 * E: receiver not ready, retries exhausted
 * ========================================================================= */
#define E_SLEEP_MS 300
#define E_READ_LEN (MIB / 2)

static int client_e(struct env *e)
{
	struct xroce_qp_init_attr qa = { .rnr_retry = 2, .rnr_timer_us = 100 };
	uint8_t *src = e->s + S_MISC_OFF, *land = e->l + L_MISC_OFF;
	int seen[7] = { 0 }, nrnr = 0, nflush = 0, nok = 0, k;
	bool read_flushed = false;
	uint64_t t_rnr = 0;
	struct xroce_wc wc;
	struct ctlmsg m;
	struct pqp p;
	uint64_t t0;

	phase = 'E';
	if (pqp_open(e, &p, qa, 64))
		return -1;
	fill(src, 0xe0, 0, 4096);
	memset(land, UNTOUCHED, E_READ_LEN + GUARD);
	t0 = now_ms();
	/* 1: a READ on stream 1, outstanding when 2 fails (the server does not
	 * call the library for E_SLEEP_MS, so nobody answers it); 2: a SEND
	 * no receive will ever take; 3-5: WRITEs and 6: a SEND behind it on
	 * its stream. */
	if (post1(p.qp, 0xe1, XROCE_WR_RDMA_READ, 1, land, E_READ_LEN, e->mr_l->lkey,
		  e->peer.r_addr, e->peer.r_rkey, 0) ||
	    post1(p.qp, 0xe2, XROCE_WR_SEND, 0, src, 100, e->mr_s->lkey, 0, 0, 0))
		return -1;
	for (k = 3; k <= 5; k++)
		if (post1(p.qp, 0xe0 + (uint64_t)k, XROCE_WR_RDMA_WRITE, 0, src, 1000,
			  e->mr_s->lkey, e->peer.w_addr + W_E2_OFF, e->peer.w_rkey, 0))
			return -1;
	if (post1(p.qp, 0xe6, XROCE_WR_SEND, 0, src, 50, e->mr_s->lkey, 0, 0, 0))
		return -1;
	for (k = 0; k < 6; k++) {
		uint32_t id;

		EXPECT(wait_wc(e, p.scq, &wc, 10000) == 1, "%d of 6 completions", k);
		id = (uint32_t)(wc.wr_id - 0xe0);
		EXPECT(id >= 1 && id <= 6 && !seen[id], "wr_id %#llx unexpected or twice",
		       (unsigned long long)wc.wr_id);
		seen[id] = 1;
		if (id == 2) {
			EXPECT(wc.status == XROCE_WC_RNR_RETRY_EXC_ERR, "the SEND without "
			       "receive completed with %s", st(wc.status));
			EXPECT(wc.opcode == XROCE_WC_SEND, "opcode %d", wc.opcode);
			t_rnr = now_ms() - t0;
			nrnr++;
		} else if (id == 1) {
			/* Earlier in the send queue than the failed SEND, on
			 * another stream, not answered yet: flushed, not failed
			 * with the SEND's error. */
			EXPECT(wc.status == XROCE_WC_SUCCESS ||
			       wc.status == XROCE_WC_WR_FLUSH_ERR, "the READ on stream 1 "
			       "(not the request refused) completed with %s",
			       st(wc.status));
			EXPECT(wc.opcode == XROCE_WC_RDMA_READ, "READ: opcode %d", wc.opcode);
			read_flushed = wc.status == XROCE_WC_WR_FLUSH_ERR;
			/* Flushed: the buffer is the application's again (what
			 * landed before is undefined); nothing may land now. */
			if (read_flushed)
				memset(land, UNTOUCHED, E_READ_LEN + GUARD);
			nok += wc.status == XROCE_WC_SUCCESS;
			nflush += wc.status == XROCE_WC_WR_FLUSH_ERR;
		} else {
			EXPECT(wc.status == XROCE_WC_WR_FLUSH_ERR, "wr %u behind the failed "
			       "SEND completed with %s", id, st(wc.status));
			nflush++;
		}
	}
	EXPECT(nrnr == 1, "RNR_RETRY_EXC_ERR %d times", nrnr);
	if (expect_quiet(e, p.scq, 100, "after the flush"))
		return -1;
	EXPECT(xroce_qp_state(p.qp) == XROCE_QPS_ERR, "QP state %d after the error",
	       xroce_qp_state(p.qp));
	{
		struct xroce_send_wr wr = { .wr_id = 0xe7, .opcode = XROCE_WR_SEND }, *bad;
		struct xroce_recv_wr rr = { .wr_id = 0xe8 }, *rbad;
		int rc;

		quiet = true;
		rc = xroce_post_send(p.qp, &wr, &bad);
		quiet = false;
		EXPECT(rc < 0 && bad == &wr, "post_send on a failed QP returned %d", rc);
		quiet = true;
		rc = xroce_post_recv(p.qp, &rr, &rbad);
		quiet = false;
		EXPECT(rc < 0 && rbad == &rr, "post_recv on a failed QP returned %d", rc);
	}
	/* The server wakes up and answers the flushed READ: nothing of the
	 * answer may land in the buffer the application got back. */
	while (now_ms() - t0 < E_SLEEP_MS + 200)
		if (expect_quiet(e, p.scq, 10, "after posting on a failed QP"))
			return -1;
	if (read_flushed) {
		long bad = check_byte(land, UNTOUCHED, E_READ_LEN + GUARD);

		EXPECT(bad < 0, "the READ flushed after %llu ms was answered into its "
		       "buffer after its completion: byte %ld of %u written",
		       (unsigned long long)t_rnr, bad, E_READ_LEN);
	}
	if (ctl_send(e, CT_DONE, 1, 0, 0, 0) || ctl_result(e, &m))
		return -1;
	printf("%s E: RNR_RETRY_EXC_ERR after %llu ms, %d flushed (READ %s), %d "
	       "succeeded, QP in ERR refuses work\n", role,
	       (unsigned long long)t_rnr, nflush,
	       read_flushed ? "flushed, its buffer untouched afterwards" : "answered",
	       nok);
	return pqp_destroy(&p);
}

static int server_wait_done(struct env *e, const char *what)
{
	struct xroce_qp_init_attr qa = { 0 };
	struct ctlmsg m;
	struct pqp p;

	if (pqp_open(e, &p, qa, 64) || ctl_recv(e, CT_DONE, &m, 60000))
		return -1;
	if (expect_quiet(e, p.rcq, 1, what))
		return -1;
	return pqp_destroy(&p);
}

static int server_e(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	struct ctlmsg m;
	struct pqp p;

	phase = 'E';
	if (pqp_open(e, &p, qa, 64))
		return -1;
	/* Do not answer the client's READ for a while: it must still be
	 * outstanding when the client's SEND fails. */
	poll(NULL, 0, E_SLEEP_MS);
	if (ctl_recv(e, CT_DONE, &m, 60000) || expect_quiet(e, p.rcq, 1, "phase E") ||
	    pqp_destroy(&p))
		return -1;
	printf("%s E: no receive posted, the peer's SEND was refused\n", role);
	return 0;
}

/* =========================================================================
 * F: remote access errors
 * ========================================================================= */
#define NF 5
#define F_RECV_LEN 100u

static const char *const f_what[NF] = {
	"WRITE with a wrong rkey", "WRITE to a region without REMOTE_WRITE",
	"READ of a region without REMOTE_READ", "WRITE beyond the region's end",
	"SEND larger than its receive",
};

static int client_f(struct env *e)
{
	uint8_t *src = e->s + S_MISC_OFF, *land = e->l + L_MISC_OFF;
	struct ctlmsg m;
	int k;

	phase = 'F';
	fill(src, 0xf0, 0, 4096);
	memset(land, UNTOUCHED, 4096);
	for (k = 0; k < NF; k++) {
		struct xroce_qp_init_attr qa = { 0 };
		enum xroce_wc_status want = k == 4 ? XROCE_WC_REM_INV_REQ_ERR :
						     XROCE_WC_REM_ACCESS_ERR;
		uint32_t bad_key = e->peer.w_rkey ^ 0x5a5a5a5au;
		struct xroce_wc wc;
		struct pqp p;
		int rc = 0, j;

		if (bad_key == e->peer.r_rkey)
			bad_key ^= 1;
		if (pqp_open(e, &p, qa, 64))
			return -1;
		switch (k) {
		case 0:
			rc = post1(p.qp, 0xf0, XROCE_WR_RDMA_WRITE, 0, src, 1000,
				   e->mr_s->lkey, e->peer.w_addr + W_F_OFF, bad_key, 0);
			break;
		case 1:
			rc = post1(p.qp, 0xf0, XROCE_WR_RDMA_WRITE, 0, src, 1000,
				   e->mr_s->lkey, e->peer.r_addr, e->peer.r_rkey, 0);
			break;
		case 2:
			rc = post1(p.qp, 0xf0, XROCE_WR_RDMA_READ, 0, land, 1000,
				   e->mr_l->lkey, e->peer.w_addr + W_F_OFF, e->peer.w_rkey, 0);
			break;
		case 3:
			rc = post1(p.qp, 0xf0, XROCE_WR_RDMA_WRITE, 0, src, 100,
				   e->mr_s->lkey, e->peer.w_addr + e->peer.w_len - 10,
				   e->peer.w_rkey, 0);
			break;
		case 4:
			rc = post1(p.qp, 0xf0, XROCE_WR_SEND, 0, src, 1000, e->mr_s->lkey,
				   0, 0, 0);
			break;
		}
		/* A valid WRITE behind it on its stream: flushed. */
		if (rc || post1(p.qp, 0xf1, XROCE_WR_RDMA_WRITE, 0, src, 100, e->mr_s->lkey,
				e->peer.w_addr + W_H_OFF, e->peer.w_rkey, 0))
			return -1;
		for (j = 0; j < 2; j++) {
			EXPECT(wait_wc(e, p.scq, &wc, 10000) == 1, "%s: %d of 2 "
			       "completions", f_what[k], j);
			EXPECT(wc.wr_id == 0xf0 + (uint64_t)j, "%s: completion %d is wr "
			       "%#llx", f_what[k], j, (unsigned long long)wc.wr_id);
			EXPECT(wc.status == (j ? XROCE_WC_WR_FLUSH_ERR : want),
			       "%s: completion %d: %s, expected %s", f_what[k], j,
			       st(wc.status), st(j ? XROCE_WC_WR_FLUSH_ERR : want));
		}
		if (expect_quiet(e, p.scq, 50, f_what[k]))
			return -1;
		EXPECT(xroce_qp_state(p.qp) == XROCE_QPS_ERR, "%s: QP state %d",
		       f_what[k], xroce_qp_state(p.qp));
		if (pqp_destroy(&p))
			return -1;
		printf("%s F: %s -> %s\n", role, f_what[k], st(want));
	}
	EXPECT(check_byte(land, UNTOUCHED, 4096) < 0, "the refused READ wrote "
	       "its landing buffer");
	if (ctl_send(e, CT_DONE, 1, 0, 0, 0) || ctl_result(e, &m))
		return -1;
	return 0;
}

static int server_f(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	uint8_t *rbuf = e->rb + RB_F_OFF;
	struct pqp p[NF];
	struct xroce_wc wc;
	struct ctlmsg m;
	long bad;
	int k;

	phase = 'F';
	memset(e->w + W_F_OFF, UNTOUCHED, 4096);
	memset(e->w + W_LEN - 4096, UNTOUCHED, 4096);
	memset(rbuf, UNTOUCHED, 4096);
	for (k = 0; k < NF; k++) {
		if (pqp_create(e, &p[k], qa, 64))
			return -1;
		if (k == 4 && post_recv1(p[k].qp, 0xf5, 0, rbuf, F_RECV_LEN,
					 e->mr_rb->lkey))
			return -1;
		if (pqp_connect(e, &p[k]))
			return -1;
	}
	if (ctl_recv(e, CT_DONE, &m, 60000))
		return -1;
	bad = check_byte(e->w + W_F_OFF, UNTOUCHED, 4096);
	EXPECT(bad < 0, "a refused WRITE wrote byte %ld", bad);
	bad = check_byte(e->w + W_LEN - 4096, UNTOUCHED, 4096);
	EXPECT(bad < 0, "the out-of-bounds WRITE wrote byte %ld of the region's "
	       "last page", bad);
	bad = check_byte(rbuf, UNTOUCHED, 4096);
	EXPECT(bad < 0, "the oversized SEND wrote byte %ld of the receive", bad);
	if (server_check_r(e))
		return -1;
	for (k = 0; k < NF; k++) {
		/* The only receive may complete, flushed, once the client's
		 * failed QP has closed the connection; nothing else. */
		int n = xroce_poll_cq(p[k].rcq, 1, &wc);

		EXPECT(n == 0 || (k == 4 && wc.wr_id == 0xf5 &&
				  wc.status == XROCE_WC_WR_FLUSH_ERR),
		       "%s: a receive completion (%s) at the target", f_what[k],
		       st(wc.status));
		if (pqp_destroy(&p[k]) == 0)
			continue;
		return -1;
	}
	printf("%s F: refused WRITEs/READ/SEND left every byte untouched\n", role);
	return 0;
}

/* =========================================================================
 * G: flush on destroy
 * ========================================================================= */
#define NG_WRITES 8
#define G_WRITE_LEN (4 * MIB)

/* Destroy with more outstanding work than the CQs can take: completions
 * that do not fit are lost (as on a CQ overrun), but nothing may stay
 * behind: no receive published to XDP, no READ window open, no memory
 * (the shell script checks the maps after the run, LeakSanitizer the
 * heap). */
#define NGO_RECV 24
#define NGO_READ 8
#define NGO_WRITE 12
static int client_g_overflow(struct env *e)
{
	struct xroce_qp_init_attr qa = { .max_send_wr = 64 };
	uint8_t *src = e->s + S_MISC_OFF;
	int seen[NGO_READ + NGO_WRITE + NGO_RECV] = { 0 }, ns = 0, nr = 0, k;
	struct xroce_wc wc;
	struct pqp p;

	if (pqp_open(e, &p, qa, 1))
		return -1;
	for (k = 0; k < NGO_RECV; k++)
		if (post_recv1(p.qp, 0x680 + (uint64_t)k, (uint16_t)(k % 3), NULL, 0, 0))
			return -1;
	for (k = 0; k < NGO_READ; k++)
		if (post1(p.qp, 0x640 + (uint64_t)k, XROCE_WR_RDMA_READ, 4,
			  e->l + L_MISC_OFF + (uint64_t)k * 65536, 65536, e->mr_l->lkey,
			  e->peer.r_addr, e->peer.r_rkey, 0))
			return -1;
	for (k = 0; k < NGO_WRITE; k++) {
		struct xroce_sge g[2] = {
			{ (uint64_t)(uintptr_t)src, 3000, e->mr_s->lkey },
			{ (uint64_t)(uintptr_t)(src + 8192), 5000, e->mr_s->lkey } };
		struct xroce_send_wr wr = { .wr_id = 0x640 + NGO_READ + (uint64_t)k,
					    .sg_list = g,
					    .num_sge = 2, .opcode = XROCE_WR_RDMA_WRITE,
					    .send_flags = XROCE_SEND_SIGNALED,
					    .stream = 5 }, *bad;

		wr.rdma.remote_addr = e->peer.w_addr + W_G_OFF;
		wr.rdma.rkey = e->peer.w_rkey;
		TRY(xroce_post_send(p.qp, &wr, &bad));
	}
	TRY(xroce_destroy_qp(p.qp));
	p.qp = NULL;
	while (xroce_poll_cq(p.scq, 1, &wc) == 1) {
		k = (int)(wc.wr_id - 0x640);
		EXPECT(k >= 0 && k < NGO_READ + NGO_WRITE && !seen[k], "send completion "
		       "%#llx unexpected or twice", (unsigned long long)wc.wr_id);
		EXPECT(wc.status == XROCE_WC_SUCCESS || wc.status == XROCE_WC_WR_FLUSH_ERR,
		       "wr %#llx: %s", (unsigned long long)wc.wr_id, st(wc.status));
		seen[k] = 1;
		ns++;
	}
	while (xroce_poll_cq(p.rcq, 1, &wc) == 1) {
		k = (int)(wc.wr_id - 0x680);
		EXPECT(k >= 0 && k < NGO_RECV && !seen[NGO_READ + NGO_WRITE + k] &&
		       wc.status == XROCE_WC_WR_FLUSH_ERR, "receive completion %#llx "
		       "(%s) unexpected or twice", (unsigned long long)wc.wr_id,
		       st(wc.status));
		seen[NGO_READ + NGO_WRITE + k] = 1;
		nr++;
	}
	EXPECT(ns > 0 && nr > 0, "no flush completion at all (%d, %d)", ns, nr);
	printf("%s G: destroy with %d sends and %d receives outstanding into "
	       "16-entry CQs: %d and %d completions delivered, the rest dropped\n",
	       role, NGO_READ + NGO_WRITE, NGO_RECV, ns, nr);
	return pqp_destroy(&p);
}

static int client_g(struct env *e)
{
	struct xroce_qp_init_attr qa = { .max_send_wr = 64 };
	int seen[NG_WRITES + 1] = { 0 }, nok = 0, nflush = 0, n = 0, k;
	struct xroce_cq *scq;
	struct xroce_wc wc;
	struct ctlmsg m;
	struct pqp p;

	phase = 'G';
	if (pqp_open(e, &p, qa, 64))
		return -1;
	for (k = 0; k < NG_WRITES; k++)
		if (post1(p.qp, 0x600 + (uint64_t)k, XROCE_WR_RDMA_WRITE, (uint16_t)(k % 3),
			  e->s + S_BIG_OFF + (k % 2) * G_WRITE_LEN, G_WRITE_LEN,
			  e->mr_s->lkey, e->peer.w_addr + W_G_OFF, e->peer.w_rkey, 0))
			return -1;
	if (post1(p.qp, 0x600 + NG_WRITES, XROCE_WR_RDMA_READ, 5, e->l + L_MISC_OFF,
		  MIB / 2, e->mr_l->lkey, e->peer.r_addr, e->peer.r_rkey, 0))
		return -1;
	scq = p.scq;
	TRY(xroce_destroy_qp(p.qp));
	p.qp = NULL;
	while (wait_wc(e, scq, &wc, 300) == 1) {
		uint32_t id = (uint32_t)(wc.wr_id - 0x600);

		EXPECT(id <= NG_WRITES && !seen[id], "wr_id %#llx unexpected or twice",
		       (unsigned long long)wc.wr_id);
		seen[id] = 1;
		n++;
		EXPECT(wc.status == XROCE_WC_SUCCESS || wc.status == XROCE_WC_WR_FLUSH_ERR,
		       "wr %#llx: %s", (unsigned long long)wc.wr_id, st(wc.status));
		EXPECT(wc.opcode == (id == NG_WRITES ? XROCE_WC_RDMA_READ :
				     XROCE_WC_RDMA_WRITE), "wr %#llx: opcode %d",
		       (unsigned long long)wc.wr_id, wc.opcode);
		nok += wc.status == XROCE_WC_SUCCESS;
		nflush += wc.status == XROCE_WC_WR_FLUSH_ERR;
	}
	EXPECT(n == NG_WRITES + 1, "%d completions for %d work requests", n,
	       NG_WRITES + 1);
	EXPECT(nflush > 0, "32.5 MiB of work completed before an immediate destroy?");
	if (pqp_destroy(&p) || client_g_overflow(e))
		return -1;
	if (ctl_send(e, CT_DONE, 1, 0, 0, 0) || ctl_result(e, &m))
		return -1;
	printf("%s G: destroy with %d work requests outstanding: %d flushed, %d "
	       "succeeded, one completion each; server flushed %u receives\n", role,
	       n, nflush, nok, m.v1);
	return 0;
}

#define NG_RECV 5
static const uint16_t g_streams[NG_RECV] = { 0, 0, 7, 7, XROCE_MAX_STREAMS - 1 };

/* Count the flushed receives found in cq. */
static int server_g_count(struct xroce_cq *cq, int *seen, int *n)
{
	struct xroce_wc wc;
	int k;

	while (xroce_poll_cq(cq, 1, &wc) == 1) {
		k = (int)(wc.wr_id - 0x700);
		EXPECT(k >= 0 && k < NG_RECV && !seen[k], "receive %#llx unexpected or "
		       "twice", (unsigned long long)wc.wr_id);
		seen[k] = 1;
		(*n)++;
		EXPECT(wc.status == XROCE_WC_WR_FLUSH_ERR && wc.opcode == XROCE_WC_RECV &&
		       wc.stream == g_streams[k], "receive %#llx: %s opcode %d stream %u",
		       (unsigned long long)wc.wr_id, st(wc.status), wc.opcode, wc.stream);
	}
	return 0;
}

static int server_g(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	uint8_t *b = e->rb + RB_G_OFF;
	int seen[NG_RECV] = { 0 }, n = 0, k, i;
	struct ctlmsg m;
	struct pqp p, p2;

	phase = 'G';
	memset(b, UNTOUCHED, NG_RECV * 1024);
	if (pqp_create(e, &p, qa, 64))
		return -1;
	for (k = 0; k < NG_RECV; k++)
		if (post_recv1(p.qp, 0x700 + (uint64_t)k, g_streams[k],
			       k < 4 ? b + k * 1024 : NULL, 512, e->mr_rb->lkey))
			return -1;
	if (pqp_connect(e, &p) || pqp_open(e, &p2, qa, 64) ||
	    ctl_recv(e, CT_DONE, &m, 60000) || pqp_destroy(&p2))
		return -1;
	/* The peer's CLOSE normally arrived already; a lost one does not
	 * matter: our destroy flushes what is posted either way. */
	for (i = 0; i < 100 && xroce_qp_state(p.qp) == XROCE_QPS_RTS; i++) {
		TRY(xroce_progress(e->dev));
		if (server_g_count(p.rcq, seen, &n))
			return -1;
		if (expect_quiet(e, e->ctl_rcq, 5, "waiting for the peer's CLOSE"))
			return -1;
	}
	TRY(xroce_destroy_qp(p.qp));
	p.qp = NULL;
	if (server_g_count(p.rcq, seen, &n))
		return -1;
	EXPECT(n == NG_RECV, "%d of %d posted receives flushed", n, NG_RECV);
	EXPECT(check_byte(b, UNTOUCHED, NG_RECV * 1024) < 0, "a flushed receive's "
	       "buffer was written");
	res->v1 = (uint32_t)n;
	printf("%s G: %d posted receives completed as flushed (peer's CLOSE or destroy)\n", role, n);
	return pqp_destroy(&p);
}

/* =========================================================================
 * H: local errors are refused at post time
 * ========================================================================= */
/* wr must be refused with a negative errno, *bad_wr = wr, and a message. */
static int refuse_send(struct xroce_qp *qp, struct xroce_send_wr *wr, const char *what)
{
	struct xroce_send_wr *bad = NULL;
	unsigned long n0 = nlog_err;
	int rc;

	quiet = true;
	rc = xroce_post_send(qp, wr, &bad);
	quiet = false;
	EXPECT(rc < 0, "post_send of %s returned %d", what, rc);
	EXPECT(bad == wr, "post_send of %s: bad_wr not set to it", what);
	EXPECT(nlog_err > n0, "post_send of %s: no message", what);
	return 0;
}

static int refuse_recv(struct xroce_qp *qp, struct xroce_recv_wr *wr, const char *what)
{
	struct xroce_recv_wr *bad = NULL;
	unsigned long n0 = nlog_err;
	int rc;

	quiet = true;
	rc = xroce_post_recv(qp, wr, &bad);
	quiet = false;
	EXPECT(rc < 0, "post_recv of %s returned %d", what, rc);
	EXPECT(bad == wr, "post_recv of %s: bad_wr not set to it", what);
	EXPECT(nlog_err > n0, "post_recv of %s: no message", what);
	return 0;
}

static int client_h(struct env *e)
{
	struct xroce_qp_init_attr qa = { 0 };
	uint8_t *src = e->s + S_MISC_OFF, stackbuf[512];
	struct xroce_sge g[XROCE_MAX_SGE + 1], gin[2];
	struct xroce_send_wr wr, chain[3], *bad;
	struct xroce_recv_wr rr;
	uint64_t waddr;
	struct xroce_wc wc;
	struct ctlmsg m;
	struct pqp p;
	int k, nref = 0, rc;

	phase = 'H';
	if (pqp_open(e, &p, qa, 1024))
		return -1;
	waddr = e->peer.w_addr + W_H_OFF;
	for (k = 0; k <= XROCE_MAX_SGE; k++)
		g[k] = (struct xroce_sge){ (uint64_t)(uintptr_t)(src + k * 64), 64,
					   e->mr_s->lkey };
#define WR(op, ng, sg)                                                        \
	(wr = (struct xroce_send_wr){ .wr_id = 0x800, .sg_list = (sg),        \
				      .num_sge = (ng), .opcode = (op),        \
				      .send_flags = XROCE_SEND_SIGNALED,      \
				      .rdma = { waddr, e->peer.w_rkey } },    \
	 &wr)
#define REFUSE(w, what)                                                       \
	do {                                                                  \
		if (refuse_send(p.qp, (w), (what)))                           \
			return -1;                                            \
		nref++;                                                       \
	} while (0)

	/* Local protection: every sge is checked against the PD's regions. */
	g[0].lkey = e->mr_s->lkey ^ 0x10000u;
	if (g[0].lkey == e->mr_l->lkey || g[0].lkey == e->mr_n->lkey ||
	    g[0].lkey == e->mr_cb->lkey)
		g[0].lkey ^= 0x20000u;
	REFUSE(WR(XROCE_WR_RDMA_WRITE, 1, g), "an sge with a wrong lkey");
	g[0] = (struct xroce_sge){ (uint64_t)(uintptr_t)(e->s + S_LEN - 10), 100,
				   e->mr_s->lkey };
	REFUSE(WR(XROCE_WR_RDMA_WRITE, 1, g), "an sge running past its region");
	g[0] = (struct xroce_sge){ (uint64_t)(uintptr_t)stackbuf, 64, e->mr_s->lkey };
	REFUSE(WR(XROCE_WR_SEND, 1, g), "an sge in unregistered memory");
	g[0] = (struct xroce_sge){ (uint64_t)(uintptr_t)e->n, 64, e->mr_n->lkey };
	REFUSE(WR(XROCE_WR_RDMA_READ, 1, g), "a READ into a region without "
	       "LOCAL_WRITE");
	g[0] = (struct xroce_sge){ (uint64_t)(uintptr_t)src, 64, e->mr_s->lkey };
	/* Shapes and limits. */
	REFUSE(WR(XROCE_WR_RDMA_READ, 2, g), "a READ with two sges");
	WR(XROCE_WR_RDMA_READ, 1, g)->send_flags |= XROCE_SEND_INLINE;
	REFUSE(&wr, "an inline READ");
	REFUSE(WR(XROCE_WR_SEND, XROCE_MAX_SGE + 1, g), "17 sges");
	REFUSE(WR(XROCE_WR_SEND, -1, g), "num_sge -1");
	REFUSE(WR(XROCE_WR_SEND, 1, NULL), "num_sge 1 and no sg_list");
	WR(XROCE_WR_SEND, 1, g)->stream = XROCE_MAX_STREAMS;
	REFUSE(&wr, "stream 1024");
	gin[0] = (struct xroce_sge){ (uint64_t)(uintptr_t)stackbuf, 200, 0 };
	gin[1] = (struct xroce_sge){ (uint64_t)(uintptr_t)(stackbuf + 200), 57, 0 };
	WR(XROCE_WR_SEND, 2, gin)->send_flags |= XROCE_SEND_INLINE;
	REFUSE(&wr, "257 inline bytes");
	REFUSE(WR((enum xroce_wr_opcode)0, 1, g), "opcode 0");
	REFUSE(WR((enum xroce_wr_opcode)99, 1, g), "opcode 99");
	WR(XROCE_WR_SEND, 1, g)->send_flags = 0x80;
	REFUSE(&wr, "unknown send_flags");
	/* A chain stops at its first bad request; the ones before it are
	 * queued, the ones after are not. */
	for (k = 0; k < 3; k++)
		chain[k] = (struct xroce_send_wr){
			.wr_id = 0x810 + (uint64_t)k, .sg_list = g, .num_sge = 1,
			.opcode = XROCE_WR_RDMA_WRITE, .send_flags = XROCE_SEND_SIGNALED,
			.rdma = { waddr, e->peer.w_rkey },
			.next = k < 2 ? &chain[k + 1] : NULL };
	chain[1].num_sge = XROCE_MAX_SGE + 1;
	quiet = true;
	rc = xroce_post_send(p.qp, chain, &bad);
	quiet = false;
	EXPECT(rc < 0 && bad == &chain[1], "chain with a bad second request: rc %d, "
	       "bad_wr %p (chain %p)", rc, (void *)bad, (void *)chain);
	EXPECT(wait_wc(e, p.scq, &wc, 10000) == 1 && wc.wr_id == 0x810 &&
	       wc.status == XROCE_WC_SUCCESS, "the good request before the bad one "
	       "did not complete");
	if (expect_quiet(e, p.scq, 100, "after refused requests"))
		return -1;
	EXPECT(xroce_qp_state(p.qp) == XROCE_QPS_RTS, "refused requests broke the QP");
	if (post1(p.qp, 0x820, XROCE_WR_RDMA_WRITE, 0, src, 64, e->mr_s->lkey, waddr,
		  e->peer.w_rkey, 0))
		return -1;
	EXPECT(wait_wc(e, p.scq, &wc, 10000) == 1 && wc.wr_id == 0x820 &&
	       wc.status == XROCE_WC_SUCCESS, "a valid WRITE after refused ones: "
	       "wr %#llx %s", (unsigned long long)wc.wr_id, st(wc.status));

	/* Receives. */
#define RR(ng, sg, s)                                                          \
	(rr = (struct xroce_recv_wr){ .wr_id = 0x900, .sg_list = (sg),        \
				      .num_sge = (ng), .stream = (s) }, &rr)
	g[0] = (struct xroce_sge){ (uint64_t)(uintptr_t)src, 64, e->mr_s->lkey };
	if (refuse_recv(p.qp, RR(1, g, XROCE_MAX_STREAMS), "stream 1024") ||
	    refuse_recv(p.qp, RR(2, g, 0), "two sges") ||
	    refuse_recv(p.qp, RR(1, NULL, 0), "num_sge 1 and no sg_list") ||
	    refuse_recv(p.qp, RR(-1, g, 0), "num_sge -1"))
		return -1;
	g[1] = (struct xroce_sge){ (uint64_t)(uintptr_t)e->n, 64, e->mr_n->lkey };
	g[2] = (struct xroce_sge){ (uint64_t)(uintptr_t)stackbuf, 64, e->mr_s->lkey };
	if (refuse_recv(p.qp, RR(1, &g[1], 0), "a buffer without LOCAL_WRITE") ||
	    refuse_recv(p.qp, RR(1, &g[2], 0), "a buffer in unregistered memory"))
		return -1;
	nref += 6;
	for (k = 0; k < XROCE_MAX_RECV_PER_STREAM; k++) {
		struct xroce_recv_wr r = { .wr_id = 0x1000 + (uint64_t)k, .stream = 999 };
		struct xroce_recv_wr *rb;

		TRY(xroce_post_recv(p.qp, &r, &rb));
	}
	if (refuse_recv(p.qp, RR(0, NULL, 999), "one receive more than "
			"XROCE_MAX_RECV_PER_STREAM"))
		return -1;
	nref++;
	/* They are flushed, in order, when the QP goes. */
	TRY(xroce_destroy_qp(p.qp));
	p.qp = NULL;
	for (k = 0; k < XROCE_MAX_RECV_PER_STREAM; k++) {
		EXPECT(xroce_poll_cq(p.rcq, 1, &wc) == 1, "%d of %d receives flushed", k,
		       XROCE_MAX_RECV_PER_STREAM);
		EXPECT(wc.wr_id == 0x1000 + (uint64_t)k && wc.status == XROCE_WC_WR_FLUSH_ERR &&
		       wc.stream == 999, "flushed receive %d: wr %#llx %s", k,
		       (unsigned long long)wc.wr_id, st(wc.status));
	}
	EXPECT(xroce_poll_cq(p.rcq, 1, &wc) == 0, "more receives flushed than posted");
	if (pqp_destroy(&p))
		return -1;
	if (ctl_send(e, CT_DONE, 1, 0, 0, 0) || ctl_result(e, &m))
		return -1;
	printf("%s H: %d bad requests refused at post time (negative errno, bad_wr, "
	       "message; nothing queued); XROCE_WC_LOC_PROT_ERR is not reachable as "
	       "a completion\n", role, nref);
	return 0;
#undef WR
#undef REFUSE
#undef RR
}

static int server_h(struct env *e, struct ctlmsg *res)
{
	phase = 'H';
	return server_wait_done(e, "phase H");
}

/* =========================================================================
 * set-up and the script
 * ========================================================================= */
static uint8_t *region(struct env *e, size_t len, int access, struct xroce_mr **mr)
{
	uint8_t *p = xroce_mem_alloc(e->dev, len, 4096);

	if (!p || xroce_reg_mr(e->pd, p, len, access, mr)) {
		fprintf(stderr, "itest_verbs %s: cannot allocate/register %zu bytes\n",
			role, len);
		return NULL;
	}
	return p;
}

static int setup(struct env *e, const char *ifname)
{
	struct xroce_device_attr da = { .nplanes = 1, .mem_size = MEM_SIZE,
					.ctrl_port = e->server ? PORT : 0,
					.log_fn = lib_log };
	struct xroce_qp_init_attr qa = { 0 };
	uint32_t i;

	da.ifnames[0] = ifname;
	TRY(xroce_open_device(&da, &e->dev));
	TRY(xroce_alloc_pd(e->dev, &e->pd));
	if (!(e->cb = region(e, CB_SLOTS * CB_SLOT, XROCE_ACCESS_LOCAL_WRITE, &e->mr_cb)))
		return -1;
	if (e->server) {
		if (!(e->rb = region(e, RB_LEN, XROCE_ACCESS_LOCAL_WRITE, &e->mr_rb)) ||
		    !(e->w = region(e, W_LEN, XROCE_ACCESS_LOCAL_WRITE |
				    XROCE_ACCESS_REMOTE_WRITE, &e->mr_w)) ||
		    !(e->r = region(e, R_LEN, XROCE_ACCESS_REMOTE_READ, &e->mr_r)))
			return -1;
		for (i = 0; i < R_LEN; i++)
			e->r[i] = rpat(i);
		e->mine = (struct info){ (uint64_t)(uintptr_t)e->w, e->mr_w->rkey, W_LEN,
					 (uint64_t)(uintptr_t)e->r, e->mr_r->rkey, R_LEN };
	} else {
		if (!(e->s = region(e, S_LEN, XROCE_ACCESS_LOCAL_WRITE, &e->mr_s)) ||
		    !(e->l = region(e, L_LEN, XROCE_ACCESS_LOCAL_WRITE, &e->mr_l)) ||
		    !(e->n = region(e, N_LEN, XROCE_ACCESS_REMOTE_READ, &e->mr_n)))
			return -1;
	}
	/* The control connection. */
	TRY(xroce_create_cq(e->dev, 256, &e->ctl_scq));
	TRY(xroce_create_cq(e->dev, 256, &e->ctl_rcq));
	qa.send_cq = e->ctl_scq;
	qa.recv_cq = e->ctl_rcq;
	TRY(xroce_create_qp(e->pd, &qa, &e->ctl));
	for (i = 0; i < CB_SLOTS; i++)
		if (ctl_post(e, i))
			return -1;
	if (e->server) {
		TRY(xroce_set_private_data(e->ctl, &e->mine, sizeof(e->mine)));
		TRY(xroce_accept(e->ctl, 30000 * e->ts));
	} else {
		TRY(xroce_connect(e->ctl, e->host, PORT, 30000 * e->ts));
		EXPECT(xroce_get_private_data(e->ctl, &e->peer, sizeof(e->peer)) ==
		       sizeof(e->peer), "no private data on the control connection");
	}
	return 0;
}

/* =========================================================================
 * I: deregistration right after the reader is done
 * ========================================================================= */
#define I_ROUNDS 24
#define I_LEN (512u << 10)

static int client_i(struct env *e)
{
	struct xroce_qp_init_attr qa = { 0 };
	struct xroce_qp_stats qs;
	struct xroce_wc wc;
	struct ctlmsg m;
	struct pqp p;
	uint32_t r;
	long bad;

	phase = 'I';
	if (pqp_open(e, &p, qa, 64))
		return -1;
	for (r = 0; r < I_ROUNDS; r++) {
		uint64_t raddr;

		if (ctl_recv(e, CT_READY, &m, 30000))
			return -1;
		raddr = (uint64_t)m.v1 | (uint64_t)m.v2 << 32;
		memset(e->l, UNTOUCHED, I_LEN);
		if (post1(p.qp, 0x1000 + r, XROCE_WR_RDMA_READ, 0, e->l, I_LEN,
			  e->mr_l->lkey, raddr, m.v3, 0))
			return -1;
		EXPECT(wait_wc(e, p.scq, &wc, 30000) == 1, "round %u: no READ "
		       "completion", r);
		EXPECT(wc.status == XROCE_WC_SUCCESS && wc.wr_id == 0x1000 + r,
		       "round %u: READ %s", r, st(wc.status));
		/* "Done" at once, as rxm's rendezvous says it: the server's view
		 * of our ACKs may still lag (checking first would give its
		 * retransmission timer the time to catch up). */
		if (ctl_send(e, CT_DONE, 1, r, 0, 0))
			return -1;
		bad = check_pat(e->l, 0x1100 + r, 0, I_LEN);
		EXPECT(bad < 0, "round %u: byte %ld read wrong", r, bad);
	}
	/* The connection still serves READs after all those deregistrations. */
	if (post1(p.qp, 0x1fff, XROCE_WR_RDMA_READ, 0, e->l, R_LEN, e->mr_l->lkey,
		  e->peer.r_addr, e->peer.r_rkey, 0))
		return -1;
	EXPECT(wait_wc(e, p.scq, &wc, 30000) == 1 && wc.status == XROCE_WC_SUCCESS,
	       "the READ after the rounds: %s", st(wc.status));
	for (r = 0; r < R_LEN; r++)
		EXPECT(e->l[r] == rpat(r), "the READ after the rounds: byte %u", r);
	EXPECT(xroce_qp_state(p.qp) == XROCE_QPS_RTS, "client QP left RTS");
	xroce_qp_stats(p.qp, &qs);
	if (ctl_send(e, CT_DONE, 1, I_ROUNDS, 0, 0) || ctl_result(e, &m))
		return -1;
	printf("%s I: %d READs of %u KiB, each region deregistered by the server as "
	       "soon as its READ completed here; %u of its answers were fenced there "
	       "(ACKs still due); %llu retransmissions here; both QPs in RTS\n",
	       role, I_ROUNDS, I_LEN >> 10, m.v1, (unsigned long long)qs.retx_pkts);
	return pqp_destroy(&p);
}

static int server_i(struct env *e, struct ctlmsg *res)
{
	struct xroce_qp_init_attr qa = { 0 };
	struct xroce_qp_stats qs;
	struct ctlmsg m;
	struct pqp p;
	uint32_t r;

	phase = 'I';
	if (pqp_create(e, &p, qa, 64) || pqp_connect(e, &p))
		return -1;
	for (r = 0; r < I_ROUNDS; r++) {
		struct xroce_mr *mr;
		uint8_t *b = aligned_alloc(4096, I_LEN);
		uint64_t a = (uint64_t)(uintptr_t)b;

		EXPECT(b, "round %u: out of memory", r);
		fill(b, 0x1100 + r, 0, I_LEN);
		if (xroce_reg_mr(e->pd, b, I_LEN, XROCE_ACCESS_REMOTE_READ, &mr)) {
			free(b);
			EXPECT(0, "round %u: cannot register a malloc'd buffer", r);
		}
		if (ctl_send(e, CT_READY, 1, (uint32_t)a, (uint32_t)(a >> 32), mr->rkey) ||
		    ctl_recv(e, CT_DONE, &m, 30000))
			return -1;
		TRY(xroce_dereg_mr(mr));
		free(b);
		EXPECT(xroce_qp_state(p.qp) == XROCE_QPS_RTS, "round %u: the QP left RTS "
		       "when the region the peer had read was deregistered", r);
	}
	/* The client's last READ (of R) is served while this waits. */
	if (ctl_recv(e, CT_DONE, &m, 30000))
		return -1;
	EXPECT(m.v1 == I_ROUNDS && xroce_qp_state(p.qp) == XROCE_QPS_RTS,
	       "the QP left RTS by the end of the rounds");
	xroce_qp_stats(p.qp, &qs);
	res->v1 = (uint32_t)qs.fenced_answers;
	return pqp_destroy(&p);
}

typedef int (*server_fn)(struct env *e, struct ctlmsg *res);
typedef int (*client_fn)(struct env *e);

static const struct {
	char id;
	client_fn client;
	server_fn server;
} script[] = {
	{ 'A', client_a, server_a }, { 'B', client_b, server_b },
	{ 'C', client_c, server_c }, { 'D', client_d, server_d },
	{ 'E', client_e, server_e }, { 'F', client_f, server_f },
	{ 'G', client_g, server_g }, { 'H', client_h, server_h },
	{ 'I', client_i, server_i },
};
#define NSCRIPT (sizeof(script) / sizeof(script[0]))

/* XR_VERBS_PHASES (e.g. "AB") runs only those phases, on both sides alike;
 * unset: all of them.  For slow machines (vmtest's two VMs under
 * emulation), where the whole script would take too long. */
static bool phase_wanted(char id)
{
	const char *v = getenv("XR_VERBS_PHASES");

	return !v || !*v || strchr(v, id);
}

static int run_server(struct env *e)
{
	struct xroce_wc wc;
	struct ctlmsg m;
	unsigned int i;

	for (i = 0; i < NSCRIPT; i++) {
		struct ctlmsg res = { 0 };
		int rc;

		if (!phase_wanted(script[i].id))
			continue;
		phase = script[i].id;
		rc = script[i].server(e, &res);
		phase = script[i].id;
		if (ctl_send(e, CT_RESULT, rc == 0, res.v1, res.v2, res.v3) || rc)
			return -1;
	}
	phase = 'Z';
	if (ctl_recv(e, CT_DONE, &m, 60000) || ctl_send(e, CT_RESULT, 1, 0, 0, 0))
		return -1;
	/* Let the client close first (our RESULT must reach it). */
	for (i = 0; i < 300 && xroce_qp_state(e->ctl) == XROCE_QPS_RTS; i++)
		xroce_wait_cq(e->ctl_rcq, 1, &wc, 10);
	return 0;
}

static int run_client(struct env *e)
{
	struct ctlmsg m;
	unsigned int i;

	if (phase_wanted('M') && phase_m(e))
		return -1;
	for (i = 0; i < NSCRIPT; i++)
		if (phase_wanted(script[i].id) && script[i].client(e))
			return -1;
	phase = 'Z';
	if (ctl_send(e, CT_DONE, 1, 0, 0, 0) || ctl_result(e, &m))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct env e = { 0 };
	const char *s = getenv("XR_TIME_SCALE");
	int rc;

	e.ts = s && atoi(s) > 0 ? atoi(s) : 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server")) {
		e.server = true;
		role = "server";
	} else if (argc == 4 && !strcmp(argv[1], "client")) {
		e.host = argv[3];
		role = "client";
	} else {
		fprintf(stderr, "usage: itest_verbs server IF | itest_verbs client IF "
			"HOST\n");
		return 2;
	}
	rc = setup(&e, argv[2]);
	if (!rc)
		rc = e.server ? run_server(&e) : run_client(&e);
	if (e.dev && xroce_close_device(e.dev))
		rc = -1;
	if (!rc)
		printf("%s: all phases passed\n", role);
	return rc ? 1 : 0;
}
