// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce datapath (XDP).  On every interface xroce is attached to:
 *
 *  data    parse, authenticate (connection, token, peer address and port),
 *          verify the UDP checksum, validate placement (rkey, domain, PD,
 *          access, bounds, no overflow), record the packet in its path's
 *          receive window and the connection's CSN window, place new payload
 *          straight into the domain's memory, count the message's bytes and
 *          emit a RECV event when its last byte lands, then answer with an
 *          ACK or NAK built from the same frame (XDP_TX) when one is due.
 *  ack/nak authenticate and hand a compact record to the owning domain's
 *          ring buffer, so the library never parses frames.
 *  probe   answer in place with a probe reply (XDP_TX).
 *  bind    a peer's half of a connection made from out-of-band information
 *          (wire.h, XR_CTRL_BIND): to the owning domain's ring buffer.
 *  other   XDP_PASS, untouched.
 *
 * Maps and records: include/contract/abi.h.  Wire format: include/contract/wire.h.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "contract/inline.h"
#include "contract/abi.h"
#include "lib/parse.h"
#include "contract/rxwin.h"
#include "lib/udp_csum.h"
#include "lib/place.h"
#include "lib/reply.h"
#include "lib/txbuild.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_cfg);
} xr_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__type(value, struct xr_domain);
} xr_domains SEC(".maps");

/* Each domain's memory: an mmapable array of 4 KiB pages, also its UMEM.
 * BPF_F_INNER_MAP lets every domain size its own. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
		__uint(max_entries, 1);
		/* sizes, not BTF types: a key type without a value type
		 * makes the kernel refuse the map's BTF (libbpf then
		 * retries without it, and says so on every load) */
		__uint(key_size, sizeof(__u32));
		__uint(value_size, XR_PAGE_SIZE);
	});
} xr_mem SEC(".maps");

/* Transmit rings of the test-run engine, by (domain, plane): txrun.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS * XR_MAX_PLANES);
	__type(key, struct xr_txq_key);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_ARRAY);
		__uint(map_flags, BPF_F_MMAPABLE);
		__uint(max_entries, XR_TXR_RING + 1);
		__uint(key_size, sizeof(__u32));
		__uint(value_size, sizeof(struct xr_txr_desc));
	});
} xr_txq SEC(".maps");

/* Each domain's event ring (ACK records, completions). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, XR_DEFAULT_MAX_DOMAINS);
	__type(key, __u32);
	__array(values, struct {
		__uint(type, BPF_MAP_TYPE_RINGBUF);
		__uint(max_entries, XR_EVQ_BYTES);
	});
} xr_evq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_MRS);
	__type(key, __u32);
	__type(value, struct xr_mr);
} xr_mrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS);
	__type(key, __u32);
	__type(value, struct xr_conn);
} xr_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS);
	__type(key, __u32);
	__type(value, struct xr_rx_state);
} xr_rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XR_DEFAULT_MAX_CONNS * XR_MSG_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} xr_msgs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_act);
} xr_act SEC(".maps");

/* What an ACK reports, copied out of the receive state under its lock. */
struct xr_ack_info {
	__u32 cack;
	__u32 ce_pkts;
	__u32 rx_pkts;
	__u32 csn_cum;
	__u64 sack[XR_SACK_WORDS];
};

/* Per-CPU room for an event record and an ACK's contents: the BPF stack
 * (512 bytes for the whole call chain) is too small for the data path and
 * these. */
struct xr_scratch {
	struct xr_evt e;
	struct xr_ack_info ai;
	struct xr_read_req rr;
	__u8 csum_buf[512];      /* checksums across fragments */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xr_scratch);
} xr_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_RQ);
	__type(key, struct xr_rq_key);
	__type(value, struct xr_rq_ent);
} xr_rq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_READS);
	__type(key, struct xr_read_key);
	__type(value, struct xr_read_ent);
} xr_reads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XR_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xr_stats SEC(".maps");

#include "lib/stats.h"

/* Not ours after all: to the kernel stack, untouched. */
XR_INLINE int xr_pass(void)
{
	xr_count(XR_STAT_PASS);
	return XDP_PASS;
}

/* Global (non-static) functions are verified once, on their own, instead
 * of once per path through their caller: placement and checksumming fan
 * out into many verifier states, so keeping them global keeps the
 * program's verification small enough for older kernels. */

/* Copy len payload bytes at pkt_off into domain's memory at pos. */
__noinline int xr_place_global(struct xdp_md *ctx, __u32 domain, __u64 pos,
			       __u32 pkt_off, __u32 len)
{
	void *mem = bpf_map_lookup_elem(&xr_mem, &domain);

	if (!mem)
		return -1;
	return xr_place(ctx, mem, pos, pkt_off, len);
}

/* 1 if the frame's UDP checksum over udp_len bytes is right. */
/* A multi-buffer frame: the datagram continues in fragments.  A function
 * of its own with a small stack (the pseudo header is built in the
 * scratch buffer), so the deepest call chain stays within 512 bytes. */
__noinline int xr_csum_ok_frags_global(struct xdp_md *ctx, __u32 udp_len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct xr_scratch *sc;
	struct udphdr *udp;
	__u32 zero = 0, sum, off;
	__u8 *b;

	if ((void *)(eth + 1) > end || udp_len > XR_CSUM_MAX_SPAN)
		return 0;
	sc = bpf_map_lookup_elem(&xr_scratch, &zero);
	if (!sc)
		return 0;
	b = sc->csum_buf;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return 0;
		__builtin_memcpy(b, &ip->saddr, 8);
		b[8] = 0;
		b[9] = IPPROTO_UDP;
		b[10] = (__u8)(udp_len >> 8);
		b[11] = (__u8)udp_len;
		sum = xr_csum_add(b, 12, 0);
		udp = (void *)(ip + 1);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return 0;
		__builtin_memcpy(b, &ip6->saddr, 32);
		b[32] = (__u8)(udp_len >> 24);
		b[33] = (__u8)(udp_len >> 16);
		b[34] = (__u8)(udp_len >> 8);
		b[35] = (__u8)udp_len;
		b[36] = b[37] = b[38] = 0;
		b[39] = IPPROTO_UDP;
		sum = xr_csum_add(b, 40, 0);
		udp = (void *)(ip6 + 1);
	}
	if ((void *)(udp + 1) > end || udp->check == 0)
		return 0;
	off = (__u32)((void *)udp - data);
	sum = xr_csum_frags(ctx, off, udp_len, sum, b);
	return sum && xr_csum_fold(sum) == 0xffff;
}

