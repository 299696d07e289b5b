// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shared parts of the fuzzers: see harness.h. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "harness.h"
#include "xsk_loop.h"

struct h_dev H;
struct h_txlog TX;
struct h_ledger L;

void rd_bytes(struct rd *r, void *out, size_t n)
{
	size_t k = n < r->n ? n : r->n;

	memcpy(out, r->p, k);
	memset((uint8_t *)out + k, 0, n - k);
	r->p += k;
	r->n -= k;
}

/* ---- the device -------------------------------------------------------- */
static void quiet_log(void *arg, enum xroce_log_level lvl, const char *fmt,
		      va_list ap)
{
	(void)arg;
	(void)lvl;
	(void)fmt;
	(void)ap;
	/* Every refusal logs a line: at fuzzing rates that is all the
	 * output there would be.  XR_FUZZ_LOG=1 shows them. */
	if (getenv("XR_FUZZ_LOG")) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
}

void h_init(void)
{
	struct xr_test_dev_attr a = {
		.nplanes = H_PLANES,
		.mem_size = 8u << 20,
		.max_conns = 64,
		.log_fn = quiet_log,
	};
	int rc;

	sim_reset(1000000000ull, 1);
	sim.on_tx = h_on_tx;
	rc = xr_test_device_open(&a, &H.dev);
	SIM_CHECK(rc == 0, "cannot open the detached device: %d (root needed)", rc);
	SIM_CHECK(!xroce_alloc_pd(H.dev, &H.pd), "pd");
	SIM_CHECK(!xroce_create_cq(H.dev, H_CQE, &H.scq), "send cq");
	SIM_CHECK(!xroce_create_cq(H.dev, H_CQE, &H.rcq), "recv cq");
	SIM_CHECK(!xroce_create_cq(H.dev, 16, &H.scq_small), "small send cq");
	SIM_CHECK(!xroce_create_cq(H.dev, 16, &H.rcq_small), "small recv cq");
	H.local_buf = xroce_mem_alloc(H.dev, H_LOCAL_BYTES, 4096);
	H.rread_buf = xroce_mem_alloc(H.dev, H_RREAD_BYTES, 4096);
	SIM_CHECK(H.local_buf && H.rread_buf, "memory");
	SIM_CHECK(!xroce_reg_mr(H.pd, H.local_buf, H_LOCAL_BYTES,
				XROCE_ACCESS_LOCAL_WRITE, &H.local), "local mr");
	SIM_CHECK(!xroce_reg_mr(H.pd, H.rread_buf, H_RREAD_BYTES,
				XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_READ,
				&H.rread), "remote-read mr");
	xr_test_maps_none(&H.no_maps);
	memcpy(H.planes, H.dev->plane, sizeof(H.planes));
}

void h_maps_detach(bool detach)
{
	if (detach == H.maps_detached)
		return;
	xr_test_device_swap_maps(H.dev, &H.no_maps);
	H.maps_detached = detach;
}

void h_dev_reset(void)
{
	int i;

	/* Checked at the end of every input: all frames are back, nothing is
	 * in flight.  What else the planes hold (next hops cached from the
	 * last input's simulated routes) must not leak into this one. */
	for (i = 0; i < H.dev->nplanes; i++)
		SIM_CHECK(H.dev->plane[i].nfree == XR_TX_FRAMES, "plane %d busy", i);
	memcpy(H.dev->plane, H.planes, sizeof(H.planes));
	/* The virtual clock restarts with every input: the device's own
	 * clocks must not stay in the last input's future. */
	H.dev->now_ns = 0;
	H.dev->ctrl_next_ns = 0;
	H.dev->telem_next_ns = 0;
	H.dev->npending = 0;
	H.dev->recent_pos = 0;
	memset(H.dev->pending, 0, sizeof(H.dev->pending));
	memset(H.dev->recent, 0, sizeof(H.dev->recent));
}

static unsigned wipe(int fd, uint32_t ksz)
{
	uint8_t key[64], next[64];
	unsigned n = 0;

	(void)ksz;
	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, sizeof(key));
		if (bpf_map_delete_elem(fd, key))
			break;
		n++;
	}
	return n;
}

