# shellcheck shell=bash
# mpi.sh: how the tests and benchmarks start Open MPI jobs on an emulated
# cluster (cluster.sh); source it.
#
#   xr_mpirun ENVFILE TRANSPORT NP PROGRAM [ARGS...]
#
# runs PROGRAM on NP ranks, one per host h0..h(NP-1), mpirun in the
# management namespace, its daemons entered through nsagent.sh.
# TRANSPORT:
#   xroce  pml cm + mtl ofi over libfabric's "xroce;ofi_rxm" (the provider
#          from build/lib, interface eth0)
#   tcp    pml ob1 + btl tcp (and self) over eth0: Open MPI's TCP path
# Both: Open MPI's traffic on the management network only; ranks yield
# the CPU while they wait (mpi_yield_when_idle: the emulated hosts share
# two CPUs, and a rank spinning in its progress loop would take the time
# the peer it waits for needs) and are not bound to a core (each host's
# daemon thinks it has the machine to itself and binds its rank to core 0:
# every rank of the job then shared one of the two CPUs, and the other
# idled); run as root (OMPI_ALLOW_RUN_AS_ROOT).
# XR_MPI_EXTRA (words) is added to mpirun's options.

XR_MPI_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

xr_mpirun() {
	local envfile=$1 transport=$2 np=$3 opts=()
	shift 3
	# shellcheck disable=SC1090
	. "$envfile"
	# shellcheck disable=SC2154 # from the cluster's env file
	opts=(--hostfile "$CL_HOSTFILE" -np "$np" --map-by node
	      --mca plm rsh --mca plm_rsh_agent "$XR_MPI_ROOT/tests/mpi/nsagent.sh"
	      --mca oob_tcp_if_include "$CL_MGMT_NET"
	      --mca mpi_yield_when_idle 1 --bind-to none -x XR_MPI_HOSTMAP)
	case $transport in
	xroce)
		# ofi_rxm's own protocol limits: messages above 128 KiB go
		# by rendezvous, the receiver READing the sender's buffer.
		opts+=(--mca pml cm --mca mtl ofi --mca btl ^tcp,openib,vader
		       -x FI_PROVIDER_PATH="$XR_MPI_ROOT/build/lib" -x FI_PROVIDER=xroce
		       -x FI_XROCE_IFACE=eth0)
		;;
	tcp)
		opts+=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include eth0)
		;;
	*)
		echo "xr_mpirun: transport xroce or tcp" >&2
		return 2
		;;
	esac
	# shellcheck disable=SC2086 # XR_MPI_EXTRA is a list of words
	XR_MPI_HOSTMAP=$CL_HOSTMAP OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		nsenter --net="/var/run/netns/$CL_MGMT_NS" \
		mpirun "${opts[@]}" ${XR_MPI_EXTRA:-} "$@"
}
