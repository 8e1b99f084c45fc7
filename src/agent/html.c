/* hp_write_html: one self-contained page, readable offline from a CI
 * artifact or a mail attachment: inline CSS and JS, no fonts, no network.
 *
 * - Header: collection time, duration, sampling interval, totals and the
 *   profile's comments (how the live heap was estimated).
 * - Two flame graphs, allocations and live heap, drawn by a small script
 *   from JSON embedded in a <script type="application/json"> element:
 *   root at the top, callees below, heaviest child leftmost; hover shows
 *   the frame, its bytes and its share of the view; a click zooms.
 * - A table of the top live sites, written as plain HTML so that it reads
 *   without JavaScript: the leaf-most Java frame of each stack (frames
 *   named "" or "[...]" are taken for synthetic, non-Java frames) with the
 *   allocated class, the live estimate and its 95% interval.
 *
 * Every string from the profile is escaped for where it lands (JSON inside
 * a script element, or HTML text), and bytes that are not UTF-8 become
 * U+FFFD, so no frame name can end the script element or break the page.
 */
#include "agent/profile.h"
#include "agent/units.h"
#include "agent/writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOP_SITES 100

/* Length of the well-formed UTF-8 sequence at s (n bytes available), or 0:
 * overlong forms, surrogates and truncated sequences are not well formed. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp, min;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A JSON string that is also safe inside a <script> element: '<' and '>'
 * are escaped, so neither "</script" nor "<!--" can appear in the data. */
static void json_str(struct hp_out *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)hp_str(str);
	size_t n = strlen((const char *)s);
	hp_out_write(o, "\"", 1);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = utf8_len(s + i, n - i);
		if (len == 0) {
			hp_out_str(o, "\\ufffd");
			i++;
			continue;
		}
		if (len == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			/* U+2028/9 end lines in pre-2019 JavaScript. */
			hp_out_str(o, s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
		} else if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			hp_out_write(o, e, 2);
		} else if (c == '\n') {
			hp_out_str(o, "\\n");
		} else if (c == '\t') {
			hp_out_str(o, "\\t");
		} else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
			hp_out_printf(o, "\\u%04x", c);
		} else {
			hp_out_write(o, s + i, len);
		}
		i += len;
	}
	hp_out_write(o, "\"", 1);
}

/* Text or attribute content; control characters become U+FFFD too, as
 * they are parse errors in HTML. */
static void html_text(struct hp_out *o, const char *str)
{
	const unsigned char *s = (const unsigned char *)hp_str(str);
	size_t n = strlen((const char *)s);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = utf8_len(s + i, n - i);
		if (len == 0 || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			hp_out_str(o, "\xef\xbf\xbd");
		else if (c == '&')
			hp_out_str(o, "&amp;");
		else if (c == '<')
			hp_out_str(o, "&lt;");
		else if (c == '>')
			hp_out_str(o, "&gt;");
		else if (c == '"')
			hp_out_str(o, "&quot;");
		else if (c == '\'')
			hp_out_str(o, "&#39;");
		else
			hp_out_write(o, s + i, len);
		i += len ? len : 1;
	}
}

/* "12.3 MiB": binary units, as the JVM reports heap sizes. */
static void out_bytes(struct hp_out *o, int64_t v)
{
	char b[32];
	hp_bytes_str((double)v, b, sizeof(b));
	hp_out_str(o, b);
}

/* Frames the agent did not get from a Java method ("[native]", "[unknown]")
 * are not allocation sites anyone can change. */
static int is_java_frame(const struct hp_frame *f)
{
	return f->function && f->function[0] && f->function[0] != '[';
}

struct site {
	const char *function, *file, *cls;
	int line;
	int64_t est;
	double var_lo, var_hi;  /* squared distances to the interval ends */
};

static int site_cmp(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	if (x->est != y->est)
		return x->est > y->est ? -1 : 1;
	int c = strcmp(x->function, y->function);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp(x->cls, y->cls);
}

/* Live bytes per (site, class). Samples of one site are independent
 * Poisson counts, so their variances add: the half-widths of the merged
 * interval are the root of the sum of squared half-widths, on each side
 * (the intervals need not be symmetric). */
