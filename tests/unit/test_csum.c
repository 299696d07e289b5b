// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tests of user/csum.c against a textbook reference (big-endian 16-bit
 * words, RFC 1071), the RFC 1071 example, and two real UDP packets whose
 * checksums the Linux kernel computed (veth with tx offload off) and
 * Wireshark reported as correct when they were captured.
 *
 *   build/tests/test_csum           run the tests
 *   build/tests/test_csum --bench   GB/s of each variant (build without
 *                                   sanitizers for meaningful numbers)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "csum.h"

/* ---- reference ------------------------------------------------------- */

/* RFC 1071 done the obvious way: big-endian words, 32-bit integer sum,
 * fold.  Returns the folded sum as a number (not complemented). */
static uint16_t ref_sum(const uint8_t *p, size_t len, uint32_t init)
{
	uint64_t s = init;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* A 16-bit value from the library (memory order) read as a big-endian
 * number, to compare with the reference. */
static uint16_t mem16_be(uint16_t v)
{
	uint8_t b[2];

	memcpy(b, &v, 2);
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* The library's checksum of a partial sum as a number. */
static uint16_t lib_csum(uint32_t partial)
{
	return mem16_be(xr_csum_fold(partial));
}

/* A partial sum (memory order) of an initial value expressed as a
 * big-endian number, so both sides start from the same sum. */
static uint32_t init_from_be(uint16_t be)
{
	uint8_t b[2] = { (uint8_t)(be >> 8), (uint8_t)be };
	uint16_t v;

	memcpy(&v, b, 2);
	return v;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure is reproducible. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(rng() >> 56);
}

/* ---- tests ----------------------------------------------------------- */

/* RFC 1071 section 3: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
static void test_rfc1071_example(void **state)
{
	static const uint8_t data[] = { 0x00, 0x01, 0xf2, 0x03,
					0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t c = xr_csum_fold(xr_csum_partial(data, sizeof(data), 0));
	uint8_t stored[2];

	(void)state;
	memcpy(stored, &c, 2);
	/* ~0xddf2 = 0x220d, stored in wire order. */
	assert_int_equal(stored[0], 0x22);
	assert_int_equal(stored[1], 0x0d);
	assert_int_equal(ref_sum(data, sizeof(data), 0), 0xddf2);
	/* Odd length: the last byte is the high byte of a padded word. */
	assert_int_equal(lib_csum(xr_csum_partial(data, 7, 0)),
			 (uint16_t)~ref_sum(data, 7, 0));
	assert_int_equal(lib_csum(xr_csum_partial(data, 0, 0)), 0xffff);
}

/* Every length 0..2000 at all 8 alignments, random data and random initial
 * sums, for every entry point; the copies must also copy exactly. */
static void test_random_lengths_alignments(void **state)
{
	enum { MAXLEN = 2000 };
	uint8_t *src = malloc(MAXLEN + 16), *dst = malloc(MAXLEN + 16 + 2);

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	for (size_t len = 0; len <= MAXLEN; len++) {
		for (int al = 0; al < 8; al++) {
			const uint8_t *p = src + al;
			uint8_t *q = dst + (7 - al) + 1;
			uint16_t init = (uint16_t)rng();
			uint32_t i32 = init_from_be(init);
			uint16_t want;

			fill_random(src, len + 8);
			want = (uint16_t)~ref_sum(p, len, init);
			assert_int_equal(lib_csum(xr_csum_partial(p, len, i32)), want);
			assert_int_equal(lib_csum(xr_csum_partial_generic(p, len, i32)), want);

			/* Guard bytes around the destination must survive. */
			q[-1] = 0xa5;
			q[len] = 0x5a;
			assert_int_equal(lib_csum(xr_csum_copy(q, p, len, i32)), want);
			assert_memory_equal(q, p, len);
			assert_int_equal(lib_csum(xr_csum_copy_generic(q, p, len, i32)), want);
			assert_memory_equal(q, p, len);
			assert_int_equal(q[-1], 0xa5);
			assert_int_equal(q[len], 0x5a);
		}
	}
	free(src);
	free(dst);
}

/* Large buffers cross the vector path's lane-flush block (1 MiB) and carry
 * many times: all 0xff bytes is the worst case for carries. */
static void test_large_and_saturated(void **state)
{
	size_t sizes[] = { 64 * 16384 - 2, 64 * 16384 + 63, 3u << 20 };
	size_t maxlen = (3u << 20) + 8;
	uint8_t *buf = malloc(maxlen), *dst = malloc(maxlen);

	(void)state;
	assert_non_null(buf);
	assert_non_null(dst);
	for (int fill = 0; fill < 2; fill++) {
		if (fill)
			fill_random(buf, maxlen);
		else
			memset(buf, 0xff, maxlen);
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint16_t want = (uint16_t)~ref_sum(buf + 1, sizes[i], 0);

			assert_int_equal(lib_csum(xr_csum_partial(buf + 1, sizes[i], 0)), want);
			assert_int_equal(lib_csum(xr_csum_copy(dst, buf + 1, sizes[i], 0)), want);
			assert_memory_equal(dst, buf + 1, sizes[i]);
		}
	}
	free(buf);
	free(dst);
}