__noinline int xr_csum_ok_global(struct xdp_md *ctx, __u32 udp_len)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xr_hdrs h;

	if (xr_parse(data, end, &h) != XR_PARSE_OK || !h.udp || udp_len > 0xffff)
		return 0;
	if ((void *)h.udp + udp_len > end)
		return -1; /* continues in fragments */
	return xr_udp_csum_ok(&h, end, (__u16)udp_len);
}

/* Drop with a reason. */
XR_INLINE int xr_drop(__u32 reason)
{
	xr_count(reason);
	return XDP_DROP;
}

/* Is the frame's source one of the connection's peer addresses, and its
 * source port inside the peer's entropy range? */
XR_INLINE int xr_peer_ok(const struct xr_conn *c, const struct xr_hdrs *h,
			 void *end, int reply)
{
	__u32 a[4];
	__u16 sport = bpf_ntohs(h->udp->source);
	__u32 i;

	/* Data and probes come from one of the peer's entropy ports; replies
	 * come from its data port, which the dispatcher already matched. */
	if (!reply &&
	    (__u32)(__u16)(sport - c->peer_sport_lo) >= c->peer_sport_n)
		return 0;
	if (!h->v6) {
		struct iphdr *ip = xr_ip4(h, end);

		if (!ip)
			return 0;
		a[0] = 0;
		a[1] = 0;
		a[2] = bpf_htonl(0xffff);
		a[3] = ip->saddr;
	} else {
		struct ipv6hdr *ip6 = xr_ip6(h, end);

		if (!ip6)
			return 0;
		__builtin_memcpy(a, &ip6->saddr, sizeof(a));
		/* An IPv4-mapped source never appears on the wire (RFC 4291
		 * 2.5.5.2): it must not pass for an IPv4 peer's address. */
		if (a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff))
			return 0;
	}
#pragma clang loop unroll(full)
	for (i = 0; i < XR_MAX_PLANES; i++) {
		const __u32 *p = (const __u32 *)c->peer_addr[i];

		if (i >= c->npeer)
			break;
		if (p[0] == a[0] && p[1] == a[1] && p[2] == a[2] && p[3] == a[3])
			return 1;
	}
	return 0;
}

/* Find and authenticate the connection a packet is addressed to.  Returns
 * NULL (with *why set to the drop reason) unless the connection exists, is
 * connected, the token matches and the packet comes from the peer. */
XR_INLINE struct xr_conn *xr_auth(const struct xr_hdrs *h, void *end,
				  __u32 conn_id, __be64 token, int reply,
				  __u32 *why)
{
	struct xr_conn *c = bpf_map_lookup_elem(&xr_conns, &conn_id);

	if (!c) {
		*why = XR_STAT_DROP_NO_CONN;
		return NULL;
	}
	if (c->state != XR_CONN_RTS) {
		*why = XR_STAT_DROP_CONN_STATE;
		return NULL;
	}
	if (bpf_be64_to_cpu(token) != c->rx_token) {
		*why = XR_STAT_DROP_TOKEN;
		return NULL;
	}
	if (!xr_peer_ok(c, h, end, reply)) {
		*why = XR_STAT_DROP_PEER;
		return NULL;
	}
	return c;
}

/* How long a successful liveness check of a domain is trusted. */
#define XR_ALIVE_CACHE_NS 1000000ULL

