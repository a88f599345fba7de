/* mpi.c — `te-tune tune --mpi`: one tuning run spread over the ranks of an MPI job.
 *
 *   mpirun -n N te-tune tune WORKLOAD [options] --mpi
 *
 * Every rank runs the same command, so every rank builds the same workload with the same
 * options. Rank 0 searches, owns the log and runs the confirm pass (at_tune_remote); ranks 1..N-1
 * are measurers (at_measurer): each is sent a candidate's trace, builds it, measures it in a child
 * process as te_tune does, and sends back the build status and the costs, then gets the next one.
 * Rank 0 hands out a round's candidates as measurers free up, so a fast host measures more.
 *
 * What crosses the wire: a job is (index, check flag, trace text); a result is a fixed-size
 * record of plain C values (at_result), so every rank must run the same te-tune build (the same
 * machine architecture), which mpirun's usual deployment gives. A lost rank: rank 0 writes and
 * flushes every record as it comes, so when mpirun ends the job after a rank dies, the log is
 * whole and `--resume` continues; MPI errors that reach rank 0 end the run with a message
 * saying so. Open MPI, from Debian's packages; found at configure time (TE_HAVE_MPI).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#if TE_HAVE_MPI
#include <mpi.h>

enum { TAG_JOB = 1, TAG_RESULT = 2, TAG_STOP = 3 };

/* A job's header; the trace follows it, NUL-terminated. */
typedef struct wire_job {
  int32_t index, check;
} wire_job;

typedef struct wire_result {
  int32_t index, build_status;
  double build_s;
  char build_message[512];
  at_result result;
} wire_result;

typedef struct mpi_remote {
  te_ctx *ctx;
  int size;
} mpi_remote;

bool cli_mpi_available(void) { return true; }

