// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * include/contract/siphash.h, the code the XDP program runs to check and
 * sign packet headers, compiled for userspace and checked against
 * libsodium's crypto_shorthash_siphash24: the reference vectors of the
 * SipHash paper (key 00..0f, messages 00..len-1, every length 0..63),
 * random keys and messages, and the header MAC (bytes 8..15 left out)
 * against libsodium over the same bytes with those left out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <sodium.h>

#include "contract/siphash.h"
#include "contract/wire.h"

static void key_words(const uint8_t k[16], uint64_t *k0, uint64_t *k1)
{
	*k0 = xr_le64_load(k);
	*k1 = xr_le64_load(k + 8);
}

static uint64_t sodium_sip(const uint8_t k[16], const uint8_t *m, size_t n)
{
	uint8_t out[crypto_shorthash_siphash24_BYTES];

	crypto_shorthash_siphash24(out, m, n, k);
	return xr_le64_load(out);
}

/* The first vectors of the SipHash paper's appendix (key 00..0f, message
 * 00..len-1), as the 8 output bytes: independent of both implementations. */
static void test_paper_vectors(void **state)
{
	static const uint8_t want[4][8] = {
		{ 0x31, 0x0e, 0x0e, 0xdd, 0x47, 0xdb, 0x6f, 0x72 },
		{ 0xfd, 0x67, 0xdc, 0x93, 0xc5, 0x39, 0xf8, 0x74 },
		{ 0x5a, 0x4f, 0xa9, 0xd9, 0x09, 0x80, 0x6c, 0x0d },
		{ 0x2d, 0x7e, 0xfb, 0xd7, 0x96, 0x66, 0x67, 0x85 },
	};
	uint8_t k[16], m[64], out[8];
	uint64_t k0, k1;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)i;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)i;
	key_words(k, &k0, &k1);
	for (i = 0; i < 4; i++) {
		xr_le64_store(out, xr_siphash24(k0, k1, m, i));
		assert_memory_equal(out, want[i], 8);
	}
}

/* Every length 0..63 with the paper's key and message, then random keys
 * and messages of every length up to 200: libsodium agrees. */
static void test_against_libsodium(void **state)
{
	uint8_t k[16], m[200];
	uint64_t k0, k1;
	size_t i, n;
	int r;

	(void)state;
	for (i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)i;
	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)i;
	key_words(k, &k0, &k1);
	for (n = 0; n < 64; n++)
		assert_true(xr_siphash24(k0, k1, m, n) == sodium_sip(k, m, n));
	for (r = 0; r < 200; r++) {
		randombytes_buf(k, sizeof(k));
		randombytes_buf(m, sizeof(m));
		key_words(k, &k0, &k1);
		for (n = 0; n <= sizeof(m); n += 1 + (size_t)(r % 7))
			assert_true(xr_siphash24(k0, k1, m, n) == sodium_sip(k, m, n));
	}
}

/* The header MAC: bytes 8..15 left out, for each header the MAC covers. */
static void test_header_mac(void **state)
{
	static const uint32_t lens[] = { sizeof(struct xr_probe_hdr),
					 sizeof(struct xr_data_hdr),
					 sizeof(struct xr_ack_hdr) };
	uint8_t k[16], h[128], cat[128];
	uint64_t k0, k1, mac;
	size_t i;
	int r;

	(void)state;
	for (r = 0; r < 300; r++) {
		uint32_t len = lens[r % 3];

		randombytes_buf(k, sizeof(k));
		randombytes_buf(h, sizeof(h));
		key_words(k, &k0, &k1);
		memcpy(cat, h, 8);
		memcpy(cat + 8, h + 16, len - 16);
		mac = xr_mac_hdr(k0, k1, h, len);
		assert_true(mac == sodium_sip(k, cat, len - 8));
		/* The MAC's own bytes do not matter; every other byte does. */
		for (i = 8; i < 16; i++)
			h[i] ^= 0xa5;
		assert_true(xr_mac_hdr(k0, k1, h, len) == mac);
		for (i = 0; i < len; i++) {
			if (i >= 8 && i < 16)
				continue;
			h[i] ^= (uint8_t)(1u << (r % 8));
			assert_true(xr_mac_hdr(k0, k1, h, len) != mac);
			h[i] ^= (uint8_t)(1u << (r % 8));
		}
		/* Another key gives another MAC. */
		assert_true(xr_mac_hdr(k0 ^ 1, k1, h, len) != mac);
		assert_true(xr_mac_hdr(k0, k1 ^ (1ull << 63), h, len) != mac);
	}
}

/* An ACK without SACK bits: bytes 8..15 and the sack words (32..63) left
 * out, the rest in order; with the gap off, the whole-header MAC. */
static void test_ack_gap_mac(void **state)
{
	const uint32_t len = sizeof(struct xr_ack_hdr);
	uint8_t k[16], h[sizeof(struct xr_ack_hdr)], cat[sizeof(h)];
	uint64_t k0, k1, mac;
	size_t i;
	int r;

	(void)state;
	for (r = 0; r < 300; r++) {
		randombytes_buf(k, sizeof(k));
		randombytes_buf(h, sizeof(h));
		key_words(k, &k0, &k1);
		memcpy(cat, h, 8);
		memcpy(cat + 8, h + 16, XR_ACK_SACK_LO - 16);
		memcpy(cat + 8 + XR_ACK_SACK_LO - 16, h + XR_ACK_SACK_HI,
		       len - XR_ACK_SACK_HI);
		mac = xr_mac_hdr_gap(k0, k1, h, len, XR_ACK_SACK_LO,
				     XR_ACK_SACK_HI, 1);
		assert_true(mac == sodium_sip(k, cat, len - 8 - 32));
		assert_true(xr_mac_hdr_gap(k0, k1, h, len, XR_ACK_SACK_LO,
					   XR_ACK_SACK_HI, 0) ==
			    xr_mac_hdr(k0, k1, h, len));
		assert_true(xr_mac_hdr(k0, k1, h, len) != mac);
		for (i = 0; i < len; i++) {
			int covered = i < 8 || (i >= 16 && i < XR_ACK_SACK_LO) ||
				      i >= XR_ACK_SACK_HI;

			h[i] ^= (uint8_t)(1u << (r % 8));
			assert_int_equal(xr_mac_hdr_gap(k0, k1, h, len,
							 XR_ACK_SACK_LO,
							 XR_ACK_SACK_HI, 1) != mac,
					 covered);
			h[i] ^= (uint8_t)(1u << (r % 8));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paper_vectors),
		cmocka_unit_test(test_against_libsodium),
		cmocka_unit_test(test_header_mac),
		cmocka_unit_test(test_ack_gap_mac),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