/* Is the process owning domain still there?  See struct xr_domain. */
XR_INLINE int xr_domain_alive(struct xdp_md *ctx, const struct xr_hdrs *h,
			      void *end, __u32 domain, __u64 now)
{
	struct xr_domain *d = bpf_map_lookup_elem(&xr_domains, &domain);
	struct bpf_sock_tuple t = {};
	const __u32 *ca;
	struct bpf_sock *sk;
	__u32 tlen;
	int v4;

	if (!d)
		return 0;
	if (!d->ctrl_port || now < d->alive_until_ns)
		return 1;
	ca = (const __u32 *)d->ctrl_addr;
	if (ca[0] | ca[1] | ca[2] | ca[3])
		v4 = !ca[0] && !ca[1] && ca[2] == bpf_htonl(0xffff);
	else
		v4 = !h->v6;
	if (v4) {
		struct iphdr *ip = h->v6 ? NULL : xr_ip4(h, end);

		if (ip) {
			t.ipv4.saddr = ip->saddr;
			t.ipv4.daddr = ip->daddr;
			t.ipv4.sport = h->udp->source;
		}
		if (ca[3])
			t.ipv4.daddr = ca[3];
		t.ipv4.dport = bpf_htons(d->ctrl_port);
		tlen = sizeof(t.ipv4);
	} else {
		struct ipv6hdr *ip6 = h->v6 ? xr_ip6(h, end) : NULL;

		if (ip6) {
			__builtin_memcpy(t.ipv6.saddr, &ip6->saddr, 16);
			__builtin_memcpy(t.ipv6.daddr, &ip6->daddr, 16);
			t.ipv6.sport = h->udp->source;
		}
		if (ca[0] | ca[1] | ca[2] | ca[3])
			__builtin_memcpy(t.ipv6.daddr, ca, 16);
		t.ipv6.dport = bpf_htons(d->ctrl_port);
		tlen = sizeof(t.ipv6);
	}
	sk = bpf_sk_lookup_udp(ctx, &t, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	bpf_sk_release(sk);
	d->alive_until_ns = now + XR_ALIVE_CACHE_NS;
	return 1;
}

XR_INLINE __u64 xr_act_window(const struct xr_cfg *cfg)
{
	return cfg->active_window_us ? (__u64)cfg->active_window_us * 1000 :
				       XR_ACTIVE_WINDOW_NS;
}

/* Count a connection as an active sender of window epoch (called once per
 * connection and window).  The first packet of a new window resets that
 * window's counter; a window more than one old is forgotten too. */
XR_INLINE void xr_act_count(__u64 epoch)
{
	__u32 zero = 0;
	struct xr_act *a = bpf_map_lookup_elem(&xr_act, &zero);
	__u64 old;

	if (!a)
		return;
	old = a->epoch;
	if (old != epoch && __sync_val_compare_and_swap(&a->epoch, old, epoch) == old) {
		a->cnt[epoch & 1] = 0;
		if (epoch != old + 1)
			a->cnt[(epoch + 1) & 1] = 0;
	}
	__sync_fetch_and_add(&a->cnt[epoch & 1], 1);
}

/* The receiver's fair share for each active sender, Mbit/s (0 = none). */
XR_INLINE __u32 xr_rate_hint(const struct xr_cfg *cfg, __u64 now)
{
	__u32 zero = 0, n, prev;
	struct xr_act *a;
	__u64 epoch;

	if (!cfg->rate_capacity_mbps)
		return 0;
	a = bpf_map_lookup_elem(&xr_act, &zero);
	if (!a)
		return 0;
	epoch = now / xr_act_window(cfg);
	if (a->epoch != epoch && a->epoch + 1 != epoch)
		return cfg->rate_capacity_mbps; /* nobody active lately */
	n = a->cnt[a->epoch & 1];
	prev = a->epoch == epoch ? a->cnt[(epoch + 1) & 1] : 0;
	if (prev > n)
		n = prev; /* the current window may not have heard everyone yet */
	return cfg->rate_capacity_mbps / (n ? n : 1);
}

/* Length of the UDP datagram, if it fits in the frame and holds at least
 * min_body bytes of xroce header; 0 otherwise. */
XR_INLINE __u32 xr_udp_len(struct xdp_md *ctx, const struct xr_hdrs *h,
			   void *end, __u32 min_body)
{
	__u32 len = bpf_ntohs(h->udp->len);

	/* Older verifiers (6.1) lose the 16-bit bound of a byte swap; an
	 * explicit mask they can see keeps packet arithmetic bounded. */
	asm volatile("%0 &= 0xffff" : "+r"(len));

	if (len < sizeof(struct udphdr) + min_body)
		return 0;
	/* The headers are in the linear part (callers check); the datagram
	 * may continue in the fragments of a multi-buffer frame. */
	if ((void *)h->udp + len > end &&
	    h->l4_off + len > bpf_xdp_get_buff_len(ctx))
		return 0;
	return len;
}

/* Validate where a WRITE payload goes; returns a NAK reason or 0 and sets
 * *pos to the byte position in the domain's memory. */
/* A segment's offsets must fit its message. */
XR_INLINE __u8 xr_check_seg(__u32 plen, __u32 msg_len, __u32 msg_off)
{
	if (msg_off > msg_len || plen > msg_len - msg_off ||
	    (plen == 0 && msg_len != 0))
		return XR_NAK_BAD_LENGTH;
	return 0;
}

/* [pos, pos + len) must lie inside the domain's memory map. */
XR_INLINE __u8 xr_check_pos(const struct xr_conn *c, __u64 pos, __u64 len)
{
	struct xr_domain *dom = bpf_map_lookup_elem(&xr_domains, &c->domain);

	if (!dom || pos > dom->mem_bytes || len > dom->mem_bytes - pos)
		return XR_NAK_BOUNDS;
	return 0;
}

/* [raddr, raddr + len) must lie in a region of the connection's domain and
 * PD, registered with the access right needed; *pos gets its position in
 * the memory map.  No arithmetic can overflow. */
XR_INLINE __u8 xr_check_mr(const struct xr_conn *c, __u32 rkey, __u64 raddr,
			   __u64 len, __u32 access, __u64 *pos)
{
	struct xr_mr *mr;
	__u64 off;

	mr = bpf_map_lookup_elem(&xr_mrs, &rkey);
	if (!mr || mr->rkey != rkey || mr->domain != c->domain || mr->pd != c->pd)
		return XR_NAK_BAD_KEY;
	if (!(mr->access & access))
		return XR_NAK_ACCESS;
	if (raddr < mr->iova)
		return XR_NAK_BOUNDS;
	off = raddr - mr->iova;
	if (off > mr->len || len > mr->len - off)
		return XR_NAK_BOUNDS;
	if (mr->mem_off > ((__u64)1 << 48) || off > ((__u64)1 << 48))
		return XR_NAK_BOUNDS;
	*pos = mr->mem_off + off;
	return xr_check_pos(c, *pos, len);
}

/* Where a SEND's payload goes: the receive posted for (stream, msn). */
XR_INLINE __u8 xr_check_send(const struct xr_conn *c, __u32 conn_id,
			     __u16 stream, __u32 msn, __u32 msg_len,
			     __u32 msg_off, __u32 plen, __u64 *pos)
{
	struct xr_rq_key k = { .conn = conn_id, .stream = stream,
			       .slot = (__u16)(msn % XR_RQ_SLOTS) };
	struct xr_rq_ent *r = bpf_map_lookup_elem(&xr_rq, &k);

	if (!r || r->msn != msn)
		return XR_NAK_RNR;
	if (msg_len > r->len)
		return XR_NAK_BAD_LENGTH;
	if (r->mem_off > ((__u64)1 << 48))
		return XR_NAK_BOUNDS;
	*pos = r->mem_off + msg_off;
	return xr_check_pos(c, *pos, plen);
}

/* Where a READ_RESP's payload goes: the window its read opened. */
XR_INLINE __u8 xr_check_read_resp(const struct xr_conn *c, __u32 conn_id,
				  __u32 read_id, __u32 msg_len, __u32 msg_off,
				  __u32 plen, __u64 *pos)
{
	struct xr_read_key k = { .conn = conn_id, .read_id = read_id };
	struct xr_read_ent *r = bpf_map_lookup_elem(&xr_reads, &k);

	if (!r)
		return XR_NAK_BAD_KEY;
	if (msg_len != r->len)
		return XR_NAK_BAD_LENGTH;
	if (r->mem_off > ((__u64)1 << 48))
		return XR_NAK_BOUNDS;
	*pos = r->mem_off + msg_off;
	return xr_check_pos(c, *pos, plen);
}

/* Add plen placed bytes to message msg_id of connection conn_id; true when
 * that was the message's last byte.  Lock-free: the slot holds
 * msg_id << 32 | bytes and is swapped with cmpxchg. */
XR_INLINE int xr_msg_account(__u32 conn_id, __u32 msg_id, __u32 msg_len,
			     __u32 plen)
{
	__u32 key = conn_id * XR_MSG_SLOTS + (msg_id % XR_MSG_SLOTS);
	__u64 *slot = bpf_map_lookup_elem(&xr_msgs, &key);
	__u64 old, new;
	__u32 i;

	if (!slot)
		return 0;
#pragma clang loop unroll(disable)
	for (i = 0; i < 16; i++) {
		old = *slot;
		if (XR_MSG_SLOT_ID(old) == msg_id)
			new = old + plen;
		else
			new = ((__u64)msg_id << 32) | plen;
		if (__sync_val_compare_and_swap(slot, old, new) == old)
			return XR_MSG_SLOT_BYTES(new) == msg_len;
	}
	return 0;
}

/* The drop counter of a NAK reason: a NAKed packet is refused (and
 * answered), not accepted. */
XR_INLINE __u32 xr_nak_stat(__u8 reason)
{
	switch (reason) {
	case XR_NAK_BAD_KEY:
		return XR_STAT_DROP_KEY;
	case XR_NAK_BOUNDS:
		return XR_STAT_DROP_BOUNDS;
	case XR_NAK_ACCESS:
		return XR_STAT_DROP_ACCESS;
	case XR_NAK_BAD_OPCODE:
		return XR_STAT_DROP_OPCODE;
	case XR_NAK_RNR:
		return XR_STAT_NAK_RNR;
	default:
		return XR_STAT_DROP_LENGTH;
	}
}


XR_INLINE int xr_send_ack(struct xdp_md *ctx, int v6, const struct xr_ack_info *ai,
			  __u32 peer_conn, __u64 tx_token, __u8 flags, __u8 reason,
			  __u8 path, __u32 psn, __be32 ts, __u32 csn, __u32 hint)
{
	struct xr_ack_hdr *a;
	struct xr_hdrs h;
	__u32 i;

	a = xr_reply_begin(ctx, &h, v6, sizeof(*a));
	if (!a)
		return xr_drop(XR_STAT_TX_ACK_FAIL);
	a->ver_type = XR_VER_TYPE(reason ? XR_T_NAK : XR_T_ACK);
	a->flags = flags;
	a->reason = reason;
	a->path = path;
	a->dst_conn = bpf_htonl(peer_conn);
	a->token = bpf_cpu_to_be64(tx_token);
	a->cack = bpf_htonl(ai->cack);
	a->ack_psn = bpf_htonl(psn);
	a->ts_echo = ts;
	a->rate_hint = bpf_htonl(hint);
#pragma clang loop unroll(full)
	for (i = 0; i < XR_SACK_WORDS; i++)
		a->sack[i] = bpf_cpu_to_be64(ai->sack[i]);
	a->ce_pkts = bpf_htonl(ai->ce_pkts);
	a->rx_pkts = bpf_htonl(ai->rx_pkts);
	a->csn_cum = bpf_htonl(ai->csn_cum);
	a->nak_csn = reason ? bpf_htonl(csn) : 0;
	xr_reply_finish(ctx, &h, sizeof(*a));
	xr_count(reason ? XR_STAT_TX_NAK : XR_STAT_TX_ACK);
	return XDP_TX;
}

static __noinline int xr_rx_data(struct xdp_md *ctx, struct xr_hdrs *h,
				 const struct xr_cfg *cfg)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_data_hdr *d = (void *)(h->udp + 1);
	__u32 udp_len, plen, conn_id, why = 0, psn, base, csn, msg_id, msg_len;
	__u32 msg_off, rkey, peer_conn;
	__u64 raddr, pos = 0, now, tx_token;
	struct xr_ack_info *ai;
	struct xr_scratch *sc;
	struct xr_rx_state *rx;
	struct xr_rx_path *p;
	struct xr_conn *c;
	void *evq, *mem = NULL;
	int pv, cv = XR_RXW_OLD, v6 = h->v6, done = 0, gap, ce, new_active, dup_peek;
	__u8 path, flags, opcode, nak = 0, aflags;
	__u16 stream;
	struct xr_read_req *rr;
	__u32 zero = 0;
	struct xr_evt *e;
	__be32 ts;

	if ((void *)(d + 1) > end)
		return xr_drop(XR_STAT_DROP_TRUNC);
	udp_len = xr_udp_len(ctx, h, end, sizeof(*d));
	if (!udp_len)
		return xr_drop(XR_STAT_DROP_TRUNC);
	plen = udp_len - sizeof(struct udphdr) - sizeof(*d);
	if (plen > XR_MAX_PKT_PAYLOAD)
		return xr_drop(XR_STAT_DROP_LENGTH);

	conn_id = bpf_ntohl(d->dst_conn);
	c = xr_auth(h, end, conn_id, d->token, 0, &why);
	if (!c)
		return xr_drop(why);
	if (cfg->flags & XR_CFG_VERIFY_CSUM) {
		int ok = xr_csum_ok_global(ctx, udp_len);

		if (ok < 0)
			ok = xr_csum_ok_frags_global(ctx, udp_len);
		if (!ok)
			return xr_drop(XR_STAT_DROP_CSUM);
	}

	path = d->path;
	if (path >= XR_MAX_PATHS)
		return xr_drop(XR_STAT_DROP_LENGTH);
	flags = d->flags;
	opcode = d->opcode;
	psn = bpf_ntohl(d->psn);
	base = bpf_ntohl(d->psn_base);
	csn = bpf_ntohl(d->csn);
	ts = d->ts;
	raddr = bpf_be64_to_cpu(d->raddr);
	rkey = bpf_ntohl(d->rkey);
	msg_id = bpf_ntohl(d->msg_id);
	msg_len = bpf_ntohl(d->msg_len);
	msg_off = bpf_ntohl(d->msg_off);
	stream = bpf_ntohs(d->stream);
	peer_conn = c->peer_conn;
	tx_token = c->tx_token;

	rx = bpf_map_lookup_elem(&xr_rx, &conn_id);
	if (!rx)
		return xr_drop(XR_STAT_DROP_NO_CONN);
	/* A duplicate (its CSN already arrived) is acknowledged as such, never
	 * judged again: the receive a SEND filled may be consumed by now, and
	 * refusing the copy would make the sender retry forever.  This peek is
	 * lock-free; the locked CSN check below stays the authority. */
	dup_peek = xr_csn_seen(rx, csn);
	sc = bpf_map_lookup_elem(&xr_scratch, &zero);
	if (!sc)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	e = &sc->e;
	ai = &sc->ai;
	rr = &sc->rr;
	if (dup_peek) {
		nak = 0;
	} else if (opcode == XR_OP_READ_REQ) {
		/* One packet carrying struct xr_read_req: validated here, answered
		 * by the responder's library (XDP cannot send many packets). */
		if (plen != sizeof(*rr) || msg_len != sizeof(*rr) || msg_off ||
		    bpf_xdp_load_bytes(ctx, h->l4_off + sizeof(struct udphdr) +
					    sizeof(*d), rr, sizeof(*rr)))
			nak = XR_NAK_BAD_LENGTH;
		else
			nak = xr_check_mr(c, rkey, raddr, bpf_ntohl(rr->len),
					  XR_ACCESS_REMOTE_READ, &pos);
	} else {
		nak = xr_check_seg(plen, msg_len, msg_off);
		if (nak)
			goto checked;
		switch (opcode) {
		case XR_OP_WRITE:
		case XR_OP_WRITE_IMM:
			nak = xr_check_mr(c, rkey, raddr, plen,
					  XR_ACCESS_REMOTE_WRITE, &pos);
			break;
		case XR_OP_SEND:
		case XR_OP_SEND_IMM:
			nak = xr_check_send(c, conn_id, stream, rkey, msg_len,
					    msg_off, plen, &pos);
			break;
		case XR_OP_READ_RESP:
			nak = xr_check_read_resp(c, conn_id, rkey, msg_len, msg_off,
						 plen, &pos);
			break;
		default:
			nak = XR_NAK_BAD_OPCODE;
			break;
		}
	}
checked:

	now = bpf_ktime_get_ns();
	if (!xr_domain_alive(ctx, h, end, c->domain, now))
		return xr_drop(XR_STAT_DROP_DEAD);
	evq = bpf_map_lookup_elem(&xr_evq, &c->domain);
	if (!evq)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	if (!nak) {
		/* Backpressure: refuse (unacknowledged, so retransmitted later)
		 * rather than risk losing a completion to a full ring. */
		if (bpf_ringbuf_query(evq, BPF_RB_AVAIL_DATA) >
		    XR_EVQ_BYTES - XR_EVQ_RESERVE)
			return xr_drop(XR_STAT_DROP_EVQ_FULL);
		mem = bpf_map_lookup_elem(&xr_mem, &c->domain);
		if (!mem)
			return xr_drop(XR_STAT_DROP_NO_MEM);
	}

	ce = h->ecn == XR_ECN_CE;
	/* Keep the mask: clang drops it (it knows path < 16) and 6.1's
	 * verifier loses that bound once the value is spilled. */
	xr_barrier_var(path);
	p = &rx->path[path & (XR_MAX_PATHS - 1)];

	bpf_spin_lock(&rx->lock);
	if (!nak && xr_seq_diff(csn, rx->csn_next) >= XR_CSN_WIN) {
		bpf_spin_unlock(&rx->lock);
		return xr_drop(XR_STAT_DROP_WINDOW);
	}
	xr_rxw_forward(p, base);
	/* A rejected packet is recorded nowhere, not even in its path's
	 * window: if our NAK is lost, the sender sees a gap, resends, and is
	 * rejected again; a later ACK can never make it look delivered. */
	if (nak)
		pv = xr_seq_diff(psn, p->cack) > XR_SACK_BITS ? XR_RXW_OOW :
								 XR_RXW_NEW;
	else
		pv = xr_rxw_accept(p, psn);
	if (pv == XR_RXW_OOW) {
		bpf_spin_unlock(&rx->lock);
		return xr_drop(XR_STAT_DROP_WINDOW);
	}
	p->rx_pkts++;
	if (ce)
		p->ce_pkts++;
	if (!nak) {
		cv = xr_csn_accept(rx, csn);
		if (cv == XR_RXW_NEW)
			p->rx_bytes += plen;
		else
			p->dup_pkts++;
	}
	rx->last_rx_ns = now;
	new_active = 0;
	if (cfg->rate_capacity_mbps && rx->act_epoch != now / xr_act_window(cfg)) {
		rx->act_epoch = now / xr_act_window(cfg);
		new_active = 1;
	}
	ai->cack = p->cack;
	ai->ce_pkts = p->ce_pkts;
	ai->rx_pkts = p->rx_pkts;
	ai->csn_cum = rx->csn_next;
	ai->sack[0] = p->sack[0];
	ai->sack[1] = p->sack[1];
	ai->sack[2] = p->sack[2];
	ai->sack[3] = p->sack[3];
	bpf_spin_unlock(&rx->lock);

	xr_count(nak ? xr_nak_stat(nak) : XR_STAT_RX_DATA);
	if (new_active)
		xr_act_count(now / xr_act_window(cfg));
	if (cv == XR_RXW_NEW && opcode == XR_OP_READ_REQ) {
		__builtin_memset(e, 0, sizeof(*e));
		e->type = XR_EVT_READ_REQ;
		e->path = path;
		e->conn = conn_id;
		e->rx_ns = now;
		e->read.raddr = raddr;
		e->read.pos = pos;
		e->read.laddr = bpf_be64_to_cpu(rr->laddr);
		e->read.len = bpf_ntohl(rr->len);
		e->read.read_id = bpf_ntohl(rr->read_id);
		e->read.rkey = rkey;
		/* stream, ssn, imm: read from the header again where used (the
		 * frame is not resized before the reply): fewer values to keep
		 * across the helper calls, a stack 6.1 accepts. */
		e->read.stream = bpf_ntohs(d->stream);
		e->read.ssn = bpf_ntohs(d->ssn);
		if (bpf_ringbuf_output(evq, e, sizeof(*e), 0))
			xr_count(XR_STAT_EVT_LOST);
		xr_count(XR_STAT_MSG_DONE);
		flags |= XR_DF_AR; /* acknowledge at once */
	} else if (cv == XR_RXW_NEW) {
		__u32 pkt_off = h->l4_off + sizeof(struct udphdr) + sizeof(*d);

		if (xr_place_global(ctx, c->domain, pos, pkt_off, plen)) {
			/* Cannot happen for a region inside the domain's memory
			 * (checked above); counted so it would not go unseen. */
			xr_count(XR_STAT_DROP_NO_MEM);
		} else {
			xr_count_n(XR_STAT_RX_BYTES, plen);
			done = xr_msg_account(conn_id, msg_id, msg_len, plen);
		}
	} else if (!nak) {
		xr_count(XR_STAT_RX_DUP);
	}

	if (done) {
		/* Every completed message is reported, so the library can deliver
		 * the completions it does report in stream order. */
		xr_count(XR_STAT_MSG_DONE);
		{
			__builtin_memset(e, 0, sizeof(*e));
			e->type = XR_EVT_RECV;
			e->path = path;
			e->conn = conn_id;
			e->rx_ns = now;
			e->recv.msg_id = msg_id;
			e->recv.msg_len = msg_len;
			e->recv.imm = bpf_ntohl(d->imm);
			e->recv.stream = bpf_ntohs(d->stream);
			e->recv.opcode = opcode;
			e->recv.raddr_end = raddr + (msg_len - msg_off);
			e->recv.rkey = rkey;
			e->recv.ssn = bpf_ntohs(d->ssn);
			if (bpf_ringbuf_output(evq, e, sizeof(*e), 0))
				xr_count(XR_STAT_EVT_LOST);
		}
	}

	gap = (ai->sack[0] | ai->sack[1] | ai->sack[2] | ai->sack[3]) != 0;
	if (!((flags & XR_DF_AR) || pv == XR_RXW_OLD || cv == XR_RXW_OLD || gap ||
	      ce || nak || done))
		return XDP_DROP; /* consumed; a later ACK covers it */

	aflags = (ce ? XR_AF_ECE : 0) | (!nak && cv == XR_RXW_OLD ? XR_AF_DUP : 0);
	return xr_send_ack(ctx, v6, ai, peer_conn, tx_token, aflags, nak, path,
			   psn, ts, csn, xr_rate_hint(cfg, now));
}

