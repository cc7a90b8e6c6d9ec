#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_adhoc_slurm.sh -- clf adhoc under Slurm: the instance is started by
# `srun` inside a batch job, as a site's job script would do it.  The test
# runs a real Slurm on this host (slurmctld and one slurmd on loopback
# ports of its own, MUNGE authentication, the Debian packages) and:
#
#  1. submits a job whose script runs `srun --overlap -n 2 clf adhoc start`
#     (ranks from SLURM_PROCID/SLURM_NTASKS): `clf adhoc wait` returns the
#     configuration, a file written with `clf cp` reads back the same, an
#     MPI step of the job (`srun --mpi=pmi2`, the ROMIO driver preloaded
#     into an unmodified program) writes and checks a file on clf;
#  2. `clf adhoc stop` stages clf:/out out (same bytes) and has written
#     it back to the backing directory (--backing), the job ends
#     COMPLETED with exit code 0 and no daemon is left;
#  3. a second job is cancelled with `scancel` while its instance runs:
#     the SIGTERM that Slurm sends the step stages out and writes back
#     what was written since, and no daemon is left.
#
# Needs root (slurmd runs jobs as their users; the test's user is root).
#
# usage: test_adhoc_slurm.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

if [ -z "${CLF_ADHOC_TIMED:-}" ]; then
	export CLF_ADHOC_TIMED=1
	exec timeout -k 10 300 bash "$0" "$@"
fi

here=$(cd "$(dirname "$0")" && pwd)
. "$here/adhoc_lib.sh"
. "$here/munge_lib.sh"
adhoc_find_build "$@"
unset CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT CLF_SECRET_FILE LD_PRELOAD || true
export CLF_ADHOC_HOST=127.0.0.1

for p in slurmctld slurmd sbatch srun scancel scontrol sinfo; do
	command -v "$p" >/dev/null || {
		echo "FAIL: no $p: scripts/install-deps.sh installs slurmctld, slurmd and slurm-client" >&2
		exit 1
	}
done
if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL: test_adhoc_slurm.sh runs Slurm's daemons and needs root" >&2
	exit 1
fi
munge_ensure

lib=$build/romio-clf/libromio-clf.so
prog=$build/tests/integration/romio/romio_io_plain
for f in "$lib" "$prog"; do
	[ -e "$f" ] || { echo "FAIL: $f not built" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/clf-slurm.XXXXXX)
chmod 755 "$tmp"
data=$tmp/inst
launcher=
ctld=
slurmd=

cleanup() {
	trap - EXIT INT TERM
	set +e
	[ -n "$ctld" ] && scancel --quiet --state=RUNNING -u root 2>/dev/null
	for p in $(daemons); do kill -KILL "$p"; done
	for p in $slurmd $ctld; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $slurmd $ctld; do
		for _i in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

slurm_fail() {
	local f
	for f in "$tmp"/slurm/*.log "$tmp"/job*.out; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -15 "$f" >&2
	done
	fail "$@"
}

# A one-node cluster: this host under its short name, reached at
# 127.0.0.1, on ports of its own.  KillWait leaves the step's SIGTERM
# handler time to stage out before Slurm's SIGKILL.
step="slurm up"
host=$(hostname -s)
sport=$((20000 + RANDOM % 8000))
mkdir -p "$tmp/slurm/state" "$tmp/slurm/spool"
export SLURM_CONF=$tmp/slurm/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=clftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$sport
SlurmdPort=$((sport + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$tmp/slurm/state
SlurmdSpoolDir=$tmp/slurm/spool
SlurmctldPidFile=$tmp/slurm/slurmctld.pid
SlurmdPidFile=$tmp/slurm/slurmd.pid
SlurmctldLogFile=$tmp/slurm/slurmctld.log
SlurmdLogFile=$tmp/slurm/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
InactiveLimit=0
KillWait=60
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=clf Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
slurmctld -D -i >"$tmp/slurm/ctld.out" 2>&1 &
ctld=$!
slurmd -D >"$tmp/slurm/slurmd.out" 2>&1 &
slurmd=$!
for i in $(seq 150); do
	sinfo -h -o %t 2>/dev/null | grep -qx idle && break
	[ "$i" = 150 ] && slurm_fail "the node is not idle: $(sinfo 2>&1)"
	sleep 0.2
done

# job N: the batch script of the instance's job; its output in job$N.out.
job() {
	cat >"$tmp/job$1.sh" <<EOF
#!/bin/bash
exec srun --overlap -n 2 "$clf" adhoc start --data "$data" \\
	--iods-per-host 2 --base-port $port --backing "$tmp/backing" \\
	--stage-out "clf:/out=$tmp/staged$1" --config-out "$tmp/job.conf"
EOF
	sbatch --parsable -n 2 -J clf-adhoc -D "$tmp" -o "$tmp/job$1.out" \
		"$tmp/job$1.sh"
}

# state JOBID: the job's state and exit code, as "STATE EXIT".
state() {
	scontrol show job "$1" 2>/dev/null |
		sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p; s/.*ExitCode=\([0-9:]*\).*/\1/p' |
		tr '\n' ' '
}

# ended JOBID: wait until the job has ended (60 s); prints its state.
ended() {
	local i s
	for i in $(seq 300); do
		s=$(state "$1")
		case $s in
		PENDING*|RUNNING*|COMPLETING*|CONFIGURING*|"") sleep 0.2 ;;
		*) echo "$s"; return 0 ;;
		esac
	done
	slurm_fail "job $1 did not end: $(state "$1")"
}

