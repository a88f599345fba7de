/* measure.c — running candidates in child processes: warm-up, timed repeats, timeout, checks.
 *
 * The parent allocates the kernel's buffers once: inputs with random non-zero values, outputs in
 * shared memory (MAP_SHARED) so that it sees what a child wrote. Each measurement forks: the
 * child calls the JIT-compiled entry (the code is in the copied address space), times it on the
 * wall clock and the cpu clock (clock.c) and writes the costs through a pipe; the parent waits at
 * most timeout_s, then kills it. So a candidate that crashes (a signal), hangs (the timeout), fails
 * (a kernel error status) or computes the wrong values (compared with the reference outputs, which
 * the default schedule computed) costs one error result and nothing else. The parent never runs a
 * kernel itself: it starts no OpenMP threads, so every child forks from a single-threaded OpenMP
 * state.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "at.h"
#include "codegen/codegen.h"
#include "runtime/vulkan.h"
#include "target/target.h"
#include "te/device.h"

enum { MAX_ARGS = 12, MAX_COSTS = 256 };

struct at_bench {
  int nargs, nin;
  DLTensor t[MAX_ARGS];
  int64_t shape[MAX_ARGS][TE_MAX_DIMS];
  size_t bytes[MAX_ARGS];
  void *ref[MAX_ARGS];
  bool has_ref;
  char names[MAX_ARGS][64];
  DLDeviceType device; /* where candidates run (at_bench_set_device) */
};

typedef struct child_msg {
  int32_t status, n, ncpu; /* ncpu: n, or 0 when the cpu clock could not be read */
  char text[400];
  double costs[MAX_COSTS], cpu_costs[MAX_COSTS];
} child_msg;

static int plant_crash = -1, plant_hang = -1, plant_wrong = -1, bench_calls;
static double plant_hang_timeout_s;

static int noise_calls[64], noise_n;
static double noise_factor = 1;

void at_test_noise(int n, const int *calls, double factor) {
  noise_n = n < 0 ? 0 : n > 64 ? 64 : n;
  for (int i = 0; i < noise_n; i++)
    noise_calls[i] = calls[i];
  noise_factor = factor;
  bench_calls = 0;
}

/* Whether call number `call` of at_bench_run is one at_test_noise stretches. */
static bool noisy(int call) {
  for (int i = 0; i < noise_n; i++)
    if (noise_calls[i] == call)
      return true;
  return false;
}

void at_test_plant(int crash_at, int hang_at, int wrong_at, double hang_timeout_s) {
  plant_crash = crash_at;
  plant_hang = hang_at;
  plant_wrong = wrong_at;
  plant_hang_timeout_s = hang_timeout_s;
  bench_calls = 0;
}

/* ---------------------------------------------------------------- buffers */