static __noinline int xr_rx_ack(struct xdp_md *ctx, struct xr_hdrs *h,
				const struct xr_cfg *cfg)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_ack_hdr *a = (void *)(h->udp + 1);
	struct xr_evt e = {};
	__u32 udp_len, conn_id, why = 0, i;
	struct xr_conn *c;
	void *evq;

	if ((void *)(a + 1) > end)
		return xr_drop(XR_STAT_DROP_TRUNC);
	udp_len = xr_udp_len(ctx, h, end, sizeof(*a));
	if (!udp_len)
		return xr_drop(XR_STAT_DROP_TRUNC);
	conn_id = bpf_ntohl(a->dst_conn);
	c = xr_auth(h, end, conn_id, a->token, 1, &why);
	if (why == XR_STAT_DROP_NO_CONN)
		return xr_pass();
	if (!c)
		return xr_drop(why);
	if (cfg->flags & XR_CFG_VERIFY_CSUM) {
		int ok = xr_csum_ok_global(ctx, udp_len);

		if (ok < 0)
			ok = xr_csum_ok_frags_global(ctx, udp_len);
		if (!ok)
			return xr_drop(XR_STAT_DROP_CSUM);
	}
	evq = bpf_map_lookup_elem(&xr_evq, &c->domain);
	if (!evq)
		return xr_drop(XR_STAT_DROP_NO_MEM);

	e.type = XR_HDR_TYPE(a->ver_type) == XR_T_NAK ? XR_EVT_NAK : XR_EVT_ACK;
	e.path = a->path;
	e.flags = a->flags;
	e.conn = conn_id;
	e.rx_ns = bpf_ktime_get_ns();
	e.ack.cack = bpf_ntohl(a->cack);
	e.ack.ack_psn = bpf_ntohl(a->ack_psn);
	e.ack.ts_echo = bpf_ntohl(a->ts_echo);
	e.ack.rate_hint = bpf_ntohl(a->rate_hint);
