/*
 * A fake libnvidia-ml.so for Ebb's tests and benchmark: just enough of NVML's C API for
 * nvml-wrapper and ebb-agent's NvmlProbe, with every answer scripted by a text file.
 *
 * Build:  cc -shared -fPIC -O1 -o DIR/libnvidia-ml.so.1 fake_nvml.c -ldl
 *
 * WHERE THE SCRIPT IS
 *   nvmlInit_v2 reads the script from the path in $FAKE_NVML_SCRIPT when it is set, else
 *   from `fake_nvml.script` in the directory this library was loaded from. The tests use
 *   the second: parallel tests in one process cannot each set an environment variable
 *   (and Rust 2024 makes set_var unsafe), but each test loads its own copy of the
 *   library from its own directory, and each copy has its own state.
 *   A missing or malformed script makes nvmlInit_v2 print why on stderr and return
 *   NVML_ERROR_UNKNOWN (999).
 *
 * SCRIPT FORMAT
 *   One statement a line; blank lines and lines starting with `#` are ignored.
 *
 *   Global lines:
 *     driver=550.54.15   what nvmlSystemGetDriverVersion answers (default 550.54.15)
 *     init=err:N         nvmlInit_v2 fails with nvmlReturn_t N (e.g. 9 DRIVER_NOT_LOADED)
 *     static_once        nvmlDeviceGetUUID, nvmlDeviceGetName and
 *                        nvmlDeviceGetEnforcedPowerLimit answer once per GPU, then return
 *                        NVML_ERROR_UNKNOWN: proves a caller reads static facts only once
 *
 *   GPU lines, one per GPU, indexes 0.. in order with no gaps:
 *     gpu INDEX key=value key=value ...
 *   A token without `=` continues the previous value after one space, so
 *   `name=NVIDIA A100-SXM4-80GB` is the name "NVIDIA A100-SXM4-80GB".
 *
 *   Every value is a number, or `not_supported` (NVML_ERROR_NOT_SUPPORTED), or `err:N`
 *   (that nvmlReturn_t). A key left out is NOT_SUPPORTED.
 *     uuid=GPU-...  name=...          nvmlDeviceGetUUID / nvmlDeviceGetName (text)
 *     mem_total_mib=N mem_used_mib=N  nvmlDeviceGetMemoryInfo_v2 (one call: if either
 *                                     is not a number, the call fails with its error)
 *     util=N mem_util=N               nvmlDeviceGetUtilizationRates (one call, likewise)
 *     temp=N                          nvmlDeviceGetTemperature(NVML_TEMPERATURE_GPU), C
 *     power_mw=N                      nvmlDeviceGetPowerUsage, milliwatts
 *     power_limit_mw=N                nvmlDeviceGetEnforcedPowerLimit, milliwatts
 *     sm_clock=N mem_clock=N          nvmlDeviceGetClockInfo(SM / MEM), MHz
 *     ecc_corrected=N ecc_uncorrected=N
 *                                     nvmlDeviceGetTotalEccErrors (volatile and aggregate)
 *     retired_sbe=N retired_dbe=N     nvmlDeviceGetRetiredPages(_v2): pages retired for
 *                                     multiple single-bit / a double-bit ECC error
 *     procs=PID:MIB,PID:na,...        nvmlDeviceGetComputeRunningProcesses_v3; `na` is
 *                                     NVML_VALUE_NOT_AVAILABLE memory; `procs=` is none
 *                                     (nvmlSystemGetProcessName names PID `proc-PID`, and
 *                                     fails with NOT_FOUND for a PID 0)
 *     xids=79,48                      Critical Xid events pending on this GPU, delivered
 *                                     once to each event set registered for it;
 *                                     `xids=` is supported with no events, and a missing
 *                                     or failing `xids` makes nvmlDeviceRegisterEvents fail
 *     lost=open                       nvmlDeviceGetHandleByIndex_v2 returns GPU_IS_LOST
 *     lost=yes                        the handle is given, every call on it is GPU_IS_LOST
 *     lost_after_reads=N              the GPU answers normally until its (N+1)th
 *                                     nvmlDeviceGetUtilizationRates call, which the probe
 *                                     makes first in each read; from that call on, every
 *                                     call on it is GPU_IS_LOST (N=0: lost after open)
 *
 * nvmlEventSetWait_v2 never sleeps: it returns a pending event or NVML_ERROR_TIMEOUT.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_gpu *nvmlDevice_t;
typedef struct fake_event_set *nvmlEventSet_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_UNKNOWN = 999,
};

#define MAX_GPUS 64
#define MAX_ITEMS 64
#define TEXT_LEN 96
#define EVENT_XID_CRITICAL 8ULL
#define VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFULL
#define MIB (1024ULL * 1024ULL)

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

/* A scripted answer: status NVML_SUCCESS with a value, or the error to return. */
typedef struct {
    int status;
    unsigned long long value;
} field;

