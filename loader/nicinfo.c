// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "nicinfo.h"

static int eth_ioctl(const char *ifname, void *cmd)
{
	struct ifreq ifr;
	int fd, rc = 0;

	if (strlen(ifname) >= IF_NAMESIZE)
		return -ENODEV;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname) + 1);
	ifr.ifr_data = cmd;
	/* Some requests answer with a positive value (ETHTOOL_SFEATURES). */
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* IFLA_NUM_RX_QUEUES of ifname, from one RTM_GETLINK. */
static int nl_rx_queues(const char *ifname, uint32_t *out)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req;
	char buf[16384];
	struct nlmsghdr *nh;
	ssize_t n;
	int fd, rc = -ENOENT;

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = (int)if_nametoindex(ifname);
	if (!req.ifi.ifi_index)
		return -ENODEV;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		rc = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		rc = -errno;
		goto out;
	}
	for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, (size_t)n);
	     nh = NLMSG_NEXT(nh, n)) {
		struct ifinfomsg *ifi = NLMSG_DATA(nh);
		struct rtattr *a;
		unsigned int len;

		if (nh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			rc = e->error ? e->error : -ENOENT;
			break;
		}
		if (nh->nlmsg_type != RTM_NEWLINK)
			continue;
		len = IFLA_PAYLOAD(nh);
		for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
			if (a->rta_type == IFLA_NUM_RX_QUEUES &&
			    RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
				memcpy(out, RTA_DATA(a), sizeof(*out));
				rc = 0;
			}
		}
		break;
	}
out:
	close(fd);
	return rc;
}

int xr_nic_query(const char *ifname, struct xr_nic *n)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int rc;

	memset(n, 0, sizeof(*n));
	if (!if_nametoindex(ifname))
		return -ENODEV;
	if (!eth_ioctl(ifname, &di))
		snprintf(n->driver, sizeof(n->driver), "%.31s", di.driver);
	if (!eth_ioctl(ifname, &ch)) {
		n->has_channels = true;
		n->combined = ch.combined_count;
		n->max_combined = ch.max_combined;
		n->rx = ch.rx_count;
		n->max_rx = ch.max_rx;
		n->tx = ch.tx_count;
		n->max_tx = ch.max_tx;
	}
	rc = nl_rx_queues(ifname, &n->num_rx_queues);
	if (rc && rc != -ENOENT)
		return rc;
	return 0;
}

uint32_t xr_nic_rx_queues(const struct xr_nic *n)
{
	uint32_t q = n->has_channels ? n->combined + n->rx : 0;

	if (!q)
		q = n->num_rx_queues ? n->num_rx_queues : 1;
	return q;
}

int xr_nic_set_combined(const char *ifname, uint32_t combined)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	int rc;

	rc = eth_ioctl(ifname, &ch);
	if (rc)
		return rc;
	ch.cmd = ETHTOOL_SCHANNELS;
	ch.combined_count = combined;
	return eth_ioctl(ifname, &ch);
}

/* Is tab (n entries) the even spread i -> i % q over some q? */
static bool even_spread(const uint32_t *tab, uint32_t n)
{
	uint32_t i, hi = 0;

	for (i = 0; i < n; i++)
		if (tab[i] > hi)
			hi = tab[i];
	for (i = 0; i < n; i++)
		if (tab[i] != i % (hi + 1))
			return false;
	return true;
}

int xr_nic_rss_respread(const char *ifname, uint32_t *nq)
{
	struct ethtool_rxnfc rings = { .cmd = ETHTOOL_GRXRINGS };
	struct ethtool_rxfh_indir probe = { .cmd = ETHTOOL_GRXFHINDIR };
	struct ethtool_rxfh_indir *t = NULL;
	int rc;

	*nq = 0;
	rc = eth_ioctl(ifname, &probe);
	if (rc == -EOPNOTSUPP || (!rc && !probe.size))
		return 0; /* no RSS table to keep */
	if (rc)
		return rc;
	rc = eth_ioctl(ifname, &rings);
	if (rc)
		return rc == -EOPNOTSUPP ? 0 : rc;
	t = calloc(1, sizeof(*t) + probe.size * sizeof(t->ring_index[0]));
	if (!t)
		return -ENOMEM;
	t->cmd = ETHTOOL_GRXFHINDIR;
	t->size = probe.size;
	rc = eth_ioctl(ifname, t);
	if (rc || !even_spread(t->ring_index, t->size))
		goto out; /* rc, or a custom table: 0 */
	/* Size 0: the kernel's default spread over the rings in use. */
	t->cmd = ETHTOOL_SRXFHINDIR;
	t->size = 0;
	rc = eth_ioctl(ifname, t);
	if (!rc) {
		*nq = (uint32_t)rings.data;
		rc = 1;
	}
out:
	free(t);
	return rc;
}

