/* SPDX-License-Identifier: Apache-2.0 */
#include "measure/svg.h"

#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define W	1000
#define H	600
#define LEFT	90
#define RIGHT	190 /* room for the line labels */
#define TOP	124
#define BOTTOM	56
#define GAP	46 /* between the two panels */
#define PANEL_H ((H - TOP - BOTTOM - GAP) / 2)
#define PLOT_W	(W - LEFT - RIGHT)

#define COLOR_FREE  "#1f77b4"
#define COLOR_AVAIL "#7fb2d9"
#define COLOR_VM    "#d62728"
#define COLOR_STOP  "#2ca02c"

double svg_nice_step(double raw)
{
	if (!(raw > 0))
		return 1;
	double mag = pow(10, floor(log10(raw)));
	double steps[] = {1, 2, 5, 10};
	for (size_t i = 0; i < 4; i++)
		if (steps[i] * mag >= raw * (1 - 1e-9))
			return steps[i] * mag;
	return 10 * mag;
}

char *svg_escape(const char *s, char *buf, size_t size)
{
	size_t o = 0;
	for (; s && *s && o + 7 < size; s++) {
		const char *rep = NULL;
		switch (*s) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = "&quot;";
			break;
		case '\'':
			rep = "&apos;";
			break;
		}
		if (rep) {
			size_t n = strlen(rep);
			memcpy(buf + o, rep, n);
			o += n;
		} else if ((unsigned char)*s >= 0x20 || *s == '\t') {
			buf[o++] = *s;
		}
	}
	if (size)
		buf[o] = '\0';
	return buf;
}

/* A value axis: bytes shown in MiB or GiB, from lo to hi in nice steps. */
struct axis {
	double lo, hi, step; /* in display units */
	double unit;	     /* bytes per display unit */
	const char *unit_name;
};

static struct axis value_axis(double min_bytes, double max_bytes, bool from_zero)
{
	struct axis a = {.unit = (double)VMC_MIB, .unit_name = "MiB"};
	if (max_bytes >= 2.0 * (double)VMC_GIB) {
		a.unit = (double)VMC_GIB;
		a.unit_name = "GiB";
	}
	double lo = from_zero ? 0 : min_bytes / a.unit, hi = max_bytes / a.unit;
	if (hi - lo < 1e-9)
		hi = lo + (a.unit_name[0] == 'G' ? 1 : 64);
	a.step = svg_nice_step((hi - lo) / 5);
	a.lo = floor(lo / a.step) * a.step;
	a.hi = ceil(hi / a.step) * a.step;
	if (a.hi <= a.lo)
		a.hi = a.lo + a.step;
	return a;
}

struct frame {
	double t_max;
	double x_step;
	int top; /* panel's top y */
	struct axis ax;
};

static double px_x(const struct frame *fr, double t)
{
	return LEFT + t / fr->t_max * PLOT_W;
}

static double px_y(const struct frame *fr, double bytes)
{
	double v = bytes / fr->ax.unit;
	return fr->top + PANEL_H - (v - fr->ax.lo) / (fr->ax.hi - fr->ax.lo) * PANEL_H;
}

static void text(FILE *f, double x, double y, const char *anchor, const char *style, const char *s)
{
	char esc[512];
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" %s>%s</text>\n", x, y, anchor,
		style, svg_escape(s, esc, sizeof esc));
}

static void phase_bands(FILE *f, const struct timeline *tl, const struct frame *fr)
{
	size_t shown = 0; /* zero-width phases (skipped ones) do not take a shade */
	for (size_t i = 0; i < tl->nphases; i++) {
		const struct tl_phase *p = &tl->phases[i];
		double end = p->end < 0 ? fr->t_max : p->end;
		double x0 = px_x(fr, p->start), x1 = px_x(fr, end);
		if (x1 - x0 < 0.5)
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n",
			x0, TOP - 48, x1 - x0 > 0 ? x1 - x0 : 0, H - BOTTOM - TOP + 48,
			shown++ % 2 ? "#ffffff" : "#f0f0f0");
		/* Narrow bands get the short name; labels never spill into the next band. */
		const char *label = p->label;
		double room = x1 - x0;
		if ((double)strlen(label) * 6.5 > room)
			label = p->name;
		if ((double)strlen(label) * 6.5 > room)
			continue;
		text(f, (x0 + x1) / 2, TOP - 30, "middle", "font-size=\"12\" fill=\"#444\"", label);
	}
}

