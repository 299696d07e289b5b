// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The provider entry point libfabric looks for in a DL provider
 * (fi_prov_ini), its parameters (FI_XROCE_* environment variables, listed
 * by `fi_info -e`), and libxroce's log lines routed into libfabric's log
 * (FI_LOG_LEVEL) so one switch shows both.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi.h"

struct xrf_params xrf_params = {
	.mem_size = 256u << 20,
	.bounce_max = 64u << 20,
	.timeout_ms = 10000,
	.cm_timeout_ms = 10000,
	.npaths = 0,
	.progress_thread = 1,
};

void xrf_params_init(void)
{
	size_t v;
	int i;

	fi_param_define(&xrf_prov, "iface", FI_PARAM_STRING,
			"Interfaces to offer, comma separated (default: every "
			"interface that carries the xroce XDP program)");
	fi_param_define(&xrf_prov, "mem_size", FI_PARAM_SIZE_T,
			"Bytes of device memory per interface and process "
			"(default %zu)", xrf_params.mem_size);
	fi_param_define(&xrf_prov, "bounce_max", FI_PARAM_SIZE_T,
			"Bytes of device memory for bounce buffers, through which "
			"memory libxroce cannot register is sent and received "
			"(default %zu)", xrf_params.bounce_max);
	fi_param_define(&xrf_prov, "timeout_ms", FI_PARAM_INT,
			"Peer silence after which outstanding work fails "
			"(default %d)", xrf_params.timeout_ms);
	fi_param_define(&xrf_prov, "cm_timeout_ms", FI_PARAM_INT,
			"How long fi_connect waits for an answer (default %d)",
			xrf_params.cm_timeout_ms);
	fi_param_define(&xrf_prov, "paths", FI_PARAM_INT,
			"Paths per connection (default: libxroce's, %d)",
			XROCE_DEFAULT_PATHS);
	fi_param_define(&xrf_prov, "progress_thread", FI_PARAM_BOOL,
			"Run libxroce's progress thread (default yes): without it, "
			"data moves only while the application calls in "
			"(FI_PROGRESS_MANUAL)");
	fi_param_get_str(&xrf_prov, "iface", &xrf_params.iface);
	if (!fi_param_get_bool(&xrf_prov, "progress_thread", &i))
		xrf_params.progress_thread = i;
	if (!fi_param_get_size_t(&xrf_prov, "mem_size", &v) && v >= (1u << 20))
		xrf_params.mem_size = v;
	if (!fi_param_get_size_t(&xrf_prov, "bounce_max", &v) && v >= (1u << 20))
		xrf_params.bounce_max = v;
	if (!fi_param_get_int(&xrf_prov, "timeout_ms", &i) && i > 0)
		xrf_params.timeout_ms = i;
	if (!fi_param_get_int(&xrf_prov, "cm_timeout_ms", &i) && i > 0)
		xrf_params.cm_timeout_ms = i;
	if (!fi_param_get_int(&xrf_prov, "paths", &i) && i > 0 && i <= XROCE_MAX_PATHS)
		xrf_params.npaths = i;
}

void xrf_xroce_log(void *arg, enum xroce_log_level level, const char *fmt,
		   va_list ap)
{
	const struct xrf_dev *xd = arg;
	enum fi_log_level l = level <= XROCE_LOG_WARN ? FI_LOG_WARN :
			      level == XROCE_LOG_INFO ? FI_LOG_INFO : FI_LOG_DEBUG;
	char line[512];

	if (xd && xd->quiet)
		l = FI_LOG_DEBUG;
	if (!fi_log_enabled(&xrf_prov, l, FI_LOG_CORE))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fi_log(&xrf_prov, l, FI_LOG_CORE, __func__, __LINE__, "libxroce: %s\n", line);
}

static void xrf_cleanup(void)
{
	xrf_dev_cleanup();
}

struct fi_provider xrf_prov = {
	.version = XRF_PROV_VERSION,
	.fi_version = XRF_FI_VERSION,
	.name = XRF_NAME,
	.getinfo = xrf_getinfo,
	.fabric = xrf_fabric,
	.cleanup = xrf_cleanup,
};

/*
 * ofi_rxm's protocol limits, when xroce is the provider asked for.  rxm
 * sends messages above its SAR limit (default 128 KiB) by rendezvous: both
 * ends register the application's buffer for each message and deregister
 * it after.  On xroce a registration of unregistered memory copies its
 * pages into device memory and a deregistration copies them back
 * (docs/VERBS.md), which costs more than sending the message through
 * rxm's bounce buffers, which are registered once: a 1 MiB MPI allreduce
 * on 4 ranks took 2-3x as long (docs/OFI.md).  So, up to 32 MiB, rxm
 * segments instead.  rxm reads its parameters when libfabric initialises
 * it, after the DL providers, this one included.  Only where FI_PROVIDER
 * names xroce (and does not exclude it), so that a process using rxm over another provider is not
 * changed by this library merely being installed; a value the user set
 * is kept.
 */
static void rxm_defaults(void)
{
	const char *want = getenv("FI_PROVIDER");

	if (!want || want[0] == '^' || !strstr(want, XRF_NAME))
		return;
	if (setenv("FI_OFI_RXM_SAR_LIMIT", "33554432", 0))
		FI_WARN(&xrf_prov, FI_LOG_CORE, "could not set rxm's SAR limit\n");
}

__attribute__((visibility("default"))) struct fi_provider *fi_prov_ini(void)
{
	xrf_params_init();
	rxm_defaults();
	return &xrf_prov;
}
