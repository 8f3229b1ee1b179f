#include "report/html.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/money.h"
#include "core/sha256.h"
#include "core/text.h"

namespace cgov::html {
namespace {

// Phase colours (light and dark themes set them as CSS variables) and fill patterns.
constexpr const char* kPhaseClass[kPhaseCount] = {"p-idle", "p-held", "p-under", "p-prod",
                                                  "p-bound"};

constexpr std::string_view kCss = R"css(
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;
--idle:#8c959f;--held:#cf222e;--under:#bf8700;--prod:#2da44e;--bound:#0969da;--util:#0969da;--mem:#8250df;
--crit:#cf222e;--warn:#9a6700;--info:#57606a}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9ba5b0;--line:#30363d;
--card:#161b22;--idle:#6e7681;--held:#ff7b72;--under:#d29922;--prod:#3fb950;--bound:#58a6ff;
--util:#58a6ff;--mem:#d2a8ff;--crit:#ff7b72;--warn:#d29922;--info:#9ba5b0}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1100px;padding:1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
h1{font-size:1.5rem;margin:.2rem 0 .4rem}h2{font-size:1.2rem;margin:2rem 0 .6rem;
border-bottom:1px solid var(--line);padding-bottom:.2rem}
p,li{max-width:80ch}.muted{color:var(--muted)}
.facts{display:flex;flex-wrap:wrap;gap:.4rem 1.4rem;margin:0;padding:0;list-style:none}
.kpis{display:flex;flex-wrap:wrap;gap:.8rem;margin:1rem 0}
.kpi{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5rem .8rem;min-width:10rem}
.kpi b{display:block;font-size:1.3rem}
table{border-collapse:collapse;margin:.6rem 0;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.2rem 0}
th,td{border-bottom:1px solid var(--line);padding:.25rem .6rem;text-align:left;vertical-align:top}
th.n,td.n{text-align:right}
th button{font:inherit;font-weight:600;color:inherit;background:none;border:0;padding:0;cursor:pointer}
th button:focus-visible{outline:2px solid var(--bound);outline-offset:2px}
th[aria-sort=ascending] button::after{content:" \2191"}th[aria-sort=descending] button::after{content:" \2193"}
svg{display:block;max-width:100%;height:auto}svg.phasebar{width:100%}
svg text{fill:var(--fg);font-size:11px}
.axis{stroke:var(--line)}.grid{stroke:var(--line);stroke-dasharray:2 3}
.p-idle{fill:var(--idle)}.p-held{fill:var(--held)}.p-under{fill:var(--under)}.p-prod{fill:var(--prod)}
.p-bound{fill:var(--bound)}
.legend{display:flex;flex-wrap:wrap;gap:.3rem 1.2rem;list-style:none;padding:0;margin:.4rem 0}
.legend svg{display:inline-block;vertical-align:middle;margin-right:.3rem}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(250px,1fr));gap:1rem}
figure{margin:0}figcaption{font-size:.9rem;font-weight:600}
.series.util .band{fill:var(--util);opacity:.25}.series.util .mean{stroke:var(--util);fill:none;stroke-width:1.5}
.series.mem .band{fill:var(--mem);opacity:.25}.series.mem .mean{stroke:var(--mem);fill:none;stroke-width:1.5;stroke-dasharray:4 2}
.swatch-util{stroke:var(--util);stroke-width:2}.swatch-mem{stroke:var(--mem);stroke-width:2;stroke-dasharray:4 2}
.gauge .track{fill:var(--card);stroke:var(--line)}.gauge .bar{fill:var(--muted)}.gauge .limit{stroke:var(--fg);stroke-width:2}
.findings li{margin-bottom:1rem}.sev{font-weight:700;text-transform:uppercase;font-size:.8rem}
.sev-critical{color:var(--crit)}.sev-warning{color:var(--warn)}.sev-info{color:var(--info)}
.heat .cell{stroke:var(--bg)}
details{margin:.4rem 0}summary{cursor:pointer}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
@media print{body{max-width:none;padding:0;font-size:10pt}h2{break-after:avoid}
table{font-size:8.5pt}th,td{padding:.15rem .3rem}
figure,table,svg,.kpis,li{break-inside:avoid}.charts{grid-template-columns:repeat(2,1fr)}
th button::after{content:""!important}}
)css";