#pragma clang loop unroll(full)
	for (i = 0; i < XR_SACK_WORDS; i++)
		e.ack.sack[i] = bpf_be64_to_cpu(a->sack[i]);
	e.ack.ce_pkts = bpf_ntohl(a->ce_pkts);
	e.ack.rx_pkts = bpf_ntohl(a->rx_pkts);
	e.ack.csn_cum = bpf_ntohl(a->csn_cum);
	e.ack.nak_csn = bpf_ntohl(a->nak_csn);
	e.ack.reason = a->reason;
	if (bpf_ringbuf_output(evq, &e, sizeof(e), 0))
		return xr_drop(XR_STAT_DROP_ACK_LOST);
	xr_count(e.type == XR_EVT_NAK ? XR_STAT_RX_NAK : XR_STAT_RX_ACK);
	return XDP_DROP;
}

static __noinline int xr_rx_probe(struct xdp_md *ctx, struct xr_hdrs *h,
				  const struct xr_cfg *cfg, int reply)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_probe_hdr *pr = (void *)(h->udp + 1);
	__u32 udp_len, conn_id, why = 0, seq, peer_conn;
	struct xr_hdrs rh;
	struct xr_conn *c;
	__u64 tx_token;
	__be32 ts;
	__u8 path;

	if ((void *)(pr + 1) > end)
		return xr_drop(XR_STAT_DROP_TRUNC);
	udp_len = xr_udp_len(ctx, h, end, sizeof(*pr));
	if (!udp_len)
		return xr_drop(XR_STAT_DROP_TRUNC);
	conn_id = bpf_ntohl(pr->dst_conn);
	c = xr_auth(h, end, conn_id, pr->token, reply, &why);
	if (reply && why == XR_STAT_DROP_NO_CONN)
		return xr_pass();
	if (!c)
		return xr_drop(why);
	if (cfg->flags & XR_CFG_VERIFY_CSUM) {
		int ok = xr_csum_ok_global(ctx, udp_len);

		if (ok < 0)
			ok = xr_csum_ok_frags_global(ctx, udp_len);
		if (!ok)
			return xr_drop(XR_STAT_DROP_CSUM);
	}
	seq = bpf_ntohl(pr->seq);
	ts = pr->ts;
	path = pr->path;

	if (reply) {
		struct xr_evt e = {};
		void *evq = bpf_map_lookup_elem(&xr_evq, &c->domain);

		if (!evq)
			return xr_drop(XR_STAT_DROP_NO_MEM);
		e.type = XR_EVT_PROBE_REPLY;
		e.path = path;
		e.conn = conn_id;
		e.rx_ns = bpf_ktime_get_ns();
		e.probe.seq = seq;
		e.probe.ts = bpf_ntohl(ts);
		e.probe.rate_hint = bpf_ntohl(pr->rate_hint);
		if (bpf_ringbuf_output(evq, &e, sizeof(e), 0))
			return xr_drop(XR_STAT_DROP_ACK_LOST);
		xr_count(XR_STAT_RX_ACK);
		return XDP_DROP;
	}

	if (!xr_domain_alive(ctx, h, end, c->domain, bpf_ktime_get_ns()))
		return xr_drop(XR_STAT_DROP_DEAD);
	peer_conn = c->peer_conn;
	tx_token = c->tx_token;
	pr = xr_reply_begin(ctx, &rh, h->v6, sizeof(*pr));
	if (!pr)
		return xr_drop(XR_STAT_TX_ACK_FAIL);
	pr->ver_type = XR_VER_TYPE(XR_T_PROBE_REPLY);
	pr->flags = 0;
	pr->rsvd0 = 0;
	pr->path = path;
	pr->dst_conn = bpf_htonl(peer_conn);
	pr->token = bpf_cpu_to_be64(tx_token);
	pr->seq = bpf_htonl(seq);
	pr->ts = ts;
	pr->rate_hint = bpf_htonl(xr_rate_hint(cfg, bpf_ktime_get_ns()));
	pr->rsvd1 = 0;
	xr_reply_finish(ctx, &rh, sizeof(*pr));
	xr_count(XR_STAT_PROBE);
	return XDP_TX;
}

