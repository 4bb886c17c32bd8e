package decide

import "strings"

// OneShotMax is where the default multi-CTA AllReduces (ours, multicta,
// and NCCL's device API one, nccl-lsa) switch from the one-shot to the
// two-shot kernel with more than 2 PEs: the rule of suites/collectives
// (OneShotMax and its use in the registration), restated here because the
// readers of results never import the suites. Used only for a record that
// does not say which kernel ran.
const OneShotMax = 256 << 10

// Operation names the code a benchmark ran at one size, from what its
// record says ran (effective), why it is a library's one-rank copy
// (oneRank: record.Point.OneRankCopy, "" where it is not) and its PE count:
// two implementations with the same operation ran the same code here and
// compare as one. Why says, for an operation several names share, what
// makes them one ("" where the operation is the benchmark's own).
//
//   - A one-rank copy (NCCL's collectives on one PE, whatever algorithm is
//     forced, and NVSHMEM's on-stream call handed to NCCL there): oneRank.
//   - NVSHMEM's on-stream collective where NVSHMEM handed it to NCCL
//     (effective nccl-via-nvshmem): NCCL's own choice, as collectives/X/nccl.
//   - The default multi-CTA AllReduces (multicta, nccl-lsa) at a size where
//     they ran the one-shot or the two-shot kernel, as the variant forced to
//     that kernel: the effective field names it (oneshot-PATH, twoshot-PATH,
//     nccl-lsa-oneshot-VERSION, nccl-lsa-twoshot-VERSION); a record without
//     it is decided by the rule that picks the kernel (OneShotMax), and Why
//     says so.
//
// Everything else is its own operation: the benchmark ID.
func Operation(id, effective, oneRank string, pes int, size int64) (op, why string) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] != "collectives" {
		return id, ""
	}
	coll, impl := parts[1], parts[2]
	viaNCCL := impl == "nvshmem-stream" && effective == "nccl-via-nvshmem"
	switch {
	case oneRank != "":
		return "collectives/" + coll + ": NCCL's one-rank copy", oneRank
	case viaNCCL || impl == "nccl":
		return "collectives/" + coll + ": NCCL's own choice", "NVSHMEM handed its on-stream call to NCCL (effective nccl-via-nvshmem), which ran its own choice"
	case coll == "allreduce" && (strings.HasPrefix(impl, "multicta") || strings.HasPrefix(impl, "nccl-lsa")):
		family := "our multi-CTA"
		if strings.HasPrefix(impl, "nccl-lsa") {
			family = "NCCL LSA"
		}
		if k := shotOf(effective); k != "" {
			return "collectives/allreduce: " + family + " " + k + " kernel", "the same kernel ran, as each record's effective field says"
		}
		k := "one-shot"
		switch {
		case strings.HasSuffix(impl, "-twoshot"):
			k = "two-shot"
		case strings.HasSuffix(impl, "-oneshot"):
		case size > OneShotMax && pes > 2:
			k = "two-shot"
		}
		return "collectives/allreduce: " + family + " " + k + " kernel",
			"the records do not say which kernel ran: by the rule that picks it, one-shot up to 256 KiB and with 2 PEs (suites/collectives)"
	}
	return id, ""
}

// shotOf reads the kernel from an effective field: oneshot-p2p,
// nccl-lsa-twoshot-2.28.9.
func shotOf(effective string) string {
	e := strings.TrimPrefix(effective, "nccl-lsa-")
	switch {
	case strings.HasPrefix(e, "oneshot"):
		return "one-shot"
	case strings.HasPrefix(e, "twoshot"):
		return "two-shot"
	}
	return ""
}