// Sorts a table by the clicked header: numbers by data-sort (or their text), text otherwise.
constexpr std::string_view kSortScript = R"js(
document.querySelectorAll('table.sortable th button').forEach(function(b){
 b.addEventListener('click',function(){
  var th=b.closest('th'),table=th.closest('table'),col=Array.prototype.indexOf.call(th.parentNode.children,th);
  var asc=th.getAttribute('aria-sort')!=='ascending';
  table.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
  th.setAttribute('aria-sort',asc?'ascending':'descending');
  var num=th.classList.contains('n'),body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
  function key(r){var c=r.cells[col],v=c.getAttribute('data-sort');if(v===null)v=c.textContent;
   if(!num)return v.toLowerCase();var x=parseFloat(String(v).replace(/[^0-9.eE+-]/g,''));return isNaN(x)?-Infinity:x;}
  rows.sort(function(x,y){var a=key(x),c=key(y);return (a<c?-1:a>c?1:0)*(asc?1:-1);});
  rows.forEach(function(r){body.appendChild(r);});
 });
});
)js";

std::string Fmt1(double v) { return fmt::format("{:.1f}", v); }

}  // namespace

const std::string& ContentSecurityPolicy() {
  // The page's one <style> and one <script> by their hashes (CSP Level 2): nothing injected
  // into the page, inline or not, may run or style it.
  static const std::string policy = fmt::format(
      "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src data:",
      Sha256Base64(kCss), Sha256Base64(kSortScript));
  return policy;
}

std::string Esc(std::string_view text) { return HtmlEscaped(text); }

std::string PageStart(std::string_view title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n"
      "<meta name=\"generator\" content=\"cgov\">\n<title>{}</title>\n<style>{}</style>\n"
      "</head>\n<body>\n<main>\n",
      ContentSecurityPolicy(), Esc(title), kCss);
}

std::string PageEnd() {
  return fmt::format("</main>\n<script>{}</script>\n</body>\n</html>\n", kSortScript);
}

std::string Num(std::string_view shown, std::string_view pointer, double scale) {
  if (scale == 1) return fmt::format("<span data-json=\"{}\">{}</span>", Esc(pointer), Esc(shown));
  return fmt::format("<span data-json=\"{}\" data-scale=\"{}\">{}</span>", Esc(pointer), scale,
                     Esc(shown));
}