# up N: submit job N on a free base port and wait for its instance.
up() {
	local try
	for try in 1 2 3; do
		port=$((21000 + RANDOM % 8000))
		jobid=$(job "$1") || slurm_fail "sbatch failed"
		if "$clf" adhoc wait --data "$data" --timeout 90 \
			>"$tmp/wait.out" 2>&1; then
			return 0
		fi
		ended "$jobid" >/dev/null
		grep -q "in use" "$tmp/job$1.out" || break
	done
	slurm_fail "the instance did not come up: $(cat "$tmp/wait.out")"
}

step="job 1: srun starts the instance"
up 1
cmp "$data/clf.conf" "$tmp/job.conf" || slurm_fail "--config-out differs"
[ "$(daemons | wc -l)" = 4 ] ||
	slurm_fail "want metad, 2 iods and the stager: $(daemons | xargs -r ps -o pid=,args= -p)"
export CLF_CONFIG=$data/clf.conf

step="job 1: clients"
head -c 300000 /dev/urandom >"$tmp/in"
"$clf" mkdir clf:/out >/dev/null || slurm_fail "mkdir"
"$clf" cp "$tmp/in" clf:/out/f >/dev/null || slurm_fail "cp in"
"$clf" cp clf:/out/f "$tmp/back" >/dev/null || slurm_fail "cp out"
cmp "$tmp/in" "$tmp/back" || slurm_fail "read back differs"
srun --jobid="$jobid" --overlap --mpi=pmi2 -n 2 \
	--export="ALL,LD_PRELOAD=$lib" "$prog" matrix slurm \
	>"$tmp/mpi.out" 2>&1 || {
	cat "$tmp/mpi.out" >&2
	slurm_fail "the MPI step failed"
}
echo "MPI step: $(tail -1 "$tmp/mpi.out")"

step="job 1: clf adhoc stop"
"$clf" adhoc stop --data "$data" --timeout 60 || slurm_fail "stop failed"
s=$(ended "$jobid")
[ "$s" = "COMPLETED 0:0 " ] || slurm_fail "job $jobid ended '$s', want COMPLETED 0:0"
cmp "$tmp/in" "$tmp/staged1/out/f" || slurm_fail "staged-out file differs"
cmp "$tmp/in" "$tmp/backing/out/f" ||
	slurm_fail "the stop did not write clf:/out/f back to the backing directory"
gone

step="job 2: scancel"
up 2
head -c 200000 /dev/urandom >"$tmp/in"
"$clf" cp "$tmp/in" clf:/out/f >/dev/null || slurm_fail "cp in"
scancel "$jobid" || slurm_fail "scancel failed"
s=$(ended "$jobid")
case $s in
CANCELLED*) ;;
*) slurm_fail "job $jobid ended '$s', want CANCELLED" ;;
esac
gone
cmp "$tmp/in" "$tmp/staged2/out/f" || slurm_fail "scancel did not stage out clf:/out/f"
cmp "$tmp/in" "$tmp/backing/out/f" ||
	slurm_fail "scancel did not write clf:/out/f back to the backing directory"

echo "PASS: clf adhoc under Slurm (srun start, MPI step, stop, scancel)"