unsigned h_maps_wipe(void)
{
	const struct xr_maps *m = &H.dev->maps;

	SIM_CHECK(!H.maps_detached, "wipe while detached");
	return wipe(m->conns, 4) + wipe(m->rq, sizeof(struct xr_rq_key)) +
	       wipe(m->reads, sizeof(struct xr_read_key));
}

/* ---- the peer ---------------------------------------------------------- */
void h_peer_addr(struct sockaddr_in6 *sa, int host)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons(H_PEER_PORT);
	sa->sin6_addr.s6_addr[10] = 0xff;
	sa->sin6_addr.s6_addr[11] = 0xff;
	sa->sin6_addr.s6_addr[12] = 10;
	sa->sin6_addr.s6_addr[13] = 99;
	sa->sin6_addr.s6_addr[14] = 0;
	sa->sin6_addr.s6_addr[15] = (uint8_t)(2 + host);
}

void h_connect_msg(struct xr_ctrl_msg *m, uint64_t nonce, uint32_t init_psn,
		   uint32_t init_csn, int nplanes)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->ver_type = XR_VER_TYPE(XR_T_CTRL);
	m->op = XR_CTRL_CONNECT;
	m->nonce = htobe64(nonce);
	m->src_conn = htonl(H_PEER_CONN);
	m->mtu = htonl(1500);
	m->rx_token = htobe64(H_PEER_TOKEN);
	m->init_psn = htonl(init_psn);
	m->init_csn = htonl(init_csn);
	m->data_port = htons(XR_DEFAULT_UDP_PORT);
	m->sport_lo = htons(49152);
	m->sport_n = htons(16384);
	m->nplanes = (uint8_t)nplanes;
	m->family = 4;
	m->npaths = htonl(8);
	for (i = 0; i < nplanes; i++) {
		m->addr[i][10] = m->addr[i][11] = 0xff;
		m->addr[i][12] = 10;
		m->addr[i][13] = 99;
		m->addr[i][14] = (uint8_t)i;
		m->addr[i][15] = 2;
	}
}

void h_cookie(struct xr_ctrl_msg *m, const struct sockaddr_in6 *from)
{
	xr_auth_cookie(&H.dev->auth, from, be64toh(m->nonce),
		       xr_auth_cookie_slot(xr_now_ns()), m->cookie);
}

int h_accept_from_peer(struct xroce_qp *qp, uint64_t nonce, uint32_t peer_psn,
		       uint32_t peer_csn)
{
	struct xr_ctrl_msg m;
	struct sockaddr_in6 from;

	h_peer_addr(&from, 0);
	h_connect_msg(&m, nonce, peer_psn, peer_csn, H_PLANES);
	h_cookie(&m, &from);
	SIM_CHECK(sim_ctrl_push(&m, sizeof(m), &from, sizeof(from)), "ctrl queue");
	return xroce_accept(qp, 0);
}

static struct h_wr *wr_by_msg(uint32_t msg_id);

/* ---- transmitted frames ------------------------------------------------ */
void h_txlog_reset(struct xroce_qp *qp)
{
	int i;

	for (i = 0; i < XR_MAX_PATHS; i++) {
		if (!TX.tx[i]) {
			TX.tx[i] = calloc(H_TXLOG, sizeof(struct h_tx));
			SIM_CHECK(TX.tx[i], "memory");
		} else {
			memset(TX.tx[i], 0, TX.used[i] * sizeof(struct h_tx));
		}
		TX.used[i] = 0;
	}
	TX.qp = qp;
	TX.init_psn = qp ? qp->init_psn : 0;
	for (i = 0; i < XR_MAX_PATHS; i++) {
		TX.sent_next[i] = TX.init_psn;
		TX.claim_next[i] = TX.init_psn;
		TX.probe_seq[i] = 0;
	}
	TX.overflow = false;
	TX.frames = TX.data_frames = TX.probes = TX.retx_frames = 0;
}

const struct h_tx *h_tx_at(int path, uint32_t psn)
{
	uint32_t i = psn - TX.init_psn;

	if (path < 0 || path >= XR_MAX_PATHS || i >= H_TXLOG || !TX.tx[path][i].valid)
		return NULL;
	return &TX.tx[path][i];
}

static uint32_t be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

