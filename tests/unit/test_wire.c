// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Wire encoding: frames built by user/pktbuild.c byte for byte (Ethernet,
 * IPv4/IPv6, UDP with a checksum verified by an independent textbook sum,
 * the xroce data header at its documented offsets), and the control
 * message layout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <endian.h>
#include <cmocka.h>

#include "pktbuild.h"
#include "contract/wire.h"

/* RFC 1071, one 16-bit big-endian word at a time. */
static uint16_t ref_sum(const uint8_t *p, size_t n, uint32_t acc)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 1 }, dmac[6] = { 2, 0, 0, 0, 0, 2 };

static void fill_hdr(struct xr_data_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->ver_type = XR_VER_TYPE(XR_T_DATA);
	h->flags = XR_DF_AR | XR_DF_LAST;
	h->opcode = XR_OP_WRITE_IMM;
	h->path = 5;
	h->dst_conn = htonl(0x01020304);
	h->token = htobe64(0x1122334455667788ull);
	h->psn = htonl(0xfffffffe);
	h->psn_base = htonl(0xfffffff0);
	h->csn = htonl(77);
	h->ts = htonl(123456);
	h->raddr = htobe64(0x00007f0000001000ull);
	h->rkey = htonl(0xabcdef01);
	h->msg_id = htonl(9);
	h->msg_len = htonl(3000);
	h->msg_off = htonl(1500);
	h->imm = htonl(42);
	h->stream = htons(3);
}

