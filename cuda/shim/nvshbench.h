/* nvshbench.h: the flat C ABI of libnvshbench.so, the only boundary between
 * the Go tool and CUDA / NVSHMEM / NCCL. Plain ints, fixed-layout structs
 * (64-bit fields first, then 32-bit ones, then bytes, so Go mirrors them
 * exactly) and pointers; every function returns 0 on success or a negative
 * status, with nb_last_error() describing the failure. Loaded at run time
 * with purego.
 *
 * The enums below are mirrored in cuda/abi.go; cuda/abi_test.go parses this
 * header and fails when the two drift apart. */
#ifndef NVSHBENCH_H
#define NVSHBENCH_H
#include <stdint.h>

#define NB_ABI_VERSION 2

/* Status codes (negative returns). */
#define NB_ERR -1          /* the operation failed */
#define NB_UNREACHABLE -2  /* this job cannot run the point (no load/store path, no NCCL, ...) */
#define NB_NOT_CAPTURABLE -4 /* a CUDA graph cannot capture it */

#define NB_MAX_PES 64

#ifdef __cplusplus
extern "C" {
#endif

/* Operations: one code space for every benchmark the shim runs (nb_run). */
enum {
  /* RMA bandwidth and rate: PE 0 issues towards args.peer (both ways with bidir). */
  NB_OP_PUT = 1,         /* bulk putmem at args.scope; _nbi + quiet, or blocking */
  NB_OP_GET = 2,         /* bulk getmem */
  NB_OP_P = 3,           /* scalar p of args.elem-byte values */
  NB_OP_G = 4,           /* scalar g */
  NB_OP_ST = 5,          /* plain 16-byte stores through nvshmem_ptr */
  NB_OP_LD = 6,          /* plain 16-byte loads through nvshmem_ptr */
  NB_OP_FETCH_ADD = 7,   /* uint64 atomic fetch_add, one counter per thread */
  NB_OP_ADD = 8,         /* uint64 atomic add */
  NB_OP_CSWAP = 9,       /* uint64 atomic compare_swap */
  NB_OP_CE_COPY = 10,    /* limit: copy engine (cudaMemcpyAsync) into the peer's buffer */
  NB_OP_SM_COPY = 11,    /* limit: SM copy kernel, local -> peer (writes remote) */
  NB_OP_SM_COPY_READ = 12, /* limit: SM copy kernel, peer -> local (reads remote) */
  NB_OP_PUT_SIGNAL = 13, /* bulk putmem_signal_nbi at args.scope (DeepEP's dispatch primitive) */
  NB_OP_LSA_PUT = 14,    /* NCCL device API: stores through ncclGetLsaPointer into the peer's window, at args.scope */
  NB_OP_LSA_GET = 15,    /* NCCL device API: loads through ncclGetLsaPointer from the peer's window, at args.scope */
  NB_OP_GIN_PUT_SIGNAL = 16, /* NCCL device API: ncclGin put + SignalInc per CTA (GPU-initiated networking) */

  /* Latency: one CTA of args.threads; PE 0 towards args.peer. */
  NB_OP_LAT_PUT = 21,    /* putmem (scope) + quiet per iteration; blocking: the call alone (issue time) */
  NB_OP_LAT_GET = 22,    /* pointer chase: getmem of block k, the next k read from what arrived */
  NB_OP_LAT_P = 23,      /* the message as uint64 p's over the CTA + quiet */
  NB_OP_LAT_G = 24,      /* pointer chase with uint64 g's: the next block from the loaded word */
  NB_OP_PP_PUT_SIGNAL = 25, /* ping-pong round trip: putmem_signal_nbi_block, wait on the signal */
  NB_OP_PP_P = 26,       /* ping-pong: p's + fence + p of a flag */
  NB_OP_PP_ATOMIC = 27,  /* ping-pong: atomic add of a flag */
  NB_OP_PP_SIGNAL = 28,  /* ping-pong: signal_op only */
  NB_OP_LAT_FENCE = 29,  /* 8-byte p + fence (ordering only: an issue time) */
  NB_OP_LAT_QUIET = 30,  /* 8-byte p + quiet (completion) */
  NB_OP_LAT_FETCH_ADD = 31, /* fetching atomic; the next address depends on the value returned */
  NB_OP_LAT_CSWAP = 32,
  NB_OP_LAT_PUT_SIGNAL = 33, /* one-way putmem_signal_nbi_block + quiet */
  NB_OP_LAT_LAUNCH = 34, /* empty kernels launched back to back: the floor of host-issued work */
  NB_OP_LSA_LAT_PUT = 35, /* NCCL device API: the CTA stores the message through an LSA pointer + system fence */
  NB_OP_LSA_LAT_GET = 36, /* NCCL device API: pointer chase, the CTA loads block k through an LSA pointer */

  /* Collectives: every PE; args.impl says whose. */
  NB_OP_ALLREDUCE = 41,
  NB_OP_BROADCAST = 42,
  NB_OP_ALLTOALL = 43,
  NB_OP_BARRIER = 44
};

enum { NB_SCOPE_THREAD = 0, NB_SCOPE_WARP = 1, NB_SCOPE_BLOCK = 2 };

enum {
  NB_IMPL_NVSHMEM_DEVICE = 1, /* one CTA, collective launch, scope thread/warp/block */
  NB_IMPL_NVSHMEM_STREAM = 2, /* nvshmemx_*_on_stream (may be handed to NCCL by NVSHMEM) */
  NB_IMPL_OUR_ONESHOT = 3,    /* our multi-CTA AllReduce: every PE reads all peers (load/store) */
  NB_IMPL_OUR_TWOSHOT = 4,    /* our multi-CTA AllReduce: reduce-scatter + all-gather (load/store) */
  NB_IMPL_NCCL = 5,
  NB_IMPL_LSA_ONESHOT = 6,    /* NCCL device API AllReduce: LSA pointers + LSA barriers, one-shot */
  NB_IMPL_LSA_TWOSHOT = 7     /* NCCL device API AllReduce: LSA pointers + LSA barriers, two-shot */
};

enum { NB_DT_F32 = 0, NB_DT_BF16 = 1, NB_DT_F16 = 2 };

enum { NB_TIMER_EVENTS = 0, NB_TIMER_GLOBAL = 1 };

/* Paths between PEs (nb_job's matrix). */
enum { NB_PATH_LOCAL = 0, NB_PATH_P2P = 1, NB_PATH_REMOTE = 2 };

/* The arguments of one point, the same on every PE. */
typedef struct {
  int64_t size;     /* bytes per operation (collectives: per PE; alltoall: all blocks together) */
  int64_t seed;     /* verification pattern seed */
  int32_t op;       /* NB_OP_* */
  int32_t scope;    /* NB_SCOPE_* */
  int32_t blocking; /* 1: blocking call, 0: _nbi (+ quiet) */
  int32_t ctas;
  int32_t threads;
  int32_t elem;     /* element bytes for p/g: 1, 2, 4, 8 */
  int32_t iters;    /* operations per timed launch; 0: calibrated on PE 0 to about 20 ms and shared */
  int32_t warmup;   /* untimed launches before the samples */
  int32_t samples;  /* timed launches */
  int32_t peer;     /* the PE that PE 0 talks to */
  int32_t bidir;    /* both PEs issue at once */
  int32_t verify;
  int32_t timer;    /* NB_TIMER_*: events around each launch, or %globaltimer per iteration of one launch */
  int32_t impl;     /* collectives: NB_IMPL_* */
  int32_t dtype;    /* collectives: NB_DT_* */
  int32_t graph;    /* collectives: capture the iterations in a CUDA graph */
  char nccl_algo[32];  /* "" = NCCL's choice; else forced with NCCL_ALGO at communicator creation */
  char nccl_proto[32];
} nb_args;

/* The result of one point on this PE. */
typedef struct {
  int64_t bytes;       /* payload this PE moved per operation (0 for a passive PE) */
  int64_t errors;      /* mismatching elements found in this PE's memory */
  int64_t checked;     /* elements checked on this PE */
  int64_t job_errors;  /* every PE: mismatches summed over the job */
  int64_t job_checked; /* every PE: elements checked over the job */
  int64_t job_bytes;   /* every PE: payload per operation summed over the job */
  int64_t n_samples;   /* samples written to samples_out */
  int64_t work_set;    /* bytes the point touches on the busiest GPU (chains: the chain) */
  int32_t initiator;   /* this PE issued operations and timed them */
  int32_t iters;       /* operations per timed launch (agreed by every PE) */
  int32_t failed_pe;   /* on error: the PE that failed first, else -1 */
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

int nb_abi_version(void);
const char *nb_last_error(void);

/* Device queries that need no NVSHMEM. */
int nb_device_count(int *count);
int nb_device_info(int device, nb_info *out);
int nb_can_access_peer(int dev, int peer, int *can);

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
 * failure (res->failed_pe names it). samples_out (max_samples) gets seconds
 * per operation on the PEs that timed; res->n_samples says how many. */
int nb_run(const nb_args *a, double *samples_out, int max_samples, nb_result *res);

#ifdef __cplusplus
}
#endif
#endif