typedef struct {
    int status;
    char text[TEXT_LEN];
} text_field;

typedef struct {
    int status;
    unsigned int count;
    unsigned long long first[MAX_ITEMS];
    unsigned long long second[MAX_ITEMS];
} list_field;

struct fake_gpu {
    unsigned int index;
    text_field uuid, name;
    field mem_total_mib, mem_used_mib, util, mem_util, temp, power_mw, power_limit_mw;
    field sm_clock, mem_clock, ecc_corrected, ecc_uncorrected, retired_sbe, retired_dbe;
    list_field procs, xids;
    int lost_at_open;
    int gone; /* every call on the handle is GPU_IS_LOST */
    long long lost_after_reads; /* -1: never */
    unsigned long long reads_answered;
    unsigned int uuid_calls, name_calls, power_limit_calls;
};

struct fake_event_set {
    unsigned long long registered[MAX_GPUS];
    unsigned int delivered[MAX_GPUS];
};

static struct fake_gpu gpus[MAX_GPUS];
static unsigned int gpu_count;
static int initialised;
static int static_once;
static int init_status;
static char driver_version[TEXT_LEN];

static int script_error(const char *path, unsigned int line, const char *why, const char *what) {
    fprintf(stderr, "fake_nvml: %s:%u: %s `%s`\n", path, line, why, what);
    return 0;
}

/* Parses `not_supported`, `err:N` or a number into `out`. Returns 0 when malformed. */
static int parse_field(const char *text, field *out) {
    char *end;
    if (strcmp(text, "not_supported") == 0) {
        out->status = NVML_ERROR_NOT_SUPPORTED;
        return 1;
    }
    if (strncmp(text, "err:", 4) == 0) {
        errno = 0;
        out->status = (int)strtol(text + 4, &end, 10);
        return errno == 0 && end != text + 4 && *end == '\0';
    }
    errno = 0;
    out->value = strtoull(text, &end, 10);
    out->status = NVML_SUCCESS;
    return errno == 0 && end != text && *end == '\0';
}

/* `a:b,c:d` (pairs) or `a,b` (singles); `na` as a second means not available. */
static int parse_list(const char *text, list_field *out, int pairs) {
    field status;
    char copy[1024];
    char *item, *save = NULL;
    if (strcmp(text, "not_supported") == 0 || strncmp(text, "err:", 4) == 0) {
        if (!parse_field(text, &status)) return 0;
        out->status = status.status;
        return 1;
    }
    out->status = NVML_SUCCESS;
    out->count = 0;
    if (strlen(text) >= sizeof copy) return 0;
    strcpy(copy, text);
    for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *end;
        if (out->count == MAX_ITEMS) return 0;
        errno = 0;
        out->first[out->count] = strtoull(item, &end, 10);
        if (errno != 0 || end == item) return 0;
        if (pairs) {
            if (*end != ':') return 0;
            if (strcmp(end + 1, "na") == 0) {
                out->second[out->count] = VALUE_NOT_AVAILABLE;
            } else {
                char *after;
                out->second[out->count] = strtoull(end + 1, &after, 10);
                if (after == end + 1 || *after != '\0') return 0;
            }
        } else if (*end != '\0') {
            return 0;
        }
        out->count++;
    }
    return 1;
}