static void value_ticks(FILE *f, const struct frame *fr, const char *title)
{
	for (double v = fr->ax.lo; v <= fr->ax.hi + fr->ax.step / 2; v += fr->ax.step) {
		double y = px_y(fr, v * fr->ax.unit);
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			LEFT, y, LEFT + PLOT_W, y);
		char label[32];
		snprintf(label, sizeof label, "%g", v);
		text(f, LEFT - 6, y + 4, "end", "font-size=\"11\"", label);
	}
	char caption[96];
	snprintf(caption, sizeof caption, "%s (%s)", title, fr->ax.unit_name);
	text(f, LEFT, fr->top - 6, "start", "font-size=\"12\" font-weight=\"bold\"", caption);
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		LEFT, fr->top, PLOT_W, PANEL_H);
}

enum series { S_FREE, S_AVAILABLE, S_VM };

static bool sample_value(const struct tl_sample *s, enum series which, double *v)
{
	switch (which) {
	case S_FREE:
		*v = (double)s->host_free;
		return true;
	case S_AVAILABLE:
		*v = (double)s->host_available;
		return true;
	case S_VM:
		*v = (double)s->vm_footprint;
		return s->has_vm;
	}
	return false;
}

/* One polyline per run of samples that have a value; returns the last point drawn. */
static bool series_line(FILE *f, const struct timeline *tl, const struct frame *fr,
			enum series which, const char *color, const char *dash, double *last_x,
			double *last_y, double *last_v)
{
	bool open = false, any = false;
	for (size_t i = 0; i < tl->n; i++) {
		double v;
		if (!sample_value(&tl->samples[i], which, &v)) {
			if (open)
				fputs("\"/>\n", f);
			open = false;
			continue;
		}
		double x = px_x(fr, tl->samples[i].t), y = px_y(fr, v);
		if (!open)
			fprintf(f,
				"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
				"points=\"",
				color, dash);
		fprintf(f, "%s%.1f,%.1f", open ? " " : "", x, y);
		open = any = true;
		*last_x = x;
		*last_y = y;
		*last_v = v;
	}
	if (open)
		fputs("\"/>\n", f);
	return any;
}

static void end_label(FILE *f, double x, double y, const char *color, const char *name,
		      double bytes)
{
	char size[32], label[96];
	vmc_format_bytes((uint64_t)bytes, size, sizeof size);
	snprintf(label, sizeof label, "%s %s", name, size);
	char style[96];
	snprintf(style, sizeof style, "font-size=\"12\" fill=\"%s\"", color);
	text(f, x + 6, y + 4, "start", style, label);
}

static void minmax(const struct timeline *tl, enum series a, enum series b, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = 0;
	for (size_t i = 0; i < tl->n; i++) {
		enum series which[2] = {a, b};
		for (int k = 0; k < 2; k++) {
			double v;
			if (sample_value(&tl->samples[i], which[k], &v)) {
				*lo = v < *lo ? v : *lo;
				*hi = v > *hi ? v : *hi;
			}
		}
	}
	if (*lo == INFINITY)
		*lo = 0;
}

static void time_axis(FILE *f, const struct frame *fr)
{
	int base = H - BOTTOM;
	for (double t = 0; t <= fr->t_max + 1e-9; t += fr->x_step) {
		double x = px_x(fr, t);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>\n",
			x, base, x, base + 5);
		char label[32];
		snprintf(label, sizeof label, "%g", t);
		text(f, x, base + 18, "middle", "font-size=\"11\"", label);
	}
	text(f, LEFT + PLOT_W / 2.0, base + 40, "middle", "font-size=\"12\"",
	     "time since start (s)");
}

