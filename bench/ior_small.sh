#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# ior_small.sh -- IOR's small transfers over clf: against a local file.
#
# usage: bench/ior_small.sh IOR_BINARY [REPS] [UFS_DIR]
#
# IOR (github.com/hpc/ior, built by hand against romio-clf/mpicc-clf:
# CC=romio-clf/mpicc-clf ./configure && make; it is not part of clf)
# runs with its MPIIO backend and 2 processes, transfers of 1 KiB and
# of 47008 bytes (IO500's ior-hard), independent and collective (-c),
# writes then reads (-w -r), on a clf: file ($CLF_CONFIG's instance,
# use_romio_optimizations=false and =true) and on a ufs: file in UFS_DIR
# (default $TMPDIR or /tmp), the configurations taken in turn REPS times
# (default 3) so that a change of load hits all alike.  Prints, per
# case, the median of IOR's mean bandwidth (MiB/s; IOR counts open and
# close in it) and its ratio to the local file's, and the load.
# CASES="XFER:SEGMENTS ..." (default "1k:16000 47008:800") sets the
# transfers and the segments per process; NP the processes (default 2);
# STRIPE=BYTES creates the clf: files with that stripe (striping_unit)
# over 2 iods, so that a transfer falls into many pieces per iod;
# CACHE=false|true passes the hint clf_client_cache (default: the
# driver's, on: docs/small-io.md); BLOCK=BYTES sets IOR's -b (default:
# the transfer, interleaving the processes; 1m gives each process whole
# 1 MiB blocks, where extent locks pay most).
set -eu

ior=${1:?usage: ior_small.sh IOR_BINARY [REPS] [UFS_DIR]}
reps=${2:-3}
ufs=${3:-${TMPDIR:-/tmp}}
np=${NP:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one RUN_ID XFER SEGMENTS FLAG PATH HINT: append "write MiB/s" and
# "read MiB/s" to $tmp/RUN_ID.
one() {
	# (sh has no locals: these names are this function's own)
	o_id=$1 o_xfer=$2 o_segs=$3 o_flag=$4 o_path=$5 o_hint=$6
	mpiexec -n "$np" -genv IOR_HINT__MPI__use_romio_optimizations \
		"$o_hint" ${STRIPE:+-genv IOR_HINT__MPI__striping_unit "$STRIPE" \
		-genv IOR_HINT__MPI__striping_factor 2} \
		${CACHE:+-genv IOR_HINT__MPI__clf_client_cache "$CACHE"} \
		"$ior" -a MPIIO -t "$o_xfer" -b "${BLOCK:-$o_xfer}" \
		-s "$o_segs" ${o_flag:+"$o_flag"} -w -r -i 1 -o "$o_path" >"$tmp/out" 2>&1 || {
		cat "$tmp/out" >&2
		echo "ior_small.sh: ior failed ($o_id)" >&2
		exit 1
	}
	awk '$1 == "write" && NF > 10 && $2 ~ /^[0-9.]+$/ { w = $4 }
	     $1 == "read" && NF > 10 && $2 ~ /^[0-9.]+$/ { r = $4 }
	     END { print w, r }' "$tmp/out" >>"$tmp/$o_id"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

cases=${CASES:-"1k:16000 47008:800"}
for _ in $(seq "$reps"); do
	for c in $cases; do
		xfer=${c%:*} segs=${c#*:}
		for coll in ind coll; do
			flag=; [ "$coll" = coll ] && flag=-c
			one "$xfer-$coll-ufs" "$xfer" "$segs" "$flag" \
				"ufs:$ufs/ior_small.$$" false
			one "$xfer-$coll-clf" "$xfer" "$segs" "$flag" \
				"clf:/ior_small.$$" false
			one "$xfer-$coll-romio" "$xfer" "$segs" "$flag" \
				"clf:/ior_small.$$" true
		done
	done
done

echo "IOR MPIIO, $np processes, median of $reps (MiB/s, IOR's mean; x = / ufs); load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-5s %-5s %9s %9s %7s %9s %7s\n' xfer mode op ufs clf x \
	clf-romio x
for c in $cases; do
	xfer=${c%:*}
	for coll in ind coll; do
		for op in 1 2; do
			name="write"; [ "$op" = 2 ] && name="read"
			u=$(cut -d' ' -f"$op" "$tmp/$xfer-$coll-ufs" | median)
			n=$(cut -d' ' -f"$op" "$tmp/$xfer-$coll-clf" | median)
			o=$(cut -d' ' -f"$op" "$tmp/$xfer-$coll-romio" | median)
			printf '%-8s %-5s %-5s %9.1f %9.1f %7.3f %9.1f %7.3f\n' \
				"$xfer" "$coll" "$name" "$u" "$n" \
				"$(echo "$n / $u" | bc -l)" "$o" \
				"$(echo "$o / $u" | bc -l)"
		done
	done
done