/* A BIND half (wire.h) for one of our connections that is not connected
 * yet (INIT) or was bound by the same exchange (RTS: the peer resends
 * until it hears from us): to the owning domain's event ring, with the
 * packet's source, which is what the library trusts.  The message itself
 * is only checked for its length and op here. */
static __noinline int xr_rx_bind(struct xdp_md *ctx, struct xr_hdrs *h,
				 const struct xr_cfg *cfg)
{
	void *end = (void *)(long)ctx->data_end;
	struct xr_ctrl_msg *m = (void *)(h->udp + 1);
	struct xr_evt_bind *e;
	struct xr_conn *c;
	__u32 udp_len, conn_id, domain;
	__u64 now;
	void *evq;

	/* Other control messages never come to the data port. */
	if ((void *)&m->op + 1 > end || m->op != XR_CTRL_BIND)
		return xr_drop(XR_STAT_DROP_VERSION);
	udp_len = xr_udp_len(ctx, h, end, sizeof(*m));
	if (udp_len != sizeof(struct udphdr) + sizeof(*m) || (void *)(m + 1) > end)
		return xr_drop(XR_STAT_DROP_BIND);
	conn_id = bpf_ntohl(m->dst_conn);
	c = bpf_map_lookup_elem(&xr_conns, &conn_id);
	if (!c)
		return xr_drop(XR_STAT_DROP_NO_CONN);
	if (c->state != XR_CONN_INIT && c->state != XR_CONN_RTS)
		return xr_drop(XR_STAT_DROP_CONN_STATE);
	domain = c->domain;
	if (cfg->flags & XR_CFG_VERIFY_CSUM && xr_csum_ok_global(ctx, udp_len) != 1)
		return xr_drop(XR_STAT_DROP_CSUM);
	now = bpf_ktime_get_ns();
	if (!xr_domain_alive(ctx, h, end, domain, now))
		return xr_drop(XR_STAT_DROP_DEAD);
	evq = bpf_map_lookup_elem(&xr_evq, &domain);
	if (!evq)
		return xr_drop(XR_STAT_DROP_NO_MEM);
	e = bpf_ringbuf_reserve(evq, sizeof(*e), 0);
	if (!e)
		return xr_drop(XR_STAT_DROP_EVQ_FULL); /* the peer resends it */
	__builtin_memset(e, 0, sizeof(*e) - sizeof(e->msg));
	e->type = XR_EVT_BIND;
	e->conn = conn_id;
	e->rx_ns = now;
	e->src_port = bpf_ntohs(h->udp->source);
	if (!h->v6) {
		struct iphdr *ip = xr_ip4(h, end);

		e->src_addr[10] = 0xff;
		e->src_addr[11] = 0xff;
		if (ip)
			__builtin_memcpy(e->src_addr + 12, &ip->saddr, 4);
	} else {
		struct ipv6hdr *ip6 = xr_ip6(h, end);

		if (ip6)
			__builtin_memcpy(e->src_addr, &ip6->saddr, 16);
	}
	if (bpf_xdp_load_bytes(ctx, h->l4_off + sizeof(struct udphdr), e->msg,
			       sizeof(e->msg))) {
		bpf_ringbuf_discard(e, 0);
		return xr_drop(XR_STAT_DROP_TRUNC);
	}
	bpf_ringbuf_submit(e, 0);
	xr_count(XR_STAT_RX_BIND);
	return XDP_DROP;
}