/* Does the frame belong to qp (by the peer's connection id and token)? */
static bool frame_of(const struct xroce_qp *qp, uint32_t dst_conn, uint64_t token)
{
	/* Only a connected QP transmits. */
	return qp->state == XROCE_QPS_RTS && qp->peer_conn == dst_conn &&
	       qp->tx_token == token;
}

/* Size and path checks against the QP that sent the frame; several QPs
 * may share the peer's id and token (fuzz_ctrl accepts the same peer more
 * than once), then one of them must fit. */
static bool frame_fits(const struct xroce_qp *qp, uint32_t len, uint8_t path,
		       int plane, bool data, uint32_t csn)
{
	return len <= 14 + qp->mtu && path < qp->npaths &&
	       qp->path[path].plane == plane &&
	       (!data || xr_csn_in_flight(qp, csn));
}

void h_on_tx(void *arg, const struct xr_xsk *xsk, const uint8_t *f, uint32_t len)
{
	uint16_t et = (uint16_t)(f[12] << 8 | f[13]);
	size_t l3 = et == 0x0800 ? 20 : 40, off = 14 + l3 + 8;
	const uint8_t *x = f + off;
	struct xroce_qp *qp;
	uint64_t token;
	int pl;

	(void)arg;
	for (pl = 0; pl < H.dev->nplanes; pl++)
		if ((const struct xr_xsk *)H.dev->plane[pl].xsk == xsk)
			break;
	SIM_CHECK(pl < H.dev->nplanes, "frame from an unknown socket");
	SIM_CHECK(et == 0x0800 || et == 0x86dd, "ethertype %#x", et);
	SIM_CHECK(len >= off + 32, "frame of %u bytes", len);
	SIM_CHECK(XR_HDR_VERSION(x[0]) == XR_VERSION, "version");
	memcpy(&token, x + 8, 8);
	token = be64toh(token);
	for (qp = H.dev->qps; qp; qp = qp->next)
		if (frame_of(qp, be32(x + 4), token) &&
		    frame_fits(qp, len, x[3], pl, XR_HDR_TYPE(x[0]) == XR_T_DATA,
			       be32(x + 24)))
			break;
	SIM_CHECK(qp, "frame of %u bytes on plane %d, path %u, CSN %u, for no "
		  "connection it fits (conn %#x)", len, pl, x[3], be32(x + 24),
		  be32(x + 4));
	TX.frames++;
	if (XR_HDR_TYPE(x[0]) == XR_T_PROBE) {
		SIM_CHECK(len == off + sizeof(struct xr_probe_hdr), "probe size");
		if (qp == TX.qp)
			TX.probe_seq[x[3]] = be32(x + 16);
		TX.probes++;
		return;
	}
	SIM_CHECK(XR_HDR_TYPE(x[0]) == XR_T_DATA, "frame type %u", XR_HDR_TYPE(x[0]));
	SIM_CHECK(len >= off + sizeof(struct xr_data_hdr), "data frame size");
	{
		uint32_t plen = len - (uint32_t)(off + sizeof(struct xr_data_hdr));
		uint32_t psn = be32(x + 16), csn = be32(x + 24);
		uint32_t mlen = be32(x + 48), moff = be32(x + 52);
		uint8_t op = x[2];

		SIM_CHECK(op >= XR_OP_WRITE && op <= XR_OP_MAX, "opcode %u", op);
		SIM_CHECK(plen <= qp->seg_max, "payload %u > seg_max %u", plen,
			  qp->seg_max);
		if (op != XR_OP_READ_REQ)
			SIM_CHECK(moff <= mlen && plen <= mlen - moff,
				  "payload [%u, +%u) of a %u-byte message", moff, plen, mlen);
		TX.data_frames++;
		if (x[1] & XR_DF_RETX)
			TX.retx_frames++;
		if (qp != TX.qp)
			return;
		{
			struct h_wr *w = wr_by_msg(be32(x + 44));

			if (w && op != XR_OP_READ_RESP)
				w->sent = true;
		}
		if (xr_seq_diff(psn + 1, TX.sent_next[x[3]]) > 0)
			TX.sent_next[x[3]] = psn + 1;
		if (psn - TX.init_psn >= H_TXLOG) {
			TX.overflow = true;
			return;
		}
		{
			struct h_tx *t = &TX.tx[x[3]][psn - TX.init_psn];

			if (psn - TX.init_psn >= TX.used[x[3]])
				TX.used[x[3]] = psn - TX.init_psn + 1;

			SIM_CHECK(!t->valid, "PSN %u of path %u sent twice", psn, x[3]);
			t->valid = 1;
			t->csn = csn;
			t->msg_id = be32(x + 44);
			t->msg_off = moff;
			t->ts = be32(x + 28);
			t->opcode = op;
		}
	}
}