static uint64_t mix(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void fill_random(DLTensor *t, size_t count, uint64_t *seed) {
  for (size_t i = 0; i < count; i++) {
    uint64_t r = mix(seed);
    double u = 0.1 + 0.9 * (double)(r >> 11) * 0x1.0p-53, v = (r & 1) ? u : -u;
    int64_t iv = (int64_t)(r % 15) - 7;
    if (ir_is_half(t->dtype)) {
      ((uint16_t *)t->data)[i] = ir_half_bits(t->dtype, v);
      continue;
    }
    switch (t->dtype.code * 100 + t->dtype.bits) {
    case kDLFloat * 100 + 32:
      ((float *)t->data)[i] = (float)v;
      break;
    case kDLFloat * 100 + 64:
      ((double *)t->data)[i] = v;
      break;
    case kDLInt * 100 + 8:
      ((int8_t *)t->data)[i] = (int8_t)iv;
      break;
    case kDLInt * 100 + 16:
      ((int16_t *)t->data)[i] = (int16_t)iv;
      break;
    case kDLInt * 100 + 32:
      ((int32_t *)t->data)[i] = (int32_t)iv;
      break;
    case kDLInt * 100 + 64:
      ((int64_t *)t->data)[i] = iv;
      break;
    default:
      ((uint8_t *)t->data)[i * (size_t)(t->dtype.bits > 8 ? t->dtype.bits / 8 : 1)] =
          (uint8_t)(r % 7 + 1);
    }
  }
}

at_bench *at_bench_new(const at_workload *wl, uint64_t seed) {
  if (wl->nargs > MAX_ARGS)
    return NULL;
  at_bench *b = ir_calloc(wl->ctx, 1, sizeof *b);
  if (!b)
    return NULL;
  b->nargs = wl->nargs;
  b->nin = wl->nin;
  b->device = kDLCPU;
  uint64_t s = seed * 2654435761u + 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < wl->nargs; i++) {
    te_tensor *tt = wl->args[i];
    DLTensor *t = &b->t[i];
    size_t count = 1;
    for (int d = 0; d < tt->ndim; d++) {
      ir_is_const_int(tt->shape[d], &b->shape[i][d]);
      count *= (size_t)b->shape[i][d];
    }
    snprintf(b->names[i], sizeof b->names[i], "%s", tt->name);
    b->bytes[i] = count * (size_t)ir_dtype_bytes(tt->dtype);
    size_t alloc = b->bytes[i] ? b->bytes[i] : 1;
    void *p = NULL;
    if (i < wl->nin) {
      p = ir_aligned_malloc(wl->ctx, 64, alloc);
    } else {
      p = ir_may_allocate(wl->ctx)
              ? mmap(NULL, alloc, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
              : MAP_FAILED;
      p = p == MAP_FAILED ? NULL : p;
      b->ref[i] = p ? ir_calloc(wl->ctx, 1, alloc) : NULL;
    }
    t->data = p;
    if (!p || (i >= wl->nin && !b->ref[i])) {
      b->nargs = i + 1;
      at_bench_free(b);
      return NULL;
    }
    *t = (DLTensor){p, {kDLCPU, 0}, tt->ndim, tt->dtype, b->shape[i], NULL, 0};
    if (i < wl->nin)
      fill_random(t, count, &s);
  }
  return b;
}

void at_bench_free(at_bench *b) {
  if (!b)
    return;
  for (int i = 0; i < b->nargs; i++) {
    if (i < b->nin)
      free(b->t[i].data);
    else if (b->t[i].data)
      munmap(b->t[i].data, b->bytes[i] ? b->bytes[i] : 1);
    free(b->ref[i]);
  }
  free(b);
}

bool at_bench_has_reference(const at_bench *b) { return b->has_ref; }

void at_bench_set_device(at_bench *b, DLDeviceType device) { b->device = device; }

/* ---------------------------------------------------------------- the child */

/* The entry point has one DLTensor * parameter per argument. */
#define D DLTensor *
typedef int32_t (*fn1)(D);
typedef int32_t (*fn2)(D, D);
typedef int32_t (*fn3)(D, D, D);
typedef int32_t (*fn4)(D, D, D, D);
typedef int32_t (*fn5)(D, D, D, D, D);
typedef int32_t (*fn6)(D, D, D, D, D, D);
typedef int32_t (*fn7)(D, D, D, D, D, D, D);
typedef int32_t (*fn8)(D, D, D, D, D, D, D, D);
typedef int32_t (*fn9)(D, D, D, D, D, D, D, D, D);
typedef int32_t (*fn10)(D, D, D, D, D, D, D, D, D, D);
typedef int32_t (*fn11)(D, D, D, D, D, D, D, D, D, D, D);
typedef int32_t (*fn12)(D, D, D, D, D, D, D, D, D, D, D, D);
#undef D

static int32_t call_entry(void *e, at_bench *b) {
  DLTensor *a[MAX_ARGS];
  for (int i = 0; i < b->nargs; i++)
    a[i] = &b->t[i];
  switch (b->nargs) {
  case 1:
    return ((fn1)e)(a[0]);
  case 2:
    return ((fn2)e)(a[0], a[1]);
  case 3:
    return ((fn3)e)(a[0], a[1], a[2]);
  case 4:
    return ((fn4)e)(a[0], a[1], a[2], a[3]);
  case 5:
    return ((fn5)e)(a[0], a[1], a[2], a[3], a[4]);
  case 6:
    return ((fn6)e)(a[0], a[1], a[2], a[3], a[4], a[5]);
  case 7:
    return ((fn7)e)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
  case 8:
    return ((fn8)e)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  case 9:
    return ((fn9)e)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
  case 10:
    return ((fn10)e)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
  case 11:
    return ((fn11)e)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
  default:
    return ((fn12)e)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]);
  }
}