static int collect_sites(const struct hp_profile *p, struct site **out, size_t *nout)
{
	static const struct hp_frame unknown = { "[unknown]", "", 0, NULL };
	struct hp_intern strs, keys;
	struct site *sites = NULL;
	size_t n = 0, cap = 0;
	int rc = hp_intern_init(&strs, 64, false);
	if (rc < 0)
		return rc;
	if ((rc = hp_intern_init(&keys, (uint32_t)p->nsamples, true)) < 0) {
		hp_intern_free(&strs);
		return rc;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		if (s->inuse_bytes <= 0)
			continue;
		const struct hp_frame *f = s->nframes ? &p->frames[hp_prof_frame(p, s, 0)] : &unknown;
		for (size_t j = 0; j < s->nframes; j++) {
			const struct hp_frame *g = &p->frames[hp_prof_frame(p, s, j)];
			if (is_java_frame(g)) {
				f = g;
				break;
			}
		}
		/* By content: the same method may sit at several frame
		 * indices, and its rows must merge. */
		uint32_t fn, file, cls, id, before = keys.count;
		char key[64];
		if ((rc = hp_intern(&strs, f->function, &fn)) < 0 || (rc = hp_intern(&strs, f->file, &file)) < 0 ||
		    (rc = hp_intern(&strs, s->class_name, &cls)) < 0)
			break;
		snprintf(key, sizeof(key), "%u:%u:%d:%u", fn, file, f->line, cls);
		if ((rc = hp_intern(&keys, key, &id)) < 0)
			break;
		if (keys.count != before) {
			if (n == cap) {
				size_t grown_cap = cap ? cap * 2 : 64;
				struct site *grown = realloc(sites, grown_cap * sizeof(*sites));
				if (!grown) {
					rc = -ENOMEM;
					break;
				}
				sites = grown;
				cap = grown_cap;
			}
			sites[n++] = (struct site){ hp_str(f->function), hp_str(f->file), hp_str(s->class_name),
						    f->line, 0, 0, 0 };
		}
		struct site *st = &sites[id];
		double lo = (double)(s->inuse_bytes - s->inuse_bytes_lo);
		double hi = (double)(s->inuse_bytes_hi - s->inuse_bytes);
		st->est += s->inuse_bytes;
		st->var_lo += lo * lo;
		st->var_hi += hi * hi;
	}
	hp_intern_free(&keys);
	hp_intern_free(&strs);
	if (rc < 0) {
		free(sites);
		return rc;
	}
	if (n)
		qsort(sites, n, sizeof(*sites), site_cmp);
	*out = sites;
	*nout = n;
	return 0;
}

static const char css[] =
	"body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:1em 1.5em;color:#222;background:#fff}"
	"h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.15em;margin:1.2em 0 .4em}"
	".meta{color:#555;margin:.2em 0}"
	"ul.comments{margin:.4em 0;padding-left:1.2em;color:#333}"
	"p.summary{font-size:1.1em;margin:.4em 0}details summary{cursor:pointer;color:#555}"
	"nav button{font:inherit;padding:.25em .8em;margin-right:.3em;border:1px solid #bbb;background:#f4f4f4;"
	"border-radius:3px;cursor:pointer}"
	"nav button.on{background:#ffe0b0;border-color:#d08a2a}"
	"#info{font:12px/1.5 ui-monospace,monospace;min-height:1.5em;margin:.4em 0;white-space:pre;overflow:hidden;"
	"text-overflow:ellipsis}"
	"#fg{position:relative;width:100%;min-height:2em}"
	".f{position:absolute;height:17px;box-sizing:border-box;border-right:1px solid #fff;border-bottom:1px solid "
	"#fff;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;font:11px/16px ui-monospace,monospace;"
	"padding-left:3px;cursor:pointer;color:#000}"
	".f:hover{outline:1px solid #000;z-index:1}"
	".f.up{opacity:.55}"
	"table{border-collapse:collapse;font-size:13px}"
	"th,td{padding:.2em .7em;border-bottom:1px solid #e2e2e2;text-align:left;vertical-align:top}"
	"th{background:#f4f4f4}td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}"
	"td.fn{font-family:ui-monospace,monospace;word-break:break-all}"
	".muted{color:#777}"
	"ul.legend{list-style:none;padding:0;margin:.3em 0;display:flex;flex-wrap:wrap;gap:.3em 1.2em;"
	"font:12px ui-monospace,monospace}"
	".sw{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-1px}"
	".sw.dash{border-top:2px dashed #222;height:0;vertical-align:3px}";

