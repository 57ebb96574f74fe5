/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The memtest timeline as a standalone SVG: host free memory on top, the VM's footprint below,
 * on one time axis; phases as labelled bands; every line labelled at its end (no legend to hunt
 * for); the stop-time gain marked where it happens.
 */
#ifndef VMC_SVG_H
#define VMC_SVG_H

#include "measure/timeline.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct svg_options {
	const char *title;    /* "vmcost memtest dev" */
	const char *subtitle; /* vmType, memory, workload */
	const char *machine;  /* the host it ran on */
	bool has_stop_gain;   /* mark the stop: a line at stop_t and the gain */
	double stop_t;	      /* seconds since start when the VM process was gone */
	int64_t stop_gain;    /* host free after - before, bytes */
};

/* Writes the whole document; 0 or -1 (write error). An empty timeline still gives a valid SVG. */
int svg_timeline_write(FILE *f, const struct timeline *tl, const struct svg_options *opt);

/* 1, 2 or 5 times a power of ten, at least raw (axis tick spacing). */
double svg_nice_step(double raw);

/* XML-escapes s into buf (& < > " '). */
char *svg_escape(const char *s, char *buf, size_t size);

#endif