/* ---------------------------------------------------------------- GPU candidates
 *
 * A GPU candidate is its te_module, called through te_module_call. Vulkan takes the bench's
 * host buffers (its launcher copies them in and out at every call, which its times include);
 * CUDA takes device copies that the child makes (outputs poisoned there too) and copies back
 * into the shared outputs when its runs are done. Both are called only in children: the
 * tuner's process never loads a GPU driver. */

typedef struct gpu_call {
  te_module *mod;
  DLTensor t[MAX_ARGS]; /* the tensors the kernel is called on */
  bool cuda;
} gpu_call;

static const DLDevice cpu_dev = {kDLCPU, 0}, cuda_dev = {kDLCUDA, 0};

static int32_t gpu_fail(child_msg *m, int32_t status, const char *text) {
  snprintf(m->text, sizeof m->text, "%s", text);
  return m->status = status;
}

/* Device copies of the bench's buffers (CUDA), or the buffers themselves (Vulkan). */
static int32_t gpu_setup(at_bench *b, void *entry, gpu_call *g, child_msg *m) {
  g->mod = entry;
  g->cuda = b->device == kDLCUDA;
  for (int i = 0; i < b->nargs; i++) {
    g->t[i] = b->t[i];
    if (!g->cuda)
      continue;
    void *p = NULL;
    te_status st = te_device_alloc(cuda_dev, b->bytes[i] ? b->bytes[i] : 1, &p);
    if (st == TE_OK)
      st = te_device_copy(p, cuda_dev, b->t[i].data, cpu_dev, b->bytes[i]);
    if (st != TE_OK)
      return gpu_fail(m, st, te_device_last_error());
    g->t[i].data = p;
    g->t[i].device = cuda_dev;
  }
  return 0;
}

static int32_t gpu_run(gpu_call *g, int nargs, child_msg *m) {
  DLTensor *a[MAX_ARGS];
  for (int i = 0; i < nargs; i++)
    a[i] = &g->t[i];
  te_status st = te_module_call(g->mod, "at_kernel", nargs, a, 0, NULL);
  if (st != TE_OK)
    return gpu_fail(m, st, te_last_error(g->mod->ctx));
  if (g->cuda && (st = te_device_sync(cuda_dev)) != TE_OK)
    return gpu_fail(m, st, te_device_last_error());
  return 0;
}

/* The outputs back into the shared buffers (CUDA). */
static int32_t gpu_finish(at_bench *b, gpu_call *g, child_msg *m) {
  for (int i = b->nin; g->cuda && i < b->nargs; i++) {
    te_status st = te_device_copy(b->t[i].data, cpu_dev, g->t[i].data, cuda_dev, b->bytes[i]);
    if (st != TE_OK)
      return gpu_fail(m, st, te_device_last_error());
  }
  return 0;
}

/* One call of the candidate: its host entry, or (gpu set) its module on the device. */
static int32_t run_once(void *entry, at_bench *b, gpu_call *gpu, child_msg *m) {
  if (gpu)
    return gpu_run(gpu, b->nargs, m);
  return m->status = call_entry(entry, b);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void poison(at_bench *b) {
  for (int i = b->nin; i < b->nargs; i++) {
    DLTensor *t = &b->t[i];
    if (ir_is_float(t->dtype))
      memset(t->data, 0xff, b->bytes[i]); /* all ones: a NaN in every float dtype */
    else
      memset(t->data, 0x5a, b->bytes[i]);
  }
}

static void child_send(int fd, child_msg *m) {
  const char *p = (const char *)m;
  size_t left = sizeof *m;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w <= 0 && errno != EINTR)
      break;
    if (w > 0)
      p += w, left -= (size_t)w;
  }
}

/* Bytes to write over to evict the caches: twice the last-level cache that sysfs reports for
   CPU 0 (index3, else index2), 64 MiB when it reports none. */
static size_t flush_bytes(void) {
  const char *paths[] = {"/sys/devices/system/cpu/cpu0/cache/index3/size",
                         "/sys/devices/system/cpu/cpu0/cache/index2/size"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
    FILE *f = fopen(paths[i], "r");
    unsigned long long n = 0;
    char unit = 0;
    int got = f ? fscanf(f, "%llu%c", &n, &unit) : 0;
    if (f)
      fclose(f);
    if (got >= 1 && n > 0) {
      n *= unit == 'K' ? 1024ull : unit == 'M' ? 1024ull * 1024 : 1;
      return n * 2 < (512ull << 20) ? (size_t)n * 2 : 512u << 20;
    }
  }
  return 64u << 20;
}

