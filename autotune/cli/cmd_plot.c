/* cmd_plot.c — `te-tune plot`: the tuning curve of a workload (best GFLOP/s so far against trials
 * and against elapsed seconds) as a CSV table and an SVG drawing of two charts.
 *
 * Records are taken in log order (a resumed run continues the curve). The SVG is written by hand:
 * two panels with axes, ticks and a step line of the best-so-far value, and the measured points.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void help(void) {
  printf("usage: te-tune plot --out PREFIX [--log F] [--target T] [WORKLOAD | --key K]\n"
         "\n"
         "Writes PREFIX.csv (trial, elapsed_s, gflops, best_gflops, error) and PREFIX.svg (best\n"
         "GFLOP/s vs trials and vs seconds) for the workload's records for the target.\n"
         "\n"
         "exit status: 0 written, 2 usage error, 3 no record, 4 a file cannot be written or the\n"
         "             log read\n");
}

typedef struct point {
  double x_trial, x_time, g, best;
} point;

typedef struct panel {
  double x0, y0, w, h, xmax, ymax;
} panel;

static double nice(double v) {
  if (!(v > 0))
    return 1;
  double p = pow(10, floor(log10(v))), m = v / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void draw_panel(FILE *f, const panel *p, const point *pts, int n, bool by_time,
                       const char *xlabel) {
  fprintf(f, "<rect x='%g' y='%g' width='%g' height='%g' fill='none' stroke='#444'/>\n", p->x0,
          p->y0, p->w, p->h);
  for (int t = 0; t <= 4; t++) {
    double yv = p->ymax * t / 4, y = p->y0 + p->h - p->h * t / 4;
    double xv = p->xmax * t / 4, x = p->x0 + p->w * t / 4;
    fprintf(f, "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='#ddd'/>\n", p->x0, y, p->x0 + p->w,
            y);
    fprintf(f, "<text x='%g' y='%g' font-size='11' text-anchor='end'>%.4g</text>\n", p->x0 - 4,
            y + 4, yv);
    fprintf(f, "<text x='%g' y='%g' font-size='11' text-anchor='middle'>%.4g</text>\n", x,
            p->y0 + p->h + 14, xv);
  }
  fprintf(f, "<text x='%g' y='%g' font-size='12' text-anchor='middle'>%s</text>\n",
          p->x0 + p->w / 2, p->y0 + p->h + 30, xlabel);
  fprintf(f,
          "<text x='%g' y='%g' font-size='12' text-anchor='middle' transform='rotate(-90 %g "
          "%g)'>GFLOP/s</text>\n",
          p->x0 - 40, p->y0 + p->h / 2, p->x0 - 40, p->y0 + p->h / 2);
#define PX(pt) (p->x0 + p->w * ((by_time ? (pt).x_time : (pt).x_trial) / p->xmax))
#define PY(v) (p->y0 + p->h - p->h * ((v) / p->ymax))
  for (int i = 0; i < n; i++)
    if (pts[i].g > 0)
      fprintf(f, "<circle cx='%.2f' cy='%.2f' r='2' fill='#9ab'/>\n", PX(pts[i]), PY(pts[i].g));
  fprintf(f, "<polyline fill='none' stroke='#c33' stroke-width='2' points='");
  for (int i = 0; i < n; i++) {
    if (i > 0)
      fprintf(f, "%.2f,%.2f ", PX(pts[i]), PY(pts[i - 1].best));
    fprintf(f, "%.2f,%.2f ", PX(pts[i]), PY(pts[i].best));
  }
  fprintf(f, "'/>\n");
#undef PX
#undef PY
}

static bool write_svg(const char *path, const point *pts, int n, const char *title) {
  FILE *f = fopen(path, "w");
  if (!f)
    return false;
  double gmax = 0, tmax = 0;
  for (int i = 0; i < n; i++) {
    gmax = fmax(gmax, fmax(pts[i].g, pts[i].best));
    tmax = fmax(tmax, pts[i].x_time);
  }
  panel a = {70, 40, 380, 260, nice(n), nice(gmax * 1.05)};
  panel b = {540, 40, 380, 260, nice(tmax), a.ymax};
  fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='960' height='350' "
             "font-family='sans-serif'>\n<rect width='960' height='350' fill='white'/>\n");
  fprintf(f,
          "<text x='480' y='22' font-size='14' text-anchor='middle'>%s: best GFLOP/s so far "
          "(line) and each trial (dots)</text>\n",
          title);
  draw_panel(f, &a, pts, n, false, "trials");
  draw_panel(f, &b, pts, n, true, "seconds");
  fprintf(f, "</svg>\n");
  return fclose(f) == 0;
}

static int plot(const at_log *log, const at_record *best, const char *tstr, const char *prefix) {
  point *pts = calloc((size_t)log->n + 1, sizeof *pts);
  char path[4096];
  snprintf(path, sizeof path, "%s.csv", prefix);
  FILE *csv = pts ? fopen(path, "w") : NULL;
  if (!csv) {
    free(pts);
    fprintf(stderr, "te-tune plot: cannot write '%s'\n", path);
    return CLI_IO;
  }
  fprintf(csv, "trial,elapsed_s,gflops,best_gflops,error\n");
  int n = 0;
  double b = 0;
  for (int i = 0; i < log->n; i++) {
    const at_record *r = &log->rec[i];
    if (r->confirm || strcmp(r->key, best->key) || strcmp(r->target, tstr))
      continue; /* the curve is of trials: the confirm pass measures some again */
    double g = at_record_gflops(r);
    b = fmax(b, g);
    pts[n] = (point){n + 1, r->elapsed_s, g, b};
    fprintf(csv, "%d,%.3f,%.4f,%.4f,%s\n", n + 1, r->elapsed_s, g, b,
            r->error ? (r->error_kind && *r->error_kind ? r->error_kind : "error") : "");
    n++;
  }
  bool ok = fclose(csv) == 0;
  snprintf(path, sizeof path, "%s.svg", prefix);
  ok = ok && write_svg(path, pts, n, best->wl_desc ? best->wl_desc : best->key);
  free(pts);
  if (!ok) {
    fprintf(stderr, "te-tune plot: cannot write '%s'\n", path);
    return CLI_IO;
  }
  printf("wrote %s.csv and %s.svg (%d trials, best %.2f GFLOP/s)\n", prefix, prefix, n, b);
  return CLI_OK;
}

static int plot_action(const at_log *log, int best, cli_workload *w, const char *tstr,
                       const char *out) {
  (void)w;
  return plot(log, &log->rec[best], tstr, out);
}

int cmd_plot(int argc, char **argv) {
  return cli_run_on_best(argc, argv, "plot", "PREFIX", help, plot_action);
}
