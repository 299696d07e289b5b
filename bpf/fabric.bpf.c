/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Fabric emulator: the switch ports of xroce's test bed.  Every impairment
 * is made in BPF, so the test bed needs no netem or AQM qdisc from the
 * kernel it runs on.  Not part of the xroce datapath.
 *
 *   fabric_xdp   XDP on a switch-side veth.  Wire mode (port.out_ifindex set):
 *                impair, then bpf_redirect to out_ifindex, a patch cable that
 *                bypasses the kernel.  Routed mode: impair, then XDP_PASS so
 *                the switch namespace's kernel forwards.
 *   fabric_tc    the same impairments at TC egress (routed mode, in front of
 *                the port's tbf/htb rate limit).
 *   fabric_slow  TC ingress of a wire-mode port: forwards the frames that
 *                fabric_xdp sent down the slow lane to reorder them.  The
 *                slow lane is a cpumap redirect to the partner CPU (cpu ^ 1):
 *                a kthread wakeup there, then skb allocation and the stack's
 *                receive path up to this hook.  That takes from ~0.1 ms to
 *                several ms on a 2-vCPU VM against microseconds for the XDP
 *                redirect, so later frames overtake it; the delay is random,
 *                not configurable.  Without a partner CPU the slow lane is
 *                XDP_PASS on the same CPU, which only reorders within one
 *                NAPI batch.
 *   fabric_pass  XDP_PASS, for host veths: a veth only receives redirected
 *                frames when it has an XDP program.
 *
 * Only UDP and TCP are impaired.  ARP, ICMP (so IPv6 neighbour discovery and
 * ping), IP fragments and unparsable frames always pass untouched.  Order per
 * packet: blackhole, random loss, Gilbert-Elliott loss, virtual queue + ECN,
 * corruption, reordering.  Map layouts: bpf/lib/fabric_maps.h.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include "lib/parse.h"
#include "lib/csum.h"
#include "lib/fabric_maps.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FAB_MAX_PORTS);
	__type(key, struct fab_key);
	__type(value, struct fab_port);
} fab_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FAB_MAX_PORTS);
	__type(key, struct fab_key);
	__type(value, struct fab_state);
} fab_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, FAB_MAX_PORTS);
	__type(key, struct fab_key);
	__type(value, struct fab_stats);
} fab_stats SEC(".maps");

/* The slow lane's CPUs; userspace sizes it and fills in every CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 1); /* set to the number of CPUs before load */
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
} fab_cpus SEC(".maps");

enum fab_verdict {
	FAB_FWD = 0,  /* pass on */
	FAB_DROP = 1, /* impaired away */
	FAB_SLOW = 2, /* pass on through the slow lane (reordering) */
};

/* What fab_impair decided beyond the verdict. */
struct fab_action {
	__u32 corrupt_off; /* != 0: flip bits of the byte at this frame offset */
	__u8 corrupt_mask;
};

#define FAB_VQ_MAX_IDLE_NS 1000000000ull /* a queue idle 1 s is empty */
/* The virtual queue stops growing at 4x the threshold + 64 KiB: beyond it
 * more backlog changes no decision now, and an unbounded one would keep
 * marking long after a burst (the real qdisc has a limit too). */
#define FAB_VQ_CAP_BITS(thresh) (((__u64)(thresh) * 4 + 65536) * 8)
#define FAB_UDP_CORRUPT_SKIP 64         /* keep xroce's headers intact */

/* True with probability ppm / 10^6. */
static __always_inline int fab_chance(__u32 ppm)
{
	if (!ppm)
		return 0;
	return (((__u64)bpf_get_prandom_u32() * FAB_PPM) >> 32) < ppm;
}

/* Uniform in [0, n). */
static __always_inline __u32 fab_below(__u32 n)
{
	return ((__u64)bpf_get_prandom_u32() * n) >> 32;
}

/* The entry for key in map, created zeroed on first use so ports work even
 * when userspace only wrote the config. */
static __always_inline void *fab_lookup_or_init(void *map, struct fab_key *key,
						 void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(map, key);
}

static __always_inline struct fab_stats *fab_stats_get(struct fab_key *key)
{
	struct fab_stats zero = {};

	return fab_lookup_or_init(&fab_stats, key, &zero);
}

static __always_inline struct fab_state *fab_state_get(struct fab_key *key)
{
	struct fab_state zero = {};

	return fab_lookup_or_init(&fab_state, key, &zero);
}

/* Gilbert-Elliott: step the two-state chain once per packet, then lose the
 * packet with the new state's loss probability.  A racy read-modify-write of
 * one word between CPUs only perturbs the chain, so no lock. */
static __always_inline int fab_ge_lose(const struct fab_port *cfg,
				       struct fab_state *s)
{
	__u32 bad = s->ge_bad;

	if (bad ? fab_chance(cfg->ge_bg_ppm) : fab_chance(cfg->ge_gb_ppm))
		bad = !bad;
	s->ge_bad = bad;
	return fab_chance(bad ? cfg->ge_loss_bad_ppm : cfg->ge_loss_good_ppm);
}

