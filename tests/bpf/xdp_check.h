/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Running one fixture row and checking everything that came of it against
 * the row: the verdict; an XDP_TX reply taken apart byte by byte (the
 * input turned around, the ACK / NAK / probe reply fields, checksums
 * recomputed independently); an XDP_PASS frame untouched; the receive
 * window of the packet's path (or the whole receive state unchanged); both
 * domains' memory against their shadow copies; every counter's delta; the
 * ring-buffer event.  Included once, by bpf_xdp_table.c.
 */
#ifndef XR_TEST_XDP_CHECK_H
#define XR_TEST_XDP_CHECK_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "contract/abi.h"
#include "frames.h"
#include "xdp_env.h"
#include "xdp_frame.h"


/* The reply must be the input turned around: Ethernet, IP, UDP. */
static void check_turnaround(struct env *e, const uint8_t *in,
			     const uint8_t *out, uint32_t outn, size_t body_len,
			     struct fr_view *v)
{
	size_t l3 = e->v6 ? FR_IP6 : FR_IP4;
	const uint8_t *ip = out + FR_ETH;
	const uint8_t *iip = in + FR_ETH;
	uint8_t tc_in = fr_tclass(in, e->v6);

	if (fr_decode(out, outn, v)) {
		ERR(e, "reply is not an Ethernet/IP/UDP frame");
		return;
	}
	EQ(e, "reply is IPv6", v->v6, e->v6);
	EQ(e, "reply length", outn, FR_ETH + l3 + FR_UDP + body_len);
	if (memcmp(out, in + 6, 6) || memcmp(out + 6, in, 6))
		ERR(e, "MACs not swapped");
	EQ(e, "ethertype", fr_get16(out + 12), fr_get16(in + 12));
	EQ(e, "traffic class (DSCP kept, ECN cleared)", fr_tclass(out, e->v6),
	   tc_in & ~3);
	if (!e->v6) {
		EQ(e, "ip version/ihl", ip[0], 0x45);
		EQ(e, "ip tot_len", fr_get16(ip + 2), FR_IP4 + FR_UDP + body_len);
		EQ(e, "ip frag_off (DF)", fr_get16(ip + 6), 0x4000);
		EQ(e, "ip ttl", ip[8], 64);
		EQ(e, "ip protocol", ip[9], 17);
		if (memcmp(ip + 12, iip + 16, 4) || memcmp(ip + 16, iip + 12, 4))
			ERR(e, "IPv4 addresses not swapped");
		if (!fr_ip4_csum_ok(out))
			ERR(e, "IPv4 header checksum wrong (%#x)",
			    fr_get16(ip + 10));
	} else {
		EQ(e, "ip6 version", ip[0] >> 4, 6);
		EQ(e, "ip6 flow label", fr_get32(ip) & 0xfffff, 0x5a5a5);
		EQ(e, "ip6 payload_len", fr_get16(ip + 4), FR_UDP + body_len);
		EQ(e, "ip6 next header", ip[6], 17);
		EQ(e, "ip6 hop limit", ip[7], 64);
		if (memcmp(ip + 8, iip + 24, 16) || memcmp(ip + 24, iip + 8, 16))
			ERR(e, "IPv6 addresses not swapped");
	}
	EQ(e, "udp source", fr_get16(out + v->l4), fr_get16(in + v->l4 + 2));
	EQ(e, "udp dest", fr_get16(out + v->l4 + 2), fr_get16(in + v->l4));
	EQ(e, "udp len", fr_get16(out + v->l4 + 4), FR_UDP + body_len);
	if (!fr_udp_csum_ok(out, v))
		ERR(e, "UDP checksum wrong (%#x)", fr_get16(out + v->l4 + 6));
}