static const struct {
    const char *key;
    size_t offset;
} numeric_fields[] = {
    {"mem_total_mib", offsetof(struct fake_gpu, mem_total_mib)},
    {"mem_used_mib", offsetof(struct fake_gpu, mem_used_mib)},
    {"util", offsetof(struct fake_gpu, util)},
    {"mem_util", offsetof(struct fake_gpu, mem_util)},
    {"temp", offsetof(struct fake_gpu, temp)},
    {"power_mw", offsetof(struct fake_gpu, power_mw)},
    {"power_limit_mw", offsetof(struct fake_gpu, power_limit_mw)},
    {"sm_clock", offsetof(struct fake_gpu, sm_clock)},
    {"mem_clock", offsetof(struct fake_gpu, mem_clock)},
    {"ecc_corrected", offsetof(struct fake_gpu, ecc_corrected)},
    {"ecc_uncorrected", offsetof(struct fake_gpu, ecc_uncorrected)},
    {"retired_sbe", offsetof(struct fake_gpu, retired_sbe)},
    {"retired_dbe", offsetof(struct fake_gpu, retired_dbe)},
};
#define NUMERIC_FIELDS (sizeof numeric_fields / sizeof numeric_fields[0])

static field *numeric_field(struct fake_gpu *gpu, const char *key) {
    for (size_t i = 0; i < NUMERIC_FIELDS; i++) {
        if (strcmp(numeric_fields[i].key, key) == 0)
            return (field *)((char *)gpu + numeric_fields[i].offset);
    }
    return NULL;
}

static int apply_gpu_setting(struct fake_gpu *gpu, const char *key, const char *value) {
    field *number = numeric_field(gpu, key);
    if (number) return parse_field(value, number);
    if (strcmp(key, "uuid") == 0 || strcmp(key, "name") == 0) {
        text_field *text = key[0] == 'u' ? &gpu->uuid : &gpu->name;
        field status;
        if (strcmp(value, "not_supported") == 0 || strncmp(value, "err:", 4) == 0) {
            if (!parse_field(value, &status)) return 0;
            text->status = status.status;
            return 1;
        }
        if (strlen(value) >= TEXT_LEN) return 0;
        strcpy(text->text, value);
        text->status = NVML_SUCCESS;
        return 1;
    }
    if (strcmp(key, "procs") == 0) return parse_list(value, &gpu->procs, 1);
    if (strcmp(key, "xids") == 0) return parse_list(value, &gpu->xids, 0);
    if (strcmp(key, "lost") == 0) {
        if (strcmp(value, "open") == 0) gpu->lost_at_open = 1;
        else if (strcmp(value, "yes") == 0) gpu->gone = 1;
        else return 0;
        return 1;
    }
    if (strcmp(key, "lost_after_reads") == 0) {
        field reads;
        if (!parse_field(value, &reads) || reads.status != NVML_SUCCESS) return 0;
        gpu->lost_after_reads = (long long)reads.value;
        return 1;
    }
    return 0;
}

static void reset_gpu(struct fake_gpu *gpu, unsigned int index) {
    memset(gpu, 0, sizeof *gpu);
    gpu->index = index;
    gpu->lost_after_reads = -1;
    /* Every field starts NOT_SUPPORTED: a key left out of the script is one. */
    gpu->uuid.status = gpu->name.status = NVML_ERROR_NOT_SUPPORTED;
    gpu->procs.status = gpu->xids.status = NVML_ERROR_NOT_SUPPORTED;
    for (size_t i = 0; i < NUMERIC_FIELDS; i++) {
        numeric_field(gpu, numeric_fields[i].key)->status = NVML_ERROR_NOT_SUPPORTED;
    }
}