/* Pieces summed separately, at every split point (odd ones included),
 * combine to the sum of the whole; also through copies into a frame at an
 * odd position, and with three pieces. */
static void test_odd_offset_combination(void **state)
{
	enum { LEN = 1501 };
	uint8_t buf[LEN], frame[LEN + 3];

	(void)state;
	fill_random(buf, LEN);
	uint16_t want = (uint16_t)~ref_sum(buf, LEN, 0);

	for (size_t k = 0; k <= LEN; k++) {
		uint32_t s = xr_csum_partial(buf, k, 0);

		s = xr_csum_block_add(s, xr_csum_partial(buf + k, LEN - k, 0), k);
		assert_int_equal(lib_csum(s), want);

		/* Header summed in place, payload copied and summed. */
		s = xr_csum_partial(buf, k, 0);
		s = xr_csum_block_add(s, xr_csum_copy(frame + 3 + k, buf + k,
						      LEN - k, 0), k);
		assert_int_equal(lib_csum(s), want);
		assert_memory_equal(frame + 3 + k, buf + k, LEN - k);

		/* Three pieces: [0,k) [k,m) [m,LEN). */
		size_t m = k + (LEN - k) / 3;
		s = xr_csum_partial(buf, k, 0);
		s = xr_csum_block_add(s, xr_csum_partial(buf + k, m - k, 0), k);
		s = xr_csum_block_add(s, xr_csum_partial(buf + m, LEN - m, 0), m);
		assert_int_equal(lib_csum(s), want);
	}
	/* Without the swap an odd split gives a wrong sum (else the test above
	 * would not show anything). */
	uint32_t bad = xr_csum_add(xr_csum_partial(buf, 1, 0),
				   xr_csum_partial(buf + 1, LEN - 1, 0));
	assert_int_not_equal(lib_csum(bad), want);
}

/* Frames captured on a veth with tx checksum offload off: the kernel
 * computed both checksums in software; Wireshark marked them good.  The
 * IPv4 payload has odd length (39 bytes). */
static const uint8_t pkt4[] = {
	0x02, 0x00, 0x00, 0x00, 0x0b, 0x01, 0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x43, 0xda, 0xd2, 0x40, 0x00, 0x40, 0x11,
	0x44, 0x83, 0xc0, 0xa8, 0x4d, 0x01, 0xc0, 0xa8, 0x4d, 0x02, 0x9c, 0x41,
	0x12, 0xb9, 0x00, 0x2f, 0x8b, 0x6f, 'x', 'r', 'o', 'c', 'e', ' ',
	'c', 'h', 'e', 'c', 'k', 's', 'u', 'm', ' ', 't', 'e', 's', 't', ' ',
	'v', 'e', 'c', 't', 'o', 'r', ',', ' ', 'o', 'd', 'd', ' ', 'l', 'e',
	'n', 'g', 't', 'h', '!',
};