/* Rate-based virtual queue (the qdisc's backlog is invisible to BPF): it
 * drains at ecn_rate_mbps since the previous packet and grows by this one.
 * Returns the backlog in bits after the packet was added. */
static __always_inline __u64 fab_vq_add(const struct fab_port *cfg,
					struct fab_state *s, __u32 len)
{
	__u64 now = bpf_ktime_get_ns(), elapsed, drained, vq;

	bpf_spin_lock(&s->lock);
	/* Another CPU may have stamped a later time: no drain then. */
	elapsed = now > s->vq_last_ns ? now - s->vq_last_ns : 0;
	if (elapsed > FAB_VQ_MAX_IDLE_NS)
		elapsed = FAB_VQ_MAX_IDLE_NS;
	drained = elapsed * cfg->ecn_rate_mbps / 1000; /* Mbit/s * ns = mbit */
	vq = s->vq_bits > drained ? s->vq_bits - drained : 0;
	vq += (__u64)len * 8;
	if (vq > FAB_VQ_CAP_BITS(cfg->ecn_thresh_bytes))
		vq = FAB_VQ_CAP_BITS(cfg->ecn_thresh_bytes);
	s->vq_bits = vq;
	if (now > s->vq_last_ns)
		s->vq_last_ns = now;
	bpf_spin_unlock(&s->lock);
	return vq;
}

/* ECT(0)/ECT(1) -> CE.  IPv4 gets its header checksum fixed; IPv6 has none. */
static __always_inline void fab_mark_ce(struct xr_hdrs *h)
{
	if (h->ip4) {
		__u16 *word = (__u16 *)h->ip4; /* version/ihl + tos */
		__u16 old = *word;

		h->ip4->tos |= XR_ECN_CE;
		xr_csum_replace2(&h->ip4->check, old, *word);
	} else if (h->ip6) {
		*(__be16 *)h->ip6 |= bpf_htons(XR_ECN_CE << 4);
	}
}

/* Pick the payload byte to corrupt: past the first 64 bytes of UDP payload
 * when the datagram is long enough, anywhere in it otherwise. */
static __always_inline void fab_pick_corruption(struct xr_hdrs *h, __u32 len,
						struct fab_action *act)
{
	__u32 off = h->l4_off + sizeof(struct udphdr);
	__u32 plen = bpf_ntohs(h->udp->len);

	if (plen <= sizeof(struct udphdr) || off >= len)
		return;
	plen -= sizeof(struct udphdr);
	if (plen > len - off) /* trust the frame, not the header */
		plen = len - off;
	if (plen > FAB_UDP_CORRUPT_SKIP) {
		off += FAB_UDP_CORRUPT_SKIP;
		plen -= FAB_UDP_CORRUPT_SKIP;
	}
	act->corrupt_off = off + fab_below(plen);
	act->corrupt_mask = bpf_get_prandom_u32() | 1; /* at least one bit */
}

/* Is the packet (UDP ports sport, dport; is_udp) in the port's blackhole? */
static __always_inline int fab_blackholed(const struct fab_port *cfg,
					  int is_udp, __u16 sport, __u16 dport)
{
	return cfg->bh_mode == FAB_BH_ALL ||
	       (cfg->bh_mode == FAB_BH_SPORT && is_udp && sport == cfg->bh_port) ||
	       (cfg->bh_mode == FAB_BH_DPORT && is_udp && dport == cfg->bh_port);
}

/* Gilbert-Elliott loss and the virtual queue, the stateful impairments:
 * 1 when the packet is lost, else 0 (CE-marked when the queue is above
 * its threshold). */
static __always_inline int fab_stateful(const struct fab_port *cfg,
					struct fab_key *key,
					struct fab_stats *st,
					struct xr_hdrs *h, __u32 len)
{
	struct fab_state *s = fab_state_get(key);

	if (s && cfg->ge_on && fab_ge_lose(cfg, s)) {
		st->drop_ge++;
		return 1;
	}
	/* Every surviving packet occupies the queue; only ECT ones can be
	 * marked (non-ECT would be dropped by a real AQM, but this queue
	 * never overflows: the real qdisc does that). */
	if (s && cfg->ecn_rate_mbps &&
	    fab_vq_add(cfg, s, len) > (__u64)cfg->ecn_thresh_bytes * 8 &&
	    (h->ecn == XR_ECN_ECT0 || h->ecn == XR_ECN_ECT1)) {
		fab_mark_ce(h);
		st->ce_marked++;
	}
	return 0;
}

/* The impairment pipeline shared by XDP and TC.  Direct packet writes (CE
 * mark) happen here; the corruption is returned in act because XDP and TC
 * store bytes with different helpers. */
