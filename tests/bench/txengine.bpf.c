// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Transmit-engine benchmark, BPF side (see txengine.h for the model).
 *
 *   txe_fixed  (b) sends the frame it was given (data_in) as it is.
 *   txe_build  (c) builds each frame from a descriptor, as libxroce's
 *              send_packet() + xr_build_frame_v() would, and sends it.
 *   txe_rx     the receiver on the veth peer: counts, verifies the IPv4
 *              and UDP checksums of a sample, drops (or passes, so that an
 *              AF_PACKET socket can capture frames for a byte-exact check).
 *
 * Benchmark code: built by tests/bench/build_txengine.sh, not by the
 * project Makefile.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lib/udp_csum.h"
#include "txengine.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct txe_page {
	__u8 b[TXE_PAGE_SIZE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TXE_MEM_PAGES);
	__type(key, __u32);
	__type(value, struct txe_page);
} txe_mem SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TXE_RING_SIZE);
	__type(key, __u32);
	__type(value, struct txe_desc);
} txe_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct txe_ctl);
} txe_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TXE_MAX_TMPL);
	__type(key, __u32);
	__type(value, struct txe_tmpl);
} txe_tmpl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct txe_cfg);
} txe_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct txe_rxcfg);
} txe_rxcfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct txe_rxst);
} txe_rxst SEC(".maps");

static __always_inline int txe_send(void)
{
	__u32 k = 0;
	struct txe_cfg *cfg = bpf_map_lookup_elem(&txe_cfg, &k);

	if (cfg && cfg->action == TXE_ACT_REDIRECT)
		return bpf_redirect(cfg->ifindex, 0);
	return XDP_TX;
}

/* (b): the prebuilt frame, unchanged.  The test run reuses its pages, and
 * this program writes nothing, so every frame is the data_in frame. */
SEC("xdp")
int txe_fixed(struct xdp_md *ctx)
{
	return txe_send();
}

/*
 * Helper calls dominate the cost of building a frame (each one is a call
 * and a return through the kernel's return thunk), so the program makes
 * few: headers are written with direct packet stores, the IPv4 checksum and
 * the pseudo header are summed inline, the payload moves in at most two
 * bpf_xdp_store_bytes per page and the UDP checksum takes 512-byte steps.
 */

/*
 * Copy n bytes (in + n <= 4096, n <= 2048) of page, from byte in, into the
 * frame at pkt_off.  bpf_xdp_store_bytes needs a source range the verifier
 * can bound inside the page, hence a constant size: with c the largest
 * power of two <= n, two copies of c bytes, [0, c) and [n - c, n), cover
 * the piece (they overlap when n < 2c; the overlap is written twice with
 * the same bytes).  Each source offset is checked against the page end
 * explicitly, as the verifier wants (see also bpf/lib/place.h, the same
 * problem in the other direction).
 */
#define TXE_COPY2(c)                                                          \
	if (n >= (c)) {                                                       \
		__u32 o1 = in;                                                \
		/* The barriers keep clang from turning the range checks  \
		 * into equality tests, which 6.1's verifier cannot use.  */ \
		asm volatile("" : "+r"(o1));                                  \
		if (o1 > TXE_PAGE_SIZE - (c))                                 \
			return -1;                                            \
		if (bpf_xdp_store_bytes(ctx, pkt_off, page->b + o1, (c)))     \
			return -1;                                            \
		if (n != (c)) {                                               \
			/* Computed and checked right before its use: a    \
			 * bound checked earlier and kept across the call   \
			 * in a stack slot is lost on older verifiers (6.1). */ \
			__u32 o2 = in + n - (c);                              \
			asm volatile("" : "+r"(o2));                          \
			if (o2 > TXE_PAGE_SIZE - (c))                         \
				return -1;                                    \
			if (bpf_xdp_store_bytes(ctx, pkt_off + n - (c),       \
						page->b + o2, (c)))           \
				return -1;                                    \
		}                                                             \
		return 0;                                                     \
	}

static __always_inline int txe_copy_piece(struct xdp_md *ctx, __u32 pkt_off,
					  struct txe_page *page, __u32 in,
					  __u32 n)
{
	if (in >= TXE_PAGE_SIZE || n > 2048 || n > TXE_PAGE_SIZE - in)
		return -1;
	TXE_COPY2(2048)
	TXE_COPY2(1024)
	TXE_COPY2(512)
	TXE_COPY2(256)
	TXE_COPY2(128)
	TXE_COPY2(64)
	TXE_COPY2(32)
	TXE_COPY2(16)
	TXE_COPY2(8)
	TXE_COPY2(4)
	TXE_COPY2(2)
	TXE_COPY2(1)
	return 0; /* n == 0 */
}
#undef TXE_COPY2

