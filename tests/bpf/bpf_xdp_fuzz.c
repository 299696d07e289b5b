// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Fuzzer of the XDP program xroce_xdp (bpf/xroce.bpf.c): random and mutated
 * frames through bpf_prog_test_run_opts against the real object, with the
 * program's whole state checked after every input.
 *
 *   sudo build/tests/bpf_xdp_fuzz            20000 inputs, seed 1 (the test
 *                                            suite runs this: ~5-10 s)
 *   sudo build/tests/bpf_xdp_fuzz --iters 1000000 --seed random
 *                                            the long run (benchmark-style,
 *                                            ~4-5 min at ~3500 inputs/s)
 *   sudo build/tests/bpf_xdp_fuzz --obj FILE another build of the program,
 *                                            e.g. one with a planted bug
 *
 * Options: --seed N | random (default 1), --iters N (default 20000), --obj
 * FILE, --props-only (check the properties (i)-(iv) below, not the exact
 * model: shows what they catch alone), --quiet.  A run is reproducible: the
 * same seed and object give the same inputs.  On the first input that
 * breaks an invariant it prints the seed, the iteration, what broke, the
 * model's classification, a hex dump of the frame (and of the reply) and
 * the command that reproduces it, and exits 1.  At the end it prints
 * inputs/s and what the inputs did (verdicts, counters, data by opcode and
 * outcome, the model's paths), so a run's coverage can be judged.
 *
 * The world (fuzz_world.h): five domains (alive without liveness check;
 * alive through a bound control socket; dead; without memory map; unknown),
 * twenty memory regions (access rights, PDs, address-space and memory
 * edges, stale, empty, rkeys 0 and 2^32-1), fifteen connections (IPv4 and
 * IPv6, several peers and port ranges, tokens, states, ids 0 / 8191 /
 * 9000), posted receives for SEND and open READ windows for READ_RESP, each
 * with edges of their own.  It runs in a private network namespace.
 *
 * Inputs (fuzz_gen.h): valid frames of every kind -- data (WRITE,
 * WRITE_IMM, SEND, SEND_IMM, READ_REQ, READ_RESP) from simulated senders
 * keeping per-path PSNs, CSNs and multi-packet messages, in order,
 * reordered, duplicated, with gaps and psn_base moves; ACK, NAK, probe,
 * probe reply; control messages; other UDP, TCP, ARP, IP options,
 * fragments, IPv6 extension headers, VLAN tags; random bytes -- 60% of them
 * then mutated 1-4 times: bit flips, interesting bytes at header offsets,
 * truncation at and next to every header boundary, extension, and
 * field-aware changes aimed at what the program checks (raddr at region
 * and memory edges and near 2^64, rkeys / MSNs / read ids of other
 * regions, lengths and offsets around the payload, PSN / CSN / psn_base at
 * the window edges and 2^31 away, paths 15 / 16, connection ids and tokens
 * of other connections, other peers' addresses, IPv4-mapped sources,
 * entropy port range edges, UDP lengths, versions, types, ECN); then the
 * checksums are (mostly) fixed up so that the mutation reaches the checks
 * behind them.  4% of inputs replay a recent one.
 *
 * Invariants checked after EVERY input:
 *  (i)   memory: every domain's memory equals its shadow copy except, at
 *        most, the bytes [pos, pos + plen) of one domain, where the frame
 *        authenticates for a connection (RTS, token, peer address and
 *        entropy port), passes every placement check for it (a region of
 *        its domain and PD with remote write, or its posted receive, or its
 *        READ window; bounds; the domain's memory), and pos and plen follow
 *        from the frame (raddr or msg_off, UDP length) -- and those bytes,
 *        if changed, hold exactly the frame's payload; and nothing at all
 *        if the frame's CSN had already arrived (by the program's receive
 *        state before the input): a duplicate is never placed again.
 *  (ii)  the verdict is PASS, DROP or TX; a PASS frame comes out byte for
 *        byte as it went in; a TX frame is a well-formed ACK / NAK (for
 *        data) or probe reply (for a probe): MACs, IP addresses and UDP
 *        ports swapped back to the sender, lengths, TTL 64, IPv4 header
 *        and UDP checksums right (independent RFC 1071 sum, frames.h), the
 *        connection's peer id and tx token, the triggering PSN / CSN, a
 *        rate hint no larger than the configured capacity.
 *  (iii) counters: exactly one first-level counter moves, by one (pass,
 *        one drop reason, rx_data, rx_ack, rx_nak, probe; tx_ack_fail alone
 *        for a reply that could not be built); tx_ack + tx_nak + probe = 1
 *        exactly for TX, pass = 1 exactly for PASS; tx_nak only with a NAK
 *        reason counted; rx_dup, msg_done, rx_bytes only with rx_data;
 *        evt_lost only with msg_done or nak_rnr; no counter goes down.
 *  (iv)  maps: the receive state of a connection changes only for a frame
 *        that authenticates for it, and only on the frame's path; cack
 *        never moves back, and on by at most up to the frame's psn_base
 *        (if ahead) plus 257 (the packet and the SACK bitmap); csn_next
 *        moves on by at most 128 (two ring words); rx_pkts, ce_pkts and
 *        dup_pkts grow by at most one, rx_bytes by the payload; the message
 *        slot the frame names changes only if it authenticates; any other
 *        slot of the connections here must not change (all 256 slots of one
 *        connection are read per input in turn, so a stray write is seen
 *        within 14 inputs); xr_domains changes only in the liveness cache
 *        of a live domain the frame reached.  Every 1024 inputs: xr_conns,
 *        xr_mrs, xr_reads, xr_cfg unchanged, xr_rq's entries changed only
 *        by claims (OPEN -> TAKEN) the model made; every 65536 inputs
 *        and at the end: the receive state and message slots of every
 *        connection id without a connection are still zero.
 * and, beyond those properties, the reference model (fuzz_model.h) must
 * agree exactly: verdict, every counter's change, the reply frame byte for
 * byte, ring buffer events field by field, memory, receive windows
 * (cack, SACK bitmap, CSN ring and csn_next, per-path counters) and
 * message slots.
 *
 * Phases switch every 4096 inputs between checksum verification on (3 of
 * 4) and off, and between no rate hints and a 40 Gbit/s capacity.  Every
 * 8192 inputs, 400 run with domain A's event ring nearly full (filled
 * beforehand with test_run's repeat): backpressure and ring-full paths.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "statnames.h"
#include "frames.h"
#include "fuzz_world.h"
#include "fuzz_model.h"
#include "fuzz_gen.h"

#define PHASE_LEN 4096
#define FILL_EVERY 8192
#define FILL_LEN 400
#define RATE_CAP 40000
#define MAX_FILL_EV (FILL_LEN + 8)

/* ---- state of one run -------------------------------------------------- */

struct evbuf {
	struct xr_evt ev[MAX_FILL_EV];
	int n, bad_size;
	struct xr_evt_bind bev;  /* the last BIND record, and how many */
	int nbind;
	/* filler events still to skip (and check) when draining a filled
	 * ring, and their connection */
	long skip;
	uint32_t skip_conn;
	long skip_bad;
};

struct fuzz {
	struct fz_world w;
	struct model m;
	struct gen g;
	uint64_t seed, iters, it;
	int quiet, props_only;
	const char *obj;
	/* the program's state as last read */
	uint64_t stats[XR_STAT_MAX];
	struct xr_rx_state rx[FZ_RX_LO_N + 1];
	uint64_t msgs[(FZ_RX_LO_N + 1) * XR_MSG_SLOTS];
	struct xr_domain doms[D_N];
	/* events, per domain */
	struct evbuf evb[D_N];
	void *evctx[D_N];
	/* a filled ring: its domain (-1 none), the events it must hold */
	int fill_dom;
	struct xr_evt fill_ev[MAX_FILL_EV];
	int nfill_ev;
	uint64_t fill_start;
	/* failures of the current input */
	int nfail;
	char fail[16][256];
	/* summary */
	uint64_t verdicts[8], kinds[G_NKIND], mutated, stat_tot[XR_STAT_MAX];
	uint64_t placed_bytes, events, fills, ip6_badver;
	uint64_t path_hits[64];
	/* data past its window checks, by opcode (8: others): new, duplicate,
	 * NAKed for reason 1..6, dropped by the window */
	uint64_t op_res[9][9];
	const char *path_names[64];
	int npaths;
};

static struct fuzz F;

static void failf(struct fuzz *z, const char *fmt, ...)
{
	va_list ap;

	/* --props-only: the properties (i)-(iv) alone, no exact model */
	if (z->props_only && !strncmp(fmt, "model:", 6))
		return;
	if (z->nfail >= 16) {
		z->nfail++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(z->fail[z->nfail], sizeof(z->fail[0]), fmt, ap);
	va_end(ap);
	z->nfail++;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct evbuf *b = ctx;
	const struct xr_evt *e = data;

	if (size == sizeof(struct xr_evt_bind) && e->type == XR_EVT_BIND) {
		memcpy(&b->bev, data, sizeof(b->bev));
		b->nbind++;
		return 0;
	}
	if (size != sizeof(struct xr_evt)) {
		b->bad_size++;
		return 0;
	}
	if (b->skip > 0) {
		if (e->type != XR_EVT_ACK || e->conn != b->skip_conn)
			b->skip_bad++;
		b->skip--;
		return 0;
	}
	if (b->n < MAX_FILL_EV)
		memcpy(&b->ev[b->n], data, sizeof(b->ev[0]));
	b->n++;
	return 0;
}

/* ---- reading the program's state ------------------------------------------ */

static int read_stats(struct fuzz *z, uint64_t *out)
{
	return xw_stats(&z->w.p, out);
}

static int read_rx(struct fuzz *z, struct xr_rx_state *rx)
{
	uint32_t keys[FZ_RX_LO_N], count = FZ_RX_LO_N, out_batch, hi = FZ_RX_HI;

	memset(rx, 0, sizeof(*rx) * (FZ_RX_LO_N + 1));
	if (bpf_map_lookup_batch(z->w.p.rx, NULL, &out_batch, keys, rx, &count,
				 NULL) || count != FZ_RX_LO_N)
		return -EIO;
	if (bpf_map_lookup_elem(z->w.p.rx, &hi, &rx[FZ_RX_LO_N]))
		return -errno;
	return 0;
}

/* The message slots of snapshot connection s (0..FZ_RX_LO_N). */
static int read_msgs(struct fuzz *z, int s, uint64_t *slots)
{
	uint32_t keys[XR_MSG_SLOTS], count = XR_MSG_SLOTS, out_batch;
	uint32_t id = s < FZ_RX_LO_N ? (uint32_t)s : FZ_RX_HI;
	uint32_t in_batch = id * XR_MSG_SLOTS - 1;

	if (bpf_map_lookup_batch(z->w.p.msgs, id ? &in_batch : NULL,
				 &out_batch, keys, slots, &count, NULL) ||
	    count != XR_MSG_SLOTS || keys[0] != id * XR_MSG_SLOTS)
		return -EIO;
	return 0;
}

static int read_all_msgs(struct fuzz *z, uint64_t *msgs)
{
	int s;

	for (s = 0; s <= FZ_RX_LO_N; s++)
		if (read_msgs(z, s, msgs + s * XR_MSG_SLOTS))
			return -EIO;
	return 0;
}

static int read_doms(struct fuzz *z, struct xr_domain *d)
{
	int i;

	for (i = 0; i < D_N; i++) {
		memset(&d[i], 0, sizeof(d[i]));
		if (!fz_doms[i].registered)
			continue;
		if (bpf_map_lookup_elem(z->w.p.domains, &fz_doms[i].id, &d[i]))
			return -errno;
	}
	return 0;
}

/* Index into the rx / msgs snapshots of connection table index ci, or -1
 * for a connection without receive state. */
static int snap_idx(int ci)
{
	uint32_t id;

	if (ci < 0)
		return -1;
	id = fz_conns[ci].id;
	if (id < FZ_RX_LO_N)
		return (int)id;
	if (id == FZ_RX_HI)
		return FZ_RX_LO_N;
	return -1;
}

/* ---- reporting ------------------------------------------------------------ */

static void hexdump(const char *title, const uint8_t *p, size_t n)
{
	size_t i;

	fprintf(stderr, "%s (%zu bytes):\n", title, n);
	for (i = 0; i < n; i++) {
		if (i % 16 == 0)
			fprintf(stderr, "  %04zx:", i);
		fprintf(stderr, " %02x", p[i]);
		if (i % 16 == 15 || i + 1 == n)
			fprintf(stderr, "\n");
	}
}

static const char *vname(uint32_t v)
{
	static const char *const n[] = { "ABORTED", "DROP", "PASS", "TX",
					 "REDIRECT" };

	return v < 5 ? n[v] : "?";
}

static void report(struct fuzz *z, const struct input *in,
		   const struct pred *p, const uint8_t *out, uint32_t outn,
		   uint32_t ret)
{
	int i;

	fprintf(stderr, "\nbpf_xdp_fuzz: INVARIANT FAILED at iteration %" PRIu64
			" (seed %" PRIu64 ")\n", z->it, z->seed);
	for (i = 0; i < z->nfail && i < 16; i++)
		fprintf(stderr, "  - %s\n", z->fail[i]);
	if (z->nfail > 16)
		fprintf(stderr, "  ... and %d more\n", z->nfail - 16);
	fprintf(stderr, "input: %s seed frame, %d mutation(s); model: %s; "
			"verdict %s, model %s\n", g_kind_name[in->kind],
		in->mutations, p->path, vname(ret), vname(p->verdict));
	hexdump("frame", in->f, in->n);
	if (ret == XDP_TX || ret == XDP_PASS)
		hexdump("frame out", out, outn);
	if (p->verdict == XDP_TX)
		hexdump("model's reply", p->out, p->outn);
	fprintf(stderr, "reproduce: bpf_xdp_fuzz --seed %" PRIu64 " --iters %"
			PRIu64 "%s%s%s\n", z->seed, z->it + 1,
		z->obj ? " --obj " : "", z->obj ? z->obj : "",
		z->props_only ? " --props-only" : "");
}

/* ---- checks ---------------------------------------------------------------- */

static const int first_level[] = {
	XR_STAT_PASS, XR_STAT_DROP_TRUNC, XR_STAT_DROP_VERSION,
	XR_STAT_DROP_NO_CONN, XR_STAT_DROP_CONN_STATE, XR_STAT_DROP_TOKEN,
	XR_STAT_DROP_PEER, XR_STAT_DROP_CSUM, XR_STAT_DROP_KEY,
	XR_STAT_DROP_BOUNDS, XR_STAT_DROP_ACCESS, XR_STAT_DROP_LENGTH,
	XR_STAT_DROP_OPCODE, XR_STAT_DROP_WINDOW, XR_STAT_DROP_EVQ_FULL,
	XR_STAT_DROP_NO_MEM, XR_STAT_DROP_ACK_LOST, XR_STAT_DROP_FRAG,
	XR_STAT_DROP_DEAD, XR_STAT_NAK_RNR, XR_STAT_RX_DATA, XR_STAT_RX_ACK,
	XR_STAT_RX_NAK, XR_STAT_PROBE, XR_STAT_RX_BIND, XR_STAT_DROP_BIND,
};

static const char *sname(int k)
{
	const char *n = xr_stat_name((unsigned)k);

	return n ? n : "?";
}

/* (iii) without the model, then exactly. */
static void check_counters(struct fuzz *z, const int64_t *d, uint32_t ret,
			   const struct pred *p)
{
	int64_t sum = 0;
	size_t i;
	int k;

	for (k = 0; k < XR_STAT_MAX; k++)
		if (d[k] < 0)
			failf(z, "(iii) counter %s went down by %" PRId64,
			      sname(k), -d[k]);
	for (i = 0; i < sizeof(first_level) / sizeof(first_level[0]); i++) {
		if (d[first_level[i]] > 1)
			failf(z, "(iii) %s moved by %" PRId64,
			      sname(first_level[i]), d[first_level[i]]);
		sum += d[first_level[i]];
	}
	if (!(sum == 1 || (sum == 0 && d[XR_STAT_TX_ACK_FAIL] == 1)))
		failf(z, "(iii) %" PRId64 " first-level counters moved "
			 "(tx_ack_fail %" PRId64 "), want exactly one", sum,
		      d[XR_STAT_TX_ACK_FAIL]);
	if (d[XR_STAT_TX_ACK] + d[XR_STAT_TX_NAK] + d[XR_STAT_PROBE] !=
	    (ret == XDP_TX))
		failf(z, "(iii) tx_ack %" PRId64 " + tx_nak %" PRId64
			 " + probe %" PRId64 " for verdict %s", d[XR_STAT_TX_ACK],
		      d[XR_STAT_TX_NAK], d[XR_STAT_PROBE], vname(ret));
	if (d[XR_STAT_PASS] != (ret == XDP_PASS))
		failf(z, "(iii) pass %" PRId64 " for verdict %s",
		      d[XR_STAT_PASS], vname(ret));
	if (d[XR_STAT_TX_NAK] &&
	    !(d[XR_STAT_DROP_KEY] || d[XR_STAT_DROP_BOUNDS] ||
	      d[XR_STAT_DROP_ACCESS] || d[XR_STAT_DROP_LENGTH] ||
	      d[XR_STAT_DROP_OPCODE] || d[XR_STAT_NAK_RNR]))
		failf(z, "(iii) a NAK sent without a NAK reason counted");
	if ((d[XR_STAT_RX_DUP] || d[XR_STAT_MSG_DONE] || d[XR_STAT_RX_BYTES]) &&
	    !d[XR_STAT_RX_DATA])
		failf(z, "(iii) rx_dup / msg_done / rx_bytes without rx_data");
	if (d[XR_STAT_EVT_LOST] > d[XR_STAT_MSG_DONE] + d[XR_STAT_NAK_RNR])
		failf(z, "(iii) evt_lost without msg_done or nak_rnr");
	for (k = 0; k < XR_STAT_MAX; k++)
		if (d[k] != p->st[k])
			failf(z, "model: counter %s moved by %" PRId64
				 ", want %" PRId64, sname(k), d[k], p->st[k]);
}

/* frames.h's fr_decode, but taking the IPv6 header by its ethertype alone
 * (its version nibble is checked by the caller). */
static int reply_view(const uint8_t *f, size_t n, struct fr_view *v)
{
	uint8_t tmp[FR_MAX];

	if (n > FR_MAX || n < FR_ETH + 1)
		return -1;
	if (fr_get16(f + 12) != FR_ETH_IP6)
		return fr_decode(f, n, v);
	memcpy(tmp, f, n);
	tmp[FR_ETH] = (uint8_t)(0x60 | (tmp[FR_ETH] & 0x0f));
	return fr_decode(tmp, n, v);
}

/* (ii): a reply must be the input turned around, well formed, checksums
 * right; then exactly the model's. */
static void check_reply(struct fuzz *z, const struct input *in,
			struct pred *p, const uint8_t *out, uint32_t outn)
{
	struct fr_view v, vi;
	const uint8_t *b, *x;
	const struct fz_conn *c;
	size_t blen;
	uint32_t hint;

	if (reply_view(out, outn, &v) || reply_view(in->f, in->n, &vi)) {
		failf(z, "(ii) TX frame is not Ethernet/IP/UDP");
		return;
	}
	if (v.v6 && (out[FR_ETH] >> 4) != 6) {
		/* xr_parse (bpf/lib/parse.h) does not look at the IPv6
		 * version nibble, and a reply keeps the input's: tolerated
		 * only as that known leniency, and counted. */
		if ((in->f[FR_ETH] >> 4) != (out[FR_ETH] >> 4))
			failf(z, "(ii) IPv6 reply with version %u",
			      out[FR_ETH] >> 4);
		z->ip6_badver++;
	}
	x = in->f + vi.body;
	c = fz_conn_find(fr_get32(x + 4));
	blen = (x[0] & 0xf) == XR_T_PROBE ? sizeof(struct xr_probe_hdr)
					  : sizeof(struct xr_ack_hdr);
	if (v.v6 != vi.v6 || outn != v.l4 + FR_UDP + blen ||
	    v.body_len != blen) {
		failf(z, "(ii) reply length %u / UDP body %zu", outn, v.body_len);
		return;
	}
	if (memcmp(out, in->f + 6, 6) || memcmp(out + 6, in->f, 6))
		failf(z, "(ii) MACs not swapped");
	if (memcmp(fr_saddr(out, v.v6), fr_daddr(in->f, v.v6), v.v6 ? 16 : 4) ||
	    memcmp(fr_daddr(out, v.v6), fr_saddr(in->f, v.v6), v.v6 ? 16 : 4))
		failf(z, "(ii) IP addresses not swapped");
	if (fr_get16(out + v.l4) != fr_get16(in->f + vi.l4 + 2) ||
	    fr_get16(out + v.l4 + 2) != fr_get16(in->f + vi.l4))
		failf(z, "(ii) UDP ports not swapped");
	if (!v.v6 && (!fr_ip4_csum_ok(out) ||
		      fr_get16(out + FR_ETH + 2) != FR_IP4 + FR_UDP + blen ||
		      out[FR_ETH + 8] != 64))
		failf(z, "(ii) IPv4 header checksum, length or TTL wrong");
	if (v.v6 && (fr_get16(out + FR_ETH + 4) != FR_UDP + blen ||
		     out[FR_ETH + 7] != 64))
		failf(z, "(ii) IPv6 payload length or hop limit wrong");
	if (!fr_udp_csum_ok(out, &v))
		failf(z, "(ii) UDP checksum wrong");
	b = out + v.body;
	if (!c) {
		failf(z, "(ii) a reply for no connection");
		return;
	}
	if (fr_get32(b + 4) != c->c.peer_conn || fr_get64(b + 8) != c->c.tx_token)
		failf(z, "(ii) reply not addressed to the peer's connection");
	if ((x[0] & 0xf) == XR_T_PROBE) {
		if (b[0] != XR_VER_TYPE(XR_T_PROBE_REPLY))
			failf(z, "(ii) a probe answered with type %#x", b[0]);
		hint = fr_get32(b + 24);
	} else {
		if (b[0] != XR_VER_TYPE(XR_T_ACK) && b[0] != XR_VER_TYPE(XR_T_NAK))
			failf(z, "(ii) data answered with type %#x", b[0]);
		if (fr_get32(b + 20) != fr_get32(x + 16))
			failf(z, "(ii) ack_psn is not the packet's PSN");
		if (fr_get32(b + 76) != (b[0] == XR_VER_TYPE(XR_T_NAK) ?
					 fr_get32(x + 24) : 0))
			failf(z, "(ii) nak_csn wrong");
		hint = fr_get32(b + 28);
	}
	if (hint > z->m.capacity)
		failf(z, "(ii) rate hint %u above the capacity %u", hint,
		      z->m.capacity);
	if (p->verdict != XDP_TX)
		return;
	/* exactly the model's frame, with the program's hint taken over */
	if (p->reply_rate_off >= 0 && (size_t)p->reply_rate_off + 4 <= p->outn) {
		fr_put32(p->out + p->reply_rate_off, hint);
		fr_udp_fix(p->out, v.v6, v.l4);
	}
	if (outn != p->outn || memcmp(out, p->out, outn)) {
		size_t i;

		for (i = 0; i < outn && i < p->outn && out[i] == p->out[i]; i++)
			;
		failf(z, "model: reply differs at byte %zu (len %u, want %zu)",
		      i, outn, p->outn);
	}
}

/* Had csn arrived at the connection with snapshot index s before this
 * input, by the program's own receive state? */
static int csn_arrived(const struct fuzz *z, int s, uint32_t csn)
{
	const struct xr_rx_state *r;
	int32_t d;

	if (s < 0)
		return 0;
	r = &z->rx[s];
	d = (int32_t)(csn - r->csn_next);
	if (d < 0)
		return 1;
	return d < XR_CSN_WIN &&
	       ((r->csn_ring[(csn % XR_CSN_WIN) / 64] >> (csn % 64)) & 1);
}

/* (i): memory.  A frame may write its window only if its CSN had not
 * arrived: a duplicate is never placed again. */
static void check_memory(struct fuzz *z, const struct input *in,
			 const struct pred *p)
{
	int d, may = p->may_write &&
		     !csn_arrived(z, snap_idx(p->cidx), p->wcsn);

	for (d = 0; d < D_N; d++) {
		uint8_t *mem = z->w.dom[d].mem, *sh = z->w.dom[d].shadow;
		size_t len = z->w.dom[d].mem_len, i, bad = 0, first = 0;
		size_t poff = in->x + sizeof(struct xr_data_hdr);

		if (!mem || !memcmp(mem, sh, len))
			continue;
		for (i = 0; i < len; i++) {
			int ok;

			/* whole equal 256-byte blocks at once */
			if (!(i & 255) && i + 256 <= len &&
			    !memcmp(mem + i, sh + i, 256)) {
				i += 255;
				continue;
			}
			if (mem[i] == sh[i])
				continue;
			ok = may && d == p->wdom && i >= p->wpos &&
			     i - p->wpos < p->wlen && poff + (i - p->wpos) < in->n &&
			     mem[i] == in->f[poff + (i - p->wpos)];
			if (!ok && !bad++)
				first = i;
		}
		if (bad)
			failf(z, "(i) domain %u memory: %zu bytes changed outside "
				 "what the frame may write, first at %#zx "
				 "(%#x, was %#x)", fz_doms[d].id, bad, first,
			      mem[first], sh[first]);
	}
	/* exactly: the shadow takes the placement the model predicts */
	if (p->place && p->plen) {
		if (p->pdom < 0 || !z->w.dom[p->pdom].shadow ||
		    p->pos + p->plen > z->w.dom[p->pdom].mem_len ||
		    p->poff + p->plen > in->n) {
			failf(z, "model: placement outside memory (bug in the test)");
			return;
		}
		memcpy(z->w.dom[p->pdom].shadow + p->pos, in->f + p->poff, p->plen);
		z->placed_bytes += p->plen;
	}
	for (d = 0; d < D_N; d++) {
		size_t i;

		if (!z->w.dom[d].mem ||
		    !memcmp(z->w.dom[d].mem, z->w.dom[d].shadow, z->w.dom[d].mem_len))
			continue;
		for (i = 0; z->w.dom[d].mem[i] == z->w.dom[d].shadow[i]; i++)
			;
		failf(z, "model: domain %u memory differs at %#zx (%#x, want "
			 "%#x)%s", fz_doms[d].id, i, z->w.dom[d].mem[i],
		      z->w.dom[d].shadow[i], p->place ? "" : "; nothing placed");
		/* resync so that later reports are about later inputs */
		memcpy(z->w.dom[d].shadow, z->w.dom[d].mem, z->w.dom[d].mem_len);
	}
}

/* Zero what the model predicts, and the arrival timestamp. */
static void rx_mask(struct xr_rx_state *r)
{
	int i;

	r->csn_next = 0;
	memset(r->csn_ring, 0, sizeof(r->csn_ring));
	r->last_rx_ns = 0;
	for (i = 0; i < XR_MAX_PATHS; i++)
		memset(&r->path[i], 0, sizeof(r->path[i]));
}

static void cmp_rx_model(struct fuzz *z, uint32_t id, const struct xr_rx_state *r,
			 const struct m_rx *m)
{
	int i, p;

	if (r->csn_next != m->csn_next)
		failf(z, "model: conn %u csn_next %#x, want %#x", id, r->csn_next,
		      m->csn_next);
	for (i = 0; i < XR_CSN_WIN / 64; i++) {
		uint64_t w = 0;
		int b;

		for (b = 0; b < 64; b++)
			if (m->ring[i * 64 + b])
				w |= 1ull << b;
		if (r->csn_ring[i] != w) {
			failf(z, "model: conn %u csn_ring[%d] %#" PRIx64
				 ", want %#" PRIx64, id, i, r->csn_ring[i], w);
			break;
		}
	}
	for (p = 0; p < XR_MAX_PATHS; p++) {
		const struct xr_rx_path *a = &r->path[p];
		const struct m_path *b = &m->path[p];
		uint64_t s[XR_SACK_WORDS];

		m_sack_words(b, s);
		if (a->cack != b->cack || a->rx_pkts != b->rx ||
		    a->ce_pkts != b->ce || a->dup_pkts != b->dup ||
		    a->rx_bytes != b->bytes || memcmp(a->sack, s, sizeof(s)))
			failf(z, "model: conn %u path %d: cack %#x rx %u ce %u "
				 "dup %u bytes %" PRIu64 " sack %016" PRIx64
				 "..., want cack %#x rx %u ce %u dup %u bytes %"
				 PRIu64 " sack %016" PRIx64 "...", id, p, a->cack,
			      a->rx_pkts, a->ce_pkts, a->dup_pkts, a->rx_bytes,
			      a->sack[0], b->cack, b->rx, b->ce, b->dup,
			      b->bytes, s[0]);
	}
}

/* Message slots of one snapshot connection, read after an input. */
struct slots_read {
	int s;
	uint64_t v[XR_MSG_SLOTS];
};

/* (iv) and the model's windows and message slots. */
static void check_rx(struct fuzz *z, const struct input *in,
		     const struct pred *p, const struct xr_rx_state *rx0,
		     const struct xr_rx_state *rx1, const struct slots_read *rd,
		     int nrd)
{
	int s, touched = snap_idx(p->cidx), path = -1, q;
	int32_t fwd;
	uint64_t plen = 0;
	size_t ci;

	if (touched >= 0 && in->x && in->x + 4 <= in->n)
		path = in->f[in->x + 3] & 15;
	if (in->l4 && in->l4 + FR_UDP <= in->n)
		plen = (uint64_t)fr_get16(in->f + in->l4 + 4) - FR_UDP -
		       sizeof(struct xr_data_hdr);
	for (s = 0; s <= FZ_RX_LO_N; s++) {
		const struct xr_rx_state *a = &rx0[s], *b = &rx1[s];
		uint32_t id = s < FZ_RX_LO_N ? (uint32_t)s : FZ_RX_HI;

		if (s != touched || !p->auth) {
			if (memcmp(a, b, sizeof(*a)))
				failf(z, "(iv) receive state of conn %u changed "
					 "by a frame not accepted for it", id);
			continue;
		}
		/* csn_next only moves on, over at most two ring words */
		if (b->csn_next - a->csn_next > 128)
			failf(z, "(iv) conn %u csn_next moved %#x -> %#x", id,
			      a->csn_next, b->csn_next);
		for (q = 0; q < XR_MAX_PATHS; q++) {
			const struct xr_rx_path *pa = &a->path[q], *pb = &b->path[q];

			if (q != path) {
				if (memcmp(pa, pb, sizeof(*pa)))
					failf(z, "(iv) conn %u path %d changed by "
						 "a frame on path %d", id, q, path);
				continue;
			}
			/* cack only moves on: to psn_base at most (if that is
			 * ahead, in serial arithmetic), then over at most the
			 * packet itself and the SACK bitmap */
			fwd = in->x + 24 <= in->n ?
				      m_diff(fr_get32(in->f + in->x + 20), pa->cack) : 0;
			if ((uint64_t)(uint32_t)(pb->cack - pa->cack) >
			    (uint64_t)(fwd > 0 ? fwd : 0) + XR_SACK_BITS + 1)
				failf(z, "(iv) conn %u path %d cack moved %#x -> "
					 "%#x", id, q, pa->cack, pb->cack);
			if (pb->rx_pkts - pa->rx_pkts > 1 ||
			    pb->ce_pkts - pa->ce_pkts > 1 ||
			    pb->dup_pkts - pa->dup_pkts > 1 ||
			    (pb->rx_bytes != pa->rx_bytes &&
			     pb->rx_bytes - pa->rx_bytes != plen))
				failf(z, "(iv) conn %u path %d counters jumped", id,
				      q);
		}
		{
			struct xr_rx_state ma = *a, mb = *b;

			rx_mask(&ma);
			rx_mask(&mb);
			if (memcmp(&ma, &mb, sizeof(ma)) && !p->auth)
				failf(z, "(iv) conn %u receive state changed", id);
		}
	}
	for (q = 0; q < nrd; q++) {
		const uint64_t *a, *b = rd[q].v;
		uint32_t id;
		int k;

		s = rd[q].s;
		a = z->msgs + s * XR_MSG_SLOTS;
		id = s < FZ_RX_LO_N ? (uint32_t)s : FZ_RX_HI;

		for (k = 0; k < XR_MSG_SLOTS; k++) {
			if (a[k] == b[k])
				continue;
			if (!(s == touched && p->auth && in->x &&
			      in->x + 48 <= in->n &&
			      (uint32_t)k == fr_get32(in->f + in->x + 44) % XR_MSG_SLOTS))
				failf(z, "(iv) conn %u message slot %d changed "
					 "(%#" PRIx64 " -> %#" PRIx64 ")%s", id, k,
				      a[k], b[k], s == touched ? "" :
				      " -- by this input or one of the last 14");
		}
	}
	/* exactly: the state that may have changed (the rest was just seen
	 * to be byte for byte what it was, and matched the model then) */
	if (p->cidx >= 0 && touched >= 0)
		cmp_rx_model(z, fz_conns[p->cidx].id, &rx1[touched],
			     &z->m.rx[p->cidx]);
	for (q = 0; q < nrd; q++) {
		int k;

		ci = (size_t)m_conn_idx(rd[q].s < FZ_RX_LO_N ? (uint32_t)rd[q].s
							     : FZ_RX_HI);
		for (k = 0; k < XR_MSG_SLOTS; k++)
			if (rd[q].v[k] != z->m.msgs[ci][k]) {
				failf(z, "model: conn %u slot %d %#" PRIx64
					 ", want %#" PRIx64, fz_conns[ci].id, k,
				      rd[q].v[k], z->m.msgs[ci][k]);
				break;
			}
	}
}

/* The message slot the frame names, of the connection it is for: it may
 * change only if the frame authenticates, and must be the model's. */
static void check_slot(struct fuzz *z, const struct input *in,
		       const struct pred *p, int s)
{
	uint32_t id = s < FZ_RX_LO_N ? (uint32_t)s : FZ_RX_HI;
	uint32_t slot = fr_get32(in->f + in->x + 44) % XR_MSG_SLOTS;
	uint32_t key = id * XR_MSG_SLOTS + slot;
	uint64_t v, *old = &z->msgs[s * XR_MSG_SLOTS + slot];
	int ci = m_conn_idx(id);

	if (bpf_map_lookup_elem(z->w.p.msgs, &key, &v)) {
		failf(z, "reading xr_msgs failed");
		return;
	}
	if (v != *old && !p->auth)
		failf(z, "(iv) conn %u message slot %u changed (%#" PRIx64
			 " -> %#" PRIx64 ") by a frame not accepted for it", id,
		      slot, *old, v);
	if (v != z->m.msgs[ci][slot])
		failf(z, "model: conn %u slot %u %#" PRIx64 ", want %#" PRIx64,
		      id, slot, v, z->m.msgs[ci][slot]);
	*old = v;
}

/* Every connection's receive state and message slots against the model
 * (at the start and every 1024 inputs). */
static int check_model_all(struct fuzz *z)
{
	size_t ci;
	int k;

	for (ci = 0; ci < FZ_NCONN; ci++) {
		int si = snap_idx((int)ci);

		if (si < 0)
			continue;
		cmp_rx_model(z, fz_conns[ci].id, &z->rx[si], &z->m.rx[ci]);
		for (k = 0; k < XR_MSG_SLOTS; k++)
			if (z->msgs[si * XR_MSG_SLOTS + k] != z->m.msgs[ci][k]) {
				failf(z, "model: conn %u slot %d %#" PRIx64
					 ", want %#" PRIx64, fz_conns[ci].id, k,
				      z->msgs[si * XR_MSG_SLOTS + k],
				      z->m.msgs[ci][k]);
				break;
			}
	}
	return z->nfail ? -1 : 0;
}

static void check_doms(struct fuzz *z, const struct pred *p,
		       const struct xr_domain *a, const struct xr_domain *b)
{
	int d;

	for (d = 0; d < D_N; d++) {
		struct xr_domain x = a[d], y = b[d];

		if (!fz_doms[d].registered)
			continue;
		x.alive_until_ns = y.alive_until_ns = 0;
		if (memcmp(&x, &y, sizeof(x)))
			failf(z, "(iv) xr_domains entry of %u changed",
			      fz_doms[d].id);
		if (a[d].alive_until_ns != b[d].alive_until_ns &&
		    (d != p->alive_dom ||
		     b[d].alive_until_ns < a[d].alive_until_ns))
			failf(z, "(iv) liveness cache of domain %u changed "
				 "(%" PRIu64 " -> %" PRIu64 ")", fz_doms[d].id,
			      a[d].alive_until_ns, b[d].alive_until_ns);
	}
}

static void check_event(struct fuzz *z, const struct xr_evt *got,
			const struct xr_evt *want, const char *where)
{
	struct xr_evt g = *got;

	if (!g.rx_ns)
		failf(z, "%s: event rx_ns is 0", where);
	g.rx_ns = 0;
	if (memcmp(&g, want, sizeof(g)))
		failf(z, "model: %s: event differs (type %u/%u conn %u/%u path "
			 "%u/%u)", where, got->type, want->type, got->conn,
		      want->conn, got->path, want->path);
}

static void check_events(struct fuzz *z, const struct pred *p)
{
	int d;

	for (d = 0; d < D_N; d++) {
		struct evbuf *b = &z->evb[d];
		int want = p->ev_dom == d ? p->nev : 0;

		if (!z->w.dom[d].rb || d == z->fill_dom)
			continue;
		b->n = 0;
		b->nbind = 0;
		b->bad_size = 0;
		ring_buffer__consume(z->w.dom[d].rb);
		if (b->bad_size)
			failf(z, "%d events of the wrong size", b->bad_size);
		z->events += (uint64_t)b->n + (uint64_t)b->nbind;
		z->m.ring_used[d] = 0;
		if (b->n != want)
			failf(z, "model: domain %u: %d events, want %d",
			      fz_doms[d].id, b->n, want);
		else if (want)
			check_event(z, &b->ev[0], &p->ev, "event");
		want = p->ev_dom == d ? p->nbind : 0;
		if (b->nbind != want) {
			failf(z, "model: domain %u: %d bind records, want %d",
			      fz_doms[d].id, b->nbind, want);
		} else if (want) {
			struct xr_evt_bind g = b->bev;

			if (!g.rx_ns)
				failf(z, "bind record: rx_ns is 0");
			g.rx_ns = 0;
			if (memcmp(&g, &p->bev, sizeof(g)))
				failf(z, "model: bind record differs (conn %u/%u, "
				      "port %u/%u)", b->bev.conn, p->bev.conn,
				      b->bev.src_port, p->bev.src_port);
		}
	}
	if (z->fill_dom >= 0 && p->ev_dom == z->fill_dom && p->nev) {
		if (z->nfill_ev < MAX_FILL_EV)
			z->fill_ev[z->nfill_ev] = p->ev;
		z->nfill_ev++;
	}
}

/* xr_conns, xr_mrs, xr_reads and xr_cfg never change; xr_rq entries
 * only from OPEN to TAKEN, as the model says (a claim). */
static void check_static(struct fuzz *z, uint16_t flags)
{
	struct xr_conn c;
	struct xr_mr mr;
	struct xr_cfg cfg;
	uint32_t zero = 0;
	size_t i;

	for (i = 0; i < FZ_NCONN; i++)
		if (bpf_map_lookup_elem(z->w.p.conns, &fz_conns[i].id, &c) ||
		    memcmp(&c, &fz_conns[i].c, sizeof(c)))
			failf(z, "(iv) xr_conns entry %u changed", fz_conns[i].id);
	for (i = 0; i < FZ_NMR; i++)
		if (bpf_map_lookup_elem(z->w.p.mrs, &fz_mrs[i].key, &mr) ||
		    memcmp(&mr, &fz_mrs[i].mr, sizeof(mr)))
			failf(z, "(iv) xr_mrs entry %#x changed", fz_mrs[i].key);
	for (i = 0; i < FZ_NRQ; i++) {
		struct xr_rq_key k;
		struct xr_rq_ent v, got;

		fz_rq_kv(&fz_rqs[i], z->m.rq_state[i], &k, &v);
		if (bpf_map_lookup_elem(z->w.p.rq, &k, &got) ||
		    memcmp(&got, &v, sizeof(v)))
			failf(z, "(iv) xr_rq entry of conn %u MSN %u changed",
			      fz_rqs[i].conn, fz_rqs[i].msn);
	}
	for (i = 0; i < FZ_NREAD; i++) {
		struct xr_read_key k;
		struct xr_read_ent v, got;

		fz_read_kv(&fz_reads[i], &k, &v);
		if (bpf_map_lookup_elem(z->w.p.reads, &k, &got) ||
		    memcmp(&got, &v, sizeof(v)))
			failf(z, "(iv) xr_reads entry of conn %u id %#x changed",
			      fz_reads[i].conn, fz_reads[i].id);
	}
	if (bpf_map_lookup_elem(z->w.p.cfg, &zero, &cfg) ||
	    cfg.udp_port != FZ_PORT || cfg.flags != flags ||
	    cfg.rate_capacity_mbps != z->m.capacity)
		failf(z, "(iv) xr_cfg changed");
}

/* Receive state and message slots of every connection id without a
 * connection here must still be all zero: a write through a wrong index
 * would land there.  Reads the whole of xr_rx and xr_msgs (~35 MB), so it
 * runs every 65536 inputs and at the end. */
static void check_other_ids(struct fuzz *z)
{
	static uint64_t vals[65536];
	static uint32_t keys[65536];
	struct xr_rx_state *rx, zero_rx;
	uint32_t n = XR_DEFAULT_MAX_CONNS, out_batch, in_batch, k, i;
	int first = 1;

	rx = calloc(XR_DEFAULT_MAX_CONNS, sizeof(*rx));
	if (!rx) {
		failf(z, "out of memory");
		return;
	}
	memset(&zero_rx, 0, sizeof(zero_rx));
	if (bpf_map_lookup_batch(z->w.p.rx, NULL, &out_batch, keys, rx, &n,
				 NULL) && errno != ENOENT)
		failf(z, "reading xr_rx: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!fz_conn_find(keys[i]) &&
		    memcmp(&rx[i], &zero_rx, sizeof(zero_rx)))
			failf(z, "(iv) receive state of conn id %u (no such "
				 "connection) changed", keys[i]);
	free(rx);
	for (k = 0; k < XR_DEFAULT_MAX_CONNS * XR_MSG_SLOTS; k += n) {
		n = 65536;
		in_batch = k - 1;
		if (bpf_map_lookup_batch(z->w.p.msgs, first ? NULL : &in_batch,
					 &out_batch, keys, vals, &n, NULL) &&
		    errno != ENOENT) {
			failf(z, "reading xr_msgs: %s", strerror(errno));
			return;
		}
		first = 0;
		if (!n)
			break;
		for (i = 0; i < n; i++)
			if (vals[i] && !fz_conn_find(keys[i] / XR_MSG_SLOTS))
				failf(z, "(iv) message slot %u of conn id %u (no "
					 "such connection) changed to %#" PRIx64,
				      keys[i] % XR_MSG_SLOTS,
				      keys[i] / XR_MSG_SLOTS, vals[i]);
	}
}

/* ---- running inputs --------------------------------------------------------- */

static void count_path(struct fuzz *z, const char *path)
{
	int i;

	for (i = 0; i < z->npaths; i++)
		if (z->path_names[i] == path) {
			z->path_hits[i]++;
			return;
		}
	if (z->npaths < 64) {
		z->path_names[z->npaths] = path;
		z->path_hits[z->npaths++] = 1;
	}
}

static int run_input(struct fuzz *z, const struct input *in)
{
	static uint8_t out[FR_MAX];
	static struct pred p;
	static struct xr_rx_state rx1[FZ_RX_LO_N + 1];
	static struct slots_read rd[2];
	int nrd = 0;
	struct xr_domain doms1[D_N];
	uint64_t st1[XR_STAT_MAX];
	int64_t d[XR_STAT_MAX];
	int rr, touched;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in->f,
		    .data_size_in = (uint32_t)in->n, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);
	int k;

	z->nfail = 0;
	m_predict(&z->m, in->f, in->n, &p);
	if (bpf_prog_test_run_opts(z->w.p.prog_fd, &o)) {
		failf(z, "bpf_prog_test_run: %s", strerror(errno));
		report(z, in, &p, out, 0, 0);
		return -1;
	}
	/* Message slots: the one the frame names, and all of one connection
	 * in turn, so that a stray write to any slot of any connection here
	 * is seen within FZ_RX_LO_N + 1 inputs (reading all 3584 slots
	 * every time would cost more than everything else together). */
	rr = (int)(z->it % (FZ_RX_LO_N + 1));
	touched = snap_idx(p.cidx);
	rd[nrd++].s = rr;
	if (read_stats(z, st1) || read_rx(z, rx1) || read_doms(z, doms1) ||
	    read_msgs(z, rd[0].s, rd[0].v)) {
		failf(z, "reading the maps failed: %s", strerror(errno));
		report(z, in, &p, out, 0, o.retval);
		return -1;
	}
	for (k = 0; k < XR_STAT_MAX; k++)
		d[k] = (int64_t)(st1[k] - z->stats[k]);

	/* (ii) verdict and frame out */
	if (o.retval != XDP_PASS && o.retval != XDP_DROP && o.retval != XDP_TX)
		failf(z, "(ii) verdict %u", o.retval);
	if (o.retval != p.verdict)
		failf(z, "model: verdict %s, want %s", vname(o.retval),
		      vname(p.verdict));
	if (o.retval == XDP_PASS &&
	    (o.data_size_out != in->n || memcmp(out, in->f, in->n)))
		failf(z, "(ii) a passed frame was changed");
	if (o.retval == XDP_TX)
		check_reply(z, in, &p, out, o.data_size_out);
	check_counters(z, d, o.retval, &p);
	check_memory(z, in, &p);
	check_rx(z, in, &p, z->rx, rx1, rd, nrd);
	if (touched >= 0 && in->x && in->x + 48 <= in->n)
		check_slot(z, in, &p, touched);
	check_doms(z, &p, z->doms, doms1);
	check_events(z, &p);

	if (z->nfail) {
		report(z, in, &p, out, o.data_size_out, o.retval);
		return -1;
	}
	memcpy(z->stats, st1, sizeof(st1));
	memcpy(z->rx, rx1, sizeof(rx1));
	for (k = 0; k < nrd; k++)
		memcpy(z->msgs + rd[k].s * XR_MSG_SLOTS, rd[k].v,
		       sizeof(rd[k].v));
	memcpy(z->doms, doms1, sizeof(doms1));
	for (k = 0; k < XR_STAT_MAX; k++)
		z->stat_tot[k] += (uint64_t)d[k];
	if (o.retval < 8)
		z->verdicts[o.retval]++;
	z->kinds[in->kind]++;
	z->mutated += in->mutations > 0;
	count_path(z, p.path);
	if (p.reached_rx) {
		int op = p.opcode < 8 ? p.opcode : 8;
		int r = p.verdict == XDP_DROP && p.st[XR_STAT_DROP_WINDOW] ? 8 :
			p.nak ? 1 + (p.nak < 7 ? p.nak : 6) : p.fresh ? 0 : 1;

		z->op_res[op][r]++;
	}
	return 0;
}

/* Fill domain A's event ring with fill events: one repeated run of a valid
 * ACK frame for connection 1 (IPv4, from its first peer's data port). */
static int fill_ring(struct fuzz *z, uint32_t fill)
{
	static uint8_t in[FR_MAX], out[FR_MAX];
	const struct fz_conn *c = fz_conn_find(1);
	struct fr_ep src = { { 2, 0, 0, 0, 0, 2 }, { 10, 1, 0, 2 }, FZ_PORT };
	struct fr_ep dst = { { 2, 0, 0, 0, 0, 1 }, { 10, 9, 0, 1 }, 50001 };
	uint8_t body[sizeof(struct xr_ack_hdr)] = { 0 };
	uint64_t st1[XR_STAT_MAX];
	int64_t want_ack = 0, want_lost = 0;
	uint32_t i;
	size_t n;
	int k;

	body[0] = XR_VER_TYPE(XR_T_ACK);
	fr_put32(body + 4, c->id);
	fr_put64(body + 8, c->c.rx_token);
	fr_put32(body + 16, 1);
	n = fr_udp(in, 0, &src, &dst, 0, body, sizeof(body));
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
			    .data_size_in = (uint32_t)n, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = fill);

		if (bpf_prog_test_run_opts(z->w.p.prog_fd, &o) ||
		    o.retval != XDP_DROP) {
			fprintf(stderr, "bpf_xdp_fuzz: filling the ring failed\n");
			return -1;
		}
	}
	for (i = 0; i < fill; i++) {
		if (m_ring_put_answer(&z->m, D_A))
			want_ack++;
		else
			want_lost++;
	}
	if (read_stats(z, st1))
		return -1;
	for (k = 0; k < XR_STAT_MAX; k++) {
		int64_t d = (int64_t)(st1[k] - z->stats[k]);
		int64_t w = k == XR_STAT_RX_ACK ? want_ack :
			    k == XR_STAT_DROP_ACK_LOST ? want_lost : 0;

		if (d != w) {
			fprintf(stderr, "bpf_xdp_fuzz: filling the ring: counter "
					"%s moved by %" PRId64 ", want %" PRId64
					" (iteration %" PRIu64 ", seed %" PRIu64
					")\n", sname(k), d, w, z->it, z->seed);
			return -1;
		}
		z->stat_tot[k] += (uint64_t)d;
	}
	memcpy(z->stats, st1, sizeof(st1));
	z->evb[D_A].skip = want_ack;
	z->evb[D_A].skip_conn = c->id;
	z->evb[D_A].skip_bad = 0;
	z->fill_dom = D_A;
	z->nfill_ev = 0;
	z->fill_start = z->it;
	z->fills++;
	return 0;
}