std::string PhaseBarSvg(const std::array<double, kPhaseCount>& share_pct,
                        const std::array<std::string, kPhaseCount>& costs) {
  constexpr double kWidth = 800, kHeight = 36;
  // Patterns: dots (truly idle), diagonal hatch (idle-held), horizontal lines (underutilized),
  // vertical lines (productive), solid (compute-bound).
  std::string defs =
      "<defs>"
      "<pattern id=\"pat-p-idle\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      "<rect width=\"6\" height=\"6\" class=\"p-idle\" opacity=\".45\"/>"
      "<circle cx=\"3\" cy=\"3\" r=\"1.3\" class=\"p-idle\"/></pattern>"
      "<pattern id=\"pat-p-held\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" class=\"p-held\" "
      "opacity=\".45\"/><rect width=\"3\" height=\"6\" class=\"p-held\"/></pattern>"
      "<pattern id=\"pat-p-under\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      "<rect width=\"6\" height=\"6\" class=\"p-under\" opacity=\".45\"/>"
      "<rect width=\"6\" height=\"3\" class=\"p-under\"/></pattern>"
      "<pattern id=\"pat-p-prod\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      "<rect width=\"6\" height=\"6\" class=\"p-prod\" opacity=\".6\"/>"
      "<rect width=\"3\" height=\"6\" class=\"p-prod\"/></pattern>"
      "<pattern id=\"pat-p-bound\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
      "<rect width=\"6\" height=\"6\" class=\"p-bound\"/></pattern>"
      "</defs>";
  std::string desc;
  std::string rects;
  double x = 0;
  for (size_t p = 0; p < kPhaseCount; ++p) {
    const std::string label(PhaseLabel(static_cast<Phase>(p)));
    desc += fmt::format("{}{} {:.1f} %", p ? ", " : "", label, share_pct[p]);
    const double w = kWidth * share_pct[p] / 100.0;
    if (w > 0) {
      rects += fmt::format(
          "<rect class=\"phase\" data-phase=\"{}\" x=\"{:.2f}\" y=\"0\" width=\"{:.2f}\" "
          "height=\"{}\" fill=\"url(#pat-{})\"><title>{}: {:.1f} %{}</title></rect>",
          PhaseKey(static_cast<Phase>(p)), x, w, kHeight, kPhaseClass[p], Esc(label), share_pct[p],
          costs[p].empty() ? "" : ", " + Esc(costs[p]));
    }
    x += w;
  }
  std::string out = fmt::format(
      "<svg class=\"phasebar\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-labelledby=\"phasebar-t phasebar-d\"><title id=\"phasebar-t\">Where the GPU-time "
      "went</title><desc id=\"phasebar-d\">{2}</desc>{3}{4}</svg>\n",
      kWidth, kHeight, Esc(desc), defs, rects);
  out += "<ul class=\"legend\">";
  for (size_t p = 0; p < kPhaseCount; ++p) {
    out += fmt::format(
        "<li><svg width=\"16\" height=\"16\" aria-hidden=\"true\"><rect width=\"16\" "
        "height=\"16\" fill=\"url(#pat-{})\"/></svg>{}</li>",
        kPhaseClass[p], Esc(PhaseLabel(static_cast<Phase>(p))));
  }
  return out + "</ul>\n";
}

std::string SeriesChartSvg(std::string_view id, std::string_view title,
                           const std::vector<ChartSeries>& series, int64_t t0, int64_t t1,
                           std::string_view from, std::string_view to) {
  constexpr double kW = 320, kH = 130, kLeft = 34, kRight = 312, kTop = 8, kBottom = 104;
  const double span = static_cast<double>(std::max<int64_t>(1, t1 - t0));
  auto x_of = [&](double t) {
    return kLeft + (kRight - kLeft) * (t - static_cast<double>(t0)) / span;
  };
  auto y_of = [&](double pct) {
    return kBottom - (kBottom - kTop) * std::clamp(pct, 0.0, 100.0) / 100.0;
  };
  std::string desc, body;
  for (const ChartSeries& cs : series) {
    const std::vector<SeriesBucket>& b = cs.series->buckets();
    const double w = static_cast<double>(cs.series->width());
    std::string band, line;
    // Runs of consecutive buckets draw as one band and one line; a missing bucket is a gap.
    for (size_t i = 0; i < b.size();) {
      size_t j = i + 1;
      while (j < b.size() && b[j].index == b[j - 1].index + 1) ++j;
      std::string upper, lower;
      for (size_t k = i; k < j; ++k) {
        const double xa = x_of(static_cast<double>(b[k].index) * w);
        const double xb = x_of(static_cast<double>(b[k].index + 1) * w);
        upper += fmt::format("{}{:.1f},{:.1f} {:.1f},{:.1f}", k == i ? "M" : " L", xa,
                             y_of(b[k].max), xb, y_of(b[k].max));
        lower =
            fmt::format(" L{:.1f},{:.1f} {:.1f},{:.1f}", xb, y_of(b[k].min), xa, y_of(b[k].min)) +
            lower;
        line +=
            fmt::format("{}{:.1f},{:.1f}", k == i ? "M" : " L", (xa + xb) / 2, y_of(b[k].Mean()));
        if (k + 1 == j && j - i == 1) line += fmt::format(" L{:.1f},{:.1f}", xb, y_of(b[k].Mean()));
      }
      band += upper + lower + " Z";
      i = j;
    }
    body += fmt::format(
        "<g class=\"series {0}\" data-series=\"{0}\" data-buckets=\"{1}\"><path class=\"band\" "
        "d=\"{2}\"/><path class=\"mean\" d=\"{3}\"/></g>",
        Esc(cs.name), b.size(), band, line);
    const SeriesBucket& all = cs.series->total();
    desc += all.count > 0
                ? fmt::format("{}{}: mean {:.1f}, min {:.1f}, max {:.1f}.", desc.empty() ? "" : " ",
                              cs.label, all.Mean(), all.min, all.max)
                : fmt::format("{}{}: no data.", desc.empty() ? "" : " ", cs.label);
  }
  std::string axes;
  for (int pct : {0, 50, 100}) {
    axes += fmt::format(
        "<line class=\"{}\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}%</text>",
        pct == 0 ? "axis" : "grid", kLeft, kRight, y_of(pct), y_of(pct), kLeft - 4, y_of(pct) + 4,
        pct);
  }
  axes += fmt::format(
      "<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
      kLeft, kBottom + 16, Esc(from), kRight, kBottom + 16, Esc(to));
  return fmt::format(
      "<svg class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-labelledby=\"{2}-t {2}-d\" data-series-count=\"{3}\"><title "
      "id=\"{2}-t\">{4}</title><desc id=\"{2}-d\">{5}</desc>{6}{7}</svg>",
      kW, kH, Esc(id), series.size(), Esc(title), Esc(desc), axes, body);
}

