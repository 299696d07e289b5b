/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Open UDP sockets of this network namespace, through sock_diag. */
#ifndef XR_IO_SOCKDIAG_H
#define XR_IO_SOCKDIAG_H

#include <stdbool.h>
#include <stdint.h>

/* Is a UDP socket (IPv4 or IPv6) bound to local port `port` and carrying
 * SO_MARK `mark` (0: any mark) open?  1 yes, 0 no, or a negative errno
 * when the kernel cannot be asked (then nothing is known). */
int xr_sockdiag_udp_bound(uint16_t port, uint32_t mark);

#endif /* XR_IO_SOCKDIAG_H */
