/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The small services every engine file uses: a log sink with a level,
 * "log and return this errno", the clock (CLOCK_MONOTONIC, as bpf_ktime)
 * and randomness (getrandom).
 */
#ifndef XR_ENGINE_LOG_H
#define XR_ENGINE_LOG_H

#include <stdint.h>

#include "xroce/xroce.h"

struct xr_logger {
	xroce_log_fn fn;
	void *arg;
	enum xroce_log_level level;
};

void xr_log(const struct xr_logger *lg, enum xroce_log_level lvl,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Log an error and return err (a negative errno). */
int xr_fail(const struct xr_logger *lg, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

uint64_t xr_now_ns(void);
uint64_t xr_random64(void);           /* never fails */

#endif /* XR_ENGINE_LOG_H */