static const uint8_t pkt6_head[] = {
	0x02, 0x00, 0x00, 0x00, 0x0b, 0x01, 0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,
	0x86, 0xdd, 0x60, 0x08, 0xb3, 0x4d, 0x00, 0x65, 0x11, 0x40, 0xfd, 0x77,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0xfd, 0x77,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0x9c, 0x42,
	0x12, 0xb9, 0x00, 0x65, 0xe9, 0xb1,
};

/* Payload of the IPv6 packet: bytes 0, 3, 6, ..., 252 then "xroce v6". */
static size_t build_pkt6(uint8_t *out)
{
	size_t n = sizeof(pkt6_head);

	memcpy(out, pkt6_head, n);
	for (int v = 0; v < 255; v += 3)
		out[n++] = (uint8_t)v;
	memcpy(out + n, "xroce v6", 8);
	return n + 8;
}

static void test_real_ipv4_udp(void **state)
{
	uint8_t f[sizeof(pkt4)];
	const size_t ip = 14, udp = 34, udp_len = sizeof(pkt4) - udp;
	uint16_t c, hc;

	(void)state;
	assert_int_equal(udp_len, 0x2f);
	memcpy(f, pkt4, sizeof(f));
	/* The receiver's view: summing all of it, checksum included, is 0. */
	assert_int_equal(xr_csum_fold(xr_csum_partial(f + ip, 20, 0)), 0);
	assert_int_equal(xr_csum_fold(xr_csum_add(
				 xr_csum_pseudo4(f + 26, f + 30, 17, (uint16_t)udp_len),
				 xr_csum_partial(f + udp, udp_len, 0))), 0);

	/* The sender's view: recompute both fields from zero. */
	memset(f + ip + 10, 0, 2);
	memset(f + udp + 6, 0, 2);
	hc = xr_ip4_hdr_csum(f + ip, 20);
	c = xr_udp4_csum(f + 26, f + 30, f + udp, udp_len);
	assert_memory_equal(&hc, pkt4 + ip + 10, 2);
	assert_memory_equal(&c, pkt4 + udp + 6, 2);
	assert_int_equal(mem16_be(c), 0x8b6f);

	/* Header and (odd) payload separately, payload copied to a frame. */
	uint8_t frame[128];
	uint32_t s = xr_csum_partial(f + udp, 8, 0);
	s = xr_csum_block_add(s, xr_csum_copy(frame + 42, f + udp + 8,
					      udp_len - 8, 0), 8);
	s = xr_csum_add(s, xr_csum_pseudo4(f + 26, f + 30, 17, (uint16_t)udp_len));
	assert_int_equal(mem16_be(xr_csum_udp_final(s)), 0x8b6f);
}

static void test_real_ipv6_udp(void **state)
{
	uint8_t f[256];
	size_t n = build_pkt6(f);
	const size_t udp = 54, udp_len = n - udp;
	uint16_t c;

	(void)state;
	assert_int_equal(n, 155);
	assert_int_equal(udp_len, 0x65);
	assert_int_equal(xr_csum_fold(xr_csum_add(
				 xr_csum_pseudo6(f + 22, f + 38, 17, (uint32_t)udp_len),
				 xr_csum_partial(f + udp, udp_len, 0))), 0);
	memset(f + udp + 6, 0, 2);
	c = xr_udp6_csum(f + 22, f + 38, f + udp, udp_len);
	assert_int_equal(mem16_be(c), 0xe9b1);

	/* Split at an odd offset inside the payload. */
	uint32_t s = xr_csum_partial(f + udp, 21, 0);
	s = xr_csum_block_add(s, xr_csum_partial(f + udp + 21, udp_len - 21, 0), 21);
	s = xr_csum_add(s, xr_csum_pseudo6(f + 22, f + 38, 17, (uint32_t)udp_len));
	assert_int_equal(mem16_be(xr_csum_udp_final(s)), 0xe9b1);
}

