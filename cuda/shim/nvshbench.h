/* nvshbench.h: the flat C ABI of libnvshbench.so, the only boundary between
 * the Go tool and CUDA / NVSHMEM / NCCL / NVML. Plain ints, fixed-layout
 * structs (64-bit fields first, then 32-bit ones, then bytes, so Go mirrors
 * them exactly) and pointers; every function returns 0 on success or a
 * negative status, with nb_last_error() describing the failure. Loaded at
 * run time with purego.
 *
 * The constants below are mirrored in cuda/abi.go; cuda/abi_test.go parses
 * this header and fails when the two drift apart. Operations cross by name
 * (nb_args.op), so they are not mirrored: the Go side reads the dispatch
 * tables (and each entry's traits) from the shim's sources. */
#ifndef NVSHBENCH_H
#define NVSHBENCH_H
#include <stdint.h>

#define NB_ABI_VERSION 8

/* Status codes (negative returns). */
#define NB_ERR -1          /* the operation failed */
#define NB_UNREACHABLE -2  /* this job cannot run the point (no load/store path, no NCCL, ...) */
#define NB_NOT_CAPTURABLE -4 /* a CUDA graph cannot capture it */

#define NB_MAX_PES 64
#define NB_MAX_LINKS 36
#define NB_MAX_VALUES 8   /* named values a point's result holds (nb_result.values) */
#define NB_VALUE_NAME 24  /* bytes of a value's name, the NUL included */
#define NB_VALUE_UNIT 8   /* bytes of a value's unit, the NUL included */