/* ---- history: the timeline and the leak suspects ------------------------
 *
 * Drawn here as inline SVG (no script): the largest sites' verified live
 * bytes stacked over time, the post-GC heap figure as a dashed line beside
 * them, a grey line at each marking and a tick at each young record; the
 * legend names the sites as text. */

#define TL_W 960
#define TL_H 300
#define TL_L 70         /* left margin: the byte axis */
#define TL_R 10
#define TL_T 10
#define TL_B 40         /* bottom: the time axis */

static const char *const palette[] = { "#e4572e", "#17bebb", "#ffc914", "#76b041", "#2e86ab", "#a23b72",
				       "#f18f01", "#6a4c93", "#c73e1d", "#3b8ea5" };

static const char *series_name(const struct hp_profile *p, uint32_t sample)
{
	const struct hp_prof_sample *s = &p->samples[sample];
	for (size_t k = 0; k < s->nframes; k++) {
		const struct hp_frame *f = &p->frames[hp_prof_frame(p, s, k)];
		if (is_java_frame(f))
			return f->function;
	}
	return "(no Java frame)";
}

static void write_timeline(struct hp_out *o, const struct hp_profile *p)
{
	const struct hp_prof_history *h = p->history;
	size_t n = h->npoints;
	double t0 = (double)h->points[0].time_nanos, span = (double)(h->points[n - 1].time_nanos - h->points[0].time_nanos);
	if (span <= 0)
		span = 1;
	double ymax = 1;
	for (size_t i = 0; i < n; i++) {
		double sum = 0;
		for (size_t k = 0; k < h->nseries; k++)
			sum += h->series[k * n + i];
		ymax = fmax(ymax, fmax(sum, (double)h->points[i].heap_used));
	}
	ymax *= 1.05;
	double pw = TL_W - TL_L - TL_R, ph = TL_H - TL_T - TL_B;
#define X(i) (TL_L + pw * ((double)h->points[i].time_nanos - t0) / span)
#define Y(v) (TL_T + ph * (1.0 - (v) / ymax))
	hp_out_printf(o, "<svg id=\"timeline\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"system-ui,sans-serif\" font-size=\"11\">\n",
		      TL_W, TL_H, TL_W, TL_H);
	hp_out_printf(o, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
		      TL_L, TL_T, pw, ph);
	/* byte axis: 0, half, top */
	for (int g = 0; g <= 2; g++) {
		double v = ymax / 1.05 * g / 2;
		char b[32];
		hp_bytes_str(v, b, sizeof(b));
		hp_out_printf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
			      "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#555\">%s</text>\n",
			      TL_L, TL_W - TL_R, Y(v), Y(v), TL_L - 4, Y(v) + 4, b);
	}
	/* markings and young records */
	for (size_t i = 0; i < n; i++) {
		if (h->points[i].kind == HP_POINT_MARKING)
			hp_out_printf(o, "<line class=\"marking\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.0f\" "
				      "stroke=\"#bbb\" stroke-width=\"0.6\"/>\n", X(i), X(i), TL_T, TL_T + ph);
		else
			hp_out_printf(o, "<line class=\"young\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" "
				      "stroke=\"#888\"/>\n", X(i), X(i), TL_T + ph, TL_T + ph + 4);
	}
	/* stacked areas, the first series at the bottom */
	double *base = calloc(n, sizeof(*base));
	for (size_t k = 0; base && k < h->nseries; k++) {
		const char *name = series_name(p, h->series_samples[k]);
		hp_out_printf(o, "<polygon class=\"site\" fill=\"%s\" fill-opacity=\"0.85\" stroke=\"none\" points=\"",
			      palette[k % (sizeof(palette) / sizeof(palette[0]))]);
		for (size_t i = 0; i < n; i++)
			hp_out_printf(o, "%.1f,%.1f ", X(i), Y(base[i] + h->series[k * n + i]));
		for (size_t i = n; i-- > 0;)
			hp_out_printf(o, "%.1f,%.1f ", X(i), Y(base[i]));
		hp_out_str(o, "\"><title>");
		html_text(o, name);
		hp_out_str(o, "</title></polygon>\n");
		for (size_t i = 0; i < n; i++)
			base[i] += h->series[k * n + i];
	}
	free(base);
	/* the post-GC heap figure */
	hp_out_str(o, "<polyline id=\"heap\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\" "
		      "points=\"");
	for (size_t i = 0; i < n; i++)
		if (h->points[i].heap_used)
			hp_out_printf(o, "%.1f,%.1f ", X(i), Y((double)h->points[i].heap_used));
	hp_out_str(o, "\"><title>live heap after the last collection</title></polyline>\n");
	/* time axis */
	hp_out_printf(o, "<text x=\"%d\" y=\"%.0f\" fill=\"#555\">0 s</text><text x=\"%d\" y=\"%.0f\" "
		      "text-anchor=\"end\" fill=\"#555\">%.0f s</text>\n", TL_L, TL_T + ph + 16, TL_W - TL_R,
		      TL_T + ph + 16, span / 1e9);
	hp_out_printf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">time since the first "
		      "record (grey lines: markings; ticks: young collections)</text>\n", TL_L + pw / 2, TL_T + ph + 16);
