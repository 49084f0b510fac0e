#include "analyzer/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "analyzer/run_facts.h"
#include "core/clock.h"

namespace fabtrack::analyzer {
namespace {

constexpr int kLeft = 64, kRight = 16, kTop = 28, kBottom = 44;
// About the width of a marker label ("medium change 11-28" at 10 px).
constexpr double kMarkerLabelWidth = 100;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string Tick(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-2)) {
    std::snprintf(buf, sizeof buf, "%.1e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%g", std::round(v * 100) / 100);
  }
  return buf;
}

// "MM-DD" of an epoch time.
std::string DateTick(double epoch) {
  return IsoFromSeconds(epoch, IsoStyle::kSeconds).substr(5, 5);
}

// "Nice" linear ticks covering [lo, hi].
std::vector<double> NiceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  double span = hi - lo;
  if (!(span > 0)) return {lo};
  double step = std::pow(10, std::floor(std::log10(span / target)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (span / (step * m) <= target) {
      step *= m;
      break;
    }
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) ticks.push_back(v);
  return ticks;
}

// Ticks of a time axis (labelled "MM-DD"): the first point, then UTC
// midnights a whole number of days apart (about `target` of them), so that
// each day is labelled once. A single night or a one-day window has one
// tick, not one per fraction of the day all saying the same date. The first
// point's tick gives way to a midnight less than half a step after it.
std::vector<double> TimeTicks(double lo, double hi, int target) {
  constexpr double kDay = 86400;
  double step = kDay;
  for (double days : {1, 2, 7, 14, 28, 56, 91, 182, 364}) {
    step = days * kDay;
    if ((hi - lo) / step <= target) break;
  }
  std::vector<double> ticks;
  const double first_midnight = std::ceil(lo / step) * step;
  if (first_midnight - lo >= step / 2 || first_midnight > hi) ticks.push_back(lo);
  for (double v = first_midnight; v <= hi; v += step) ticks.push_back(v);
  return ticks;
}

}  // namespace