/* Copy len bytes (<= TXE_MAX_PAYLOAD, so at most 2 pages) from byte pos of
 * the memory map into the frame at pkt_off. */
static __always_inline int txe_copy_payload(struct xdp_md *ctx, __u64 pos,
					    __u32 pkt_off, __u32 len)
{
	__u32 i;

#pragma clang loop unroll(disable)
	for (i = 0; i < 2; i++) {
		__u32 pg = (__u32)(pos >> TXE_PAGE_SHIFT);
		__u32 in = (__u32)pos & (TXE_PAGE_SIZE - 1);
		__u32 n = TXE_PAGE_SIZE - in;
		struct txe_page *page;

		if (!len)
			break;
		if (n > len)
			n = len;
		page = bpf_map_lookup_elem(&txe_mem, &pg);
		if (!page)
			return -1;
		if (txe_copy_piece(ctx, pkt_off, page, in, n))
			return -1;
		pos += n;
		pkt_off += n;
		len -= n;
	}
	return len ? -1 : 0;
}

/* Ones'-complement sum of len (<= 1536) bytes of the frame at p: 512-byte
 * steps, then power-of-two steps whose offsets derive from len (so the
 * verifier prunes), then 0..3 trailing bytes zero-padded to a word, as
 * bpf_csum_diff would.  Returns 0 if the span leaves the frame. */
#define TXE_SUM_STEP(c)                                                   \
	if (rem & (c)) {                                                  \
		__u8 *q = p + ((base + (rem & ~((c) * 2 - 1))) & 0x7ff);  \
		if ((void *)(q + (c)) > end)                              \
			return 0;                                         \
		sum = xr_csum_add(q, (c), sum);                           \
	}

static __always_inline __u32 txe_csum_span(__u8 *p, void *end, __u32 len, __u32 sum)
{
	__u32 base, rem, i;

	if (len > 1536)
		return 0;
#pragma clang loop unroll(disable)
	for (i = 0; i < 3; i++) {
		__u8 *q;

		if (len < (i + 1) * 512)
			break;
		q = p + ((i * 512) & 0x7ff);
		if ((void *)(q + 512) > end)
			return 0;
		sum = xr_csum_add(q, 512, sum);
	}
	base = len & ~511u;
	rem = len & 511;
	TXE_SUM_STEP(256)
	TXE_SUM_STEP(128)
	TXE_SUM_STEP(64)
	TXE_SUM_STEP(32)
	TXE_SUM_STEP(16)
	TXE_SUM_STEP(8)
	TXE_SUM_STEP(4)
	if (rem & 3) {
		__u8 *q = p + ((base + (rem & ~3u)) & 0x7ff);
		__u8 b[4] = {};

		if ((void *)(q + 3) > end) {
			if ((void *)(q + 1) > end)
				return 0;
			b[0] = q[0];
			if ((rem & 3) > 1) {
				if ((void *)(q + 2) > end)
					return 0;
				b[1] = q[1];
			}
		} else {
			b[0] = q[0];
			b[1] = (rem & 3) > 1 ? q[1] : 0;
			b[2] = (rem & 3) > 2 ? q[2] : 0;
		}
		sum = xr_csum_add(b, 4, sum);
	}
	return sum;
}
#undef TXE_SUM_STEP

/* 16-bit words of 8 bytes, summed in memory order (like csum_partial). */
static __always_inline __u64 txe_sum64(__u64 w)
{
	return (w & 0xffff) + ((w >> 16) & 0xffff) + ((w >> 32) & 0xffff) + (w >> 48);
}

