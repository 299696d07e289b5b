/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xrfabric's port settings, one job: turn `key=value` words into a
 * struct fab_port and back (the text `show` prints is accepted by `set`).
 * Pure functions, no BPF calls.  Errors: -EINVAL with a message in err.
 *
 *   loss=P                   random loss, P a probability in [0, 1]
 *   ge=PGB,PBG,LGOOD,LBAD    Gilbert-Elliott burst loss | ge=off
 *   blackhole=all|off|sport:N|dport:N
 *   ecn=RATE_MBPS,THRESH_BYTES | ecn=off   virtual queue, step CE marking
 *   ecn-sport=N|off          CE-mark every ECT packet of UDP source port N
 *   corrupt=P                flip bits of one UDP payload byte
 *   reorder=P                wire ports: send through the slow lane
 *   clear                    every impairment off (the wiring stays)
 */
#ifndef XR_FABRIC_KV_H
#define XR_FABRIC_KV_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/fabric_maps.h"

/* A probability ("0.01", "1e-3") in parts per million. */
static inline int fab_parse_prob(const char *s, __u32 *ppm)
{
	char *end;
	double p;

	errno = 0;
	p = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(p) || p < 0 || p > 1)
		return -EINVAL;
	*ppm = (__u32)llround(p * FAB_PPM);
	return 0;
}

/* A decimal integer in [lo, hi], with nothing after it. */
static inline int fab_parse_uint(const char *s, unsigned long lo,
				 unsigned long hi, __u32 *v)
{
	unsigned long x;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return -EINVAL;
	*v = (__u32)x;
	return 0;
}

/* Split "a,b,c" into exactly n fields (modifies buf). */
static inline int fab_split(char *buf, char **f, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		f[i] = buf;
		buf = strchr(buf, ',');
		if (!buf)
			break;
		*buf++ = '\0';
	}
	return (i == n - 1 && !buf) ? 0 : -EINVAL;
}

static inline int fab_set_ge(struct fab_port *c, char *v)
{
	__u32 p[4];
	char *f[4];
	int i;

	if (!strcmp(v, "off")) {
		c->ge_on = 0;
		return 0;
	}
	if (fab_split(v, f, 4))
		return -EINVAL;
	for (i = 0; i < 4; i++)
		if (fab_parse_prob(f[i], &p[i]))
			return -EINVAL;
	c->ge_on = 1;
	c->ge_gb_ppm = p[0];
	c->ge_bg_ppm = p[1];
	c->ge_loss_good_ppm = p[2];
	c->ge_loss_bad_ppm = p[3];
	return 0;
}

static inline int fab_set_blackhole(struct fab_port *c, const char *v)
{
	__u32 port;

	if (!strcmp(v, "off") || !strcmp(v, "all")) {
		c->bh_mode = !strcmp(v, "all") ? FAB_BH_ALL : FAB_BH_OFF;
		c->bh_port = 0;
		return 0;
	}
	if (!strncmp(v, "sport:", 6) && !fab_parse_uint(v + 6, 1, 65535, &port))
		c->bh_mode = FAB_BH_SPORT;
	else if (!strncmp(v, "dport:", 6) && !fab_parse_uint(v + 6, 1, 65535, &port))
		c->bh_mode = FAB_BH_DPORT;
	else
		return -EINVAL;
	c->bh_port = port;
	return 0;
}

static inline int fab_set_ecn(struct fab_port *c, char *v)
{
	__u32 rate, thresh;
	char *f[2];

	if (!strcmp(v, "off")) {
		c->ecn_rate_mbps = c->ecn_thresh_bytes = 0;
		return 0;
	}
	if (fab_split(v, f, 2) || fab_parse_uint(f[0], 1, 10000000, &rate) ||
	    fab_parse_uint(f[1], 0, 1u << 30, &thresh))
		return -EINVAL;
	c->ecn_rate_mbps = rate;
	c->ecn_thresh_bytes = thresh;
	return 0;
}