/* Writes over buf and reads it back, so the kernel's buffers leave every cache level. */
static void flush_caches(unsigned char *buf, size_t n) {
  static unsigned char round;
  memset(buf, ++round, n);
  volatile unsigned long sink = 0;
  for (size_t i = 0; i < n; i += 64)
    sink += buf[i];
  (void)sink;
}

/* The timed runs, after the warm-up: each on the wall clock and, for a host kernel where the
   threads' schedstat can be read (clock.c: the team is the threads the warm-up left, the pool's
   workers among them), on the cpu clock too. The waits are read outside the timed interval. The
   repeats stop on the ranking clock's total. */
static void timed_runs(at_bench *b, void *entry, gpu_call *gpu, const at_measure_opts *o,
                       child_msg *m) {
  int maxn = o->max_repeats > 0 && o->max_repeats < MAX_COSTS ? o->max_repeats : MAX_COSTS;
  double total = 0;
  size_t nflush = o->flush_cache ? flush_bytes() : 0;
  unsigned char *flush = nflush ? malloc(nflush) : NULL; /* the child's: freed by _exit */
  static at_team team;
  static at_thread_times w0[AT_TEAM_MAX], w1[AT_TEAM_MAX];
  bool cpu = !gpu && at_team_open(&team); /* a device's time is not the host threads' */
  while (m->n < maxn && (m->n < o->min_repeats || total < o->min_repeat_s)) {
    if (flush)
      flush_caches(flush, nflush);
    cpu = cpu && at_team_read(&team, w0);
    double t0 = now_s();
    if (run_once(entry, b, gpu, m) != 0)
      break;
    double wall = now_s() - t0;
    cpu = cpu && at_team_read(&team, w1);
    m->costs[m->n] = wall;
    m->cpu_costs[m->n] = cpu ? at_cpu_cost(wall, team.n, w0, w1) : wall;
    total += o->clock == TE_TUNE_CLOCK_CPU && cpu ? m->cpu_costs[m->n] : wall;
    m->n++;
  }
  m->ncpu = cpu ? m->n : 0;
}

static void child_main(at_bench *b, void *entry, int nrun, const at_measure_opts *o, int fd,
                       int planted) {
  static child_msg m;
  memset(&m, 0, sizeof m);
  if (planted == 1) /* a crash by signal; SIGABRT, which sanitizers do not intercept */
    raise(SIGABRT);
  while (planted == 2)
    pause();
  if (o && o->threads > 0)
    te_set_num_threads(o->threads);
  poison(b);
  static gpu_call gc;
  gpu_call *gpu = b->device != kDLCPU && nrun > 0 ? &gc : NULL; /* the reference runs on the host */
  if (gpu && gpu_setup(b, entry, gpu, &m) != 0) {
    child_send(fd, &m);
    _exit(0);
  }
  int warm = o && o->warmup > 0 ? o->warmup : 1;
  for (int i = 0; i < warm; i++)
    if (run_once(entry, b, gpu, &m) != 0)
      break;
  if (m.status == 0 && nrun > 0)
    timed_runs(b, entry, gpu, o, &m);
  if (m.status == 0 && gpu)
    gpu_finish(b, gpu, &m);
  if (m.status != 0 && !gpu)
    snprintf(m.text, sizeof m.text, "%s", te_rt_last_error());
  if (planted == 3 && b->nargs > b->nin) /* a planted wrong answer: the first output byte flipped */
    ((unsigned char *)b->t[b->nin].data)[b->bytes[b->nin] > 3 ? 3 : 0] ^= 0x40;
  child_send(fd, &m);
  _exit(0);
}

/* ---------------------------------------------------------------- the parent */

static void set_error(at_result *r, te_status st, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_error(at_result *r, te_status st, const char *kind, const char *fmt, ...) {
  r->status = st;
  snprintf(r->kind, sizeof r->kind, "%s", kind);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->message, sizeof r->message, fmt, ap);
  va_end(ap);
}