/* One key=value of a GPU line (gpu != NULL) or of a global line. */
static int apply_setting(struct fake_gpu *gpu, const char *key, const char *value,
                         const char *path, unsigned int line_number) {
    if (gpu) {
        if (!apply_gpu_setting(gpu, key, value))
            return script_error(path, line_number, "bad GPU setting", key);
    } else if (strcmp(key, "driver") == 0) {
        snprintf(driver_version, sizeof driver_version, "%s", value);
    } else if (strcmp(key, "init") == 0) {
        field status;
        if (!parse_field(value, &status)) return script_error(path, line_number, "bad init", value);
        init_status = status.status;
    } else {
        return script_error(path, line_number, "unknown global setting", key);
    }
    return 1;
}

/* Splits `line` into key=value settings, joining `=`-less tokens onto the last value. */
static int parse_settings(char *line, const char *path, unsigned int line_number,
                          struct fake_gpu *gpu) {
    char key[64] = "", value[1024] = "";
    char *token, *save = NULL;
    int have_key = 0;
    for (token = strtok_r(line, " \t\r\n", &save); token;
         token = strtok_r(NULL, " \t\r\n", &save)) {
        char *equals = strchr(token, '=');
        if (!equals) {
            if (!have_key) return script_error(path, line_number, "expected key=value, got", token);
            if (strlen(value) + 1 + strlen(token) >= sizeof value)
                return script_error(path, line_number, "value too long", key);
            strcat(value, " ");
            strcat(value, token);
            continue;
        }
        if (have_key && !apply_setting(gpu, key, value, path, line_number)) return 0;
        if ((size_t)(equals - token) >= sizeof key || strlen(equals + 1) >= sizeof value)
            return script_error(path, line_number, "setting too long", token);
        memcpy(key, token, (size_t)(equals - token));
        key[equals - token] = '\0';
        strcpy(value, equals + 1);
        have_key = 1;
    }
    return !have_key || apply_setting(gpu, key, value, path, line_number);
}

static int load_script(void) {
    char path[4096];
    const char *from_env = getenv("FAKE_NVML_SCRIPT");
    if (from_env && *from_env) {
        snprintf(path, sizeof path, "%s", from_env);
    } else {
        Dl_info info;
        const char *slash;
        if (!dladdr((void *)load_script, &info) || !info.dli_fname) {
            fprintf(stderr, "fake_nvml: cannot tell where this library was loaded from\n");
            return 0;
        }
        slash = strrchr(info.dli_fname, '/');
        snprintf(path, sizeof path, "%.*sfake_nvml.script",
                 slash ? (int)(slash - info.dli_fname + 1) : 0, info.dli_fname);
    }

    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "fake_nvml: cannot read script %s: %s\n", path, strerror(errno));
        return 0;
    }
    gpu_count = 0;
    static_once = 0;
    init_status = NVML_SUCCESS;
    strcpy(driver_version, "550.54.15");

    char line[4096];
    unsigned int line_number = 0;
    int ok = 1;
    while (ok && fgets(line, sizeof line, file)) {
        char *start = line + strspn(line, " \t");
        line_number++;
        if (*start == '#' || *start == '\n' || *start == '\r' || *start == '\0') continue;
        if (strncmp(start, "static_once", 11) == 0 && strspn(start + 11, " \t\r\n") == strlen(start + 11)) {
            static_once = 1;
        } else if (strncmp(start, "gpu ", 4) == 0 || strncmp(start, "gpu\t", 4) == 0) {
            char *end;
            unsigned long index = strtoul(start + 4, &end, 10);
            if (end == start + 4 || index != gpu_count || index >= MAX_GPUS) {
                ok = script_error(path, line_number, "GPU indexes must run 0, 1, 2... in order; got", start);
                break;
            }
            reset_gpu(&gpus[gpu_count], gpu_count);
            ok = parse_settings(end, path, line_number, &gpus[gpu_count]);
            gpu_count++;
        } else {
            ok = parse_settings(start, path, line_number, NULL);
        }
    }
    fclose(file);
    return ok;
}


