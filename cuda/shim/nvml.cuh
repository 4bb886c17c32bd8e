// nvml.cuh: the physical links of a GPU, as NVML (libnvidia-ml.so.1,
// opened with dlopen: a machine without it still gets the CUDA-side
// figures) and CUDA describe them: every active NVLink, the PCI bus id at
// its far end (the peer GPU, or an NVSwitch), NVML's per-link rate, the PCIe
// link at its maximum generation and width, and the device memory's peak.
// These are the ceilings every bandwidth of a run is checked against.

typedef struct nvmlDevice_st *nvml_dev_t;

// NVML's field value (nvmlFieldValue_t) and PCI info (nvmlPciInfo_t, v2).
struct NvmlFieldValue {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value;
};

struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

enum { NVML_FIELD_NVLINK_SPEED_MBPS_COMMON = 90, NVML_LINKS_MAX = 18 };

struct NvmlApi {
  int tried, ok;
  char why[120];
  int (*init)(void);
  int (*byPci)(const char *, nvml_dev_t *);
  int (*linkState)(nvml_dev_t, unsigned int, int *);
  int (*remotePci)(nvml_dev_t, unsigned int, NvmlPciInfo *);
  int (*fields)(nvml_dev_t, int, NvmlFieldValue *);
  int (*pcieGen)(nvml_dev_t, unsigned int *);
  int (*pcieWidth)(nvml_dev_t, unsigned int *);
};
static NvmlApi g_nvml;

static int nvml_open(void) {
  if (g_nvml.tried) return g_nvml.ok;
  g_nvml.tried = 1;
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    snprintf(g_nvml.why, sizeof g_nvml.why, "NVML not available: %.90s", dlerror());
    return 0;
  }
#define SYM(f, n)                                                              \
  if (!(*(void **)&g_nvml.f = dlsym(h, n))) {                                  \
    snprintf(g_nvml.why, sizeof g_nvml.why, "libnvidia-ml.so.1 lacks %s", n);  \
    return 0;                                                                  \
  }
  SYM(init, "nvmlInit_v2") SYM(byPci, "nvmlDeviceGetHandleByPciBusId_v2") SYM(linkState, "nvmlDeviceGetNvLinkState")
  SYM(remotePci, "nvmlDeviceGetNvLinkRemotePciInfo_v2") SYM(fields, "nvmlDeviceGetFieldValues")
  SYM(pcieGen, "nvmlDeviceGetMaxPcieLinkGeneration") SYM(pcieWidth, "nvmlDeviceGetMaxPcieLinkWidth")
#undef SYM
  if (int rc = g_nvml.init()) {
    snprintf(g_nvml.why, sizeof g_nvml.why, "nvmlInit failed: %d", rc);
    return 0;
  }
  g_nvml.ok = 1;
  return 1;
}

// PCIe bytes/s per direction per lane, by generation (after line coding).
static double pcie_lane_bps(int gen) {
  switch (gen) {
  case 1: return 2.5e9 * 8 / 10 / 8;
  case 2: return 5e9 * 8 / 10 / 8;
  case 3: return 8e9 * 128 / 130 / 8;
  case 4: return 16e9 * 128 / 130 / 8;
  case 5: return 32e9 * 128 / 130 / 8;
  case 6: return 64e9 * 242 / 256 / 8;
  }
  return 0;
}

extern "C" int nb_link_info(int dev, nb_links *o) {
  memset(o, 0, sizeof *o);
  int clk = 0, width = 0;
  // The memory's peak: double data rate over the bus (both directions of a
  // copy share it).
  if (cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, dev) == cudaSuccess &&
      cudaDeviceGetAttribute(&width, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess)
    o->hbm_bps = 2.0 * clk * 1e3 * width / 8;
  cudaGetLastError();
  char pci[32] = "";
  if (cudaDeviceGetPCIBusId(pci, sizeof pci, dev) != cudaSuccess) {
    cudaGetLastError();
    snprintf(o->detail, sizeof o->detail, "no PCI bus id for device %d", dev);
    return 0;
  }
  if (!nvml_open()) {
    snprintf(o->detail, sizeof o->detail, "%s", g_nvml.why);
    return 0;
  }
  nvml_dev_t h;
  if (int rc = g_nvml.byPci(pci, &h)) {
    snprintf(o->detail, sizeof o->detail, "nvmlDeviceGetHandleByPciBusId(%s): %d", pci, rc);
    return 0;
  }
  o->nvml = 1;
  unsigned int gen = 0, lanes = 0;
  if (!g_nvml.pcieGen(h, &gen) && !g_nvml.pcieWidth(h, &lanes)) {
    o->pcie_gen = (int)gen;
    o->pcie_width = (int)lanes;
    o->pcie_bps = pcie_lane_bps((int)gen) * lanes;
  }
  for (unsigned int l = 0; l < NVML_LINKS_MAX && l < NB_MAX_LINKS; l++) {
    int active = 0;
    if (g_nvml.linkState(h, l, &active) || !active) continue;
    NvmlPciInfo ri;
    memset(&ri, 0, sizeof ri);
    if (!g_nvml.remotePci(h, l, &ri)) snprintf(o->remote[l], sizeof o->remote[l], "%.31s", ri.busIdLegacy[0] ? ri.busIdLegacy : ri.busId);
    else snprintf(o->remote[l], sizeof o->remote[l], "?");
    o->links++;
  }
  if (o->links > 0) {
    NvmlFieldValue fv;
    memset(&fv, 0, sizeof fv);
    fv.fieldId = NVML_FIELD_NVLINK_SPEED_MBPS_COMMON;
    if (!g_nvml.fields(h, 1, &fv) && !fv.nvmlReturn) {
      double mbps = 0;
      switch (fv.valueType) {
      case 0: mbps = fv.value.d; break;
      case 1: mbps = fv.value.ui; break;
      case 2: mbps = (double)fv.value.ul; break;
      case 3: mbps = (double)fv.value.ull; break;
      case 4: mbps = (double)fv.value.sll; break;
      case 5: mbps = fv.value.si; break;
      case 6: mbps = fv.value.us; break;
      }
      o->link_bps = mbps * 1e6;  // NVML: MB/s of one link, one direction
    } else {
      snprintf(o->detail, sizeof o->detail, "NVML has no common NVLink speed (field %d): %d", NVML_FIELD_NVLINK_SPEED_MBPS_COMMON, fv.nvmlReturn);
    }
  }
  return 0;
}
