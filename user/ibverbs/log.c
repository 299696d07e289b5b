// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One-line messages of the ibverbs layer and of libxroce underneath, on
 * stderr, filtered by XROCE_LOG_LEVEL (error, warn, info, debug; default
 * error): an unmodified program sees why a call failed without seeing the
 * transport's chatter.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xv.h"

enum xroce_log_level xv_log_level(void)
{
	static int level = -1;
	const char *s;

	if (level >= 0)
		return (enum xroce_log_level)level;
	s = getenv("XROCE_LOG_LEVEL");
	if (s && !strcmp(s, "debug"))
		level = XROCE_LOG_DEBUG;
	else if (s && !strcmp(s, "info"))
		level = XROCE_LOG_INFO;
	else if (s && !strcmp(s, "warn"))
		level = XROCE_LOG_WARN;
	else
		level = XROCE_LOG_ERROR;
	return (enum xroce_log_level)level;
}

void xv_xroce_log(void *arg, enum xroce_log_level level, const char *fmt,
		  va_list ap)
{
	char line[512];

	(void)arg;
	if (level > xv_log_level())
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "xroce: %s\n", line);
}

void xv_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "libibverbs (xroce): %s\n", line);
}

int xv_fail(int err, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "libibverbs (xroce): %s\n", line);
	errno = err;
	return err;
}

void *xv_null(int err, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "libibverbs (xroce): %s\n", line);
	errno = err;
	return NULL;
}

int xv_lib_err(int rc)
{
	errno = rc < 0 ? -rc : EIO;
	return errno;
}

void *xv_lib_null(int rc)
{
	errno = rc < 0 ? -rc : EIO;
	return NULL;
}
