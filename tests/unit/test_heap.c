// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The allocator of registrable memory (user/heap.c) against a model. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "heap.h"

static void test_basic(void **state)
{
	struct xr_heap h;
	uint64_t a, b, c;

	(void)state;
	assert_int_equal(xr_heap_init(&h, 8192, 1 << 20), 0);
	assert_int_equal(xr_heap_alloc(&h, 100, 0, &a), 0);
	assert_int_equal(a, 8192);
	assert_int_equal(xr_heap_block_len(&h, a), 128); /* rounded to 64 */
	assert_int_equal(xr_heap_alloc(&h, 4096, 4096, &b), 0);
	assert_int_equal(b % 4096, 0);
	assert_true(b >= a + 128);
	assert_int_equal(xr_heap_alloc(&h, 1, 3, &c), -EINVAL); /* align not 2^n */
	assert_int_equal(xr_heap_alloc(&h, 0, 0, &c), -EINVAL);
	assert_int_equal(xr_heap_alloc(&h, 2 << 20, 0, &c), -ENOMEM);
	assert_int_equal(xr_heap_free(&h, a + 1), -ENOENT);
	assert_int_equal(xr_heap_free(&h, a), 0);
	assert_int_equal(xr_heap_free(&h, a), -ENOENT);   /* double free */
	assert_int_equal(xr_heap_free(&h, b), 0);
	/* Everything merged back: the whole range is allocatable again. */
	assert_int_equal(xr_heap_alloc(&h, 1 << 20, 0, &c), 0);
	assert_int_equal(c, 8192);
	assert_int_equal(h.used_bytes, 1 << 20);
	xr_heap_fini(&h);
}

/* Random allocations and frees never overlap, stay inside, keep their
 * alignment, and freeing everything restores one block. */
static void test_random(void **state)
{
	enum { N = 200 };
	uint64_t off[N] = { 0 }, len[N] = { 0 };
	struct xr_heap h;
	uint32_t seed = 7, i, j, k;

	(void)state;
	assert_int_equal(xr_heap_init(&h, 4096, 16 << 20), 0);
	for (k = 0; k < 20000; k++) {
		seed = seed * 1664525 + 1013904223;
		i = seed % N;
		if (len[i]) {
			assert_int_equal(xr_heap_free(&h, off[i]), 0);
			len[i] = 0;
			continue;
		}
		{
			uint64_t want = 1 + (seed >> 8) % 300000, align = 1ull << ((seed >> 4) % 13);

			if (xr_heap_alloc(&h, want, align, &off[i]))
				continue;
			assert_int_equal(off[i] % align, 0);
			assert_true(off[i] >= 4096 && off[i] + want <= 4096 + (16 << 20));
			len[i] = want;
			for (j = 0; j < N; j++)
				if (j != i && len[j])
					assert_true(off[i] + len[i] <= off[j] ||
						    off[j] + len[j] <= off[i]);
		}
	}
	for (i = 0; i < N; i++)
		if (len[i])
			assert_int_equal(xr_heap_free(&h, off[i]), 0);
	assert_int_equal(h.used_bytes, 0);
	assert_null(h.head->next);
	xr_heap_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
