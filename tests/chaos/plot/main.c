/*
 * chaos-plot: draws a chaos run directory (docs/chaos.md, "Picture").
 *
 *     chaos-plot [--out FILE] [--width PX] RUN_DIR
 *
 * Writes RUN_DIR/history.html (or FILE): a self-contained page, inline SVG
 * and CSS, no script, with the run's timeline (who led, nodes down, one
 * lane per worker, the faults as bands) and its latency scatter, and
 * prints its path. Exit status 0, or 1 when the run cannot be read or the
 * page cannot be written.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "plot.h"
#include "timeline.h"

#define DEFAULT_WIDTH 1400

static const char style[] =
    "body{font:13px sans-serif;margin:16px;color:#222}"
    "h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 4px}"
    "p{margin:4px 0;max-width:1100px}.plan{color:#555}"
    ".bad{color:#b00}.good{color:#080}"
    "svg text{font:10px sans-serif;fill:#333}"
    ".row-label,.grid text{text-anchor:end}"
    ".ticks line,.grid line{stroke:#e2e2e2}"
    ".lane-bg,.node-row{fill:#eee;fill-opacity:.45}"
    ".ok{fill:#4cae4c}.fail{fill:#d9534f}.info{fill:#f0a020}"
    ".op.info{stroke:#a06000;stroke-width:.5}"
    ".pts{fill:none;stroke-width:3;stroke-linecap:round;stroke-opacity:.55}"
    ".pts.ok{stroke:#4cae4c}.pts.fail{stroke:#d9534f}"
    ".pts.info{stroke:#f0a020}"
    ".fault{fill:#7a5195;fill-opacity:.14}"
    ".q50,.q99{fill:none;stroke:#222;stroke-width:1.2}"
    ".q99{stroke-dasharray:3 2}"
    ".fault-label{fill:#5a3175}"
    ".heal{stroke:#333;stroke-dasharray:4 3}"
    ".down{fill:#888;fill-opacity:.55}"
    "svg .term{fill:#fff;font-size:9px}"
    ".key{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;"
    "vertical-align:-1px}";

/* Copy the lines of RUN/results that did not pass, and the summary's last
 * line (the verdicts), when the checker ran. */
static void verdicts(FILE *f, const char *dir)
{
        char path[4096], line[1024], last[1024] = "";
        FILE *in;

        snprintf(path, sizeof path, "%s/summary", dir);
        if ((in = fopen(path, "r")) != NULL) {
                while (fgets(line, sizeof line, in) != NULL) {
                        if (line[0] != '\n') {
                                memcpy(last, line, sizeof last);
                        }
                }
                fclose(in);
        }
        if (last[0] == '\0') {
                fputs("<p>No verdicts: chaos-check has not run.</p>\n", f);
                return;
        }
        last[strcspn(last, "\n")] = '\0';
        fprintf(f, "<p class=\"%s\">chaos-check: ",
                strstr(last, " 0 failed") != NULL ? "good" : "bad");
        plot_esc(f, last);
        fputs("</p>\n", f);
        snprintf(path, sizeof path, "%s/results", dir);
        if ((in = fopen(path, "r")) == NULL) {
                return;
        }
        while (fgets(line, sizeof line, in) != NULL) {
                line[strcspn(line, "\n")] = '\0';
                if (strstr(line, " PASS ") == NULL && line[0] != '\0') {
                        fputs("<p class=\"bad\">", f);
                        plot_esc(f, line);
                        fputs("</p>\n", f);
                }
        }
        fclose(in);
}

static void header(FILE *f, const struct plot *p)
{
        static const char *const keys[] = {"seed",   "nemesis", "nodes",
                                           "time_s", "ttl_ms",  "workloads",
                                           "server", "network", "expect"};
        const char *base = strrchr(p->dir, '/');
        size_t i;

        base = base != NULL && base[1] != '\0' ? base + 1 : p->dir;
        fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
              "<title>chaos run ",
              f);
        plot_esc(f, base);
        fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>", style);
        plot_esc(f, base);
        fputs("</h1>\n<p class=\"plan\">", f);
        for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                const char *v = nemlog_plan_get(&p->nemlog, keys[i]);

                if (v != NULL) {
                        fprintf(f, "%s=", keys[i]);
                        plot_esc(f, v);
                        fputc(' ', f);
                }
        }
        fputs("</p>\n", f);
        verdicts(f, p->dir);
}