static void check_ack(struct env *e, const struct step *st,
		      const struct built *b, const uint8_t *in,
		      const uint8_t *out, uint32_t outn, int values)
{
	struct fr_view v;
	const uint8_t *a;
	int j;

	check_turnaround(e, in, out, outn, sizeof(struct xr_ack_hdr), &v);
	if (e->errs && v.len == 0)
		return;
	if (outn < v.body + sizeof(struct xr_ack_hdr))
		return;
	a = out + v.body;
	EQ(e, "ver_type", a[0], XR_VER_TYPE(st->rt));
	EQ(e, "path", a[3], b->path);
	EQ(e, "dst_conn", fr_get32(a + 4), PEER_CONN);
	EQ(e, "token", fr_get64(a + 8), TX_TOKEN);
	EQ(e, "ack_psn", fr_get32(a + 20), b->psn);
	EQ(e, "ts_echo", fr_get32(a + 24), b->ts);
	EQ(e, "rate_hint", fr_get32(a + 28), 0);
	EQ(e, "nak_csn", fr_get32(a + 76), st->rreason ? b->csn : 0);
	if (!values)
		return;
	/* XR_AF_SACK follows from the window's bits; rows name the rest. */
	EQ(e, "flags", a[1], st->rfl | ((st->w.sack[0] | st->w.sack[1] |
					 st->w.sack[2] | st->w.sack[3]) ?
					XR_AF_SACK : 0));
	EQ(e, "reason", a[2], st->rreason);
	EQ(e, "cack", fr_get32(a + 16), e->S + st->w.cack);
	for (j = 0; j < 4; j++) {
		char what[16];

		snprintf(what, sizeof(what), "sack[%d]", j);
		EQ(e, what, fr_get64(a + 32 + 8 * j), st->w.sack[j]);
	}
	EQ(e, "ce_pkts", fr_get32(a + 64), st->w.ce);
	EQ(e, "rx_pkts", fr_get32(a + 68), st->w.rx);
	EQ(e, "csn_cum", fr_get32(a + 72), e->C + st->w.csn);
}

static void check_probe_reply(struct env *e, const struct built *b,
			      const uint8_t *in, const uint8_t *out,
			      uint32_t outn)
{
	struct fr_view v;
	const uint8_t *p;

	check_turnaround(e, in, out, outn, sizeof(struct xr_probe_hdr), &v);
	if (outn < v.body + sizeof(struct xr_probe_hdr))
		return;
	p = out + v.body;
	EQ(e, "ver_type", p[0], XR_VER_TYPE(XR_T_PROBE_REPLY));
	EQ(e, "flags", p[1], 0);
	EQ(e, "rsvd0", p[2], 0);
	EQ(e, "path", p[3], b->path);
	EQ(e, "dst_conn", fr_get32(p + 4), PEER_CONN);
	EQ(e, "token", fr_get64(p + 8), TX_TOKEN);
	EQ(e, "seq", fr_get32(p + 16), b->seq);
	EQ(e, "ts", fr_get32(p + 20), b->ts);
	EQ(e, "rate_hint", fr_get32(p + 24), 0);
	EQ(e, "rsvd1", fr_get32(p + 28), 0);
}

/* A BIND record: the conn named, the packet's source, the message as
 * it was in the frame. */
static void check_bind(struct env *e, const struct step *st, const uint8_t *in,
		       const struct fr_view *v, const uint8_t *a)
{
	const struct xr_evt_bind *r = &e->bind_rec;
	const uint8_t *sa = fr_saddr(in, e->v6);
	uint8_t want[16] = { [10] = 0xff, [11] = 0xff };

	if (e->v6)
		memcpy(want, sa, 16);
	else
		memcpy(want + 12, sa, 4);
	EQ(e, "event type", r->type, XR_EVT_BIND);
	EQ(e, "bind conn", r->conn, st->conn ? st->conn : CONN);
	EQ(e, "bind src_port", r->src_port, fr_get16(in + v->l4));
	if (memcmp(r->src_addr, want, 16))
		ERR(e, "bind src_addr is not the packet's source");
	if (memcmp(r->msg, a, sizeof(r->msg)))
		ERR(e, "bind record: the message differs from the frame's");
}

/* K_RQDONE: CONN's xr_evb guard, as the library sets it. */
static void rq_done_step(struct env *e, const struct step *st)
{
	uint32_t conn = CONN;
	struct xr_evb b = { 0 };

	if (e->w->evb < 0 || bpf_map_lookup_elem(e->w->evb, &conn, &b)) {
		ERR(e, "cannot read xr_evb: %s", strerror(errno));
		return;
	}
	b.rq_done = mrs[st->rk].key + st->roff;
	b.rq_stream = (uint16_t)(RQ_STREAM + st->seq);
	b.rq_on = 1;
	if (bpf_map_update_elem(e->w->evb, &conn, &b, BPF_ANY))
		ERR(e, "cannot set xr_evb: %s", strerror(errno));
}

/* K_POSTRQ, K_RECALL, K_RQDONE: a receive posted, taken back as the
 * library takes it back, or marked complete by the guard. */