/* Drain the filled ring: the filler events, then exactly the events the
 * inputs of the phase produced, in order. */
static int drain_ring(struct fuzz *z)
{
	struct evbuf *b = &z->evb[D_A];
	int i;

	z->nfail = 0;
	b->n = 0;
	b->bad_size = 0;
	ring_buffer__consume(z->w.dom[D_A].rb);
	if (b->skip || b->skip_bad)
		failf(z, "filled ring: %ld filler events missing, %ld wrong",
		      b->skip, b->skip_bad);
	if (b->bad_size)
		failf(z, "filled ring: %d events of the wrong size", b->bad_size);
	if (b->n != z->nfill_ev)
		failf(z, "model: filled ring held %d events after the fillers, "
			 "want %d", b->n, z->nfill_ev);
	for (i = 0; i < b->n && i < z->nfill_ev && i < MAX_FILL_EV; i++)
		check_event(z, &b->ev[i], &z->fill_ev[i], "filled ring");
	z->fill_dom = -1;
	z->m.ring_used[D_A] = 0;
	z->events += (uint64_t)b->n;
	if (z->nfail) {
		fprintf(stderr, "\nbpf_xdp_fuzz: INVARIANT FAILED in the ring-full "
				"phase, iterations %" PRIu64 "..%" PRIu64
				" (seed %" PRIu64 ")\n", z->fill_start, z->it,
			z->seed);
		for (i = 0; i < z->nfail && i < 16; i++)
			fprintf(stderr, "  - %s\n", z->fail[i]);
		return -1;
	}
	return 0;
}