static void check_data_hdr(const uint8_t *x)
{
	/* Offsets from docs/PROTOCOL.md, read as bytes. */
	assert_int_equal(x[0], 0x11);
	assert_int_equal(x[1], XR_DF_AR | XR_DF_LAST);
	assert_int_equal(x[2], XR_OP_WRITE_IMM);
	assert_int_equal(x[3], 5);
	assert_memory_equal(x + 4, "\x01\x02\x03\x04", 4);
	assert_memory_equal(x + 8, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	assert_memory_equal(x + 16, "\xff\xff\xff\xfe", 4);
	assert_memory_equal(x + 20, "\xff\xff\xff\xf0", 4);
	assert_memory_equal(x + 24, "\x00\x00\x00\x4d", 4);
	assert_memory_equal(x + 32, "\x00\x00\x7f\x00\x00\x00\x10\x00", 8);
	assert_memory_equal(x + 40, "\xab\xcd\xef\x01", 4);
	assert_memory_equal(x + 48, "\x00\x00\x0b\xb8", 4); /* 3000 */
	assert_memory_equal(x + 52, "\x00\x00\x05\xdc", 4); /* 1500 */
	assert_memory_equal(x + 56, "\x00\x00\x00\x2a", 4);
	assert_memory_equal(x + 60, "\x00\x03", 2);
}

static void test_ipv4_frame(void **state)
{
	uint8_t sa[4] = { 10, 0, 0, 1 }, da[4] = { 10, 0, 0, 2 };
	uint8_t payload[1001], buf[4096], ph[12];
	struct xr_data_hdr h;
	struct xr_tmpl t;
	size_t len, i, udp_len;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	fill_hdr(&h);
	xr_tmpl_init(&t, smac, dmac, 0, sa, da, 50000, XR_DEFAULT_UDP_PORT, 2);
	len = xr_build_frame(buf, &t, &h, sizeof(h), payload, sizeof(payload));
	assert_int_equal(len, 14 + 20 + 8 + 64 + 1001);
	assert_memory_equal(buf, dmac, 6);
	assert_memory_equal(buf + 6, smac, 6);
	assert_int_equal(buf[12] << 8 | buf[13], 0x0800);
	assert_int_equal(buf[14], 0x45);
	assert_int_equal(buf[15] & 3, 2);                    /* ECT(0) */
	assert_int_equal(buf[16] << 8 | buf[17], 20 + 8 + 64 + 1001);
	assert_int_equal(buf[20] & 0x40, 0x40);              /* DF */
	assert_int_equal(buf[23], 17);
	assert_int_equal(ref_sum(buf + 14, 20, 0), 0xffff); /* header checksum */
	assert_int_equal(buf[34] << 8 | buf[35], 50000);
	assert_int_equal(buf[36] << 8 | buf[37], XR_DEFAULT_UDP_PORT);
	udp_len = buf[38] << 8 | buf[39];
	assert_int_equal(udp_len, 8 + 64 + 1001);
	/* UDP checksum over pseudo header + datagram must fold to all ones. */
	memcpy(ph, sa, 4);
	memcpy(ph + 4, da, 4);
	ph[8] = 0;
	ph[9] = 17;
	ph[10] = (uint8_t)(udp_len >> 8);
	ph[11] = (uint8_t)udp_len;
	assert_int_equal(ref_sum(buf + 34, udp_len, ref_sum(ph, 12, 0)), 0xffff);
	check_data_hdr(buf + 42);
	assert_memory_equal(buf + 42 + 64, payload, sizeof(payload));
}

static void test_ipv6_frame(void **state)
{
	uint8_t sa[16] = { 0xfd, 0, [15] = 1 }, da[16] = { 0xfd, 0, [15] = 2 };
	uint8_t buf[4096], ph[40], payload[3] = { 1, 2, 3 };
	struct xr_data_hdr h;
	struct xr_tmpl t;
	size_t len, udp_len;

	(void)state;
	fill_hdr(&h);
	xr_tmpl_init(&t, smac, dmac, 1, sa, da, 65535, 4793, 2);
	xr_tmpl_set_sport(&t, 49152);
	len = xr_build_frame(buf, &t, &h, sizeof(h), payload, sizeof(payload));
	assert_int_equal(len, 14 + 40 + 8 + 64 + 3);
	assert_int_equal(buf[12] << 8 | buf[13], 0x86dd);
	assert_int_equal(buf[14] >> 4, 6);
	assert_int_equal((buf[15] >> 4) & 3, 2);             /* ECT(0) in TC */
	assert_int_equal(buf[18] << 8 | buf[19], 8 + 64 + 3);
	assert_int_equal(buf[20], 17);
	assert_memory_equal(buf + 22, sa, 16);
	assert_memory_equal(buf + 38, da, 16);
	assert_int_equal(buf[54] << 8 | buf[55], 49152);
	udp_len = buf[58] << 8 | buf[59];
	memset(ph, 0, sizeof(ph));
	memcpy(ph, sa, 16);
	memcpy(ph + 16, da, 16);
	ph[34] = (uint8_t)(udp_len >> 8);
	ph[35] = (uint8_t)udp_len;
	ph[39] = 17;
	assert_int_equal(ref_sum(buf + 54, udp_len, ref_sum(ph, 40, 0)), 0xffff);
	assert_int_not_equal(buf[60] | buf[61], 0);          /* never "none" */
	check_data_hdr(buf + 62);
}

static void test_probe_no_payload(void **state)
{
	uint8_t sa[4] = { 1, 2, 3, 4 }, da[4] = { 5, 6, 7, 8 }, buf[256], ph[12];
	struct xr_probe_hdr p;
	struct xr_tmpl t;
	size_t len;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.ver_type = XR_VER_TYPE(XR_T_PROBE);
	p.seq = htonl(7);
	xr_tmpl_init(&t, smac, dmac, 0, sa, da, 50001, 4793, 2);
	len = xr_build_frame(buf, &t, &p, sizeof(p), NULL, 0);
	assert_int_equal(len, 42 + 32);
	memcpy(ph, sa, 4);
	memcpy(ph + 4, da, 4);
	ph[8] = 0;
	ph[9] = 17;
	ph[10] = 0;
	ph[11] = 40;
	assert_int_equal(ref_sum(buf + 34, 40, ref_sum(ph, 12, 0)), 0xffff);
	assert_int_equal(buf[42], 0x15);
}

/* Jumbo packets are sent as a header frame + payload where it lies: the
 * header xr_build_hdr_v writes, followed by the pieces, must be byte for
 * byte the frame xr_build_frame_v builds, for both families and pieces of
 * odd lengths at odd offsets (a piece starting at an odd offset of the
 * datagram is summed byte-swapped). */
static void test_hdr_only_matches_frame(void **state)
{
	static uint8_t payload[9000], whole[10240], split[10240];
	uint8_t sa6[16] = { 0xfd, 0, [15] = 1 }, da6[16] = { 0xfd, 0, [15] = 2 };
	uint8_t sa4[4] = { 10, 0, 0, 1 }, da4[4] = { 10, 0, 0, 2 };
	static const size_t cuts[][4] = { { 8192, 0, 0, 0 }, { 1, 4095, 4096, 0 },
					  { 3, 5, 7, 8000 }, { 4097, 1, 1, 1 } };
	struct xr_data_hdr h;
	struct xr_tmpl t;
	size_t i, c, v6;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + 5);
	fill_hdr(&h);
	for (v6 = 0; v6 < 2; v6++) {
		xr_tmpl_init(&t, smac, dmac, (int)v6, v6 ? (void *)sa6 : sa4,
			     v6 ? (void *)da6 : da4, 50001, XR_DEFAULT_UDP_PORT, 2);
		for (c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
			struct xr_iov iov[4];
			size_t n = 0, off = 1, hl, wl, at;

			for (i = 0; i < 4 && cuts[c][i]; i++) {
				iov[n].base = payload + off;
				iov[n].len = cuts[c][i];
				off += cuts[c][i] + 1; /* gaps: pieces are not adjacent */
				n++;
			}
			wl = xr_build_frame_v(whole, &t, &h, sizeof(h), iov, (int)n);
			hl = xr_build_hdr_v(split, &t, &h, sizeof(h), iov, (int)n);
			assert_int_equal(hl, (size_t)t.len + sizeof(h));
			for (at = hl, i = 0; i < n; at += iov[i].len, i++)
				memcpy(split + at, iov[i].base, iov[i].len);
			assert_int_equal(at, wl);
			assert_memory_equal(split, whole, wl);
		}
	}
}

