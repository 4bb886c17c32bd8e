/* nvshbench.h: the flat C ABI of libnvshbench.so, the only boundary between
 * the Go tool and CUDA / NVSHMEM / NCCL. Plain ints, fixed-layout structs
 * (64-bit fields first, then 32-bit ones, so Go mirrors them exactly) and
 * pointers; every function returns 0 on success or a negative status, with
 * nb_last_error() describing the failure. Loaded at run time with purego. */
#ifndef NVSHBENCH_H
#define NVSHBENCH_H
#include <stdint.h>

#define NB_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Operations. */
enum {
  NB_OP_PUT = 1,        /* bulk putmem (scope from args) */
  NB_OP_GET = 2,        /* bulk getmem */
  NB_OP_P = 3,          /* scalar p of elem-byte values */
  NB_OP_G = 4,          /* scalar g */
  NB_OP_ST = 5,         /* plain stores through nvshmem_ptr */
  NB_OP_LD = 6,         /* plain loads through nvshmem_ptr */
  NB_OP_FETCH_ADD = 7,  /* uint64 atomic fetch_add */
  NB_OP_ADD = 8,        /* uint64 atomic add */
  NB_OP_CSWAP = 9,      /* uint64 atomic compare_swap */
  NB_OP_CE_COPY = 10,   /* limit: copy engine (cudaMemcpyAsync) into the peer's buffer */
  NB_OP_SM_COPY = 11,   /* limit: SM copy kernel, local -> peer (writes remote) */
  NB_OP_SM_COPY_READ = 12 /* limit: SM copy kernel, peer -> local (reads remote) */
};

enum { NB_SCOPE_THREAD = 0, NB_SCOPE_WARP = 1, NB_SCOPE_BLOCK = 2 };

typedef struct {
  int64_t size;     /* bytes per iteration */
  int64_t seed;     /* verification pattern seed */
  int32_t op;
  int32_t scope;
  int32_t blocking; /* 1: blocking call, 0: _nbi (+ quiet at the end of the launch) */
  int32_t ctas;
  int32_t threads;
  int32_t elem;     /* element bytes for p/g: 1, 2, 4, 8 */
  int32_t iters;    /* operations per timed launch; 0: calibrate so one launch takes about 20 ms (1..1000) */
  int32_t warmup;   /* untimed launches before the samples */
  int32_t samples;  /* timed launches */
  int32_t peer;     /* target PE */
  int32_t bidir;    /* both PEs issue at once */
  int32_t verify;
} nb_rma_args;

typedef struct {
  int64_t bytes;      /* payload moved per operation by this PE (0 for the passive one) */
  int64_t errors;     /* mismatching elements found in this PE's memory */
  int64_t checked;    /* elements checked on this PE */
  int64_t job_errors;  /* PE 0 only: mismatches summed over every PE of the job */
  int64_t job_checked; /* PE 0 only: elements checked over every PE of the job */
  int64_t n_samples;   /* samples written to samples_out (latency runs) */
  int64_t aux;         /* collectives: ncclGetVersion of the NCCL used (NCCL runs) */
  int32_t initiator;  /* this PE issued the operations and timed them */
  int32_t iters;      /* operations per timed launch actually used */
  char detail[256];   /* first mismatch */
} nb_rma_result;

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
  int32_t nccl_version;  /* ncclGetVersion, 0 if NCCL is not loaded */
  int32_t pad;
  char name[256];
  char uuid[64];
  char pci_bus_id[32];
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
/* mode 0: UID bootstrap with rank/nranks/uid; mode 1: nvshmem_init() with the
 * bootstrap from the environment (PMI, PMIx, MPI under srun/mpirun). heap is
 * the symmetric buffer size per PE in bytes. */
int nb_init(int mode, int rank, int nranks, const uint8_t *uid, int uidlen, int device, int64_t heap);
int nb_finalize(void);
int nb_info_get(nb_info *out);
/* Path to a peer: 0 same device load/store, 1 P2P load/store to another
 * device, 2 remote transport (no load/store mapping). */
int nb_peer_path(int peer, int *path);
int nb_barrier(void);