/* ---- main ----------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void usage(void)
{
	fprintf(stderr, "usage: bpf_xdp_fuzz [--seed N|random] [--iters N] "
			"[--obj FILE] [--props-only] [--quiet]\n");
}

static void summary(struct fuzz *z, double secs)
{
	int k, i;

	printf("bpf_xdp_fuzz: %" PRIu64 " inputs in %.1f s: %.0f inputs/s "
	       "(seed %" PRIu64 ")\n", z->it, secs, z->it / secs, z->seed);
	printf("  verdicts: PASS %" PRIu64 ", DROP %" PRIu64 ", TX %" PRIu64
	       "; mutated inputs %" PRIu64 "; %" PRIu64 " payload bytes "
	       "placed; %" PRIu64 " events; %" PRIu64 " ring fills\n",
	       z->verdicts[XDP_PASS], z->verdicts[XDP_DROP], z->verdicts[XDP_TX],
	       z->mutated, z->placed_bytes, z->events, z->fills);
	if (z->ip6_badver)
		printf("  known leniency: %" PRIu64 " IPv6 frames with a version "
		       "other than 6 were taken as IPv6 and answered (xr_parse "
		       "does not check it)\n", z->ip6_badver);
	printf("  seeds:");
	for (k = 0; k < G_NKIND; k++)
		printf(" %s %" PRIu64 ";", g_kind_name[k], z->kinds[k]);
	printf("\n  counters:");
	for (k = 0; k < XR_STAT_MAX; k++)
		if (z->stat_tot[k])
			printf(" %s %" PRIu64 ";", sname(k), z->stat_tot[k]);
	printf("\n  counters never moved:");
	for (k = 0; k < XR_STAT_MAX; k++)
		if (!z->stat_tot[k])
			printf(" %s", sname(k));
	printf("\n");
	printf("  data that reached its window, by opcode (new / dup / NAK "
	       "key,bounds,access,rnr,opcode,length / window drop):\n");
	for (k = 0; k < 9; k++) {
		static const char *const on[9] = { "op 0", "WRITE", "WRITE_IMM",
						   "SEND", "SEND_IMM", "READ_REQ",
						   "READ_RESP", "op 7", "op >7" };
		uint64_t *r = z->op_res[k];

		printf("    %-10s %6" PRIu64 " / %5" PRIu64 " / %4" PRIu64 ",%4"
		       PRIu64 ",%4" PRIu64 ",%4" PRIu64 ",%4" PRIu64 ",%4" PRIu64
		       " / %4" PRIu64 "\n", on[k], r[0], r[1], r[2], r[3], r[4],
		       r[5], r[6], r[7], r[8]);
	}
	if (z->quiet)
		return;
	printf("  model paths:\n");
	for (i = 0; i < z->npaths; i++)
		printf("    %-42s %" PRIu64 "\n", z->path_names[i], z->path_hits[i]);
}

int main(int argc, char **argv)
{
	struct fuzz *z = &F;
	const char *obj = NULL;
	uint16_t flags = XR_CFG_VERIFY_CSUM;
	uint64_t next_fill;
	double t0;
	int i, rc = 0;
	struct input *in;

	z->seed = 1;
	z->iters = 20000;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			i++;
			z->seed = !strcmp(argv[i], "random") ?
				(uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) :
				strtoull(argv[i], NULL, 0);
		} else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			z->iters = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--obj") && i + 1 < argc) {
			obj = z->obj = argv[++i];
		} else if (!strcmp(argv[i], "--quiet")) {
			z->quiet = 1;
		} else if (!strcmp(argv[i], "--props-only")) {
			z->props_only = 1;
		} else {
			usage();
			return 2;
		}
	}
	if (geteuid() != 0) {
		printf("bpf_xdp_fuzz: SKIP (needs root for BPF)\n");
		return 0;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	rc = xw_load(&z->w.p, obj, 0);
	if (rc == -EPERM) {
		printf("bpf_xdp_fuzz: SKIP (BPF not permitted)\n");
		return 0;
	}
	if (rc) {
		fprintf(stderr, "bpf_xdp_fuzz: cannot load the program: %s\n",
			strerror(-rc));
		return 1;
	}
	for (i = 0; i < D_N; i++)
		z->evctx[i] = &z->evb[i];
	rc = fz_world_up(&z->w, on_event, z->evctx);
	if (rc) {
		fprintf(stderr, "bpf_xdp_fuzz: set-up failed: %s\n", strerror(-rc));
		rc = 1;
		goto out;
	}
	m_init(&z->m);
	g_init(&z->g, z->seed);
	z->fill_dom = -1;
	if (read_stats(z, z->stats) || read_rx(z, z->rx) ||
	    read_all_msgs(z, z->msgs) || read_doms(z, z->doms) ||
	    check_model_all(z)) {
		fprintf(stderr, "bpf_xdp_fuzz: reading the maps failed\n");
		rc = 1;
		goto out;
	}
	printf("bpf_xdp_fuzz: seed %" PRIu64 ", %" PRIu64 " inputs%s%s\n",
	       z->seed, z->iters, obj ? ", object " : "", obj ? obj : "");
	fflush(stdout);
	in = calloc(1, sizeof(*in));
	if (!in) {
		rc = 1;
		goto out;
	}
	next_fill = 1000 + rbelow(&z->g.r, FILL_EVERY);
	t0 = now_s();
	for (z->it = 0; z->it < z->iters; z->it++) {
		if (z->it % PHASE_LEN == 0) {
			/* checksum verification on 3 phases of 4; rate hints on 1
			 * of 4 */
			flags = chance(&z->g.r, 75) ? XR_CFG_VERIFY_CSUM : 0;
			z->m.verify_csum = !!flags;
			z->m.capacity = chance(&z->g.r, 25) ? RATE_CAP : 0;
			if (xw_set_cfg(&z->w.p, flags, z->m.capacity)) {
				rc = 1;
				break;
			}
		}
		if (z->it == next_fill && z->fill_dom < 0) {
			if (fill_ring(z, chance(&z->g.r, 50) ? 40950 : 43680)) {
				rc = 1;
				break;
			}
		}
		if (z->fill_dom >= 0 && z->it == z->fill_start + FILL_LEN) {
			if (drain_ring(z)) {
				rc = 1;
				break;
			}
			next_fill = z->it + FILL_EVERY;
		}
		g_next(&z->g, &z->m, in);
		if (run_input(z, in)) {
			rc = 1;
			break;
		}
		if (z->it % 1024 == 1023) {
			z->nfail = 0;
			check_static(z, flags);
			check_model_all(z);
			if (z->it % 65536 == 65535)
				check_other_ids(z);
			if (z->nfail) {
				report(z, in, &(struct pred){ .path = "-" }, NULL,
				       0, 0);
				rc = 1;
				break;
			}
		}
		if (!z->quiet && z->it % 100000 == 99999) {
			printf("  ... %" PRIu64 " inputs, %.0f/s\n", z->it + 1,
			       (z->it + 1) / (now_s() - t0));
			fflush(stdout);
		}
	}
	if (!rc && z->fill_dom >= 0 && drain_ring(z))
		rc = 1;
	if (!rc) {
		z->nfail = 0;
		check_static(z, flags);
		check_model_all(z);
		check_other_ids(z);
		if (z->nfail) {
			fprintf(stderr, "\nbpf_xdp_fuzz: INVARIANT FAILED in the "
					"final checks after %" PRIu64 " inputs (seed %"
					PRIu64 ")\n", z->it, z->seed);
			for (i = 0; i < z->nfail && i < 16; i++)
				fprintf(stderr, "  - %s\n", z->fail[i]);
			rc = 1;
		}
	}
	if (!rc) {
		summary(z, now_s() - t0);
		printf("bpf_xdp_fuzz: OK, no invariant broken\n");
	}
	free(in);
out:
	fz_world_down(&z->w);
	xw_unload(&z->w.p);
	return rc;
}