/* Reads the child's message within the time left; 1 read, 0 EOF/short, -1 timeout. */
static int read_msg(int fd, child_msg *m, double deadline) {
  char *p = (char *)m;
  size_t got = 0;
  while (got < sizeof *m) {
    double left = deadline - now_s();
    if (left <= 0)
      return -1;
    struct pollfd pfd = {fd, POLLIN, 0};
    int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR)
      continue;
    if (pr == 0)
      return -1;
    ssize_t n = read(fd, p + got, sizeof *m - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return 0;
    got += (size_t)n;
  }
  return 1;
}

/* Forks a child that runs the entry; fills r (status, costs) from what it reports. */
static void run_child(at_bench *b, void *entry, int nrun, const at_measure_opts *o,
                      double timeout_s, at_result *r) {
  memset(r, 0, sizeof *r);
  int planted = nrun == 0                    ? 0
                : bench_calls == plant_crash ? 1
                : bench_calls == plant_hang  ? 2
                : bench_calls == plant_wrong ? 3
                                             : 0;
  if (nrun > 0)
    bench_calls++;
  int fds[2];
  if (pipe(fds) != 0)
    return set_error(r, TE_ERR_IO, "run", "pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return set_error(r, TE_ERR_RUNTIME, "run", "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(b, entry, nrun, o, fds[1], planted);
  }
  close(fds[1]);
  if (planted == 2 && plant_hang_timeout_s > 0)
    timeout_s = plant_hang_timeout_s;
  static child_msg m;
  int got = read_msg(fds[0], &m, now_s() + timeout_s);
  close(fds[0]);
  int ws = 0;
  if (got < 0)
    kill(pid, SIGKILL);
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  if (got < 0)
    return set_error(r, TE_ERR_RUNTIME, "timeout", "killed after %.3g s (timeout)", timeout_s);
  if (WIFSIGNALED(ws))
    return set_error(r, TE_ERR_RUNTIME, "crash", "the kernel crashed: signal %d (%s)", WTERMSIG(ws),
                     strsignal(WTERMSIG(ws)));
  if (got == 0)
    return set_error(r, TE_ERR_RUNTIME, "crash", "the child exited (status %d) without a result",
                     WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
  if (m.status != 0)
    return set_error(
        r, m.status > 0 && m.status <= TE_ERR_INTERNAL ? (te_status)m.status : TE_ERR_RUNTIME,
        "run", "kernel returned %d: %s", m.status, m.text);
  r->status = TE_OK;
  r->ncosts = m.n;
  memcpy(r->costs, m.costs, sizeof(double) * (size_t)m.n);
  r->ncpu_costs = m.ncpu == m.n ? m.n : 0;
  memcpy(r->cpu_costs, m.cpu_costs, sizeof(double) * (size_t)r->ncpu_costs);
}

double at_result_cost(const at_result *r, int clock) {
  if (clock == TE_TUNE_CLOCK_CPU && r->ncpu_costs > 0 && r->ncpu_costs == r->ncosts)
    return at_median(r->cpu_costs, r->ncpu_costs);
  return at_median(r->costs, r->ncosts);
}

/* ---------------------------------------------------------------- checking */

static double elem(const DLTensor *t, size_t i) {
  if (ir_is_half(t->dtype))
    return ir_half_value(t->dtype, ((const uint16_t *)t->data)[i]);
  switch (t->dtype.code * 100 + t->dtype.bits) {
  case kDLFloat * 100 + 32:
    return ((const float *)t->data)[i];
  case kDLFloat * 100 + 64:
    return ((const double *)t->data)[i];
  case kDLInt * 100 + 8:
    return ((const int8_t *)t->data)[i];
  case kDLInt * 100 + 16:
    return ((const int16_t *)t->data)[i];
  case kDLInt * 100 + 32:
    return ((const int32_t *)t->data)[i];
  case kDLInt * 100 + 64:
    return (double)((const int64_t *)t->data)[i];
  case kDLUInt * 100 + 16:
    return ((const uint16_t *)t->data)[i];
  case kDLUInt * 100 + 32:
    return ((const uint32_t *)t->data)[i];
  case kDLUInt * 100 + 64:
    return (double)((const uint64_t *)t->data)[i];
  default:
    return ((const uint8_t *)t->data)[i];
  }
}

/* Compares output i with the reference: floats within a tolerance that scales with the largest
   reference value (reductions may be reordered), others exactly. */
static bool compare(at_bench *b, int i, at_result *r) {
  DLTensor *t = &b->t[i], ref = *t;
  ref.data = b->ref[i];
  size_t n = b->bytes[i] / (size_t)ir_dtype_bytes(t->dtype);
  bool fl = ir_is_float(t->dtype);
  /* 16-bit floats round every partial sum: a reordered reduction differs by a few of their ulps */
  double rtol = t->dtype.bits == 64          ? 1e-9
                : t->dtype.code == kDLBfloat ? 5e-2
                : t->dtype.bits == 16        ? 1e-2
                                             : 1e-3,
         scale = 0;
  for (size_t k = 0; fl && k < n; k++)
    scale = fmax(scale, fabs(elem(&ref, k)));
  for (size_t k = 0; k < n; k++) {
    double got = elem(t, k), want = elem(&ref, k);
    bool ok =
        fl ? (isnan(want) ? isnan(got) : fabs(got - want) <= rtol * (fabs(want) + 0.1 * scale))
           : got == want;
    if (!ok) {
      set_error(r, TE_ERR_RUNTIME, "wrong",
                "wrong result: %s[%zu] = %.9g, the default schedule gives %.9g", b->names[i], k,
                got, want);
      return false;
    }
  }
  return true;
}

void at_bench_run(at_bench *b, void *entry, bool check, const at_measure_opts *o, at_result *r) {
  int call = bench_calls;
  run_child(b, entry, 1, o, o->timeout_s > 0 ? o->timeout_s : 10, r);
  for (int i = 0; noisy(call) && i < r->ncosts; i++)
    r->costs[i] *= noise_factor;
  for (int i = 0; noisy(call) && i < r->ncpu_costs; i++)
    r->cpu_costs[i] *= noise_factor;
  if (gethostname(r->measured_on, sizeof r->measured_on) != 0)
    r->measured_on[0] = 0;
  r->measured_on[sizeof r->measured_on - 1] = 0;
  if (r->status != TE_OK || !check || !b->has_ref)
    return;
  for (int i = b->nin; i < b->nargs; i++)
    if (!compare(b, i, r)) {
      r->ncosts = r->ncpu_costs = 0;
      return;
    }
}

void at_bench_set_reference(at_bench *b, void *entry, double timeout_s, at_result *r) {
  at_measure_opts o = {0};
  o.warmup = 1;
  run_child(b, entry, 0, &o, timeout_s, r);
  if (r->status != TE_OK)
    return;
  for (int i = b->nin; i < b->nargs; i++)
    memcpy(b->ref[i], b->t[i].data, b->bytes[i]);
  b->has_ref = true;
}

/* ---------------------------------------------------------------- is the device there? */

te_status at_device_probe(const te_target *tgt, char msg[512]) {
  msg[0] = 0;
  if (!tg_is_gpu(tgt))
    return TE_OK;
  bool cuda = tgt->kind == TG_CUDA;
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(msg, 512, "pipe: %s", strerror(errno));
    return TE_ERR_IO;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    snprintf(msg, 512, "fork: %s", strerror(errno));
    return TE_ERR_RUNTIME;
  }
  if (pid == 0) { /* the child asks the driver and says why not */
    static child_msg m;
    close(fds[0]);
    memset(&m, 0, sizeof m);
    if (cuda ? !te_device_available(kDLCUDA) : te_rt_vk_init() != 0)
      m.status = TE_ERR_RUNTIME;
    snprintf(m.text, sizeof m.text, "%s", m.status ? te_rt_last_error() : "");
    child_send(fds[1], &m);
    _exit(0);
  }
  close(fds[1]);
  static child_msg m;
  int got = read_msg(fds[0], &m, now_s() + 60);
  close(fds[0]);
  if (got < 0)
    kill(pid, SIGKILL);
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  if (got == 1 && m.status == 0)
    return TE_OK;
  snprintf(msg, 512, "%s",
           got < 0    ? "the driver did not answer within 60 s"
           : got == 0 ? "the driver's process died while starting it"
                      : m.text);
  return TE_ERR_RUNTIME;
}
