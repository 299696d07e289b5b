// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpf_txbuild: the XDP program's transmit builder (the test-run engine,
 * include/contract/txring.h) on crafted triggers, through
 * bpf_prog_test_run_opts.  A ring and a memory map are set up as libxroce
 * sets them up; each row writes a descriptor, runs the program on a trigger
 * and checks the verdict, the output frame byte for byte against what
 * libxroce's own builder (user/pktbuild.c) makes of the same header and
 * payload, and the ring's and the program's counters.  Hostile rows: wrong
 * secret, magic, unknown ring, and descriptors whose sizes or offsets leave
 * the descriptor, a page or the memory map; none may send anything.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <endian.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "contract/txring.h"
#include "pktbuild.h"
#include "world.h"

#define DOM 7u
#define PAGES 8u
#define SECRET 0x0123456789abcdefull

/* The program and domain DOM's memory (tests/bpf/world.h), and the
 * domain's transmit ring on plane 0, as libxroce sets them up. */
struct world {
	struct xw p;
	struct xw_dom dom;
	int ring_fd;
	struct xr_txr_desc *ring;
	struct xr_txr_ctl *ctl;
	size_t ring_len;
};

static struct world W;

static uint8_t mem_pattern(size_t i, unsigned dom)
{
	(void)dom;
	return (uint8_t)(i * 7 + (i >> 12) * 13 + 1);
}

static int setup(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, ro, .map_flags = BPF_F_MMAPABLE);
	struct xr_txq_key key = { DOM, 0 };

	(void)state;
	W.dom.mem_fd = W.dom.evq_fd = W.ring_fd = -1;
	if (xw_load(&W.p, NULL, 0) || xw_dom_mem(&W.p, &W.dom, DOM, PAGES, mem_pattern))
		return -1;
	W.ring_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_ring", 4,
				   sizeof(struct xr_txr_desc), XR_TXR_RING + 1, &ro);
	if (W.ring_fd < 0)
		return -1;
	W.ring_len = ((XR_TXR_RING + 1) * sizeof(struct xr_txr_desc) + 4095) & ~4095ul;
	W.ring = mmap(NULL, W.ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, W.ring_fd, 0);
	if (W.ring == MAP_FAILED)
		return -1;
	W.ctl = (struct xr_txr_ctl *)&W.ring[XR_TXR_CTL];
	W.ctl->secret = SECRET;
	if (bpf_map_update_elem(W.p.txq, &key, &W.ring_fd, BPF_ANY))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	xw_dom_free(&W.p, &W.dom, 0);
	if (W.ring && W.ring != MAP_FAILED)
		munmap(W.ring, W.ring_len);
	if (W.ring_fd >= 0)
		close(W.ring_fd);
	xw_unload(&W.p);
	return 0;
}

static uint64_t stat(uint32_t k)
{
	uint64_t v[XR_STAT_MAX];

	assert_int_equal(xw_stats(&W.p, v), 0);
	return v[k];
}

static void trigger(uint8_t *f, uint32_t magic, uint32_t dom, uint32_t plane,
		    uint64_t secret)
{
	struct xr_txr_trigger t;

	memset(f, 0, XR_TXR_TRIGGER_LEN);
	memset(&t, 0, sizeof(t));
	t.ethertype = htons(XR_TXR_ETHERTYPE);
	t.magic = htonl(magic);
	t.domain = htonl(dom);
	t.plane = htonl(plane);
	t.secret = secret;
	memcpy(f, &t, sizeof(t));
}

/* Run the program on a trigger; returns the verdict, *outn the frame. */
static uint32_t run(const uint8_t *in, uint8_t *out, uint32_t *outn)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = XR_TXR_TRIGGER_LEN, .data_out = out,
		    .data_size_out = 4096, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(W.p.prog_fd, &o), 0);
	*outn = o.data_size_out;
	return o.retval;
}

static void fill_hdr(struct xr_data_hdr *h, uint32_t plen, uint32_t psn)
{
	memset(h, 0, sizeof(*h));
	h->ver_type = XR_VER_TYPE(XR_T_DATA);
	h->opcode = XR_OP_WRITE;
	h->dst_conn = htonl(42);
	h->token = htobe64(0x1122334455667788ull);
	h->psn = htonl(psn);
	h->csn = htonl(psn + 100);
	h->raddr = htobe64(0x7f0000001000ull);
	h->rkey = htonl(0xabcd);
	h->msg_len = htonl(plen);
}

