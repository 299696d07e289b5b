/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * user/util: code the library and the `xroce` command share.
 *   bpfmaps    the xroce program's maps, found through an interface
 *   statnames  printable names of the XDP counters, states and flags
 */
#ifndef XR_UTIL_UTIL_H
#define XR_UTIL_UTIL_H

#include "bpfmaps.h"
#include "statnames.h"

#endif /* XR_UTIL_UTIL_H */