static void rq_step(struct env *e, const struct step *st)
{
	const struct mrdef *m = &mrs[st->rk];
	struct xr_rq_key k = { .conn = CONN, .stream = RQ_STREAM,
			       .slot = (uint16_t)(m->key % XR_RQ_SLOTS) };
	struct xr_rq_ent v = { .msn = m->key, .len = st->plen,
			       .mem_off = m->mr.mem_off + st->roff,
			       .conn = CONN, .stream = RQ_STREAM,
			       .state = XR_RQ_OPEN };
	char why[160];
	int rc;

	if (st->kind == K_RQDONE) {
		rq_done_step(e, st);
		return;
	}
	if (st->kind == K_POSTRQ) {
		if (bpf_map_update_elem(e->w->rq, &k, &v, BPF_ANY))
			ERR(e, "cannot post the receive: %s", strerror(errno));
		return;
	}
	if (!e->rqr && xr_rqrecall_open(&e->rqr, e->w->rq, why, sizeof(why))) {
		ERR(e, "%s", why);
		return;
	}
	rc = xr_rqrecall_run(e->rqr, &k, m->key);
	EQ(e, "recall answer", rc, st->recall);
}

static void check_events(struct env *e, const struct step *st,
			 const struct built *b, const uint8_t *in, size_t n)
{
	const struct xr_evt *ev = &e->ev[0];
	struct fr_view v;
	const uint8_t *a;
	int j;

	if (e->bad_ev)
		ERR(e, "%d events of the wrong size", e->bad_ev);
	if (st->ev == EV_NONE) {
		if (e->nev)
			ERR(e, "%d unexpected events (first type %u)", e->nev,
			    ev->type);
		return;
	}
	if (e->nev != 1) {
		ERR(e, "%d events, want 1", e->nev);
		if (!e->nev)
			return;
	}
	EQ(e, "event domain", e->ev_dom[0], 0);
	if (!ev->rx_ns)
		ERR(e, "event rx_ns is 0");
	if (st->ev == EV_RECV) {
		const struct mrdef *m = &mrs[st->rk];

		EQ(e, "event type", ev->type, XR_EVT_RECV);
		EQ(e, "event conn", ev->conn, CONN);
		EQ(e, "event path", ev->path, b->path);
		EQ(e, "event flags", ev->flags, 0);
		EQ(e, "recv.msg_id", ev->recv.msg_id, b->msg_id);
		EQ(e, "recv.msg_len", ev->recv.msg_len, b->msg_len);
		EQ(e, "recv.imm", ev->recv.imm, b->imm);
		EQ(e, "recv.stream", ev->recv.stream, b->stream);
		EQ(e, "recv.opcode", ev->recv.opcode, b->opcode);
		EQ(e, "recv.raddr_end", ev->recv.raddr_end,
		   m->mr.iova + st->recv_end);
		EQ(e, "recv.rkey", ev->recv.rkey, m->key);
		return;
	}
	if (st->ev == EV_RNR) {
		EQ(e, "event type", ev->type, XR_EVT_RNR);
		EQ(e, "event conn", ev->conn, CONN);
		EQ(e, "event path", ev->path, b->path);
		EQ(e, "rnr.msn", ev->rnr.msn, mrs[st->rk].key);
		EQ(e, "rnr.stream", ev->rnr.stream, b->stream);
		return;
	}
	/* ACK / NAK / PROBE_REPLY: the event is the frame's body in host
	 * order; decode the input independently. */
	if (fr_decode(in, n, &v)) {
		ERR(e, "cannot decode the input frame");
		return;
	}
	a = in + v.body;
	if (st->ev == EV_BIND) {
		check_bind(e, st, in, &v, a);
		return;
	}
	EQ(e, "event conn", ev->conn,
	   st->kind == K_LOOP ? PEER_CONN : CONN);
	EQ(e, "event path", ev->path, a[3]);
	if (st->ev == EV_PROBE) {
		EQ(e, "event type", ev->type, XR_EVT_PROBE_REPLY);
		EQ(e, "probe.seq", ev->probe.seq, fr_get32(a + 16));
		EQ(e, "probe.ts", ev->probe.ts, fr_get32(a + 20));
		EQ(e, "probe.rate_hint", ev->probe.rate_hint, fr_get32(a + 24));
		return;
	}
	EQ(e, "event type", ev->type,
	   (a[0] & 0xf) == XR_T_NAK ? XR_EVT_NAK : XR_EVT_ACK);
	EQ(e, "event flags", ev->flags, a[1]);
	EQ(e, "ack.reason", ev->ack.reason, a[2]);
	EQ(e, "ack.cack", ev->ack.cack, fr_get32(a + 16));
	EQ(e, "ack.ack_psn", ev->ack.ack_psn, fr_get32(a + 20));
	EQ(e, "ack.ts_echo", ev->ack.ts_echo, fr_get32(a + 24));
	EQ(e, "ack.rate_hint", ev->ack.rate_hint, fr_get32(a + 28));
	for (j = 0; j < 4; j++) /* read as zero without XR_AF_SACK */
		EQ(e, "ack.sack[j]", ev->ack.sack[j],
		   a[1] & XR_AF_SACK ? fr_get64(a + 32 + 8 * j) : 0);
	EQ(e, "ack.ce_pkts", ev->ack.ce_pkts, fr_get32(a + 64));
	EQ(e, "ack.rx_pkts", ev->ack.rx_pkts, fr_get32(a + 68));
	EQ(e, "ack.csn_cum", ev->ack.csn_cum, fr_get32(a + 72));
	EQ(e, "ack.nak_csn", ev->ack.nak_csn, fr_get32(a + 76));
}

