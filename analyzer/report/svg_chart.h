// A small SVG line chart for the self-contained HTML report: axes with
// ticks, a linear or log2 x axis, several series, a shaded band, vertical
// markers and a legend. Pure: data in, SVG text out.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fabtrack::analyzer {

struct ChartSeries {
  std::string name;
  std::string color;  // "#1f77b4"
  std::vector<std::pair<double, double>> points;
  bool dashed = false;
};

struct ChartBand {
  std::string name;
  std::string color;
  std::vector<double> x, lower, upper;  // same length
};

struct ChartMarker {
  double x = 0;
  std::string label;
};

struct LineChart {
  std::string title, x_label, y_label;
  bool log2_x = false;
  bool x_is_bytes = false;  // tick labels as 8 B, 1 KiB, 1 MiB
  bool x_is_time = false;   // x in epoch seconds, ticks as dates
  std::vector<ChartSeries> series;
  std::vector<ChartBand> bands;
  std::vector<ChartMarker> markers;
  int width = 560, height = 300;
};

std::string RenderSvg(const LineChart& chart);
// Text escaped for HTML and SVG.
std::string EscapeXml(const std::string& text);

}  // namespace fabtrack::analyzer