#undef X
#undef Y
	hp_out_str(o, "</svg>\n");
	/* legend: names as text */
	hp_out_str(o, "<ul class=\"legend\">\n");
	for (size_t k = 0; k < h->nseries; k++) {
		hp_out_printf(o, "<li><span class=\"sw\" style=\"background:%s\"></span>",
			      palette[k % (sizeof(palette) / sizeof(palette[0]))]);
		html_text(o, series_name(p, h->series_samples[k]));
		hp_out_str(o, " <span class=\"muted\">");
		html_text(o, hp_str(p->samples[h->series_samples[k]].class_name));
		hp_out_str(o, "</span></li>\n");
	}
	hp_out_str(o, "<li><span class=\"sw dash\"></span>live heap after the last collection</li>\n</ul>\n");
}

static void write_history(struct hp_out *o, const struct hp_profile *p)
{
	const struct hp_prof_history *h = p->history;
	hp_out_str(o, "<section>\n<h2>Live bytes over time</h2>\n");
	if (!h || h->npoints < 2) {
		hp_out_str(o, "<p class=\"muted\">No history yet: it needs two records (markings or young "
			      "collections).</p>\n");
	} else {
		hp_out_printf(o, "<p class=\"meta\">Verified live bytes of the largest sites at each record "
			      "(%u markings, %zu records; %zu KiB held).</p>\n", h->markings, h->npoints,
			      (size_t)(h->bytes / 1024));
		write_timeline(o, p);
	}
	hp_out_str(o, "<h2>Leak suspects</h2>\n");
	if (!h || !h->nsuspects) {
		hp_out_str(o, "<p id=\"no-suspects\" class=\"muted\">No leak suspect: no site's verified live bytes "
			      "kept rising beyond their sampling error over the last markings (the test needs 3).</p>\n");
		hp_out_str(o, "</section>\n");
		return;
	}
	hp_out_str(o, "<table id=\"suspects\">\n<thead><tr><th>#</th><th>Site (leaf-most Java frame)</th><th>Class</th>"
		      "<th>Growth per minute</th><th>z (window / second half)</th><th>Live</th><th>Window</th>"
		      "<th>Age in markings survived (1 / 2-3 / 4-7 / 8+)</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < h->nsuspects; i++) {
		const struct hp_prof_suspect *x = &h->suspects[i];
		const struct hp_prof_sample *s = &p->samples[x->sample];
		hp_out_printf(o, "<tr><td class=\"n\">%zu</td><td class=\"fn\">", i + 1);
		html_text(o, series_name(p, x->sample));
		hp_out_str(o, "</td><td class=\"fn\">");
		html_text(o, hp_str(s->class_name));
		hp_out_str(o, "</td><td class=\"n\">+");
		out_bytes(o, (int64_t)x->per_min);
		hp_out_printf(o, "</td><td class=\"n\">%.1f / %.1f</td><td class=\"n\">", x->z, x->z_recent);
		out_bytes(o, (int64_t)x->live);
		double ages = x->age_bytes[0] + x->age_bytes[1] + x->age_bytes[2] + x->age_bytes[3];
		hp_out_printf(o, "</td><td class=\"n\">%u markings, %.0f s</td><td class=\"n\">", x->window, x->span_s);
		for (int a = 0; a < 4; a++)
			hp_out_printf(o, "%s%.0f%%", a ? " / " : "", ages > 0 ? 100 * x->age_bytes[a] / ages : 0.0);
		if (x->may_be_replacement) {
			hp_out_str(o, "<br><span class=\"muted\">late attach: may be objects older than the sampling "
				      "being replaced, until its live bytes pass the ");
			out_bytes(o, (int64_t)x->baseline_bytes);
			hp_out_str(o, " in use when sampling began</span>");
		}
		hp_out_str(o, "</td></tr>\n");
	}
	hp_out_str(o, "</tbody>\n</table>\n</section>\n");
}

