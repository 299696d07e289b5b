/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * user/io: the kernel interfaces packets go through, no transport policy.
 *   xsk       AF_XDP transmit sockets (copy or zero copy, multi-buffer)
 *   xdptx     frames built by the XDP program from a descriptor ring,
 *             sent by a BPF test run (contract: include/contract/txring.h)
 *   rqrecall  taking back a posted receive no packet has claimed, by a
 *             test run of bpf/rqrecall.bpf.c (contract: abi.h, xr_rq)
 *   nlroute   routes, next hops and links through rtnetlink
 *   pktbuild  Ethernet/IP/UDP frame templates and frame assembly
 *   sockdiag  open UDP sockets and their marks, through sock_diag
 */
#ifndef XR_IO_IO_H
#define XR_IO_IO_H

#include "nlroute.h"
#include "pktbuild.h"
#include "rqrecall.h"
#include "sockdiag.h"
#include "xdptx.h"
#include "xsk.h"

#endif /* XR_IO_IO_H */
