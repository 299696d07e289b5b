/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * user/algo: pure algorithms.  No I/O, no system calls, the clock passed
 * in, so unit tests, fuzzers and simulators drive them directly.
 *   cc      congestion control and path selection of one connection
 *   txpath  one path's send window: PSNs, SACK loss detection, RTO
 *   rtt     RTT estimators (windowed min, smoothed, percentiles)
 *   heap    allocator of offsets in a fixed range (device memory)
 *   csum    Internet checksums (scalar and AVX2)
 */
#ifndef XR_ALGO_ALGO_H
#define XR_ALGO_ALGO_H

#include "cc.h"
#include "csum.h"
#include "heap.h"
#include "rtt.h"
#include "txpath.h"

#endif /* XR_ALGO_ALGO_H */