static void tmpl(struct xr_tmpl *t, int v6)
{
	static const uint8_t sm[6] = { 2, 0, 0, 0, 0, 1 }, dm[6] = { 2, 0, 0, 0, 0, 2 };
	uint8_t s4[4] = { 10, 0, 0, 1 }, d4[4] = { 10, 0, 0, 2 };
	uint8_t s6[16] = { 0xfd, [15] = 1 }, d6[16] = { 0xfd, [15] = 2 };

	xr_tmpl_init(t, sm, dm, v6, v6 ? (void *)s6 : s4, v6 ? (void *)d6 : d4,
		     49152, XR_DEFAULT_UDP_PORT, 2);
}

/* One descriptor for the pieces (offsets in the memory map), built as
 * libxroce does; the expected frame next to it.  whole: headers and payload
 * in the descriptor (small frames). */
static size_t post(int v6, const uint64_t *off, const uint32_t *len, int n,
		   int whole, uint8_t *want)
{
	struct xr_txr_desc *d = &W.ring[W.ctl->head & (XR_TXR_RING - 1)];
	struct xr_iov iov[8];
	struct xr_data_hdr h;
	struct xr_tmpl t;
	uint32_t plen = 0;
	int i;

	for (i = 0; i < n; i++) {
		iov[i].base = W.dom.mem + off[i];
		iov[i].len = len[i];
		plen += len[i];
	}
	tmpl(&t, v6);
	fill_hdr(&h, plen, (uint32_t)W.ctl->head);
	memset(d, 0xa5, sizeof(*d));
	if (whole) {
		d->hdr_len = (uint16_t)xr_build_frame_v(d->hdr, &t, &h, sizeof(h), iov, n);
		d->nseg = 0;
		d->plen = 0;
	} else {
		d->hdr_len = (uint16_t)xr_build_hdr_v(d->hdr, &t, &h, sizeof(h), iov, n);
		d->nseg = (uint16_t)n;
		d->plen = plen;
		for (i = 0; i < n; i++) {
			d->seg[i].off = off[i];
			d->seg[i].len = len[i];
		}
	}
	W.ctl->head++;
	return xr_build_frame_v(want, &t, &h, sizeof(h), iov, n);
}

static void expect_frame(int v6, const uint64_t *off, const uint32_t *len, int n,
			 int whole)
{
	static uint8_t in[XR_TXR_TRIGGER_LEN], out[4096], want[4096];
	uint64_t sent = W.ctl->sent, built = stat(XR_STAT_TX_BUILT);
	size_t wn = post(v6, off, len, n, whole, want);
	uint32_t outn;

	trigger(in, XR_TXR_MAGIC, DOM, 0, SECRET);
	assert_int_equal(run(in, out, &outn), XDP_TX);
	assert_int_equal(outn, wn);
	assert_memory_equal(out, want, wn);
	assert_int_equal(W.ctl->tail, W.ctl->head);
	assert_int_equal(W.ctl->sent, sent + 1);
	assert_int_equal(stat(XR_STAT_TX_BUILT), built + 1);
}

static void test_frames(void **state)
{
	const uint64_t o1[] = { 4096 - 700 };
	const uint32_t l1[] = { 1408 };
	const uint64_t o4[] = { 1, 4095, 8192 - 3, 5 * 4096 + 17 };
	const uint32_t l4[] = { 777, 2, 2049, 100 };
	const uint64_t ow[] = { 33 };
	const uint32_t lw[] = { 20 };
	const uint64_t om[] = { 2 * 4096 - 1 };
	const uint32_t lm[] = { XR_TXR_MAX_FRAME - 62 - 64 };
	int v6;

	(void)state;
	for (v6 = 0; v6 < 2; v6++) {
		expect_frame(v6, o1, l1, 1, 0);     /* across a page boundary */
		expect_frame(v6, o4, l4, 4, 0);     /* four pieces, odd sizes */
		expect_frame(v6, ow, lw, 1, 1);     /* whole in the descriptor */
		expect_frame(v6, NULL, NULL, 0, 1); /* no payload */
		expect_frame(v6, om, lm, 1, 0);     /* the largest frame */
	}
}

/* Triggers that must not send: nothing taken from the ring, counted. */
static void refused_trigger(uint32_t magic, uint32_t dom, uint32_t plane,
			    uint64_t secret)
{
	static uint8_t in[XR_TXR_TRIGGER_LEN], out[4096];
	uint64_t drops = stat(XR_STAT_DROP_TXR), tail = W.ctl->tail;
	uint32_t outn;

	trigger(in, magic, dom, plane, secret);
	assert_int_equal(run(in, out, &outn), XDP_DROP);
	assert_int_equal(stat(XR_STAT_DROP_TXR), drops + 1);
	assert_int_equal(W.ctl->tail, tail);
}