/* A datagram whose checksum computes to 0 must be sent as 0xffff. */
static void test_udp_zero_becomes_ffff(void **state)
{
	uint8_t saddr[4] = { 10, 0, 0, 1 }, daddr[4] = { 10, 0, 0, 2 };
	uint8_t udp[32];
	uint16_t fix, c;

	(void)state;
	fill_random(udp, sizeof(udp));
	memset(udp + 6, 0, 2);
	memset(udp + 30, 0, 2);
	/* Choose the last word so the total sum is 0xffff (-0): then the
	 * complement is 0.  The word that does that is ~fold(sum). */
	fix = xr_csum_fold(xr_csum_add(xr_csum_pseudo4(saddr, daddr, 17, sizeof(udp)),
				       xr_csum_partial(udp, sizeof(udp), 0)));
	memcpy(udp + 30, &fix, 2);
	assert_int_equal(xr_csum_fold(xr_csum_add(xr_csum_pseudo4(saddr, daddr, 17, sizeof(udp)),
						  xr_csum_partial(udp, sizeof(udp), 0))), 0);
	c = xr_udp4_csum(saddr, daddr, udp, sizeof(udp));
	assert_int_equal(c, 0xffff);
}

/* ---- benchmark ------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef uint32_t (*copy_fn)(void *, const void *, size_t, uint32_t);

static uint32_t memcpy_then_csum(void *d, const void *s, size_t n, uint32_t sum)
{
	memcpy(d, s, n);
	return xr_csum_partial(d, n, sum);
}

static uint32_t csum_only(void *d, const void *s, size_t n, uint32_t sum)
{
	(void)d;
	return xr_csum_partial(s, n, sum);
}

static uint32_t csum_only_generic(void *d, const void *s, size_t n, uint32_t sum)
{
	(void)d;
	return xr_csum_partial_generic(s, n, sum);
}

static uint32_t memcpy_only(void *d, const void *s, size_t n, uint32_t sum)
{
	memcpy(d, s, n);
	return sum;
}

static int bench(void)
{
	static const struct {
		const char *name;
		copy_fn fn;
	} v[] = {
		{ "csum_partial", csum_only },
		{ "csum_partial_generic", csum_only_generic },
		{ "memcpy", memcpy_only },
		{ "memcpy+csum_partial", memcpy_then_csum },
		{ "csum_copy", xr_csum_copy },
		{ "csum_copy_generic", xr_csum_copy_generic },
	};
	static const size_t sizes[] = { 64, 256, 512, 1400, 4096, 65536 };
	size_t max = 65536 + 64;
	uint8_t *src = aligned_alloc(64, max), *dst = aligned_alloc(64, max);

	if (!src || !dst)
		return 1;
	fill_random(src, max);
#if defined(__SANITIZE_ADDRESS__)
	printf("note: built with sanitizers, numbers are not representative\n");
#endif
	printf("GB/s (src offset, dst offset)\n%-22s", "variant \\ bytes");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		printf(" %6zu(0,0) %6zu(1,3)", sizes[s], sizes[s]);
	printf("\n");
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
		printf("%-22s", v[k].name);
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			for (int mis = 0; mis < 2; mis++) {
				size_t n = sizes[s];
				long iters = (long)(1e9 / (double)n);
				volatile uint32_t sink = 0;
				double t = now_s();

				for (long i = 0; i < iters; i++)
					sink += v[k].fn(dst + 3 * mis, src + mis, n, (uint32_t)i);
				t = now_s() - t;
				(void)sink;
				printf(" %12.1f", (double)n * iters / t / 1e9);
			}
		}
		printf("\n");
	}
	free(src);
	free(dst);
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc1071_example),
		cmocka_unit_test(test_random_lengths_alignments),
		cmocka_unit_test(test_large_and_saturated),
		cmocka_unit_test(test_odd_offset_combination),
		cmocka_unit_test(test_real_ipv4_udp),
		cmocka_unit_test(test_real_ipv6_udp),
		cmocka_unit_test(test_udp_zero_becomes_ffff),
	};

	if (argc > 1 && strcmp(argv[1], "--bench") == 0)
		return bench();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