static __always_inline enum fab_verdict
fab_impair(const struct fab_port *cfg, struct fab_key *key,
	   struct fab_stats *st, void *data, void *data_end, __u32 len,
	   int can_reorder, struct fab_action *act)
{
	struct xr_hdrs h;
	__u16 sport = 0, dport = 0;

	if (xr_parse(data, data_end, &h) != XR_PARSE_OK)
		return FAB_FWD;
	if (h.l4proto != IPPROTO_UDP && h.l4proto != IPPROTO_TCP)
		return FAB_FWD;
	if (h.udp) {
		sport = bpf_ntohs(h.udp->source);
		dport = bpf_ntohs(h.udp->dest);
	}

	if (fab_blackholed(cfg, h.udp != NULL, sport, dport)) {
		st->blackholed++;
		return FAB_DROP;
	}
	if (fab_chance(cfg->loss_ppm)) {
		st->drop_loss++;
		return FAB_DROP;
	}
	if ((cfg->ge_on || cfg->ecn_rate_mbps) &&
	    fab_stateful(cfg, key, st, &h, len))
		return FAB_DROP;
	if (cfg->ecn_sport && h.udp && sport == cfg->ecn_sport &&
	    (h.ecn == XR_ECN_ECT0 || h.ecn == XR_ECN_ECT1)) {
		fab_mark_ce(&h);
		st->ce_marked++;
	}

	if (h.udp && fab_chance(cfg->corrupt_ppm)) {
		fab_pick_corruption(&h, len, act);
		if (act->corrupt_off)
			st->corrupted++;
	}
	if (can_reorder && fab_chance(cfg->reorder_ppm)) {
		st->reordered++;
		return FAB_SLOW;
	}
	return FAB_FWD;
}

/* xdp.frags: jumbo frames (MTU 9000 on veth) arrive in fragments; the
 * impairments look at the linear headers, count the whole frame, and
 * corrupt through bpf_xdp_store_bytes, which reaches the fragments. */
SEC("xdp.frags")
int fabric_xdp(struct xdp_md *ctx)
{
	struct fab_key key = { .ifindex = ctx->ingress_ifindex,
			       .dir = FAB_DIR_INGRESS };
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct fab_action act = {};
	const struct fab_port *cfg;
	struct fab_stats *st;
	enum fab_verdict v;
	__u8 byte;

	cfg = bpf_map_lookup_elem(&fab_ports, &key);
	if (!cfg)
		return XDP_PASS;
	st = fab_stats_get(&key);
	if (!st)
		return XDP_PASS;
	st->rx++;

	/* The slow lane only exists between two wire ports. */
	v = fab_impair(cfg, &key, st, data, data_end, bpf_xdp_get_buff_len(ctx),
		       cfg->out_ifindex != 0, &act);
	if (v == FAB_DROP)
		return XDP_DROP;
	if (act.corrupt_off &&
	    !bpf_xdp_load_bytes(ctx, act.corrupt_off, &byte, 1)) {
		byte ^= act.corrupt_mask;
		bpf_xdp_store_bytes(ctx, act.corrupt_off, &byte, 1);
	}
	st->fwd++;
	if (v == FAB_SLOW)
		return bpf_redirect_map(&fab_cpus, bpf_get_smp_processor_id() ^ 1,
					XDP_PASS);
	if (!cfg->out_ifindex)
		return XDP_PASS;
	return bpf_redirect(cfg->out_ifindex, 0);
}

SEC("tc")
int fabric_tc(struct __sk_buff *skb)
{
	struct fab_key key = { .ifindex = skb->ifindex,
			       .dir = FAB_DIR_EGRESS };
	struct fab_action act = {};
	const struct fab_port *cfg;
	struct fab_stats *st;
	__u8 byte;

	cfg = bpf_map_lookup_elem(&fab_ports, &key);
	if (!cfg)
		return TC_ACT_OK;
	st = fab_stats_get(&key);
	if (!st)
		return TC_ACT_OK;
	st->rx++;

	/* Headers must be in the linear area for direct access. */
	if (skb->data + ETH_HLEN + sizeof(struct ipv6hdr) + sizeof(struct udphdr) >
	    skb->data_end)
		bpf_skb_pull_data(skb, ETH_HLEN + sizeof(struct ipv6hdr) +
					       sizeof(struct udphdr));
	if (fab_impair(cfg, &key, st, (void *)(long)skb->data,
		       (void *)(long)skb->data_end, skb->len, 0, &act) == FAB_DROP)
		return TC_ACT_SHOT;
	/* Flags 0: the UDP checksum stays wrong on purpose. */
	if (act.corrupt_off &&
	    !bpf_skb_load_bytes(skb, act.corrupt_off, &byte, 1)) {
		byte ^= act.corrupt_mask;
		bpf_skb_store_bytes(skb, act.corrupt_off, &byte, 1, 0);
	}
	st->fwd++;
	return TC_ACT_OK;
}

SEC("tc")
int fabric_slow(struct __sk_buff *skb)
{
	struct fab_key key = { .ifindex = skb->ifindex,
			       .dir = FAB_DIR_INGRESS };
	const struct fab_port *cfg = bpf_map_lookup_elem(&fab_ports, &key);

	/* Impairments were applied (and counted) by fabric_xdp already. */
	if (cfg && cfg->out_ifindex)
		return bpf_redirect(cfg->out_ifindex, 0);
	return TC_ACT_OK;
}

SEC("xdp.frags")
int fabric_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