static void body(FILE *f, const struct plot *p)
{
        fputs("<p><span class=\"key ok\" style=\"background:#4cae4c\"></span>"
              "ok<span class=\"key\" style=\"background:#d9534f\"></span>fail "
              "(surely did not happen)<span class=\"key\" "
              "style=\"background:#f0a020\"></span>info (outcome unknown, or "
              "no completion)<span class=\"key\" style=\"background:#7a5195;"
              "opacity:.35\"></span>a fault, start to end<span class=\"key\" "
              "style=\"background:#888\"></span>node process down</p>\n",
              f);
        fputs("<h2>Timeline</h2>\n<p>Time runs right, in seconds from the "
              "run's first event. The rows n1, n2, ... are the nodes: a "
              "coloured bar while a node served as leader (its term written "
              "in it), grey while its process was down. Below, one lane per "
              "worker. ",
              f);
        if (p->detail) {
                fputs("Each operation is a bar from its invoke to its "
                      "completion, coloured by outcome; hover for what it "
                      "was.",
                      f);
        } else {
                fprintf(f,
                        "With %zu operations each lane is a bar chart: the "
                        "operations completed in each column, stacked by "
                        "outcome, scaled to the lane's busiest column; an "
                        "operation that took 0.5 s or more is also a thin bar "
                        "from its invoke to its completion at the lane's top.",
                        p->n_drawn);
        }
        fputs(" Shaded bands are the nemesis's faults, labelled with the fault "
              "and its targets; the dashed line is the final heal.</p>\n",
              f);
        timeline_write(f, p);
        fputs("<h2>Latency</h2>\n<p>Each completed operation at its "
              "completion time, its latency on a log scale (faster than "
              "10 µs on the floor)",
              f);
        fputs(p->detail ? ".</p>\n"
                        : "; one point per occupied 2 px cell and outcome, so "
                          "every outlier stays and dense regions are "
                          "thinned. The solid line is the median latency of "
                          "each 8 px column's operations, the dashed one "
                          "their 99th percentile.</p>\n",
              f);
        latency_write(f, p);
        fputs("</body></html>\n", f);
}

static int write_page(const struct plot *p, const char *out)
{
        char tmp[4200];
        FILE *f;

        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        if ((f = fopen(tmp, "w")) == NULL) {
                perror(tmp);
                return -1;
        }
        header(f, p);
        body(f, p);
        if (ferror(f) || fclose(f) != 0) {
                perror(tmp);
                remove(tmp);
                return -1;
        }
        if (rename(tmp, out) != 0) {
                perror(out);
                remove(tmp);
                return -1;
        }
        return 0;
}

static void usage(FILE *f)
{
        fputs("usage: chaos-plot [--out FILE] [--width PX] RUN_DIR\n", f);
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"out", required_argument, NULL, 'o'},
            {"width", required_argument, NULL, 'w'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        char errmsg[512], out[4096];
        const char *out_arg = NULL;
        struct plot p;
        int c, width = DEFAULT_WIDTH, rc;

        while ((c = getopt_long(argc, argv, "o:w:h", longopts, NULL)) != -1) {
                switch (c) {
                case 'o':
                        out_arg = optarg;
                        break;
                case 'w':
                        width = atoi(optarg);
                        if (width < 400 || width > 20000) {
                                fputs("chaos-plot: --width: 400 to 20000 px\n",
                                      stderr);
                                return 1;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 1;
                }
        }
        if (optind + 1 != argc) {
                usage(stderr);
                return 1;
        }
        if (plot_load(&p, argv[optind], width, errmsg, sizeof errmsg) != 0) {
                fprintf(stderr, "chaos-plot: %s\n", errmsg);
                return 1;
        }
        snprintf(out, sizeof out, "%s",
                 out_arg != NULL ? out_arg : argv[optind]);
        if (out_arg == NULL) {
                strncat(out, "/history.html", sizeof out - strlen(out) - 1);
        }
        rc = write_page(&p, out);
        if (rc == 0) {
                printf("%s\n", out);
        }
        plot_free(&p);
        return rc == 0 ? 0 : 1;
}