/* A test run of this program by a library that transmits with it
 * (txrun.h): the trigger names a ring and carries its secret; the next
 * descriptor becomes the frame, sent back out of the interface. */
static __noinline int xr_tx_build(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xr_txr_trigger *t = data;
	__u32 ctl_idx = XR_TXR_CTL, slot;
	struct xr_txq_key key;
	struct xr_txr_desc *d;
	struct xr_txr_ctl *c;
	void *ring, *mem;
	__u64 tail;

	if ((void *)(t + 1) > end || t->magic != bpf_htonl(XR_TXR_MAGIC))
		return xr_drop(XR_STAT_DROP_TXR);
	key.domain = bpf_ntohl(t->domain);
	key.plane = bpf_ntohl(t->plane);
	ring = bpf_map_lookup_elem(&xr_txq, &key);
	if (!ring)
		return xr_drop(XR_STAT_DROP_TXR);
	c = bpf_map_lookup_elem(ring, &ctl_idx);
	if (!c || c->secret != t->secret)
		return xr_drop(XR_STAT_DROP_TXR);
	mem = bpf_map_lookup_elem(&xr_mem, &key.domain);
	if (!mem)
		return xr_drop(XR_STAT_DROP_TXR);
	tail = c->tail;
	if (tail == *(volatile __u64 *)&c->head) {
		c->empty++;
		return XDP_DROP;
	}
	c->tail = tail + 1;
	slot = (__u32)tail & (XR_TXR_RING - 1);
	d = bpf_map_lookup_elem(ring, &slot);
	if (!d || xr_txb_build(ctx, d, mem)) {
		c->bad++;
		return xr_drop(XR_STAT_DROP_TXR);
	}
	c->sent++;
	xr_count(XR_STAT_TX_BUILT);
	return XDP_TX;
}