static void test_layouts(void **state)
{
	struct xr_ctrl_msg m;
	struct xr_ack_hdr a;

	(void)state;
	assert_int_equal(sizeof(struct xr_data_hdr), 64);
	assert_int_equal(sizeof(struct xr_ack_hdr), 80);
	assert_int_equal(sizeof(struct xr_probe_hdr), 32);
	assert_int_equal(sizeof(struct xr_ctrl_msg), 256);
	memset(&a, 0, sizeof(a));
	a.sack[1] = htobe64(1);
	/* SACK word 1, bit 0 (PSN cack+1+64) is the last byte of bytes 40..47. */
	assert_int_equal(((uint8_t *)&a)[47], 1);
	memset(&m, 0, sizeof(m));
	m.priv_len = XR_CTRL_PRIV_MAX;
	assert_int_equal(((uint8_t *)&m)[128], XR_CTRL_PRIV_MAX);
	assert_int_equal(xr_seq_diff(5, 0xfffffffb), 10);
	assert_int_equal(xr_seq_diff(0xfffffffb, 5), -10);
	assert_int_equal(XR_HDR_TYPE(XR_VER_TYPE(XR_T_NAK)), XR_T_NAK);
	assert_int_equal(XR_HDR_VERSION(XR_VER_TYPE(XR_T_NAK)), XR_VERSION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_frame),
		cmocka_unit_test(test_ipv6_frame),
		cmocka_unit_test(test_probe_no_payload),
		cmocka_unit_test(test_hdr_only_matches_frame),
		cmocka_unit_test(test_layouts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