/* The checks every device call starts with. */
#define DEVICE_CALL(device)                                                     \
    do {                                                                        \
        if (!initialised) return NVML_ERROR_UNINITIALIZED;                      \
        if (!(device) || (device) < gpus || (device) >= gpus + gpu_count)       \
            return NVML_ERROR_INVALID_ARGUMENT;                                 \
        if ((device)->gone) return NVML_ERROR_GPU_IS_LOST;                        \
    } while (0)

static nvmlReturn_t answer(const field *f, unsigned int *out) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (f->status != NVML_SUCCESS) return f->status;
    *out = (unsigned int)f->value;
    return NVML_SUCCESS;
}

static nvmlReturn_t answer_text(const text_field *f, char *out, unsigned int length) {
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (f->status != NVML_SUCCESS) return f->status;
    if (strlen(f->text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(out, f->text);
    return NVML_SUCCESS;
}

/* ---- library and system ---- */

nvmlReturn_t nvmlInit_v2(void) {
    if (!load_script()) return NVML_ERROR_UNKNOWN;
    if (init_status != NVML_SUCCESS) return init_status;
    initialised = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    initialised = 0;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Fake NVML error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    text_field driver = {NVML_SUCCESS, ""};
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    strcpy(driver.text, driver_version);
    return answer_text(&driver, version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
    text_field nvml = {NVML_SUCCESS, "12.550.54.15"};
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    return answer_text(&nvml, version, length);
}

/* ---- devices ---- */

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = gpu_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (index >= gpu_count || !device) return NVML_ERROR_INVALID_ARGUMENT;
    if (gpus[index].lost_at_open) return NVML_ERROR_GPU_IS_LOST;
    *device = &gpus[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index) {
    DEVICE_CALL(device);
    if (!index) return NVML_ERROR_INVALID_ARGUMENT;
    *index = device->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    DEVICE_CALL(device);
    if (static_once && device->uuid_calls++ > 0) return NVML_ERROR_UNKNOWN;
    return answer_text(&device->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    DEVICE_CALL(device);
    if (static_once && device->name_calls++ > 0) return NVML_ERROR_UNKNOWN;
    return answer_text(&device->name, name, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    DEVICE_CALL(device);
    if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->mem_total_mib.status != NVML_SUCCESS) return device->mem_total_mib.status;
    if (device->mem_used_mib.status != NVML_SUCCESS) return device->mem_used_mib.status;
    memory->total = device->mem_total_mib.value * MIB;
    memory->used = device->mem_used_mib.value * MIB;
    memory->reserved = 0;
    memory->free = memory->total > memory->used ? memory->total - memory->used : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization) {
    if (device >= gpus && device < gpus + gpu_count && device->lost_after_reads >= 0 &&
        device->reads_answered >= (unsigned long long)device->lost_after_reads)
        device->gone = 1;
    DEVICE_CALL(device);
    if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
    device->reads_answered++;
    if (device->util.status != NVML_SUCCESS) return device->util.status;
    if (device->mem_util.status != NVML_SUCCESS) return device->mem_util.status;
    utilization->gpu = (unsigned int)device->util.value;
    utilization->memory = (unsigned int)device->mem_util.value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *temp) {
    DEVICE_CALL(device);
    if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
    return answer(&device->temp, temp);
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power) {
    DEVICE_CALL(device);
    return answer(&device->power_mw, power);
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit) {
    DEVICE_CALL(device);
    if (static_once && device->power_limit_calls++ > 0) return NVML_ERROR_UNKNOWN;
    return answer(&device->power_limit_mw, limit);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock) {
    DEVICE_CALL(device);
    if (type == 1) return answer(&device->sm_clock, clock);
    if (type == 2) return answer(&device->mem_clock, clock);
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type, int counter_type,
                                         unsigned long long *count) {
    const field *f;
    DEVICE_CALL(device);
    if (!count || counter_type < 0 || counter_type > 1) return NVML_ERROR_INVALID_ARGUMENT;
    if (error_type == 0) f = &device->ecc_corrected;
    else if (error_type == 1) f = &device->ecc_uncorrected;
    else return NVML_ERROR_INVALID_ARGUMENT;
    if (f->status != NVML_SUCCESS) return f->status;
    *count = f->value;
    return NVML_SUCCESS;
}

static nvmlReturn_t retired_pages(nvmlDevice_t device, int cause, unsigned int *count,
                                  unsigned long long *addresses, unsigned long long *timestamps) {
    const field *f;
    DEVICE_CALL(device);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (cause == 0) f = &device->retired_sbe;
    else if (cause == 1) f = &device->retired_dbe;
    else return NVML_ERROR_INVALID_ARGUMENT;
    if (f->status != NVML_SUCCESS) return f->status;
    if (*count < f->value) {
        *count = (unsigned int)f->value;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < f->value; i++) {
        if (addresses) addresses[i] = 0x1000ULL * (i + 1) + (unsigned long long)cause;
        if (timestamps) timestamps[i] = 1700000000ULL + i;
    }
    *count = (unsigned int)f->value;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned int *count,
                                       unsigned long long *addresses) {
    return retired_pages(device, cause, count, addresses, NULL);
}

nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t device, int cause, unsigned int *count,
                                          unsigned long long *addresses,
                                          unsigned long long *timestamps) {
    return retired_pages(device, cause, count, addresses, timestamps);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    DEVICE_CALL(device);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->procs.status != NVML_SUCCESS) return device->procs.status;
    if (*count < device->procs.count) {
        *count = device->procs.count;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < device->procs.count; i++) {
        unsigned long long mib = device->procs.second[i];
        infos[i].pid = (unsigned int)device->procs.first[i];
        infos[i].usedGpuMemory = mib == VALUE_NOT_AVAILABLE ? VALUE_NOT_AVAILABLE : mib * MIB;
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *count = device->procs.count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
    if (pid == 0) return 6; /* NVML_ERROR_NOT_FOUND */
    int written = snprintf(name, length, "proc-%u", pid);
    return written < 0 || (unsigned int)written >= length ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

/* ---- events ---- */

nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *types) {
    DEVICE_CALL(device);
    if (!types) return NVML_ERROR_INVALID_ARGUMENT;
    *types = device->xids.status == NVML_SUCCESS ? EVENT_XID_CRITICAL : 0;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    *set = calloc(1, sizeof **set);
    return *set ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                      nvmlEventSet_t set) {
    DEVICE_CALL(device);
    if (!set) return NVML_ERROR_INVALID_ARGUMENT;
    if (device->xids.status != NVML_SUCCESS) return device->xids.status;
    if (types & ~EVENT_XID_CRITICAL) return NVML_ERROR_NOT_SUPPORTED;
    set->registered[device->index] |= types;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms) {
    (void)timeout_ms;
    if (!initialised) return NVML_ERROR_UNINITIALIZED;
    if (!set || !data) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int index = 0; index < gpu_count; index++) {
        struct fake_gpu *gpu = &gpus[index];
        if (!(set->registered[index] & EVENT_XID_CRITICAL)) continue;
        if (set->delivered[index] >= gpu->xids.count) continue;
        data->device = gpu;
        data->eventType = EVENT_XID_CRITICAL;
        data->eventData = gpu->xids.first[set->delivered[index]++];
        data->gpuInstanceId = 0xFFFFFFFFu;
        data->computeInstanceId = 0xFFFFFFFFu;
        return NVML_SUCCESS;
    }
    return NVML_ERROR_TIMEOUT;
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    free(set);
    return NVML_SUCCESS;
}