/* ---- work requests -------------------------------------------------- */
void h_ledger_reset(struct xroce_qp *qp, bool check_claims)
{
	memset(&L, 0, sizeof(L));
	L.qp = qp;
	L.check_claims = check_claims;
	if (qp) {
		L.conn_id = qp->conn_id;
		L.qp_flags = qp->flags;
		L.scq = qp->send_cq;
		L.rcq = qp->recv_cq;
		L.cq_small = qp->send_cq->size < H_CQE || qp->recv_cq->size < H_CQE;
	}
}

void h_ledger_qp_gone(void)
{
	L.qp = NULL;
	if (TX.qp)
		TX.qp = NULL;
}

static struct h_wr *wr_by_msg(uint32_t msg_id)
{
	uint32_t i;

	for (i = 0; i < L.nwr; i++)
		if (L.wr[i].msg_id == msg_id)
			return &L.wr[i];
	return NULL;
}

int h_post(int kind, uint32_t len, uint16_t stream, bool signaled, uint32_t off,
	   int nsge, bool inl)
{
	static const enum xroce_wr_opcode ops[HW_NKIND] = {
		XROCE_WR_RDMA_WRITE, XROCE_WR_RDMA_WRITE_WITH_IMM, XROCE_WR_SEND,
		XROCE_WR_SEND_WITH_IMM, XROCE_WR_RDMA_READ,
	};
	struct xroce_qp *qp = L.qp;
	struct xroce_send_wr wr, *bad;
	struct xroce_sge sge[XROCE_MAX_SGE];
	struct h_wr *h;
	struct xr_swr *w;
	uint32_t i, left;
	int rc;

	if (L.nwr == H_MAX_WR)
		return -ENOSPC;
	if (len > H_LOCAL_BYTES / 2)
		len = H_LOCAL_BYTES / 2;
	if (kind == HW_READ)
		nsge = 1, inl = false;
	if (nsge < 1 || nsge > XROCE_MAX_SGE)
		nsge = 1;
	if (inl && len > XROCE_MAX_INLINE)
		len = XROCE_MAX_INLINE;
	/* nsge pieces of the local region's lower half (receives use the
	 * upper half), spread over it. */
	for (i = 0, left = len; i < (uint32_t)nsge; i++) {
		uint32_t n = i + 1 == (uint32_t)nsge ? left : len / (uint32_t)nsge;
		uint32_t o = (off + i * 40961u) % (H_LOCAL_BYTES / 2 - n + 1);

		sge[i].addr = (uint64_t)(uintptr_t)(H.local_buf + o);
		sge[i].length = n;
		sge[i].lkey = H.local->lkey;
		left -= n;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x1000 + L.nwr;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.opcode = ops[kind];
	wr.send_flags = (signaled ? XROCE_SEND_SIGNALED : 0) | (inl ? XROCE_SEND_INLINE : 0);
	wr.imm_data = 0xabcd0000u + L.nwr;
	wr.rdma.remote_addr = 0x7f0000000000ull + off;
	wr.rdma.rkey = 0x1234;
	wr.stream = stream;
	rc = xroce_post_send(qp, &wr, &bad);
	if (rc)
		return rc;
	/* Ours is the newest application request: the progress round of the
	 * post may have queued answers to a peer's READs after it (and may
	 * even have flushed it, if the connection failed). */
	for (w = NULL, i = 0; i < qp->sq_size; i++)
		if (xr_swr_at(qp, qp->sq_tail - 1 - i)->kind != XR_WK_INTERNAL) {
			w = xr_swr_at(qp, qp->sq_tail - 1 - i);
			break;
		}
	SIM_CHECK(w && w->wr_id == wr.wr_id, "posted request not on the queue");
	h = &L.wr[L.nwr];
	memset(h, 0, sizeof(*h));
	h->wr_id = wr.wr_id;
	h->kind = (uint8_t)kind;
	h->signaled = signaled;
	h->stream = stream;
	h->len = len;
	h->msg_id = w->msg_id;
	h->npkts = w->npkts;
	h->read_id = kind == HW_READ ? w->read_id : 0;
	h->seq = L.nwr + 1;
	SIM_CHECK(h->npkts <= sizeof(h->claimed) * 8, "%u packets", h->npkts);
	L.nwr++;
	return 0;
}

int h_post_recv(uint16_t stream)
{
	struct xroce_recv_wr wr, *bad;
	struct xroce_sge sge;
	uint8_t *buf;
	int rc;

	if (L.nrwr == H_MAX_RWR || stream >= H_STREAMS)
		return -ENOSPC;
	/* Receives land in the remote-read region's local buffer space of the
	 * local region's upper half: any LOCAL_WRITE buffer does. */
	buf = H.local_buf + (H_LOCAL_BYTES / 2) +
	      (L.nrwr % 8) * H_RECV_BYTES;
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uint64_t)(uintptr_t)buf;
	sge.length = H_RECV_BYTES;
	sge.lkey = H.local->lkey;
	wr.wr_id = 0x2000 + L.nrwr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.stream = stream;
	rc = xroce_post_recv(L.qp, &wr, &bad);
	if (rc)
		return rc;
	L.rwr[L.nrwr].wr_id = wr.wr_id;
	L.rwr[L.nrwr].stream = stream;
	L.nrwr++;
	return 0;
}