std::string HeatmapSvg(const std::array<std::array<std::optional<double>, 24>, 7>& util_pct,
                       std::string_view tz_name) {
  static constexpr const char* kDays[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  // The bands of the terminal heatmap; opacity grows with utilization, and each band has its
  // own legend entry; the table under the chart carries every value as text.
  static constexpr double kBand[] = {10, 30, 50, 70};
  auto band_of = [](double u) {
    int b = 0;
    while (b < 4 && u >= kBand[b]) ++b;
    return b;
  };
  static constexpr double kOpacity[5] = {0.08, 0.3, 0.5, 0.75, 1.0};
  constexpr int kCell = 22, kLeft = 40, kTop = 18;
  std::string cells;
  for (int d = 0; d < 7; ++d) {
    cells += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", kLeft - 6,
                         kTop + d * kCell + 15, kDays[d]);
    for (int h = 0; h < 24; ++h) {
      const std::optional<double>& u = util_pct[d][h];
      if (!u) continue;
      cells += fmt::format(
          "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"var(--util)\" "
          "fill-opacity=\"{}\"><title>{} {:02}:00 {:.1f} %</title></rect>",
          kLeft + h * kCell, kTop + d * kCell, kCell, kCell, kOpacity[band_of(*u)], kDays[d], h,
          *u);
    }
  }
  for (int h = 0; h < 24; h += 3) {
    cells += fmt::format("<text x=\"{}\" y=\"12\">{:02}</text>", kLeft + h * kCell + 2, h);
  }
  const int width = kLeft + 24 * kCell + 4, height = kTop + 7 * kCell + 4;
  std::string out = fmt::format(
      "<svg class=\"heat\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
      "aria-labelledby=\"heat-t\"><title id=\"heat-t\">Mean utilization by weekday and hour of day "
      "({2}); the table below lists every value</title>{3}</svg>\n",
      width, height, Esc(tz_name), cells);
  out += "<ul class=\"legend\">";
  static constexpr const char* kLegend[5] = {"under 10 %", "10–30 %", "30–50 %", "50–70 %",
                                             "70 % and over"};
  for (int b = 0; b < 5; ++b) {
    out += fmt::format(
        "<li><svg width=\"16\" height=\"16\" aria-hidden=\"true\"><rect width=\"16\" height=\"16\" "
        "fill=\"var(--util)\" fill-opacity=\"{}\"/></svg>{}</li>",
        kOpacity[b], kLegend[b]);
  }
  out += "<li>blank: no data</li></ul>\n";
  Table t;
  t.caption = fmt::format("Mean utilization % by hour of day ({})", tz_name);
  t.headers.push_back("Day");
  t.numeric.push_back(false);
  for (int h = 0; h < 24; ++h) {
    t.headers.push_back(fmt::format("{:02}", h));
    t.numeric.push_back(true);
  }
  for (int d = 0; d < 7; ++d) {
    std::vector<std::string> row = {kDays[d]};
    for (int h = 0; h < 24; ++h) {
      row.push_back(util_pct[d][h] ? fmt::format("{:.0f}", *util_pct[d][h]) : "");
    }
    t.rows.push_back(std::move(row));
  }
  return out + "<details><summary>The heatmap as a table</summary>" + t.Render() + "</details>\n";
}