/* (c): take one descriptor and turn it into a frame. */
SEC("xdp")
int txe_build(struct xdp_md *ctx)
{
	__u32 k = 0, slot, tmpl_idx, len, udp_len;
	struct txe_ctl *c = bpf_map_lookup_elem(&txe_ctl, &k);
	struct txe_desc *d;
	struct txe_tmpl *t;
	void *data, *end;
	__u64 tail, pos, s;
	__u32 sum;
	__u16 check;
	int delta;

	if (!c)
		return XDP_ABORTED;
	tail = c->tail;
	if (tail == *(volatile __u64 *)&c->head) {
		c->empty++;
		return XDP_DROP;
	}
	c->tail = tail + 1;
	slot = (__u32)tail & (TXE_RING_SIZE - 1);
	d = bpf_map_lookup_elem(&txe_ring, &slot);
	if (!d)
		return XDP_ABORTED;
	/* The ring is shared with userspace: read each field once. */
	len = *(volatile __u32 *)&d->len;
	pos = *(volatile __u64 *)&d->mem_off;
	tmpl_idx = *(volatile __u16 *)&d->tmpl;
	t = bpf_map_lookup_elem(&txe_tmpl, &tmpl_idx);
	if (!t || len > TXE_MAX_PAYLOAD)
		goto bad;

	/* Size the frame: the test run resets it to data_in's length. */
	delta = (int)(TXE_HDRS_LEN + len) - (int)(ctx->data_end - ctx->data);
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		goto bad;
	if (txe_copy_payload(ctx, pos, TXE_HDRS_LEN, len))
		goto bad;

	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + TXE_HDRS_LEN > end)
		goto bad;
	udp_len = 8 + sizeof(struct xr_data_hdr) + len;
	{
		/* Template: 40 bytes as words, then the UDP checksum's 2 (set
		 * below); the xroce header: 64 bytes as words. */
		__u64 *dst = data, *src = (__u64 *)t->hdr;
		__u64 *hd = data + TXE_TMPL_LEN, *hs = (__u64 *)&d->hdr;
		__u8 *ip = data + TXE_L3_OFF;
		__u8 *udp = data + TXE_L4_OFF;

#pragma unroll
		for (int i = 0; i < 5; i++)
			dst[i] = src[i];
#pragma unroll
		for (int i = 0; i < 8; i++)
			hd[i] = hs[i];
		*(__be16 *)(ip + 2) = bpf_htons((__u16)(20 + udp_len));
		*(__u16 *)(ip + 10) = 0;
		s = txe_sum64(*(__u64 *)ip) + txe_sum64(*(__u64 *)(ip + 8)) +
		    txe_sum64(*(__u32 *)(ip + 16));
		*(__u16 *)(ip + 10) = ~xr_csum_fold(s);
		*(__be16 *)(udp + 4) = bpf_htons((__u16)udp_len);
		*(__u16 *)(udp + 6) = 0;
		/* Pseudo header: addresses, protocol, UDP length. */
		s = txe_sum64(*(__u64 *)(ip + 12)) + bpf_htons(IPPROTO_UDP) +
		    bpf_htons((__u16)udp_len);
		sum = txe_csum_span(udp, end, udp_len, xr_csum_fold(s));
		check = ~xr_csum_fold(sum);
		*(__u16 *)(udp + 6) = check ? check : 0xffff;
	}
	return txe_send();
bad:
	c->bad++;
	return XDP_DROP;
}

/* Receiver: verify one sampled frame's IPv4 and UDP checksums. */
static __always_inline void txe_verify(struct xdp_md *ctx, struct txe_rxst *st)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + TXE_L3_OFF;
	struct udphdr *udp = data + TXE_L4_OFF;
	__u32 sum;
	__u16 udp_len;

	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
	    udp->dest != bpf_htons(XR_DEFAULT_UDP_PORT)) {
		st->other++;
		return;
	}
	st->checked++;
	if (xr_csum_fold(xr_csum_add(ip, sizeof(*ip), 0)) != 0xffff)
		st->bad_ip++;
	udp_len = bpf_ntohs(udp->len);
	if (udp_len < sizeof(*udp) || (void *)udp + udp_len > end ||
	    bpf_ntohs(ip->tot_len) != sizeof(*ip) + udp_len || udp->check == 0) {
		st->bad_udp++;
		return;
	}
	{
		struct xr_pseudo4 ph = {
			.saddr = ip->saddr,
			.daddr = ip->daddr,
			.proto = IPPROTO_UDP,
			.len = udp->len,
		};

		sum = xr_csum_add(&ph, sizeof(ph), 0);
	}
	sum = xr_csum_span((__u8 *)udp, end, udp_len, sum);
	if (xr_csum_fold(sum) != 0xffff)
		st->bad_udp++;
}

SEC("xdp")
int txe_rx(struct xdp_md *ctx)
{
	__u32 k = 0;
	struct txe_rxst *st = bpf_map_lookup_elem(&txe_rxst, &k);
	struct txe_rxcfg *cfg = bpf_map_lookup_elem(&txe_rxcfg, &k);

	if (!st || !cfg)
		return XDP_ABORTED;
	if (cfg->sample_mask != 0xffffffff && !(st->pkts & cfg->sample_mask))
		txe_verify(ctx, st);
	st->pkts++;
	st->bytes += ctx->data_end - ctx->data;
	return cfg->pass ? XDP_PASS : XDP_DROP;
}