int cli_mpi_init(int *rank, int *size) {
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    fprintf(stderr, "te-tune: --mpi: MPI_Init failed\n");
    return CLI_FAIL;
  }
  /* Errors come back as codes, so rank 0 can say what the log holds before it stops. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return CLI_OK;
}

void cli_mpi_finalize(void) { MPI_Finalize(); }

static te_status lost(mpi_remote *m, int rank, int code) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(code, text, &len);
  return ir_error(m->ctx, TE_ERR_IO,
                  "te-tune --mpi: lost contact with rank %d (%s); the log holds every record "
                  "measured so far: run again with --resume to continue",
                  rank, text);
}

static int send_job(int rank, int index, const at_remote_job *j) {
  size_t tlen = strlen(j->trace) + 1, size = sizeof(wire_job) + tlen;
  char *buf = malloc(size);
  if (!buf)
    return MPI_ERR_NO_MEM;
  wire_job h = {index, j->check};
  memcpy(buf, &h, sizeof h);
  memcpy(buf + sizeof h, j->trace, tlen);
  int rc = MPI_Send(buf, (int)size, MPI_BYTE, rank, TAG_JOB, MPI_COMM_WORLD);
  free(buf);
  return rc;
}

/* at_remote.measure: the round's jobs handed out to ranks 1..size-1 as they free up. */
static te_status measure(void *user, int n, at_remote_job *jobs) {
  mpi_remote *m = user;
  int next = 0, in_flight = 0, rc;
  for (int r = 1; r < m->size && next < n; r++, next++, in_flight++)
    if ((rc = send_job(r, next, &jobs[next])) != MPI_SUCCESS)
      return lost(m, r, rc);
  while (in_flight > 0) {
    wire_result w;
    MPI_Status st;
    rc = MPI_Recv(&w, (int)sizeof w, MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
    if (rc != MPI_SUCCESS)
      return lost(m, MPI_ANY_SOURCE, rc);
    in_flight--;
    if (w.index < 0 || w.index >= n)
      return ir_error(m->ctx, TE_ERR_INTERNAL,
                      "te-tune --mpi: rank %d answered a job that was not sent (%d)", st.MPI_SOURCE,
                      (int)w.index);
    at_remote_job *j = &jobs[w.index];
    j->job.status = (te_status)w.build_status;
    j->job.build_s = w.build_s;
    memcpy(j->job.message, w.build_message, sizeof j->job.message);
    j->job.message[sizeof j->job.message - 1] = 0;
    j->result = w.result;
    j->result.message[sizeof j->result.message - 1] = 0;
    if (next < n) {
      if ((rc = send_job(st.MPI_SOURCE, next, &jobs[next])) != MPI_SUCCESS)
        return lost(m, st.MPI_SOURCE, rc);
      next++, in_flight++;
    }
  }
  return TE_OK;
}

at_remote cli_mpi_remote(te_ctx *ctx, int size) {
  static mpi_remote m; /* one tuning run per process */
  m.ctx = ctx;
  m.size = size;
  return (at_remote){measure, &m};
}

void cli_mpi_stop(int size) {
  for (int r = 1; r < size; r++)
    MPI_Send(NULL, 0, MPI_BYTE, r, TAG_STOP, MPI_COMM_WORLD);
}

/* Answers one job: measured by m, or failed with why the measurer could not start. */
static int answer(at_measurer *m, te_status setup, const char *setup_error, char *buf, int size) {
  wire_job h;
  memcpy(&h, buf, sizeof h);
  buf[size - 1] = 0;
  at_remote_job rj = {.trace = buf + sizeof h, .check = h.check != 0};
  if (m) {
    at_measurer_run(m, &rj);
    size_t len = strlen(rj.result.measured_on);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(rj.result.measured_on + len, sizeof rj.result.measured_on - len, " rank %d", rank);
  } else {
    rj.job.status = setup;
    snprintf(rj.job.message, sizeof rj.job.message, "measurer could not start: %s", setup_error);
  }
  wire_result *w = calloc(1, sizeof *w);
  if (!w)
    return MPI_ERR_NO_MEM;
  w->index = h.index;
  w->build_status = rj.job.status;
  w->build_s = rj.job.build_s;
  memcpy(w->build_message, rj.job.message, sizeof w->build_message);
  w->result = rj.result;
  int rc = MPI_Send(w, (int)sizeof *w, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
  free(w);
  return rc;
}

int cli_mpi_measure(te_ctx *ctx, int nout, te_tensor *const outs[], te_target *t,
                    const te_tune_options *o) {
  at_measurer *m = NULL;
  te_status setup = at_measurer_new(ctx, nout, outs, t, o, &m);
  const char *setup_error = setup == TE_OK ? "" : te_last_error(ctx);
  int rc = CLI_OK;
  for (;;) {
    MPI_Status st;
    int count = 0;
    if (MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st) != MPI_SUCCESS) {
      rc = CLI_FAIL;
      break;
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    char *buf = malloc(count > 0 ? (size_t)count : 1);
    if (!buf || MPI_Recv(buf, count, MPI_BYTE, 0, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
                    MPI_SUCCESS) {
      free(buf);
      rc = CLI_FAIL;
      break;
    }
    if (st.MPI_TAG == TAG_STOP) {
      free(buf);
      break;
    }
    int sent = (size_t)count > sizeof(wire_job) ? answer(m, setup, setup_error, buf, count)
                                                : MPI_ERR_COUNT;
    free(buf);
    if (sent != MPI_SUCCESS) {
      rc = CLI_FAIL;
      break;
    }
  }
  at_measurer_free(m);
  return rc;
}

#else /* no MPI: --mpi is refused */

bool cli_mpi_available(void) { return false; }
int cli_mpi_init(int *rank, int *size) {
  *rank = 0, *size = 1;
  return CLI_USAGE;
}
void cli_mpi_finalize(void) {}
at_remote cli_mpi_remote(te_ctx *ctx, int size) {
  (void)ctx, (void)size;
  return (at_remote){0};
}
void cli_mpi_stop(int size) { (void)size; }
int cli_mpi_measure(te_ctx *ctx, int nout, te_tensor *const outs[], te_target *t,
                    const te_tune_options *o) {
  (void)ctx, (void)nout, (void)outs, (void)t, (void)o;
  return CLI_USAGE;
}

#endif
