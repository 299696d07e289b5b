/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Printable names for the enums of include/contract/abi.h that tools show:
 * the XDP program's counters (enum xr_stat, map xr_stats), connection
 * states (enum xr_conn_state) and configuration flags (XR_CFG_*).  One table for every user (the `xroce`
 * command, the library's telemetry, tests), so a counter has the same name
 * everywhere.  Names are lower-case identifiers ([a-z0-9_]), usable as JSON
 * keys and in scripts.
 */
#ifndef XR_USER_STATNAMES_H
#define XR_USER_STATNAMES_H

/* Name of counter `stat`, or NULL if it is not below XR_STAT_MAX. */
const char *xr_stat_name(unsigned int stat);
/* Index of the counter called `name`, or -ENOENT. */
int xr_stat_by_name(const char *name);
/* Name of connection state `state` ("init", "rts", ...), or NULL. */
const char *xr_conn_state_name(unsigned int state);
/* Name of xr_cfg flag bit `bit` (XR_CFG_VERIFY_CSUM is bit 0:
 * "verify_csum"), or NULL for a bit without meaning. */
const char *xr_cfg_flag_name(unsigned int bit);

#endif /* XR_USER_STATNAMES_H */