static void test_hostile_triggers(void **state)
{
	const uint64_t o[] = { 0 };
	const uint32_t l[] = { 1000 };
	static uint8_t want[4096], in[XR_TXR_TRIGGER_LEN], out[4096];
	uint32_t outn;

	(void)state;
	post(0, o, l, 1, 0, want); /* a descriptor waiting: none may take it */
	refused_trigger(XR_TXR_MAGIC, DOM, 0, SECRET ^ 1);
	refused_trigger(XR_TXR_MAGIC, DOM, 0, 0);
	refused_trigger(XR_TXR_MAGIC ^ 1, DOM, 0, SECRET);
	refused_trigger(XR_TXR_MAGIC, DOM, 3, SECRET);   /* no such ring */
	refused_trigger(XR_TXR_MAGIC, DOM + 1, 0, SECRET);
	/* A trigger cut short of its secret. */
	{
		LIBBPF_OPTS(bpf_test_run_opts, o2, .data_in = in, .data_size_in = 20,
			    .data_out = out, .data_size_out = 4096, .repeat = 1);
		uint64_t drops = stat(XR_STAT_DROP_TXR);

		trigger(in, XR_TXR_MAGIC, DOM, 0, SECRET);
		assert_int_equal(bpf_prog_test_run_opts(
					 W.p.prog_fd, &o2), 0);
		assert_int_equal(o2.retval, XDP_DROP);
		assert_int_equal(stat(XR_STAT_DROP_TXR), drops + 1);
	}
	/* The right one sends it. */
	trigger(in, XR_TXR_MAGIC, DOM, 0, SECRET);
	assert_int_equal(run(in, out, &outn), XDP_TX);
	assert_int_equal(W.ctl->tail, W.ctl->head);
	/* Nothing left: an empty ring sends nothing. */
	{
		uint64_t empty = W.ctl->empty;

		assert_int_equal(run(in, out, &outn), XDP_DROP);
		assert_int_equal(W.ctl->empty, empty + 1);
	}
}

/* Descriptors that lie: each is taken (tail moves), refused, counted. */
static void refused_desc(void (*bend)(struct xr_txr_desc *))
{
	static uint8_t want[4096], in[XR_TXR_TRIGGER_LEN], out[4096];
	const uint64_t o[] = { 100, 5000 };
	const uint32_t l[] = { 600, 600 };
	uint64_t bad = W.ctl->bad, drops = stat(XR_STAT_DROP_TXR);
	struct xr_txr_desc *d = &W.ring[W.ctl->head & (XR_TXR_RING - 1)];
	uint32_t outn;

	post(0, o, l, 2, 0, want);
	bend(d);
	trigger(in, XR_TXR_MAGIC, DOM, 0, SECRET);
	assert_int_equal(run(in, out, &outn), XDP_DROP);
	assert_int_equal(W.ctl->tail, W.ctl->head);
	assert_int_equal(W.ctl->bad, bad + 1);
	assert_int_equal(stat(XR_STAT_DROP_TXR), drops + 1);
}

static void b_hdr_long(struct xr_txr_desc *d) { d->hdr_len = XR_TXR_HDR_MAX + 1; }
static void b_hdr_short(struct xr_txr_desc *d) { d->hdr_len = 13; }
static void b_nseg(struct xr_txr_desc *d) { d->nseg = XR_TXR_SEGS + 1; }
static void b_plen_big(struct xr_txr_desc *d) { d->plen = XR_TXR_MAX_FRAME; }
static void b_sum_short(struct xr_txr_desc *d) { d->plen += 1; }
static void b_sum_long(struct xr_txr_desc *d) { d->seg[1].len += 1; }
static void b_off_end(struct xr_txr_desc *d) { d->seg[1].off = PAGES * XR_PAGE_SIZE - 100; }
static void b_off_huge(struct xr_txr_desc *d) { d->seg[0].off = ~0ull - 10; }
static void b_seg_huge(struct xr_txr_desc *d) { d->seg[0].len = 0xfffffff0u; }

static void test_hostile_descriptors(void **state)
{
	(void)state;
	refused_desc(b_hdr_long);
	refused_desc(b_hdr_short);
	refused_desc(b_nseg);
	refused_desc(b_plen_big);
	refused_desc(b_sum_short);
	refused_desc(b_sum_long);
	refused_desc(b_off_end);
	refused_desc(b_off_huge);
	refused_desc(b_seg_huge);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_hostile_triggers),
		cmocka_unit_test(test_hostile_descriptors),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "bpf_txbuild: needs root (BPF maps and test runs)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