static void claim(int path, uint32_t psn)
{
	const struct h_tx *t = h_tx_at(path, psn);
	struct h_wr *w;
	uint32_t k;

	if (!t)
		return;
	w = wr_by_msg(t->msg_id);
	if (!w || t->opcode == XR_OP_READ_RESP)
		return;
	k = L.seg_max ? t->msg_off / L.seg_max : 0;
	if (k < sizeof(w->claimed) * 8)
		w->claimed[k / 8] |= (uint8_t)(1u << (k % 8));
}

/* What an ACK or NAK says arrived, over the PSNs sent so far. */
static void claims_of(const struct xr_evt *e)
{
	int p = e->path;
	uint32_t x;
	int b;

	if (p >= XR_MAX_PATHS)
		return;
	/* cumulative: everything sent before cack */
	for (x = TX.claim_next[p];
	     xr_seq_diff(x, e->ack.cack) < 0 && xr_seq_diff(x, TX.sent_next[p]) < 0; x++)
		claim(p, x);
	if (xr_seq_diff(x, TX.claim_next[p]) > 0)
		TX.claim_next[p] = x;
	for (b = 0; b < XR_SACK_BITS; b++)
		if (e->ack.sack[b / 64] >> (b % 64) & 1)
			claim(p, e->ack.cack + 1 + (uint32_t)b);
	if (e->type == XR_EVT_NAK)
		claim(p, e->ack.ack_psn); /* the refused packet did arrive */
}

void h_pre_event(void *arg, const void *data, size_t len)
{
	const struct xr_evt *e = data;
	struct xroce_qp *qp = L.qp;

	(void)arg;
	if (!qp || len < sizeof(*e) || e->conn != qp->conn_id)
		return;
	if (e->type == XR_EVT_ACK || e->type == XR_EVT_NAK) {
		claims_of(e);
		/* A refusal other than "not ready" of a packet in flight fails
		 * its work request: it must never complete successfully. */
		if (e->type == XR_EVT_NAK && e->ack.reason != XR_NAK_RNR &&
		    qp->state == XROCE_QPS_RTS && e->path < qp->npaths &&
		    xr_csn_in_flight(qp, e->ack.nak_csn)) {
			const struct xr_pk *pk = &qp->pk[e->ack.nak_csn & (qp->pk_win - 1)];
			const struct xr_swr *w = &qp->sq[pk->wr & (qp->sq_size - 1)];
			struct h_wr *h = wr_by_msg(w->msg_id);

			if (pk->state == XR_PK_INFLIGHT && !w->failed && h &&
			    w->kind != XR_WK_INTERNAL)
				h->nak_fatal = true;
		}
	} else if (e->type == XR_EVT_RECV) {
		if (e->recv.opcode == XR_OP_READ_RESP) {
			uint32_t i;

			for (i = 0; i < L.nwr; i++)
				if (L.wr[i].kind == HW_READ && L.wr[i].read_id == e->recv.rkey)
					L.wr[i].resp_seen = true;
		} else if (e->recv.stream < H_STREAMS &&
			   e->recv.opcode != XR_OP_WRITE) {
			L.recv_evts[e->recv.stream]++;
		}
	}
}