static void check_memory(struct env *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct xw_dom *d = &e->dom[i];
		size_t first, cnt = xw_mem_diff(d->mem, d->shadow, d->mem_len,
						&first);

		if (!cnt)
			continue;
		ERR(e, "domain %u memory: %zu bytes differ, first at %#zx "
		       "(%#x, want %#x)", i ? DOM2 : DOM, cnt, first,
		    d->mem[first], d->shadow[first]);
		/* keep later steps' reports about their own effects */
		memcpy(d->shadow, d->mem, d->mem_len);
	}
}

static void check_rx(struct env *e, const struct step *st,
		     const struct xr_rx_state *before,
		     const struct xr_rx_state *after, const int64_t *dstat)
{
	uint32_t p = st->path & (XR_MAX_PATHS - 1), i;
	const struct xr_rx_path *pa = &after->path[p], *pb = &before->path[p];
	int j;

	if (!st->w.set) {
		if (memcmp(before, after, sizeof(*before)))
			ERR(e, "receive state changed (cack %#x -> %#x, "
			       "csn_next %#x -> %#x, rx %u -> %u)",
			    pb->cack, pa->cack, before->csn_next,
			    after->csn_next, pb->rx_pkts, pa->rx_pkts);
		return;
	}
	EQ(e, "xr_rx cack", pa->cack, e->S + st->w.cack);
	for (j = 0; j < 4; j++)
		EQ(e, "xr_rx sack[j]", pa->sack[j], st->w.sack[j]);
	EQ(e, "xr_rx rx_pkts", pa->rx_pkts, st->w.rx);
	EQ(e, "xr_rx ce_pkts", pa->ce_pkts, st->w.ce);
	EQ(e, "xr_rx csn_next", after->csn_next, e->C + st->w.csn);
	EQ(e, "xr_rx dup_pkts delta", pa->dup_pkts - pb->dup_pkts,
	   dstat[XR_STAT_RX_DUP]);
	EQ(e, "xr_rx rx_bytes delta", pa->rx_bytes - pb->rx_bytes,
	   dstat[XR_STAT_RX_BYTES]);
	for (i = 0; i < XR_MAX_PATHS; i++) {
		if (i != p && memcmp(&before->path[i], &after->path[i],
				     sizeof(before->path[i])))
			ERR(e, "path %u changed", i);
	}
}

static int run_frame(struct xw *w, const uint8_t *in, size_t n,
		     uint8_t *out, uint32_t *outn, uint32_t *ret)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)n, .data_out = out,
		    .data_size_out = FR_MAX, .repeat = 1);
	int err = bpf_prog_test_run_opts(w->prog_fd, &o);

	*outn = o.data_size_out;
	*ret = o.retval;
	return err ? -errno : 0;
}

static const char *verdict_name(uint32_t v)
{
	static const char *const names[] = { "ABORTED", "DROP", "PASS", "TX",
					     "REDIRECT" };

	return v < 5 ? names[v] : "?";
}