static inline int fab_set_ecn_sport(struct fab_port *c, const char *v)
{
	if (!strcmp(v, "off")) {
		c->ecn_sport = 0;
		return 0;
	}
	return fab_parse_uint(v, 1, 65535, &c->ecn_sport);
}

/* Apply one word to c.  Keeps c->out_ifindex (the wiring) untouched. */
static inline int fab_kv_apply(struct fab_port *c, const char *word,
			       char *err, size_t errlen)
{
	char buf[128], *v;
	int rc = -EINVAL;

	if (strlen(word) >= sizeof(buf))
		goto bad;
	strcpy(buf, word);
	if (!strcmp(buf, "clear")) {
		__u32 out = c->out_ifindex;

		memset(c, 0, sizeof(*c));
		c->out_ifindex = out;
		return 0;
	}
	v = strchr(buf, '=');
	if (!v)
		goto bad;
	*v++ = '\0';
	if (!strcmp(buf, "loss"))
		rc = fab_parse_prob(v, &c->loss_ppm);
	else if (!strcmp(buf, "ge"))
		rc = fab_set_ge(c, v);
	else if (!strcmp(buf, "blackhole"))
		rc = fab_set_blackhole(c, v);
	else if (!strcmp(buf, "ecn"))
		rc = fab_set_ecn(c, v);
	else if (!strcmp(buf, "ecn-sport"))
		rc = fab_set_ecn_sport(c, v);
	else if (!strcmp(buf, "corrupt"))
		rc = fab_parse_prob(v, &c->corrupt_ppm);
	else if (!strcmp(buf, "reorder"))
		rc = fab_parse_prob(v, &c->reorder_ppm);
	if (!rc)
		return 0;
bad:
	snprintf(err, errlen, "bad setting '%s' (see xrfabric help)", word);
	return -EINVAL;
}

static inline double fab_prob(__u32 ppm)
{
	return (double)ppm / FAB_PPM;
}

/* The config as words `set` accepts, space separated; "clear" if none. */
static inline void fab_kv_format(const struct fab_port *c, char *out, size_t n)
{
	size_t len = 0;

#define FAB_ADD(...)                                                     \
	do {                                                             \
		if (len < n)                                             \
			len += snprintf(out + len, n - len, __VA_ARGS__); \
	} while (0)
	out[0] = '\0';
	if (c->loss_ppm)
		FAB_ADD(" loss=%g", fab_prob(c->loss_ppm));
	if (c->ge_on)
		FAB_ADD(" ge=%g,%g,%g,%g", fab_prob(c->ge_gb_ppm),
			fab_prob(c->ge_bg_ppm), fab_prob(c->ge_loss_good_ppm),
			fab_prob(c->ge_loss_bad_ppm));
	if (c->bh_mode == FAB_BH_ALL)
		FAB_ADD(" blackhole=all");
	else if (c->bh_mode == FAB_BH_SPORT || c->bh_mode == FAB_BH_DPORT)
		FAB_ADD(" blackhole=%s:%u",
			c->bh_mode == FAB_BH_SPORT ? "sport" : "dport", c->bh_port);
	if (c->ecn_rate_mbps)
		FAB_ADD(" ecn=%u,%u", c->ecn_rate_mbps, c->ecn_thresh_bytes);
	if (c->ecn_sport)
		FAB_ADD(" ecn-sport=%u", c->ecn_sport);
	if (c->corrupt_ppm)
		FAB_ADD(" corrupt=%g", fab_prob(c->corrupt_ppm));
	if (c->reorder_ppm)
		FAB_ADD(" reorder=%g", fab_prob(c->reorder_ppm));
#undef FAB_ADD
	if (!out[0])
		snprintf(out, n, " clear");
	memmove(out, out + 1, strlen(out)); /* drop the leading space */
}

#endif /* XR_FABRIC_KV_H */