static bool all_claimed(const struct h_wr *w)
{
	uint32_t k;

	for (k = 0; k < w->npkts; k++)
		if (!(w->claimed[k / 8] >> (k % 8) & 1))
			return false;
	return true;
}

static void check_send_wc(const struct xroce_wc *wc)
{
	static const enum xroce_wc_opcode op[HW_NKIND] = {
		XROCE_WC_RDMA_WRITE, XROCE_WC_RDMA_WRITE, XROCE_WC_SEND,
		XROCE_WC_SEND, XROCE_WC_RDMA_READ,
	};
	struct h_wr *w;

	SIM_CHECK(wc->wr_id >= 0x1000 && wc->wr_id < 0x1000 + L.nwr,
		  "send completion of unknown wr_id %#llx", (unsigned long long)wc->wr_id);
	w = &L.wr[wc->wr_id - 0x1000];
	SIM_CHECK(w->ncomp == 0, "wr %#llx completed twice",
		  (unsigned long long)wc->wr_id);
	w->ncomp++;
	SIM_CHECK((unsigned)wc->status <= XROCE_WC_GENERAL_ERR, "status %d", wc->status);
	SIM_CHECK(wc->opcode == op[w->kind], "wr %#llx: opcode %d, expected %d",
		  (unsigned long long)wc->wr_id, wc->opcode, op[w->kind]);
	SIM_CHECK(wc->qp_num == L.conn_id, "qp_num %u", wc->qp_num);
	SIM_CHECK(wc->stream == w->stream, "stream %u, posted on %u", wc->stream,
		  w->stream);
	SIM_CHECK(w->seq > L.last_seq[w->stream], "wr %#llx completed out of order "
		  "on stream %u", (unsigned long long)wc->wr_id, w->stream);
	L.last_seq[w->stream] = w->seq;
	if (wc->status != XROCE_WC_SUCCESS) {
		if (wc->status == XROCE_WC_WR_FLUSH_ERR)
			L.flushed++;
		else
			L.errors++;
		return;
	}
	L.ok++;
	SIM_CHECK(w->signaled, "unsignaled wr %#llx completed successfully",
		  (unsigned long long)wc->wr_id);
	SIM_CHECK(wc->byte_len == w->len, "wr %#llx: byte_len %u of %u",
		  (unsigned long long)wc->wr_id, wc->byte_len, w->len);
	SIM_CHECK(!w->nak_fatal, "wr %#llx succeeded after a NAK refused it",
		  (unsigned long long)wc->wr_id);
	if (w->kind == HW_READ)
		SIM_CHECK(w->resp_seen, "READ %#llx succeeded without its answer",
			  (unsigned long long)wc->wr_id);
	if (L.check_claims && !TX.overflow)
		SIM_CHECK(all_claimed(w), "wr %#llx (%u packets) succeeded with "
			  "packets never acknowledged", (unsigned long long)wc->wr_id,
			  w->npkts);
}