#ifdef __cplusplus
extern "C" {
#endif

/* Operations are named, not numbered, across the ABI: nb_args.op is the
 * name of an entry of the shim's dispatch table ("rma.put", "lat.get",
 * "coll.allreduce", ...; the tables sit beside their kernels in rma.cuh,
 * latency.cuh, collectives.cuh, nccldev.cuh and moe.cuh). A new operation
 * is a kernel branch and a table entry there plus a Go registration that
 * names it. The prefix says how the operation is measured: rma (args.initiator
 * issues towards args.peer, both ways with bidir), lat (one CTA of
 * args.initiator towards args.peer; round trips),
 * coll (every PE; args.impl says whose), moe (every PE: dispatch/combine),
 * host (every PE: host calls of NVSHMEM's API). */
#define NB_OP_NAME 32

enum { NB_SCOPE_THREAD = 0, NB_SCOPE_WARP = 1, NB_SCOPE_BLOCK = 2 };

enum {
  NB_IMPL_NVSHMEM_DEVICE = 1, /* one CTA, collective launch, scope thread/warp/block */
  NB_IMPL_NVSHMEM_STREAM = 2, /* nvshmemx_*_on_stream (may be handed to NCCL by NVSHMEM) */
  NB_IMPL_OUR_ONESHOT = 3,    /* our multi-CTA AllReduce: every PE reads all peers (load/store) */
  NB_IMPL_OUR_TWOSHOT = 4,    /* our multi-CTA AllReduce: reduce-scatter + all-gather (load/store) */
  NB_IMPL_NCCL = 5,
  NB_IMPL_LSA_ONESHOT = 6,    /* NCCL device API AllReduce: LSA pointers + LSA barriers, one-shot */
  NB_IMPL_LSA_TWOSHOT = 7,    /* NCCL device API AllReduce: LSA pointers + LSA barriers, two-shot */
  NB_IMPL_NCCL_CE = 8         /* NCCL's copy-engine (zero-SM) path: nccl<Coll>Config, CTA policy ZERO, window buffers */
};

enum { NB_DT_F32 = 0, NB_DT_BF16 = 1, NB_DT_F16 = 2 };

/* Paths between PEs (nb_job's matrix). */
enum { NB_PATH_LOCAL = 0, NB_PATH_P2P = 1, NB_PATH_REMOTE = 2 };

/* The arguments of one point, the same on every PE. */
typedef struct {
  int64_t size;     /* bytes per operation (collectives: per PE; alltoall: all blocks together) */
  int64_t seed;     /* verification pattern seed */
  int64_t extent;   /* chases: bytes of the chain (0: at least 4 x L2, the caches flushed; else warmed in L2) */
  double zipf;      /* MoE: the routing's Zipf exponent (0: uniform) */
  int32_t scope;    /* NB_SCOPE_* */
  int32_t blocking; /* 1: blocking call, 0: _nbi (+ quiet) */
  int32_t ctas;
  int32_t threads;
  int32_t elem;     /* element bytes for p/g: 1, 2, 4, 8 */
  int32_t iters;    /* operations per timed launch; 0: calibrated on the initiator to about 20 ms and shared */
  int32_t warmup;   /* untimed launches before the samples */
  int32_t samples;  /* timed launches */
  int32_t peer;     /* the PE the initiator talks to (rma, lat; the initiator itself: a loopback) */
  int32_t bidir;    /* both PEs issue at once */
  int32_t verify;
  int32_t per_op;   /* device collectives: 1 = one kernel launch per operation, 0 = the iterations fused in one kernel */
  int32_t impl;     /* collectives: NB_IMPL_* */
  int32_t dtype;    /* collectives: NB_DT_*; MoE: 0 bf16, 1 fp8 tokens */
  int32_t graph;    /* capture the timed launch in a CUDA graph */
  int32_t tokens;   /* MoE: tokens per rank */
  int32_t hidden;   /* MoE: hidden size (elements) */
  int32_t topk;     /* MoE: experts per token */
  int32_t experts;  /* MoE: experts over all PEs */
  int32_t moe_mode; /* MoE: 0 ll (a message per selection), 1 normal (a message per destination rank) */
  int32_t corrupt;  /* tests: damage one element of what the check reads before it runs (it must then fail) */
  int32_t stride;   /* strided RMA (iput/iget): the element stride of the strided side (1: contiguous) */
  char op[NB_OP_NAME]; /* the operation: a dispatch-table name, NUL-terminated */
  char nccl_algo[32];  /* "" = NCCL's choice; else forced with NCCL_ALGO at communicator creation */
  char nccl_proto[32];
  int32_t initiator; /* rma, lat: the PE that issues towards peer and times (every other PE idles, or answers); 0 elsewhere */
  int32_t stage_offset; /* bytes per SM, a staged mechanism (TMA): its shared-memory stages this many bytes past a 128-byte line (0: on it) */
} nb_args;

/* A named value of a point on this PE (nb_result.values): a number the
 * Go side reads as a number, by its name, in its unit ("s", "B/s", "1":
 * a share, a count or a 0/1 answer). The Go side fails a point whose value
 * it does not declare, or declares in another unit. */
typedef struct {
  double value;
  char name[NB_VALUE_NAME];
  char unit[NB_VALUE_UNIT];
} nb_value;

/* The result of one point on this PE. */
typedef struct {
  int64_t bytes;       /* payload this PE moved per operation (0 for a passive PE) */
  int64_t errors;      /* mismatching elements found in this PE's memory */
  int64_t checked;     /* elements checked on this PE */
  int64_t job_errors;  /* every PE: mismatches summed over the job */
  int64_t job_checked; /* every PE: elements checked over the job */
  int64_t job_bytes;   /* every PE: payload per operation summed over the job */
  int64_t n_samples;   /* samples written to samples_out (events timer: one per timed launch) */
  int64_t n_kernel;    /* in-kernel per-iteration times written to kernel_out (0: the kernels keep none) */
  int64_t work_set;    /* bytes of the largest buffer one GPU serves for the point (chains: the chain) */
  nb_value values[NB_MAX_VALUES]; /* what the family measured beside the samples (n_values of them) */
  int32_t initiator;   /* this PE issued operations and timed them */
  int32_t iters;       /* loop iterations per timed launch (agreed by every PE) */
  int32_t ops_per_iter; /* operations per loop iteration (atomics: one per thread); samples are per operation */
  int32_t failed_pe;   /* on error: the PE that failed first, else -1 */
  int32_t n_values;    /* values written to values[] (a point with more fails: never a silent drop) */
  int32_t pad;
  char detail[256];    /* first mismatch on this PE, or the error */
} nb_result;

/* What one PE is and has (nb_device_info, nb_job). */
typedef struct {
  int64_t mem_bytes;
  int64_t l2_bytes;
  int32_t my_pe;
  int32_t n_pes;
  int32_t device;
  int32_t sms;
  int32_t clock_khz;
  int32_t cc_major;
  int32_t cc_minor;
  int32_t cuda_runtime;  /* e.g. 13000 */
  int32_t cuda_driver;
  int32_t nvshmem_major;
  int32_t nvshmem_minor;
  int32_t nvshmem_patch;
  int32_t nccl_version;  /* ncclGetVersion of the libnccl.so.2 this PE loaded, 0 if none */
  int32_t pad;
  char name[96];
  char uuid[48];
  char pci_bus_id[32];
  char host[64];
} nb_info;

/* A GPU's links as NVML and CUDA describe them (nb_links): the physical
 * ceilings every bandwidth is checked against. */
typedef struct {
  double link_bps;   /* NVML's rate of one active NVLink, bytes/s per direction (0: no NVLink) */
  double pcie_bps;   /* the PCIe link at its maximum generation and width, bytes/s per direction (0: unknown) */
  double hbm_bps;    /* device memory: bus width x memory clock x 2, bytes/s (0: unknown) */
  int32_t links;     /* active NVLinks */
  int32_t pcie_gen;
  int32_t pcie_width;
  int32_t nvml;      /* 1: NVML answered; 0: it did not (detail says why) */
  char remote[NB_MAX_LINKS][32]; /* the PCI bus id at the far end of each link ("" when inactive) */
  char detail[128];
} nb_links;

int nb_abi_version(void);
const char *nb_last_error(void);

/* Device queries that need no NVSHMEM. */
int nb_device_count(int *count);
int nb_device_info(int device, nb_info *out);
int nb_can_access_peer(int dev, int peer, int *can);
/* nb_link_info: the device's NVLinks (through NVML, dlopened), its PCIe link
 * and its memory's peak rate. A machine without NVML gets nvml = 0 and the
 * CUDA-side figures. */
int nb_link_info(int device, nb_links *out);

/* The NVSHMEM unique ID (128 bytes) for the UID bootstrap; rank 0 calls it
 * before nb_init. */
int nb_get_uniqueid(uint8_t *uid, int len);

/* nb_init starts NVSHMEM and makes every symmetric allocation the tool will
 * ever need, in the same order on every PE. mode 0: UID bootstrap with
 * rank/nranks/uid; mode 1: nvshmem_init() with the bootstrap from the
 * environment (PMI, PMIx, MPI under srun/mpirun). heap is the size of each
 * of the source, destination and scratch buffers per PE in bytes. */
int nb_init(int mode, int rank, int nranks, const uint8_t *uid, int uidlen, int device, int64_t heap);
int nb_finalize(void);

/* nb_job is collective: every PE's nb_info (max entries) and the n x n
 * matrix of paths (paths[i*n + j]: from PE i to PE j, NB_PATH_*), the same
 * on every PE. Returns the number of PEs. */
int nb_job(nb_info *all, int max, int32_t *paths);

/* nb_agree is collective: every PE passes a value and gets every PE's
 * (values[pe], max entries); returns the number of PEs. The harness agrees
 * on each point before any PE starts it. */
int nb_agree(int64_t mine, int64_t *values, int max);

/* nb_gather is collective: every PE passes len bytes (at most max) and
 * gets every PE's, out[pe * max ...] with lens[pe] of them (room for the
 * job's PEs); returns the number of PEs. Under srun / mpirun the harness
 * gathers every PE's result of a point at rank 0 this way. */
int nb_gather(const uint8_t *mine, int64_t len, uint8_t *out, int64_t max, int64_t *lens);

/* nb_setenv sets a variable in the C environment that NVSHMEM and NCCL read
 * (the Go side runs without cgo, so its own environment is not theirs);
 * before nb_init for NVSHMEM's bootstrap and transport choices. */
int nb_setenv(const char *name, const char *value);

/* nb_bootstrap_probe dlopens NVSHMEM's bootstrap plugin of that name (e.g.
 * "nvshmem_bootstrap_pmix.so.3") and closes it: 0 if it loads, else
 * NB_UNREACHABLE with the loader's message in nb_last_error(). */
int nb_bootstrap_probe(const char *plugin);

/* nb_run runs one point; every PE of the job calls it with the same args.
 * All collective calls happen here, in one order on every PE, whatever the
 * operation or the outcome: a PE that fails makes every PE return the
 * failure (res->failed_pe names it). The one timer: device events around
 * each timed launch of res->iters iterations; samples_out gets seconds per
 * operation, one per timed launch, on the PEs that timed (res->n_samples).
 * Where the kernels also read %globaltimer around every iteration,
 * kernel_out gets those per-iteration seconds over every timed launch
 * (res->n_kernel, at most max_kernel): the spread, never the figure. */
int nb_run(const nb_args *a, double *samples_out, int max_samples, double *kernel_out, int max_kernel, nb_result *res);

#ifdef __cplusplus
}
#endif
#endif