std::string GaugeSvg(double observed, double threshold, std::string_view unit) {
  constexpr double kW = 180, kH = 18;
  const bool percent = !unit.empty() && unit[0] == '%';
  double top = std::max(observed, threshold) * 1.25;
  if (percent) top = 100;
  if (top <= 0) top = 1;
  const double xo = kW * std::clamp(observed / top, 0.0, 1.0);
  const double xt = kW * std::clamp(threshold / top, 0.0, 1.0);
  return fmt::format(
      "<svg class=\"gauge\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\">"
      "<title>observed {2:.1f} against threshold {3:.1f} {4}</title>"
      "<rect class=\"track\" x=\"0.5\" y=\"3.5\" width=\"{5}\" height=\"11\"/>"
      "<rect class=\"bar\" x=\"0.5\" y=\"3.5\" width=\"{6:.1f}\" height=\"11\"/>"
      "<line class=\"limit\" x1=\"{7:.1f}\" x2=\"{7:.1f}\" y1=\"0\" y2=\"{1}\"/></svg>",
      kW, kH, observed, threshold, Esc(unit), kW - 1, std::max(0.0, xo - 0.5), xt);
}

std::string Table::Render() const {
  std::string out = fmt::format("<table{}>", sortable ? " class=\"sortable\"" : "");
  if (!caption.empty()) out += "<caption>" + Esc(caption) + "</caption>";
  out += "<thead><tr>";
  for (size_t c = 0; c < headers.size(); ++c) {
    const bool n = c < numeric.size() && numeric[c];
    out += fmt::format(
        "<th scope=\"col\"{}>{}</th>", n ? " class=\"n\"" : "",
        sortable ? "<button type=\"button\">" + Esc(headers[c]) + "</button>" : Esc(headers[c]));
  }
  out += "</tr></thead><tbody>";
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "<tr>";
    for (size_t c = 0; c < rows[r].size(); ++c) {
      const bool n = c < numeric.size() && numeric[c];
      std::string sort;
      if (r < sort_keys.size() && c < sort_keys[r].size() && !sort_keys[r][c].empty()) {
        sort = " data-sort=\"" + Esc(sort_keys[r][c]) + "\"";
      }
      out += fmt::format("<td{}{}>{}</td>", n ? " class=\"n\"" : "", sort, rows[r][c]);
    }
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

namespace {

// The per-GPU steps of the utilization savings, one row a GPU.
Table SavingsGpuTable(const SavingsBlock& v) {
  Table t;
  t.caption = "Utilization savings per GPU (estimate)";
  t.headers = {"GPU",
               v.by_spend ? "share of the spend %" : "share of GPU-time %",
               "levers (% of this GPU)",
               "1 − Π(1 − f) %",
               "its waste %",
               "recoverable %",
               "of the spend %"};
  t.numeric = {false, true, false, true, true, true, true};
  t.sortable = true;
  for (size_t i = 0; i < v.gpus.size(); ++i) {
    const GpuSavings& g = v.gpus[i];
    const std::string at = fmt::format("/savings/gpus/{}", i);
    std::string levers;
    for (size_t k = 0; k < g.levers.size(); ++k) {
      levers += fmt::format(
          "{}<code>{}</code> {}", k ? ", " : "", Esc(g.levers[k].finding_id),
          Num(Fmt1(g.levers[k].fraction * 100), fmt::format("{}/levers/{}/fraction", at, k), 100));
    }
    t.rows.push_back({Esc(g.name), Num(Fmt1(g.weight * 100), at + "/weight_fraction", 100), levers,
                      Num(Fmt1(g.uncapped * 100), at + "/uncapped_fraction", 100),
                      Num(Fmt1(g.waste_fraction * 100), at + "/waste_fraction", 100),
                      Num(Fmt1(g.fraction * 100), at + "/fraction", 100),
                      Num(Fmt1(g.Contribution() * 100), at + "/contribution_fraction", 100)});
  }
  return t;
}

}  // namespace

std::string FindingsHtml(const std::vector<Finding>& findings, const SavingsBlock& v,
                         bool has_data) {
  if (findings.empty()) {
    return has_data ? "<p>No findings: nothing crossed a threshold.</p>\n" : "";
  }
  std::string out = "<ol class=\"findings\">\n";
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding& f = findings[i];
    const std::string at = fmt::format("/findings/{}", i);
    std::string gpus;
    if (f.gpu_names.empty()) {
      for (unsigned g : f.gpus) gpus += fmt::format("{}{}", gpus.empty() ? "" : ", ", g);
    } else {
      for (const std::string& g : f.gpu_names) gpus += (gpus.empty() ? "" : ", ") + g;
    }
    out += fmt::format(
        "<li data-finding=\"{}\"><span class=\"sev sev-{}\">{}</span> <strong>{}</strong>{}<br>"
        "{}<span>observed {} {} · threshold: {}</span><p>{}</p>",
        Esc(f.id), SeverityName(f.severity), SeverityName(f.severity), Esc(f.title),
        gpus.empty() ? "" : " <span class=\"muted\">on GPU " + Esc(gpus) + "</span>",
        GaugeSvg(f.observed, f.threshold, f.observed_unit),
        Num(Fmt1(f.observed), at + "/observed/value"), Esc(f.observed_unit), Esc(f.threshold_text),
        Esc(f.recommendation));
    if (f.axis != Axis::kNone && f.savings_fraction > 0) {
      out += fmt::format("<p>Estimated recoverable: {} % of the spend ({} lever: {}).</p>",
                         Num(Fmt1(f.savings_fraction * 100), at + "/savings_fraction", 100),
                         AxisName(f.axis), Esc(f.savings_reasoning));
    }
    out += "</li>\n";
  }
  out += "</ol>\n";
  if (v.levers.empty()) return out;
  out += "<h3>Savings, step by step (estimate)</h3>\n<ol class=\"savings\">";
  std::string factors;
  for (size_t i = 0; i < v.levers.size(); ++i) {
    const SavingsLever& l = v.levers[i];
    out += fmt::format(
        "<li>{} lever <code>{}</code>: {} %</li>", AxisName(l.axis), Esc(l.finding_id),
        Num(Fmt1(l.fraction * 100), fmt::format("/savings/levers/{}/fraction", i), 100));
  }
  out += fmt::format(
      "<li>On each GPU, its utilization levers overlap, so they combine as 1 − Π(1 − f), capped by "
      "that GPU's measured waste; the GPUs add by their share of the {} (the table below): "
      "utilization savings {} % (uncapped {} %; the measured waste is {} %).</li>"
      "<li>Rate levers (price, not use) combine as 1 − Π(1 − r): {} %.</li>"
      "<li>Combined: 1 − (1 − {} %)(1 − {} %) = <strong>{} %</strong>{}.</li></ol>\n",
      v.by_spend ? "spend" : "GPU-time",
      Num(Fmt1(v.utilization_fraction * 100), "/savings/utilization_fraction", 100),
      Num(Fmt1(v.utilization_uncapped * 100), "/savings/utilization_uncapped_fraction", 100),
      Num(Fmt1(v.waste_fraction * 100), "/savings/waste_fraction", 100),
      Num(Fmt1(v.rate_fraction * 100), "/savings/rate_fraction", 100),
      Fmt1(v.utilization_fraction * 100), Fmt1(v.rate_fraction * 100),
      Num(Fmt1(v.combined_fraction * 100), "/savings/combined_fraction", 100),
      v.combined_usd ? " ≈ " + Num(FormatUsd(*v.combined_usd), "/savings/combined_usd") : "");
  if (!v.gpus.empty()) out += SavingsGpuTable(v).Render();
  return out;
}

}  // namespace cgov::html