static void stop_marker(FILE *f, const struct frame *top, const struct svg_options *opt)
{
	double x = px_x(top, opt->stop_t);
	fprintf(f,
		"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
		"stroke-dasharray=\"5,3\" stroke-width=\"1.5\"/>\n",
		x, TOP, x, H - BOTTOM, COLOR_STOP);
	char gain[32], label[96];
	vmc_format_bytes_delta(opt->stop_gain, gain, sizeof gain);
	snprintf(label, sizeof label, "VM stopped: host free %s", gain);
	char style[96];
	snprintf(style, sizeof style, "font-size=\"12\" font-weight=\"bold\" fill=\"%s\"",
		 COLOR_STOP);
	bool right_half = x > LEFT + PLOT_W / 2.0;
	text(f, right_half ? x - 6 : x + 6, TOP + 16, right_half ? "end" : "start", style, label);
}

int svg_timeline_write(FILE *f, const struct timeline *tl, const struct svg_options *opt)
{
	double t_max = tl->n ? tl->samples[tl->n - 1].t : 1;
	for (size_t i = 0; i < tl->nphases; i++)
		if (tl->phases[i].end > t_max)
			t_max = tl->phases[i].end;
	if (t_max <= 0)
		t_max = 1;
	double x_step = svg_nice_step(t_max / 8);
	t_max = ceil(t_max / x_step) * x_step;

	double lo, hi;
	minmax(tl, S_FREE, S_AVAILABLE, &lo, &hi);
	struct frame top = {.t_max = t_max, .x_step = x_step, .top = TOP};
	top.ax = value_axis(lo, hi, false);
	minmax(tl, S_VM, S_VM, &lo, &hi);
	struct frame bottom = {.t_max = t_max, .x_step = x_step, .top = TOP + PANEL_H + GAP};
	bottom.ax = value_axis(0, hi, true);

	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\">\n",
		W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, H);
	text(f, LEFT, 24, "start", "font-size=\"17\" font-weight=\"bold\"",
	     opt && opt->title ? opt->title : "vmcost memtest");
	if (opt && opt->subtitle)
		text(f, LEFT, 42, "start", "font-size=\"12\" fill=\"#555\"", opt->subtitle);
	if (opt && opt->machine)
		text(f, LEFT, 58, "start", "font-size=\"12\" fill=\"#555\"", opt->machine);
	phase_bands(f, tl, &top);
	value_ticks(f, &top, "host free memory");
	value_ticks(f, &bottom, "VM footprint (process holding guest RAM)");
	time_axis(f, &bottom);

	double x, y, v, ax = 0, ay = 0, av = 0, fx = 0, fy = 0, fv = 0;
	bool has_avail = series_line(f, tl, &top, S_AVAILABLE, COLOR_AVAIL,
				     " stroke-dasharray=\"6,4\"", &ax, &ay, &av);
	bool has_free = series_line(f, tl, &top, S_FREE, COLOR_FREE, "", &fx, &fy, &fv);
	/* Free and available often end close together: keep their labels 14 px apart. */
	if (has_avail && has_free && fabs(ay - fy) < 14) {
		double mid = (ay + fy) / 2;
		ay = mid - 7;
		fy = mid + 7;
	}
	if (has_avail)
		end_label(f, ax, ay, COLOR_AVAIL, "available", av);
	if (has_free)
		end_label(f, fx, fy, COLOR_FREE, "free", fv);
	if (series_line(f, tl, &bottom, S_VM, COLOR_VM, "", &x, &y, &v))
		end_label(f, x, y, COLOR_VM, "VM", v);
	if (opt && opt->has_stop_gain)
		stop_marker(f, &top, opt);
	fputs("</svg>\n", f);
	return ferror(f) ? -1 : 0;
}