/* xdp.frags: jumbo frames (MTU 9000 on veth, multi-buffer drivers) arrive
 * as a linear part holding the headers plus fragments; placement and
 * checksums read across fragments, replies drop them. */
SEC("xdp.frags")
int xroce_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct xr_hdrs h;
	struct xr_cfg *cfg;
	__u32 zero = 0;
	__u8 *x;

	if (xr_parse(data, end, &h) != XR_PARSE_OK || !h.udp) {
		struct ethhdr *eth = data;

		if ((void *)(eth + 1) <= end &&
		    eth->h_proto == bpf_htons(XR_TXR_ETHERTYPE))
			return xr_tx_build(ctx);
		goto pass;
	}
	cfg = bpf_map_lookup_elem(&xr_cfg, &zero);
	if (!cfg || !cfg->udp_port)
		goto pass;
	x = (void *)(h.udp + 1);
	if (h.udp->dest == bpf_htons(cfg->udp_port)) {
		/* To our data port: data and probes. */
		if ((void *)(x + 1) > end)
			return xr_drop(XR_STAT_DROP_TRUNC);
		if (XR_HDR_VERSION(*x) != XR_VERSION)
			return xr_drop(XR_STAT_DROP_VERSION);
		switch (XR_HDR_TYPE(*x)) {
		case XR_T_DATA:
			return xr_rx_data(ctx, &h, cfg);
		case XR_T_PROBE:
			return xr_rx_probe(ctx, &h, cfg, 0);
		case XR_T_CTRL:
			return xr_rx_bind(ctx, &h, cfg);
		default:
			return xr_drop(XR_STAT_DROP_VERSION);
		}
	}
	if (h.udp->source == bpf_htons(cfg->udp_port)) {
		/* From a peer's data port to one of our entropy ports: replies.
		 * Only what looks like an xroce reply is examined; anything
		 * else, and replies for no connection of ours, pass untouched
		 * (another application may use that port pair). */
		if ((void *)(x + 1) > end || XR_HDR_VERSION(*x) != XR_VERSION)
			goto pass;
		switch (XR_HDR_TYPE(*x)) {
		case XR_T_ACK:
		case XR_T_NAK:
			return xr_rx_ack(ctx, &h, cfg);
		case XR_T_PROBE_REPLY:
			return xr_rx_probe(ctx, &h, cfg, 1);
		default:
			goto pass;
		}
	}
pass:
	xr_count(XR_STAT_PASS);
	return XDP_PASS;
}
