// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Logging, time and randomness: the small services every file uses. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "log.h"

static void xr_vlog(const struct xr_logger *lg, enum xroce_log_level lvl,
		    const char *fmt, va_list ap)
{
	if (lg && lg->fn) {
		lg->fn(lg->arg, lvl, fmt, ap);
		return;
	}
	if (lg && lvl > lg->level)
		return;
	fputs("xroce: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void xr_log(const struct xr_logger *lg, enum xroce_log_level lvl,
	    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xr_vlog(lg, lvl, fmt, ap);
	va_end(ap);
}

int xr_fail(const struct xr_logger *lg, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xr_vlog(lg, XROCE_LOG_ERROR, fmt, ap);
	va_end(ap);
	return err;
}

uint64_t xr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t xr_random64(void)
{
	uint64_t v = 0;
	ssize_t n;

	/* getrandom of 8 bytes from the urandom pool cannot be short once the
	 * pool is initialised; fall back to the clock only if it fails. */
	n = getrandom(&v, sizeof(v), 0);
	if (n != (ssize_t)sizeof(v))
		v = xr_now_ns() * 0x9e3779b97f4a7c15ull;
	return v;
}
