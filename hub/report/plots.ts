import * as vega from "vega";
import * as vl from "vega-lite";

/** One point of a line chart: x, y and the series it belongs to. */
export interface Point {
  x: number;
  y: number;
  series: string;
}

export interface LineChart {
  title: string;
  xTitle: string;
  yTitle: string;
  points: Point[];
  /** Stacked areas instead of lines (e.g. failures by kind). */
  stacked?: boolean;
}

/** Renders a chart to SVG with Vega-Lite (no browser, no canvas). */
export async function renderChartSvg(chart: LineChart): Promise<string> {
  const spec: vl.TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: chart.title,
    width: 520,
    height: 220,
    background: "white",
    data: { values: chart.points },
    mark: chart.stacked ? { type: "area" } : { type: "line", point: chart.points.length <= 60 },
    encoding: {
      x: { field: "x", type: "quantitative", title: chart.xTitle },
      y: { field: "y", type: "quantitative", title: chart.yTitle, ...(chart.stacked ? { stack: "zero" } : {}) },
      color: { field: "series", type: "nominal", title: null },
    },
  };
  const compiled = vl.compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: "none" });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
