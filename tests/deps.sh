#!/usr/bin/env bash
# Installs the Debian (bookworm) packages xroce's build and tests need.
set -euo pipefail
pkgs=(make gcc clang llvm libbpf-dev libxdp-dev bpftool xdp-tools libelf-dev
      zlib1g-dev libsodium-dev pkg-config libcmocka-dev iproute2 iperf3 ethtool cppcheck
      clang-tidy tshark gnuplot-nox python3 util-linux procps qemu-system-x86
      sockperf groff-base
      # ibverbs on xroce: <infiniband/verbs.h> to build against, and the
      # unmodified programs the tests run (ibv_devinfo, ibv_rc_pingpong,
      # perftest's ib_*_bw / ib_*_lat)
      libibverbs-dev ibverbs-utils perftest
      # libfabric provider and Open MPI on it (fi_info, fi_pingpong, mpirun)
      libfabric-dev libfabric-bin openmpi-bin libopenmpi-dev)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