/* Index of feature `name` in the kernel's feature string set. */
static int feature_index(const char *ifname, const char *name)
{
	struct {
		struct ethtool_sset_info hdr;
		uint32_t len;
	} si = { .hdr = { .cmd = ETHTOOL_GSSET_INFO,
			  .sset_mask = 1ull << ETH_SS_FEATURES } };
	struct ethtool_gstrings *gs;
	uint32_t i, count;
	int rc;

	rc = eth_ioctl(ifname, &si);
	if (rc)
		return rc;
	count = si.hdr.sset_mask ? si.len : 0;
	if (!count || count > 4096)
		return -ENOENT;
	gs = calloc(1, sizeof(*gs) + (size_t)count * ETH_GSTRING_LEN);
	if (!gs)
		return -ENOMEM;
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_FEATURES;
	gs->len = count;
	rc = eth_ioctl(ifname, gs);
	if (!rc) {
		rc = -ENOENT;
		for (i = 0; i < count; i++)
			if (!strncmp((const char *)gs->data + (size_t)i * ETH_GSTRING_LEN,
				     name, ETH_GSTRING_LEN)) {
				rc = (int)i;
				break;
			}
	}
	free(gs);
	return rc;
}

#define XR_FEATURE_BLOCKS 8 /* 256 features: far more than any kernel has */

int xr_nic_feature(const char *ifname, const char *name, bool *changeable)
{
	struct {
		struct ethtool_gfeatures hdr;
		struct ethtool_get_features_block b[XR_FEATURE_BLOCKS];
	} gf;
	uint32_t bit;
	int idx, rc;

	idx = feature_index(ifname, name);
	if (idx < 0)
		return idx;
	if (idx >= XR_FEATURE_BLOCKS * 32)
		return -ENOENT;
	memset(&gf, 0, sizeof(gf));
	gf.hdr.cmd = ETHTOOL_GFEATURES;
	gf.hdr.size = XR_FEATURE_BLOCKS;
	rc = eth_ioctl(ifname, &gf);
	if (rc)
		return rc;
	bit = 1u << (idx % 32);
	if (changeable)
		*changeable = (gf.b[idx / 32].available & bit) &&
			      !(gf.b[idx / 32].never_changed & bit);
	return !!(gf.b[idx / 32].active & bit);
}

int xr_nic_feature_set(const char *ifname, const char *name, bool on)
{
	struct {
		struct ethtool_sfeatures hdr;
		struct ethtool_set_features_block b[XR_FEATURE_BLOCKS];
	} sf;
	struct ethtool_gfeatures words = { .cmd = ETHTOOL_GFEATURES };
	uint32_t bit;
	int idx, rc;

	idx = feature_index(ifname, name);
	if (idx < 0)
		return idx;
	if (idx >= XR_FEATURE_BLOCKS * 32)
		return -ENOENT;
	/* The kernel takes a set request only with exactly its own number of
	 * feature words; a get with size 0 tells it. */
	rc = eth_ioctl(ifname, &words);
	if (rc)
		return rc;
	if (words.size > XR_FEATURE_BLOCKS || (uint32_t)idx >= words.size * 32)
		return -ENOENT;
	memset(&sf, 0, sizeof(sf));
	sf.hdr.cmd = ETHTOOL_SFEATURES;
	sf.hdr.size = words.size;
	bit = 1u << (idx % 32);
	sf.b[idx / 32].valid = bit;
	sf.b[idx / 32].requested = on ? bit : 0;
	rc = eth_ioctl(ifname, &sf);
	if (rc)
		return rc;
	/* A positive answer (ETHTOOL_F_WISH...) means "recorded, not done":
	 * read back what is active. */
	rc = xr_nic_feature(ifname, name, NULL);
	if (rc < 0)
		return rc;
	return rc == (int)on ? 0 : -EBUSY;
}