static void run_step(struct env *e, const struct step *st, int idx)
{
	static uint8_t in[FR_MAX], out[FR_MAX];
	struct xr_rx_state rx0, rx1, rxi0, rxi1;
	uint64_t s0[XR_STAT_MAX], s1[XR_STAT_MAX];
	int64_t d[XR_STAT_MAX];
	int reps = st->rep ? st->rep : 1, r, k;
	struct built b;
	size_t n = 0;

	e->where = st->what;
	e->stepno = idx;
	e->errs = 0;
	if (st->kind == K_BIND) {
		if (e->ctrl_sock >= 0)
			close(e->ctrl_sock);
		e->ctrl_sock = ctrl_socket(e->v6, e->ctrl_port, st->ca);
		if (e->ctrl_sock < 0)
			ERR(e, "cannot bind port %u: %s", e->ctrl_port,
			    strerror(errno));
		return;
	}
	if (st->kind == K_DOM) {
		if (set_dom(e, st->port0 ? 0 : e->ctrl_port, st->ca))
			ERR(e, "cannot rewrite the domain: %s", strerror(errno));
		return;
	}
	if (st->kind == K_UNBIND) {
		close(e->ctrl_sock);
		e->ctrl_sock = -1;
		return;
	}
	if (st->kind == K_WAIT) {
		usleep(3000);
		return;
	}
	if (st->kind == K_IFSET) {
		uint32_t lo = 1;

		if (st->ifflags ?
		    bpf_map_update_elem(e->w->ifs, &lo, &st->ifflags, BPF_ANY) :
		    bpf_map_delete_elem(e->w->ifs, &lo) && errno != ENOENT)
			ERR(e, "cannot set xr_ifs: %s", strerror(errno));
		return;
	}
	if (st->kind == K_POSTRQ || st->kind == K_RECALL ||
	    st->kind == K_RQDONE) {
		rq_step(e, st);
		return;
	}
	if (st->kind == K_FILL) {
		static const struct step filler = { "filler", .kind = K_ACK,
						    .a = { .cack = 1 } };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_out = out, .data_size_out = FR_MAX,
			    .repeat = (uint32_t)st->rep);

		drain_events(e);
		o.data_size_in = (uint32_t)build(e, &filler, idx, 0, in, &b);
		if (bpf_prog_test_run_opts(e->w->prog_fd, &o) ||
		    o.retval != XDP_DROP)
			ERR(e, "filling the ring failed");
		e->fill = st->rep;
		return;
	}
	stats_read(e->w, s0);
	rx_read(e, CONN, &rx0);
	rx_read(e, CONN_INIT, &rxi0);
	if (!e->fill)
		drain_events(e);

	for (r = 0; r < reps; r++) {
		uint32_t outn, ret;
		int err;

		n = build(e, st, idx, r, in, &b);
		err = run_frame(e->w, in, n, out, &outn, &ret);
		if (err) {
			ERR(e, "bpf_prog_test_run: %s", strerror(-err));
			break;
		}
		if (ret != (uint32_t)st->v) {
			ERR(e, "verdict %s, want %s (rep %d)", verdict_name(ret),
			    verdict_name((uint32_t)st->v), r);
			break;
		}
		if (ret == XDP_TX) {
			if (st->rt == XR_T_PROBE_REPLY)
				check_probe_reply(e, &b, in, out, outn);
			else
				check_ack(e, st, &b, in, out, outn,
					  r == reps - 1);
			memcpy(e->last_out, out, outn);
			e->last_outn = outn;
		} else if (ret == XDP_PASS) {
			if (outn != n || memcmp(in, out, n))
				ERR(e, "passed frame was modified");
		}
		if (st->place && b.dom_idx >= 0) {
			size_t j;

			for (j = 0; j < b.plen; j++)
				e->dom[b.dom_idx].shadow[b.pos + j] =
					payload_byte(b.seed, j);
		}
	}

	stats_read(e->w, s1);
	for (k = 0; k < XR_STAT_MAX; k++) {
		d[k] = (int64_t)(s1[k] - s0[k]);
		if (d[k] != st->st[k])
			ERR(e, "stat %d delta %lld, want %lld", k,
			    (long long)d[k], (long long)st->st[k]);
	}
	rx_read(e, CONN, &rx1);
	rx_read(e, CONN_INIT, &rxi1);
	check_rx(e, st, &rx0, &rx1, d);
	if (memcmp(&rxi0, &rxi1, sizeof(rxi0)))
		ERR(e, "receive state of the INIT connection changed");
	check_memory(e);
	drain_events(e);
	if (e->fill) {
		/* the filler events come first; this row adds none */
		EQ(e, "events (filler + own)", e->nev, e->fill);
		e->nev = 0;
		e->fill = 0;
	}
	if (reps == 1)
		check_events(e, st, &b, in, n);
	else if ((st->ev == EV_NONE) != (e->nev == 0))
		ERR(e, "%d events", e->nev);
}

#endif /* XR_TEST_XDP_CHECK_H */