static void check_recv_wc(const struct xroce_wc *wc)
{
	struct h_rwr *r;
	uint16_t s;

	SIM_CHECK(wc->qp_num == L.conn_id, "recv qp_num %u", wc->qp_num);
	SIM_CHECK((unsigned)wc->status <= XROCE_WC_GENERAL_ERR, "status %d", wc->status);
	if (wc->opcode == XROCE_WC_RECV_RDMA_WRITE) {
		SIM_CHECK(L.qp_flags & XROCE_QP_NOTIFY_WRITES,
			  "WRITE notification without XROCE_QP_NOTIFY_WRITES");
		SIM_CHECK(wc->wr_id == 0 && wc->status == XROCE_WC_SUCCESS,
			  "WRITE notification wr_id %#llx", (unsigned long long)wc->wr_id);
		return;
	}
	SIM_CHECK(wc->opcode == XROCE_WC_RECV || wc->opcode == XROCE_WC_RECV_RDMA_WITH_IMM,
		  "receive opcode %d", wc->opcode);
	SIM_CHECK(wc->wr_id >= 0x2000 && wc->wr_id < 0x2000 + L.nrwr,
		  "receive completion of unknown wr_id %#llx", (unsigned long long)wc->wr_id);
	r = &L.rwr[wc->wr_id - 0x2000];
	s = r->stream;
	SIM_CHECK(wc->stream == s, "receive of stream %u completed on %u", s, wc->stream);
	SIM_CHECK(r->ncomp == 0, "receive %#llx completed twice",
		  (unsigned long long)wc->wr_id);
	r->ncomp++;
	/* Receives of a stream complete in the order they were posted. */
	while (L.rnext[s] < L.nrwr && L.rwr[L.rnext[s]].stream != s)
		L.rnext[s]++;
	SIM_CHECK(&L.rwr[L.rnext[s]] == r, "receive %#llx completed out of order",
		  (unsigned long long)wc->wr_id);
	L.rnext[s]++;
	if (wc->status == XROCE_WC_SUCCESS) {
		L.rok++;
		L.recv_done[s]++;
		SIM_CHECK(L.recv_done[s] <= L.recv_evts[s], "stream %u: %u receives "
			  "completed for %u messages reported", s, L.recv_done[s],
			  L.recv_evts[s]);
	} else {
		SIM_CHECK(wc->status == XROCE_WC_WR_FLUSH_ERR, "receive status %d",
			  wc->status);
	}
}

void h_poll_check(void)
{
	struct xroce_cq *scq = L.scq ? L.scq : H.scq, *rcq = L.rcq ? L.rcq : H.rcq;
	struct xroce_wc wc[64];
	int n, i;

	/* Straight from the rings: xroce_poll_cq would also run a progress
	 * round, which the harness schedules itself. */
	for (;;) {
		n = 0;
		while (n < 64 && scq->head != scq->tail)
			wc[n++] = scq->ring[scq->head++ & (scq->size - 1)];
		for (i = 0; i < n; i++)
			check_send_wc(&wc[i]);
		if (n < 64)
			break;
	}
	for (;;) {
		n = 0;
		while (n < 64 && rcq->head != rcq->tail)
			wc[n++] = rcq->ring[rcq->head++ & (rcq->size - 1)];
		for (i = 0; i < n; i++)
			check_recv_wc(&wc[i]);
		if (n < 64)
			break;
	}
}

void h_ledger_final(void)
{
	uint32_t i;

	h_poll_check();
	for (i = 0; i < L.nwr; i++) {
		const struct h_wr *w = &L.wr[i];

		/* A CQ too small for what is outstanding at destroy loses the
		 * completions that do not fit (the application sized it). */
		if (w->signaled && !L.cq_small)
			SIM_CHECK(w->ncomp == 1, "signaled wr %#llx completed %d times",
				  (unsigned long long)w->wr_id, w->ncomp);
		else
			SIM_CHECK(w->ncomp <= 1, "wr %#llx completed %d times",
				  (unsigned long long)w->wr_id, w->ncomp);
	}
	for (i = 0; i < L.nrwr; i++)
		SIM_CHECK(L.rwr[i].ncomp == 1 || (L.cq_small && L.rwr[i].ncomp == 0),
			  "receive %#llx completed %d times",
			  (unsigned long long)L.rwr[i].wr_id, L.rwr[i].ncomp);
}

/* ---- invariants --------------------------------------------------------- */
static void check_ctl(const struct xr_cc_ctl *k, double lo, double hi,
		      const char *who, int i)
{
	SIM_CHECK(isfinite(k->cwnd) && k->cwnd >= lo && k->cwnd <= hi,
		  "%s %d: cwnd %g outside [%g, %g]", who, i, k->cwnd, lo, hi);
	SIM_CHECK(k->alpha >= 0 && k->alpha <= 1, "%s %d: alpha %g", who, i, k->alpha);
	SIM_CHECK(!isnan(k->ssthresh) && k->ssthresh > 0, "%s %d: ssthresh %g", who,
		  i, k->ssthresh);
}