/* The flame graph: our own, kept small. D.names: strings; D.stacks:
 * [[name index, root first...], alloc bytes, live bytes]. */
static const char js[] =
	"(function(){\n"
	"'use strict';\n"
	"var D=JSON.parse(document.getElementById('hp-data').textContent);\n"
	"var fg=document.getElementById('fg'),info=document.getElementById('info');\n"
	"var ROW=17,trees=[null,null],view=0,zoom=null,boxes=[];\n"
	"var LABEL=['allocated','live'];\n"
	"function human(b){var u=['B','KiB','MiB','GiB','TiB','PiB'],i=0,v=b;"
	"while(Math.abs(v)>=1024&&i<u.length-1){v/=1024;i++;}return i?v.toFixed(1)+' '+u[i]:v+' B';}\n"
	"function tree(k){\n"
	" var root={n:'all',v:0,c:new Map(),p:null,d:0};\n"
	" D.stacks.forEach(function(s){\n"
	"  var v=s[k],node=root;if(!(v>0))return;root.v+=v;\n"
	"  s[0].forEach(function(i){var ch=node.c.get(i);\n"
	"   if(!ch){ch={n:D.names[i],v:0,c:new Map(),p:node,d:node.d+1};node.c.set(i,ch);}\n"
	"   ch.v+=v;node=ch;});\n"
	" });\n"
	" return root;}\n"
	/* Warm colours from a hash of the name: a frame keeps its colour
	 * across views and zoom levels. */
	"function color(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))>>>0;"
	"return 'hsl('+(5+h%45)+','+(65+(h>>>6)%25)+'%,'+(58+(h>>>11)%14)+'%)';}\n"
	"function box(n,x,w,up){var e=document.createElement('div');e.className=up?'f up':'f';\n"
	" e.style.left=(x*100)+'%';e.style.width=(w*100)+'%';e.style.top=(n.d*ROW)+'px';\n"
	" e.style.background=n.p?color(n.n):'#d8d8d8';e.textContent=n.n;e.title=describe(n);\n"
	" e.setAttribute('data-i',boxes.length);boxes.push(n);fg.appendChild(e);}\n"
	"function describe(n){var t=trees[view].v;"
	"return n.n+'  '+human(n.v)+' ('+(t?(100*n.v/t).toFixed(2):'0')+'% of '+LABEL[view]+')';}\n"
	"function render(){\n"
	" var root=trees[view]||(trees[view]=tree(view+1)),focus=zoom||root,maxd=focus.d;\n"
	" fg.textContent='';boxes=[];\n"
	" if(!(root.v>0)){fg.style.height='auto';fg.textContent='No '+LABEL[view]+' bytes in this profile.';return;}\n"
	" for(var a=focus.p;a;a=a.p)box(a,0,1,true);\n"
	" box(focus,0,1,false);\n"
	" var minw=0.5/Math.max(fg.clientWidth,1);\n"
	" (function lay(n,x){\n"
	"  var kids=Array.from(n.c.values()).sort(function(a,b){return b.v-a.v||(a.n<b.n?-1:a.n>b.n?1:0);});\n"
	"  kids.forEach(function(c){var w=c.v/focus.v;if(w>=minw){box(c,x,w,false);if(c.d>maxd)maxd=c.d;lay(c,x);}"
	"x+=w;});\n"
	" })(focus,0);\n"
	" fg.style.height=((maxd+1)*ROW)+'px';\n"
	" info.textContent=describe(focus);}\n"
	"function pick(e){var i=e.target.getAttribute&&e.target.getAttribute('data-i');return i===null?null:boxes[+i];}\n"
	"fg.addEventListener('mouseover',function(e){var n=pick(e);if(n)info.textContent=describe(n);});\n"
	"fg.addEventListener('click',function(e){var n=pick(e);if(n){zoom=n.p?n:null;render();}});\n"
	"function show(k){view=k;zoom=null;\n"
	" document.getElementById('v0').className=k?'':'on';document.getElementById('v1').className=k?'on':'';render();}\n"
	"document.getElementById('v0').addEventListener('click',function(){show(0);});\n"
	"document.getElementById('v1').addEventListener('click',function(){show(1);});\n"
	"document.getElementById('reset').addEventListener('click',function(){zoom=null;render();});\n"
	"window.addEventListener('resize',render);\n"
	"show(D.stacks.some(function(s){return s[2]>0;})?1:0);\n"
	"})();\n";

