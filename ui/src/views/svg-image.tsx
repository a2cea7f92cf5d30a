// A chart drawn in Rust, put in the page as its SVG markup rather than as an <img>. WebKit
// kept every superseded SVG image alive (each a document of its own, ~20 KiB), so a chart
// redrawn each second as an <img> grew the web process about 1 MiB a minute (issue 43);
// markup replaced in the page is freed with the old nodes. The SVG is ours (plotters
// escapes the text it draws) and the CSP still forbids inline script.
//
// Selectors: [data-testid=TESTID] role="img" with the chart's words as its label, and the
// <svg> inside it; data-theme when given; hidden until there is a chart.

import type { JSX } from "solid-js";

export function SvgImage(props: {
  svg: string | null;
  label: string;
  testid: string;
  theme?: string | null;
  /** A redraw failed: the last good chart, dimmed. */
  stale?: boolean;
}): JSX.Element {
  return (
    <div
      class="svg-image"
      data-testid={props.testid}
      data-theme={props.theme ?? undefined}
      role="img"
      aria-label={props.label}
      hidden={props.svg === null}
      classList={{ stale: props.stale === true }}
      innerHTML={props.svg ?? ""}
    />
  );
}