void h_check_qp(const struct xroce_qp *qp)
{
	const struct xr_cc *cc = &qp->cc;
	uint32_t i, sum = 0;

	SIM_CHECK(qp->state <= XROCE_QPS_CONNECTING, "state %d", qp->state);
	SIM_CHECK(qp->conn_id < H.dev->conn_tab_size &&
		  H.dev->conn_tab[qp->conn_id] == qp, "conn_tab");
	SIM_CHECK(qp->sq_tail - qp->sq_head <= qp->sq_size &&
		  qp->sq_seg - qp->sq_head <= qp->sq_tail - qp->sq_head,
		  "send queue head %u seg %u tail %u size %u", qp->sq_head,
		  qp->sq_seg, qp->sq_tail, qp->sq_size);
	/* Paths and windows exist once the peer's half is programmed: a QP
	 * connecting through xroce_qp_bind may not have it yet, and one that
	 * failed to take it never will. */
	if (qp->state == XROCE_QPS_INIT ||
	    ((qp->state == XROCE_QPS_CONNECTING || qp->state == XROCE_QPS_ERR) &&
	     !qp->cc.npaths))
		return;
	SIM_CHECK(xr_seq_diff(qp->csn_next, qp->csn_una) >= 0 &&
		  qp->csn_next - qp->csn_una <= qp->pk_win,
		  "CSNs [%u, %u) with a window of %u", qp->csn_una, qp->csn_next,
		  qp->pk_win);
	SIM_CHECK(qp->retx_tail - qp->retx_head <= qp->pk_win, "retransmission "
		  "queue of %u entries, window %u", qp->retx_tail - qp->retx_head,
		  qp->pk_win);
	SIM_CHECK(qp->rnr_tail - qp->rnr_head <= qp->pk_win, "RNR queue %u",
		  qp->rnr_tail - qp->rnr_head);
	SIM_CHECK(qp->rdq_tail - qp->rdq_head <= XR_RDQ, "READ queue %u",
		  qp->rdq_tail - qp->rdq_head);
	SIM_CHECK(qp->npaths >= 1 && qp->npaths <= XR_MAX_PATHS && cc->npaths == qp->npaths,
		  "paths %u / cc %u", qp->npaths, cc->npaths);
	for (i = 0; i < qp->npaths; i++) {
		const struct xr_txpath *tp = &qp->path[i].tp;
		const struct xr_cc_path *cp = &cc->path[i];

		SIM_CHECK(xr_txpath_inflight(tp) <= XR_TXPATH_WIN, "path %u: %u PSNs "
			  "in flight", i, xr_txpath_inflight(tp));
		SIM_CHECK(cp->state <= XR_CC_DOWN, "path %u state %u", i, cp->state);
		check_ctl(&cp->ctl, cc->cfg.path_min_cwnd, cc->cfg.path_max_cwnd, "path",
			  (int)i);
		SIM_CHECK(cp->loss_ewma >= 0 && cp->loss_ewma <= 1, "path %u loss %g", i,
			  cp->loss_ewma);
		if (qp->state == XROCE_QPS_RTS)
			SIM_CHECK(cp->ctl.inflight == xr_txpath_inflight(tp),
				  "path %u: congestion control counts %u in flight, "
				  "the path %u", i, cp->ctl.inflight,
				  xr_txpath_inflight(tp));
		sum += cp->ctl.inflight;
	}
	check_ctl(&cc->conn, cc->cfg.conn_min_cwnd, cc->cfg.conn_max_cwnd, "conn", 0);
	if (qp->state == XROCE_QPS_RTS)
		SIM_CHECK(cc->conn.inflight == sum, "connection counts %u in flight, "
			  "its paths %u", cc->conn.inflight, sum);
	SIM_CHECK(cc->pace_tokens >= -(double)cc->cfg.burst_pkts &&
		  cc->pace_tokens <= cc->cfg.burst_pkts, "pacing tokens %g",
		  cc->pace_tokens);
}

void h_check_frames(void)
{
	int i;

	for (i = 0; i < H.dev->nplanes; i++) {
		struct xr_plane *pl = &H.dev->plane[i];

		xsk_loop_flush(pl->xsk);
		xr_plane_reap(pl);
		SIM_CHECK(xsk_loop_in_flight(pl->xsk) == 0, "plane %d: %u descriptors "
			  "never reaped", i, xsk_loop_in_flight(pl->xsk));
		SIM_CHECK(pl->nfree == XR_TX_FRAMES, "plane %d: %u of %u transmit "
			  "frames free with nothing in flight", i, pl->nfree, XR_TX_FRAMES);
	}
}