static void write_header(struct hp_out *o, const struct hp_profile *p, int64_t alloc_total, int64_t live_total)
{
	hp_out_str(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		      "<title>heapprobe heap profile</title>\n<style>");
	hp_out_str(o, css);
	hp_out_str(o, "</style>\n</head>\n<body>\n<header>\n<h1>heapprobe heap profile</h1>\n<p class=\"meta\">");
	if (p->time_nanos > 0) {
		time_t t = (time_t)(p->time_nanos / 1000000000);
		struct tm tm;
		char when[64];
		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
			hp_out_printf(o, "Collected %s &middot; ", when);
	}
	if (p->duration_nanos > 0)
		hp_out_printf(o, "duration %.1f s &middot; ", (double)p->duration_nanos / 1e9);
	if (p->period > 0) {
		hp_out_str(o, "sampling interval ");
		out_bytes(o, p->period);
		hp_out_str(o, " &middot; ");
	}
	hp_out_str(o, "allocated ");
	out_bytes(o, alloc_total);
	hp_out_str(o, " &middot; live ");
	out_bytes(o, live_total);
	hp_out_printf(o, " &middot; %zu stacks</p>\n", p->nsamples);
	if (p->summary) {
		hp_out_str(o, "<p class=\"summary\">");
		html_text(o, p->summary);
		hp_out_str(o, "</p>\n");
	}
	if (p->ncomments) {
		/* The estimator's account, for whoever asks how: folded. */
		hp_out_str(o, "<details><summary>How this profile was made</summary>\n<ul class=\"comments\">\n");
		for (size_t i = 0; i < p->ncomments; i++) {
			hp_out_str(o, "<li>");
			html_text(o, p->comments[i]);
			hp_out_str(o, "</li>\n");
		}
		hp_out_str(o, "</ul>\n</details>\n");
	}
	hp_out_str(o, "</header>\n");
}

static void write_sites(struct hp_out *o, const struct site *sites, size_t n, int64_t live_total)
{
	hp_out_str(o, "<section>\n<h2>Top live sites</h2>\n");
	if (!n) {
		hp_out_str(o, "<p class=\"muted\">No live bytes in this profile.</p>\n</section>\n");
		return;
	}
	hp_out_str(o, "<table id=\"sites\">\n<thead><tr><th>#</th><th>Site (leaf-most Java frame)</th><th>Class</th>"
		      "<th>Live (estimate)</th><th>95% CI [lo, hi]</th><th>% of live</th></tr></thead>\n<tbody>\n");
	size_t shown = n < TOP_SITES ? n : TOP_SITES;
	for (size_t i = 0; i < shown; i++) {
		const struct site *s = &sites[i];
		int64_t lo = s->est - (int64_t)llround(sqrt(s->var_lo));
		int64_t hi = s->est + (int64_t)llround(sqrt(s->var_hi));
		hp_out_printf(o, "<tr><td class=\"n\">%zu</td><td class=\"fn\">", i + 1);
		html_text(o, s->function);
		if (s->file[0] || s->line > 0) {
			hp_out_str(o, " <span class=\"muted\">(");
			html_text(o, s->file[0] ? s->file : "?");
			if (s->line > 0)
				hp_out_printf(o, ":%d", s->line);
			hp_out_str(o, ")</span>");
		}
		hp_out_str(o, "</td><td class=\"fn\">");
		html_text(o, s->cls[0] ? s->cls : "(mixed)");
		hp_out_str(o, "</td><td class=\"n\">");
		out_bytes(o, s->est);
		hp_out_printf(o, " <span class=\"muted\">(%" PRId64 ")</span></td><td class=\"n\">[", s->est);
		out_bytes(o, lo);
		hp_out_str(o, ", ");
		out_bytes(o, hi);
		hp_out_printf(o, "]</td><td class=\"n\">%.1f%%</td></tr>\n",
			      live_total > 0 ? 100.0 * (double)s->est / (double)live_total : 0.0);
	}
	hp_out_str(o, "</tbody>\n</table>\n");
	if (n > shown) {
		int64_t rest = 0;
		for (size_t i = shown; i < n; i++)
			rest += sites[i].est;
		hp_out_printf(o, "<p class=\"muted\">and %zu more sites with ", n - shown);
		out_bytes(o, rest);
		hp_out_str(o, " live.</p>\n");
	}
	hp_out_str(o, "</section>\n");
}