/* Latency operations (nb_lat_run). */
enum {
  NB_LAT_PUT = 1,           /* put (scope, nbi + quiet or blocking) per iteration */
  NB_LAT_GET = 2,
  NB_LAT_P = 3,             /* the message as uint64 p's over the block, then quiet */
  NB_LAT_G = 4,
  NB_LAT_PP_PUT_SIGNAL = 5, /* ping-pong round trip: putmem_signal_nbi_block, wait on the signal */
  NB_LAT_PP_P = 6,          /* ping-pong: p's + fence + p of a flag */
  NB_LAT_PP_ATOMIC = 7,     /* ping-pong: atomic add of a flag */
  NB_LAT_PP_SIGNAL = 8,     /* ping-pong: signal_op only */
  NB_LAT_FENCE = 9,         /* 8-byte p + fence */
  NB_LAT_QUIET = 10,        /* 8-byte p + quiet */
  NB_LAT_FETCH_ADD = 11,    /* fetching atomics (complete on return) */
  NB_LAT_CSWAP = 12,
  NB_LAT_PUT_SIGNAL = 13,   /* one-way putmem_signal_nbi_block + quiet */
  NB_LAT_LAUNCH = 14        /* empty kernel launches on one stream: the floor of host-issued work */
};

typedef struct {
  int64_t size;
  int64_t seed;
  int32_t op;
  int32_t scope;
  int32_t blocking;
  int32_t threads;  /* of the single CTA */
  int32_t iters;    /* per launch; 0: calibrated (ping-pong: 1000) */
  int32_t warmup;
  int32_t samples;  /* timed launches (timer 0) */
  int32_t peer;
  int32_t timer;    /* 0: device events around each launch (one sample per launch, mean per operation);
                       1: in-kernel %globaltimer per iteration of one launch (one sample per operation) */
  int32_t verify;
} nb_lat_args;

typedef nb_rma_result nb_lat_result;

/* Runs one latency point; samples_out (max_samples) gets seconds per
 * operation; res->n_samples says how many. A ping-pong with peer == self runs
 * as a loopback: two CTAs of one PE, through its own symmetric memory. */
int nb_lat_run(const nb_lat_args *a, double *samples_out, int max_samples, nb_lat_result *res);

/* Collectives (nb_coll_run). */
enum { NB_COLL_ALLREDUCE = 1, NB_COLL_BROADCAST = 2, NB_COLL_ALLTOALL = 3, NB_COLL_BARRIER = 4 };
enum {
  NB_IMPL_NVSHMEM_DEVICE = 1, /* one CTA, collective launch, scope thread/warp/block */
  NB_IMPL_NVSHMEM_STREAM = 2, /* nvshmemx_*_on_stream (may be handed to NCCL by NVSHMEM) */
  NB_IMPL_OUR_ONESHOT = 3,    /* our multi-CTA AllReduce: every PE reads all peers (load/store) */
  NB_IMPL_OUR_TWOSHOT = 4,    /* our multi-CTA AllReduce: reduce-scatter + all-gather (load/store) */
  NB_IMPL_NCCL = 5
};
enum { NB_DT_F32 = 0, NB_DT_BF16 = 1, NB_DT_F16 = 2 };

typedef struct {
  int64_t size;     /* bytes per PE (alltoall: all blocks together) */
  int64_t seed;
  int32_t coll;
  int32_t impl;
  int32_t dtype;
  int32_t scope;
  int32_t ctas;
  int32_t threads;
  int32_t iters;    /* per launch/graph; 0: calibrated on PE 0 to about 20 ms */
  int32_t warmup;
  int32_t samples;
  int32_t graph;    /* capture the iterations in a CUDA graph */
  int32_t verify;
  int32_t pad;
  char nccl_algo[32];  /* "" = NCCL's choice; else forced with NCCL_ALGO at communicator creation */
  char nccl_proto[32];
} nb_coll_args;

/* Runs one collective point on every PE; samples_out gets seconds per
 * operation (each PE its own; PE 0's are reported). -2: not possible here
 * (no NCCL, no load/store path, sizes that do not divide); -4: not capturable. */
int nb_coll_run(const nb_coll_args *a, double *samples_out, nb_rma_result *res);

/* Runs one RMA point: warmup launches, then samples timed launches of iters
 * operations each (device events around each launch). samples_out receives
 * seconds per operation on the initiator. */
int nb_rma_run(const nb_rma_args *a, double *samples_out, nb_rma_result *res);

#ifdef __cplusplus
}
#endif
#endif