std::string EscapeXml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderSvg(const LineChart& c) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = 0, y_hi = -std::numeric_limits<double>::infinity();
  auto fx = [&](double x) { return c.log2_x ? std::log2(std::max(x, 1e-12)) : x; };
  auto take = [&](double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y)) return;
    x_lo = std::min(x_lo, fx(x));
    x_hi = std::max(x_hi, fx(x));
    y_hi = std::max(y_hi, y);
    y_lo = std::min(y_lo, y);
  };
  for (const ChartSeries& s : c.series) {
    for (auto [x, y] : s.points) take(x, y);
  }
  for (const ChartBand& b : c.bands) {
    for (size_t i = 0; i < b.x.size(); ++i) take(b.x[i], b.upper[i]);
  }
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" << c.width
      << "\" height=\"" << c.height << "\" viewBox=\"0 0 " << c.width << ' ' << c.height
      << "\" role=\"img\"><title>" << EscapeXml(c.title) << "</title>";
  svg << "<text x=\"" << kLeft << "\" y=\"16\" class=\"ct\">" << EscapeXml(c.title) << "</text>";
  if (!std::isfinite(x_lo)) {
    svg << "<text x=\"" << kLeft << "\" y=\"" << c.height / 2 << "\">no data</text></svg>";
    return svg.str();
  }
  if (x_hi == x_lo) x_hi = x_lo + 1;
  if (y_hi <= y_lo) y_hi = y_lo + 1;
  y_hi *= 1.05;
  const double pw = c.width - kLeft - kRight, ph = c.height - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (fx(x) - x_lo) / (x_hi - x_lo) * pw; };
  auto py = [&](double y) { return kTop + ph - (y - y_lo) / (y_hi - y_lo) * ph; };
  // Axes and grid.
  svg << "<g class=\"axis\">";
  for (double t : NiceTicks(y_lo, y_hi, 5)) {
    svg << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + pw << "\" y1=\"" << Num(py(t))
        << "\" y2=\"" << Num(py(t)) << "\" class=\"grid\"/><text x=\"" << kLeft - 6 << "\" y=\""
        << Num(py(t) + 4) << "\" text-anchor=\"end\">" << Tick(t) << "</text>";
  }
  std::vector<double> x_ticks;
  if (c.log2_x) {
    const int step = std::max(1, static_cast<int>((x_hi - x_lo) / 8) + 1);
    for (int e = static_cast<int>(std::ceil(x_lo)); e <= x_hi; e += step) x_ticks.push_back(e);
  } else if (c.x_is_time) {
    x_ticks = TimeTicks(x_lo, x_hi, 6);
  } else {
    x_ticks = NiceTicks(x_lo, x_hi, 8);
  }
  std::string previous_label;
  for (double t : x_ticks) {
    const double value = c.log2_x ? std::exp2(t) : t;
    const double x = kLeft + (t - x_lo) / (x_hi - x_lo) * pw;
    std::string label = c.x_is_bytes  ? FormatBytes(static_cast<int64_t>(value))
                        : c.x_is_time ? DateTick(value)
                                      : Tick(value);
    if (label == previous_label) continue;  // a label says its value once
    previous_label = label;
    svg << "<text x=\"" << Num(x) << "\" y=\"" << kTop + ph + 16 << "\" text-anchor=\"middle\">"
        << EscapeXml(label) << "</text>";
  }
  svg << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft << "\" y1=\"" << kTop << "\" y2=\""
      << kTop + ph << "\" class=\"frame\"/><line x1=\"" << kLeft << "\" x2=\"" << kLeft + pw
      << "\" y1=\"" << kTop + ph << "\" y2=\"" << kTop + ph << "\" class=\"frame\"/>";
  svg << "<text x=\"" << kLeft + pw / 2 << "\" y=\"" << c.height - 6 << "\" text-anchor=\"middle\">"
      << EscapeXml(c.x_label) << "</text>";
  svg << "<text transform=\"translate(14," << kTop + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << EscapeXml(c.y_label) << "</text></g>";
  // Bands under lines.
  for (const ChartBand& b : c.bands) {
    if (b.x.empty()) continue;
    svg << "<polygon class=\"band\" fill=\"" << b.color << "\" points=\"";
    for (size_t i = 0; i < b.x.size(); ++i)
      svg << Num(px(b.x[i])) << ',' << Num(py(b.upper[i])) << ' ';
    for (size_t i = b.x.size(); i-- > 0;)
      svg << Num(px(b.x[i])) << ',' << Num(py(b.lower[i])) << ' ';
    svg << "\"><title>" << EscapeXml(b.name) << "</title></polygon>";
  }
  for (size_t i = 0; i < c.markers.size(); ++i) {
    const ChartMarker& m = c.markers[i];
    const double x = px(m.x);
    // Labels of markers that stand close together (two bands changing on
    // one night) stack instead of printing over each other.
    int below = 0;
    for (size_t j = 0; j < i; ++j) below += std::abs(px(c.markers[j].x) - x) < kMarkerLabelWidth;
    svg << "<line class=\"marker\" x1=\"" << Num(x) << "\" x2=\"" << Num(x) << "\" y1=\"" << kTop
        << "\" y2=\"" << kTop + ph << "\"/><text class=\"mlabel\" x=\"" << Num(x + 3) << "\" y=\""
        << kTop + 10 + 11 * below << "\">" << EscapeXml(m.label) << "</text>";
  }
  for (const ChartSeries& s : c.series) {
    if (s.points.empty()) continue;
    svg << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"2\""
        << (s.dashed ? " stroke-dasharray=\"5,4\"" : "") << " points=\"";
    for (auto [x, y] : s.points) {
      if (std::isfinite(y)) svg << Num(px(x)) << ',' << Num(py(y)) << ' ';
    }
    svg << "\"><title>" << EscapeXml(s.name) << "</title></polyline>";
    if (s.points.size() <= 40) {
      for (auto [x, y] : s.points) {
        if (std::isfinite(y)) {
          svg << "<circle cx=\"" << Num(px(x)) << "\" cy=\"" << Num(py(y)) << "\" r=\"2.5\" fill=\""
              << s.color << "\"/>";
        }
      }
    }
  }
  // Legend.
  int lx = kLeft + 8, ly = kTop + 8;
  auto legend = [&](const std::string& name, const std::string& color, bool box) {
    svg << (box ? "<rect width=\"12\" height=\"8\" opacity=\"0.35\" x=\""
                : "<rect width=\"12\" height=\"3\" x=\"")
        << lx << "\" y=\"" << ly << "\" fill=\"" << color << "\"/><text class=\"lg\" x=\""
        << lx + 16 << "\" y=\"" << ly + 8 << "\">" << EscapeXml(name) << "</text>";
    ly += 13;
  };
  for (const ChartSeries& s : c.series) legend(s.name, s.color, false);
  for (const ChartBand& b : c.bands) legend(b.name, b.color, true);
  svg << "</svg>";
  return svg.str();
}

}  // namespace fabtrack::analyzer