/* Function names, deduplicated, then each stack as name indices root
 * first: the flame graph merges by name, as flamegraph.pl does. Only
 * names some sample uses go into the page. */
static int write_data(struct hp_out *o, const struct hp_profile *p)
{
	struct hp_intern names;
	uint32_t *ids = NULL;
	int rc = hp_intern_init(&names, (uint32_t)p->nframes + 1, false);
	if (rc == 0) {
		ids = malloc((p->nframes ? p->nframes : 1) * sizeof(*ids));
		if (!ids)
			rc = -ENOMEM;
	}
	for (size_t i = 0; rc == 0 && i < p->nframes; i++)
		ids[i] = UINT32_MAX;
	uint32_t unknown = 0;
	for (size_t i = 0; rc == 0 && i < p->nsamples; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		if (!s->nframes)
			rc = hp_intern(&names, "[unknown]", &unknown);
		for (size_t j = 0; rc == 0 && j < s->nframes; j++) {
			uint32_t fi = hp_prof_frame(p, s, j);
			const char *fn = p->frames[fi].function;
			if (ids[fi] == UINT32_MAX)
				rc = hp_intern(&names, fn && *fn ? fn : "[unknown]", &ids[fi]);
		}
	}
	if (rc < 0) {
		free(ids);
		hp_intern_free(&names);
		hp_out_fail(o, rc);
		return rc;
	}
	hp_out_str(o, "<script type=\"application/json\" id=\"hp-data\">\n{\"names\":[");
	for (uint32_t i = 0; i < names.count; i++) {
		if (i)
			hp_out_write(o, ",", 1);
		json_str(o, names.keys[i]);
	}
	hp_out_str(o, "],\n\"stacks\":[");
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct hp_prof_sample *s = &p->samples[i];
		hp_out_str(o, i ? ",\n[[" : "\n[[");
		if (!s->nframes)
			hp_out_printf(o, "%u", unknown);
		for (size_t j = s->nframes; j-- > 0;)
			hp_out_printf(o, j + 1 == s->nframes ? "%u" : ",%u", ids[hp_prof_frame(p, s, j)]);
		hp_out_printf(o, "],%" PRId64 ",%" PRId64 "]", s->alloc_bytes, s->inuse_bytes);
	}
	hp_out_str(o, "]}\n</script>\n");
	free(ids);
	hp_intern_free(&names);
	return 0;
}

int hp_write_html(const struct hp_profile *p, const char *path, char *err, size_t errlen)
{
	int rc = hp_profile_check(p, path, err, errlen);
	if (rc < 0)
		return rc;
	p = hp_profile_or_empty(p);

	int64_t alloc_total = 0, live_total = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->samples[i].alloc_bytes > 0)
			alloc_total += p->samples[i].alloc_bytes;
		if (p->samples[i].inuse_bytes > 0)
			live_total += p->samples[i].inuse_bytes;
	}
	struct site *sites = NULL;
	size_t nsites = 0;
	rc = collect_sites(p, &sites, &nsites);
	if (rc < 0) {
		hp_out_reason(err, errlen, path, rc);
		return rc;
	}

	struct hp_out o;
	rc = hp_out_open(&o, path, err, errlen);
	if (rc == 0) {
		write_header(&o, p, alloc_total, live_total);
		hp_out_str(&o, "<section>\n<h2>Flame graphs</h2>\n<nav><button id=\"v0\" type=\"button\">Allocations"
			       "</button><button id=\"v1\" type=\"button\">Live heap</button><button id=\"reset\" "
			       "type=\"button\">Reset zoom</button></nav>\n<div id=\"info\"></div>\n<div id=\"fg\"></div>\n"
			       "<noscript><p class=\"muted\">The flame graphs need JavaScript; the table below does "
			       "not.</p></noscript>\n</section>\n");
		write_sites(&o, sites, nsites, live_total);
		write_history(&o, p);
		write_data(&o, p);
		hp_out_str(&o, "<script>\n");
		hp_out_str(&o, js);
		hp_out_str(&o, "</script>\n</body>\n</html>\n");
		rc = hp_out_commit(&o, err, errlen);
	}
	free(sites);
	return rc;
}
